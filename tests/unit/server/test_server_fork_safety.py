"""A process of ours with gRPC in use can start children with a preexec_fn (grpc/grpc#43055).

`riverbeam up` and the tests start processes with `preexec_fn` (a death signal) while gRPC
servers and channels are live. With gRPC's fork support on, about one such child in a hundred
aborted before exec; importing riverbeam turns it off unless the environment sets it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

_PROBE = textwrap.dedent(
    """
    import asyncio, os, subprocess, sys
    import riverbeam.server  # imports grpc, after riverbeam's own import
    import grpc

    async def main() -> None:
        server = grpc.aio.server()
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        await channel.channel_ready()
        failed = 0
        for _ in range(int(sys.argv[1])):
            call = asyncio.ensure_future(channel.unary_unary("/no.Such/Method")(b"", timeout=1))
            child = subprocess.run(["/bin/true"], preexec_fn=lambda: None, capture_output=True)
            failed += child.returncode != 0
            try:
                await call
            except grpc.aio.AioRpcError:
                pass
        await channel.close()
        await server.stop(None)
        print(os.environ.get("GRPC_ENABLE_FORK_SUPPORT"), failed)

    asyncio.run(main())
    """
)


def test_children_started_with_a_preexec_fn_beside_live_grpc_all_run() -> None:
    env = {k: v for k, v in os.environ.items() if k != "GRPC_ENABLE_FORK_SUPPORT"}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, "300"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    assert out == ["false", "0"]  # with fork support on: several of 300 died (SIGABRT)


def test_the_test_processes_themselves_run_without_fork_support() -> None:
    """tests/conftest.py imports riverbeam before any test module can import grpc."""
    assert os.environ.get("GRPC_ENABLE_FORK_SUPPORT") == "false"
