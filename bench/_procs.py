"""Processes for the four-process benchmark: /proc readings, a bare echo server of its own, stacks.

    python -m bench._procs echo --ready-file F   # a bare grpc.aio echo server in this process
    python -m bench._procs chain --calls 2 --upstream ADDR --ready-file F   # one link of a chain

A bare chain (`BareChain`) is three such processes in the shape of an invoke's hops: a
"router" that calls a "runner" once per request, a "runner" that calls a "store" twice in turn
(begin, then finish), and a "store" that is the echo. Bytes in and out, no parsing, default options:
the latency and CPU of the hops themselves, which no code of ours can go below.

What the benchmark reads about a process comes from /proc (Linux only): `cpu_seconds(pid)` is
utime + stime of /proc/<pid>/stat (the process's own CPU, all threads), `rss_bytes(pid)` the
VmRSS of /proc/<pid>/status, `wakes(pid)` its threads' voluntary context switches. PostgreSQL
backends are found by the `application_name` the store's connections carry
(`pg_backend_pids`): the store's DSN is given `?application_name=<tag>`, which asyncpg passes
on as a server setting.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

__all__ = [
    "BareChain",
    "EchoProcess",
    "StackSpec",
    "cpu_seconds",
    "rss_bytes",
    "serve_bare",
    "served_process",
    "stop_on_signal",
    "tagged_dsn",
    "wakes",
]

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
ECHO_METHOD = "/bench.Echo/Echo"


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds (0.0 when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = text[text.rindex(")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of stat(5)
    return (utime + stime) / _CLK_TCK


def children_cpu_seconds(pid: int) -> float:
    """cutime + cstime of a process: the CPU of its children that ended and were waited for
    (the postmaster's ended backends), in seconds (0.0 when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[13]) + int(fields[14])) / _CLK_TCK  # fields 16 and 17 of stat(5)


def wakes(pid: int) -> int:
    """Voluntary context switches of a process, summed over its threads (0 when it is gone):
    each is a sleep that a message, a timer or a lock ended."""
    total = 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0
    for task in tasks:
        try:
            text = (task / "status").read_text()
        except OSError:
            continue  # a thread that ended meanwhile
        for line in text.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
                break
    return total


def rss_bytes(pid: int) -> int:
    """The resident set size of a process (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def tagged_dsn(dsn: str, tag: str) -> str:
    """The DSN with `application_name=tag`, so the store's backends can be found."""
    parts = urlsplit(dsn)
    query = "&".join(q for q in (parts.query, urlencode({"application_name": tag})) if q)
    return urlunsplit(parts._replace(query=query))


@dataclass(slots=True)
class StackSpec:
    """One running stack as the driver sees it (JSON-serialisable)."""

    name: str
    router: str
    pids: dict[str, int]
    pg_tag: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "router": self.router, "pids": self.pids, "pg_tag": self.pg_tag}


@contextlib.asynccontextmanager
async def served_process(
    args: list[str],
    *,
    ready: Path,
    what: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout_s: float = 60.0,
) -> AsyncIterator[tuple[str, int]]:
    """`python <args>` as a child that writes its `host:port` to `ready` once it serves:
    (that address, its pid); stopped with SIGTERM on exit (killed after 10 s)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        cwd=None if cwd is None else str(cwd),
        env=None if env is None else dict(env),
        stdin=asyncio.subprocess.DEVNULL,
    )
    try:
        address = ""
        async with asyncio.timeout(timeout_s):
            while not address:
                if proc.returncode is not None:
                    raise RuntimeError(f"the {what} exited before it was ready")
                with contextlib.suppress(OSError):
                    text = (await asyncio.to_thread(ready.read_text)).strip()
                    if ":" in text and text[-1:].isdigit():
                        address = text
                await asyncio.sleep(0.05)
        yield address, proc.pid
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await asyncio.to_thread(ready.unlink, missing_ok=True)


class EchoProcess:
    """`python -m bench._procs echo` as a child: a plain grpc.aio echo server, its own process."""

    def __init__(self, workdir: Path, env: Mapping[str, str] | None = None) -> None:
        ready = workdir / f"echo-{uuid.uuid4().hex[:8]}.ready"
        args = ["-m", "bench._procs", "echo", "--ready-file", str(ready)]
        self._served = served_process(args, ready=ready, what="echo server", env=env)
        self.address = ""
        self._pid = 0

    @property
    def pid(self) -> int:
        assert self._pid
        return self._pid

    async def __aenter__(self) -> EchoProcess:
        self.address, self._pid = await self._served.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._served.__aexit__(*exc)


class BareChain:
    """Three bare processes, router -> runner -> store (twice), started store first."""

    def __init__(self, workdir: Path, env: Mapping[str, str] | None = None) -> None:
        self._workdir = workdir
        self._env = env
        self._stack = contextlib.AsyncExitStack()
        self.address = ""
        self.pids: dict[str, int] = {}

    async def __aenter__(self) -> BareChain:
        upstream = ""
        try:
            for name, calls in (("store", 0), ("runner", 2), ("router", 1)):
                ready = self._workdir / f"chain-{name}-{uuid.uuid4().hex[:8]}.ready"
                # The store is the bare echo; each link above calls the one below it.
                link = (
                    ["chain", "--calls", str(calls), "--upstream", upstream] if calls else ["echo"]
                )
                args = ["-m", "bench._procs", *link, "--ready-file", str(ready)]
                served = served_process(args, ready=ready, what=f"bare chain {name}", env=self._env)
                upstream, self.pids[name] = await self._stack.enter_async_context(served)
        except BaseException:
            await self._stack.aclose()
            raise
        self.address = upstream
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._stack.aclose()


def _write_ready(path: str, address: str) -> None:
    tmp = Path(path + ".tmp")
    tmp.write_text(address)
    tmp.replace(path)


def stop_on_signal() -> asyncio.Event:
    """An event set when this process gets SIGTERM or SIGINT (call it before serving, so that
    a stop right after the ready file is written is not missed)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def serve_bare(handler: Any, ready_file: str) -> None:
    """A plain grpc.aio server of one generic handler (default options, no interceptor) on a
    free loopback port, its address written to `ready_file`, until SIGTERM or SIGINT."""
    import grpc

    stop = stop_on_signal()
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    _write_ready(ready_file, f"127.0.0.1:{port}")
    await stop.wait()
    await server.stop(None)


async def _serve_echo(ready_file: str) -> None:
    import grpc

    async def echo(request: bytes, context: Any) -> bytes:
        return request

    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
    )
    await serve_bare(handler, ready_file)


async def _serve_link(calls: int, upstream: str, ready_file: str) -> None:
    """One link of a bare chain: `calls` unary calls to `upstream` in turn per request, the
    last reply the answer (the chain's bottom link is the echo)."""
    import grpc

    channel = grpc.aio.insecure_channel(upstream)
    onward = channel.unary_unary(ECHO_METHOD)

    async def link(request: bytes, context: Any) -> bytes:
        reply = request
        for _ in range(calls):
            reply = await onward(request)
        return reply

    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(link)}
    )
    try:
        await serve_bare(handler, ready_file)
    finally:
        await channel.close()


@contextlib.asynccontextmanager
async def started(
    contexts: Iterable[contextlib.AbstractAsyncContextManager[Any]],
) -> AsyncIterator[list[Any]]:
    """Enter several async context managers in order; exit them in reverse."""
    async with contextlib.AsyncExitStack() as stack:
        yield [await stack.enter_async_context(c) for c in contexts]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench._procs")
    sub = parser.add_subparsers(dest="command", required=True)
    echo = sub.add_parser("echo", help="serve a bare grpc.aio echo on a free loopback port")
    echo.add_argument("--ready-file", required=True)
    link = sub.add_parser("chain", help="serve one link of a bare chain on a free loopback port")
    link.add_argument("--calls", type=int, required=True, help="calls onward per request")
    link.add_argument("--upstream", required=True, help="the next link's address")
    link.add_argument("--ready-file", required=True)
    args = parser.parse_args(argv)
    if args.command == "echo":
        asyncio.run(_serve_echo(args.ready_file))
    elif args.command == "chain":
        if args.calls < 1:
            parser.error("--calls must be at least 1 (the bottom of a chain is `echo`)")
        asyncio.run(_serve_link(args.calls, args.upstream, args.ready_file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
