"""nats-py imported without aiohttp by a service's entry point (riverbeam.server._lean_nats).

Each case is a fresh interpreter, as a service process is: hiding a module changes the whole
process. A `nats://` connection then never loads aiohttp; a `ws://` one (a nats-server with a
websocket listener) gets it bound into nats-py's transport on connect and works as before.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from riverbeam.stream import find_nats_server
from tests.support.nats_server import NatsServer

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("aiohttp") is None,
    reason="aiohttp is not installed: nats-py has nothing to import eagerly",
)

_CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from riverbeam.server._lean_nats import import_nats_without_aiohttp

    out = {"hid": import_nats_without_aiohttp()}
    from riverbeam.stream import NatsConnection

    async def main() -> None:
        async with NatsConnection(sys.argv[1], initial_connect_timeout_s=10) as conn:
            sub = await conn.nc.subscribe("lean.nats.check")
            await conn.nc.publish("lean.nats.check", b"over the wire")
            message = await sub.next_msg(timeout=5)
            out["received"] = message.data.decode()
            out["jetstream"] = (await conn.js.account_info()).streams >= 0
        out["aiohttp_loaded"] = "aiohttp" in sys.modules

    asyncio.run(main())
    print(json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def server() -> Iterator[NatsServer]:
    binary = find_nats_server()
    if binary is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("nats-server not found (CI=true: a missing service is a failure)")
        pytest.skip("nats-server not found")
    with NatsServer(binary, websocket=True) as started:
        yield started


def _child(url: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIVERBEAM_")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "libs"), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, url],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize(
    ("scheme", "loads_aiohttp"),
    [("nats", False), ("ws", True)],
    ids=["a nats URL never loads aiohttp", "a websocket URL still connects"],
)
def test_nats_imported_without_aiohttp(
    server: NatsServer, scheme: str, loads_aiohttp: bool
) -> None:
    out = _child(server.url if scheme == "nats" else server.ws_url)
    assert out == {
        "hid": True,
        "received": "over the wire",
        "jetstream": True,
        "aiohttp_loaded": loads_aiohttp,
    }
