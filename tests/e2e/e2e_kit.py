"""What the end-to-end tests share: the CLI as a subprocess, the chat server as a subprocess, a
live NATS tap, a Postgres schema per stack, health and reflection probes, and a registry of the
running stacks whose logs are attached to a failing test's report (see conftest.py).

Timeouts here only stop a hung test; no assertion depends on how long anything took.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import httpx
import nats
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from riverbeam.stream import MSG_ID_HEADER, subject_for
from riverbeam.types import StreamChunk
from services.cli._up import LocalStack, log_tail

REPO_ROOT = Path(__file__).resolve().parents[2]
GUARD_S = 90.0
"""Longest wait for anything in these tests: a guard against a hang, never an assertion."""

SERVICE_NAMES = {
    "router": "riverbeam.v1.RiverbeamService",
    "runner": "riverbeam.v1.RunnerService",
    "sandbox": "riverbeam.v1.SandboxService",
    "store": "riverbeam.v1.StoreService",
}

_NOT_INHERITED = ("RIVERBEAM_", "BEAM_", "GFS_BEAM_", "NVIDIA_API_KEY", "OTEL_")


def hermetic_env(**extra: str) -> dict[str, str]:
    """This process's environment without the settings a developer's shell may export
    (RIVERBEAM_*, the model's BEAM_* keys, OpenTelemetry): each test sets what it needs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_NOT_INHERITED)}
    env.update(extra)
    return env


LIVE_STACKS: list[LocalStack] = []
"""Stacks running right now; conftest.py attaches their log tails to a failing test's report."""


# ---- the CLI ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CliResult:
    """What one `riverbeam ...` run printed, and its exit status."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def json_lines(self) -> list[Any]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def __str__(self) -> str:
        return (
            f"riverbeam {' '.join(self.args)} -> {self.returncode}\n"
            f"--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"
        )


def cli_env(router: str, token: str | None = None) -> dict[str, str]:
    env = hermetic_env(RIVERBEAM_ROUTER=router, COLUMNS="200", NO_COLOR="1")
    if token is not None:
        env["RIVERBEAM_TOKEN"] = token
    return env


async def run_cli(
    *args: str, router: str, token: str | None = None, timeout_s: float = GUARD_S
) -> CliResult:
    """`python -m services.cli <args>` in a child process; its output once it exits."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.cli", *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(router, token),
        cwd=str(REPO_ROOT),
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout_s)
    except TimeoutError:
        proc.kill()
        out, err = await proc.communicate()
        raise AssertionError(
            f"riverbeam {' '.join(args)} still running after {timeout_s:g}s (guard)\n"
            f"--- stdout\n{out.decode(errors='replace')}\n--- stderr\n{err.decode(errors='replace')}"
        ) from None
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return CliResult(tuple(args), proc.returncode, out.decode(), err.decode())


# ---- the model: tests/support/chat_server.py in its own process -----------------------------------
class ChatProcess:
    """The scriptable chat-completions server as a child process on 127.0.0.1.

    `base_url` (http://127.0.0.1:<port>) is what the runner gets as BEAM_API_BASE_URL; replies
    are appended with `push()` over the server's control endpoints.
    """

    def __init__(self, work_dir: Path) -> None:
        self._work_dir = work_dir
        self._proc: asyncio.subprocess.Process | None = None
        self._http: httpx.AsyncClient | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self._work_dir / "chat-server.log"

    def model_env(self) -> dict[str, str]:
        """The runner environment that points the built-in agents at this server."""
        return {"BEAM_API_KEY": "test", "BEAM_API_BASE_URL": self.base_url}

    async def __aenter__(self) -> ChatProcess:
        self._work_dir.mkdir(parents=True, exist_ok=True)
        env = hermetic_env(PYTHONUNBUFFERED="1")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        with self.log_path.open("ab") as log:
            self._proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "tests.support.chat_server", "--port", "0",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                env=env,
                cwd=str(REPO_ROOT),
                start_new_session=True,
            )  # fmt: skip
        try:
            assert self._proc.stdout is not None
            line = await asyncio.wait_for(self._proc.stdout.readline(), GUARD_S)
            url = httpx.URL(line.decode().strip())
            assert url.host == "127.0.0.1" and url.port, f"chat server said {line!r}"
            self.port = url.port
            self._http = httpx.AsyncClient(base_url=self.base_url, timeout=30, trust_env=False)
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def stop(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()

    def _client(self) -> httpx.AsyncClient:
        assert self._http is not None, "chat server not started"
        return self._http

    async def push(self, *replies: Mapping[str, Any]) -> None:
        response = await self._client().post("/_script", json=list(replies))
        assert response.status_code == 204, response.text

    async def clear(self) -> None:
        response = await self._client().delete("/_script")
        assert response.status_code == 204, response.text

    async def remaining(self) -> int:
        response = await self._client().get("/_script")
        response.raise_for_status()
        return int(response.json()["remaining"])

    async def completions(self) -> list[dict[str, Any]]:
        """The chat-completions requests received so far, oldest first."""
        response = await self._client().get("/_requests")
        response.raise_for_status()
        return [r for r in response.json() if str(r["path"]).endswith("/chat/completions")]

    async def wait_for_completions(self, count: int, timeout_s: float = GUARD_S) -> None:
        """Until `count` chat-completions requests have arrived (a request in flight counts)."""
        async with asyncio.timeout(timeout_s):
            while True:  # another process: nothing to wait on but its answers
                if len(await self.completions()) >= count:
                    return
                await asyncio.sleep(0.05)


# ---- PostgreSQL -----------------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def pg_schema(pg_url: str, prefix: str) -> AsyncIterator[str]:
    """A schema name nobody else uses; dropped with everything in it afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    try:
        yield name
    finally:
        conn = await asyncpg.connect(pg_url)
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        finally:
            await conn.close()


# ---- stacks ---------------------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def running_stack(**kwargs: Any) -> AsyncIterator[LocalStack]:
    """A started LocalStack, registered for log reports, always stopped afterwards."""
    kwargs.setdefault("base_env", hermetic_env())
    stack = LocalStack(ready_timeout_s=GUARD_S, stop_timeout_s=10, **kwargs)
    LIVE_STACKS.append(stack)
    try:
        await stack.start()
        yield stack
    finally:
        try:
            await stack.stop()
        finally:
            LIVE_STACKS.remove(stack)


def stack_logs(stack: LocalStack, lines: int = 40) -> Iterable[tuple[str, str]]:
    """(title, last lines) of every log of a stack."""
    with contextlib.suppress(RuntimeError, OSError):
        for path in sorted(stack.log_dir.glob("*.log")):
            yield f"{path.name} ({path})", log_tail(path, lines)


# ---- frames ---------------------------------------------------------------------------------------
@dataclass(slots=True)
class NatsTap:
    """Every message published on a request's subject, as the raw JSON a live subscriber got."""

    request_id: str
    raw: list[str] = field(default_factory=list)
    msg_ids: list[str | None] = field(default_factory=list)
    terminal: asyncio.Event = field(default_factory=asyncio.Event)
    _arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    @property
    def frames(self) -> list[StreamChunk]:
        return [StreamChunk.parse(text) for text in self.raw]

    async def on_message(self, msg: Any) -> None:
        text = msg.data.decode()
        self.raw.append(text)
        self.msg_ids.append((msg.headers or {}).get(MSG_ID_HEADER))
        if StreamChunk.parse(text).is_terminal:
            self.terminal.set()
        async with self._arrived:
            self._arrived.notify_all()

    async def wait_frames(self, count: int, timeout_s: float = GUARD_S) -> None:
        """Until at least `count` frames have arrived."""
        async with asyncio.timeout(timeout_s), self._arrived:
            await self._arrived.wait_for(lambda: len(self.raw) >= count)

    async def wait_terminal(self, timeout_s: float = GUARD_S) -> None:
        await asyncio.wait_for(self.terminal.wait(), timeout_s)


@contextlib.asynccontextmanager
async def nats_tap(nats_url: str, request_id: str) -> AsyncIterator[NatsTap]:
    """Subscribe (core NATS, live only) to a request's subject before it is published to."""
    tap = NatsTap(request_id)
    nc = await nats.connect(nats_url, connect_timeout=10, allow_reconnect=False)
    try:
        await nc.subscribe(subject_for(request_id), cb=tap.on_message)
        await nc.flush()  # the server knows the subscription before the request is sent
        yield tap
    finally:
        await nc.close()


def assert_sequenced(frames: list[StreamChunk]) -> None:
    """Frames numbered 1..n, exactly one terminal frame, and it is last."""
    assert frames, "no frames"
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert [f.is_terminal for f in frames] == [False] * (len(frames) - 1) + [True]


# ---- health and reflection ------------------------------------------------------------------------
async def health_status(address: str, service: str) -> int:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=30)
        return int(reply.status)


async def reflected_services(address: str) -> list[str]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        call = stub.ServerReflectionInfo(iter([request]), timeout=30)
        names: list[str] = []
        async for reply in call:
            names += [s.name for s in reply.list_services_response.service]
        return names
