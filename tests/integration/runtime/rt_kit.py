"""Shared pieces of the runtime integration tests: agents, tools, requests, frames, services."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from nats.js import JetStreamContext

from riverbeam.agents import AgentContext, AgentInput, ToolSpec, json_params
from riverbeam.core.settings import RunnerSettings
from riverbeam.runtime import Grant, RunnerClient
from riverbeam.server import GrpcServer
from riverbeam.store import BeamStore
from riverbeam.stream import follow
from riverbeam.types import (
    AgentMessage,
    AgentMetadata,
    AgentResult,
    ContentPart,
    InvokeRequest,
    ModelConfig,
    StreamAck,
    StreamChunk,
)
from services.runner.app import build as build_runner
from services.store.app import binding as store_binding
from tests.support.chat_server import ChatServer

# Longest wait for anything that should happen at once. Never a threshold on speed: only a
# guard so that a broken test fails instead of hanging.
GUARD_S = 5.0
# Guard for steps that include starting processes or git work.
SLOW_GUARD_S = 30.0

HOOK = "tests.integration.runtime.rt_hooks:register"
REPO_ROOT = Path(__file__).resolve().parents[3]


def uid() -> str:
    return str(uuid.uuid4())


def text_request(
    agent: str, text: str, session_id: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "agent_name": agent,
        "content": [{"type": "text", "text": text}],
        "session_id": session_id or uid(),
        **extra,
    }


def approval(action_id: str, *, status: str = "submitted") -> dict[str, Any]:
    return {
        "action_id": action_id,
        "kind": "confirmation",
        "request_id": uid(),
        "status": status,
    }


# ---- agents and tools ---------------------------------------------------------------------------
class HoldAgent:
    """Yields one chunk frame, then waits: for `release` when given, else forever."""

    def __init__(self, name: str, *, release: asyncio.Event | None = None) -> None:
        self.name = name
        self.release = release

    def metadata(self) -> AgentMetadata:
        return AgentMetadata(name=self.name)

    async def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[StreamChunk]:
        yield StreamChunk(
            type="chunk",
            data=AgentMessage(
                role="ai", content=[ContentPart.of_text("working on it")], is_delta=True
            ),
        )
        if self.release is None:
            await asyncio.Event().wait()
            return
        await self.release.wait()
        yield StreamChunk(
            type="chunk",
            data=AgentMessage(role="ai", content=[ContentPart.of_text(", done")], is_delta=True),
        )
        yield StreamChunk(
            type="done",
            result=AgentResult(
                agent_name=self.name, content=[ContentPart.of_text("working on it, done")]
            ),
        )

    async def health_check(self) -> bool:
        return True


class BlockingTool:
    """A tool that never returns (until cancelled); records that it started."""

    def __init__(self, name: str = "block") -> None:
        self.name = name
        self.started = asyncio.Event()
        self.cancelled = False

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description="waits forever",
            parameters=json_params({"v": {"type": "string"}}, ["v"]),
            timeout_s=3600,
        )

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return {"never": True}


# ---- frames -------------------------------------------------------------------------------------
async def collect(
    js: JetStreamContext, request_id: str, *, guard_s: float = SLOW_GUARD_S
) -> list[StreamChunk]:
    """Every frame of a request from its first, until (and with) the terminal frame."""
    frames: list[StreamChunk] = []
    async with asyncio.timeout(guard_s):
        stream = follow(js, request_id, wait_for_start_s=guard_s)
        async with contextlib.aclosing(stream) as it:
            async for frame in it:
                frames.append(frame)
    return frames


async def first_frames(
    js: JetStreamContext, request_id: str, count: int, *, guard_s: float = GUARD_S
) -> list[StreamChunk]:
    """The first `count` frames of a request, as soon as they are stored."""
    frames: list[StreamChunk] = []
    async with asyncio.timeout(guard_s):
        stream = follow(js, request_id, wait_for_start_s=guard_s)
        async with contextlib.aclosing(stream) as it:
            async for frame in it:
                frames.append(frame)
                if len(frames) == count:
                    break
    return frames


async def frame_where(
    js: JetStreamContext, request_id: str, want: Any, *, guard_s: float = GUARD_S
) -> StreamChunk:
    """The first frame of a request for which want(frame) holds."""
    async with asyncio.timeout(guard_s):
        stream = follow(js, request_id, wait_for_start_s=guard_s)
        async with contextlib.aclosing(stream) as it:
            async for frame in it:
                if want(frame):
                    return frame
    raise AssertionError(f"request {request_id} ended without the frame wanted")


def assert_gap_free(frames: list[StreamChunk]) -> None:
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    assert frames and frames[-1].is_terminal
    assert not any(f.is_terminal for f in frames[:-1])


def shape(frames: list[StreamChunk]) -> list[tuple[str, str | None, str | None]]:
    """(frame type, message type, tool name) of each frame; chunk frames merged into one."""
    out: list[tuple[str, str | None, str | None]] = []
    for frame in frames:
        data = frame.data
        item = (frame.type, data.type if data else None, data.tool_name if data else None)
        if out and frame.type == "chunk" and out[-1][0] == "chunk":
            continue
        out.append(item)
    return out


# ---- services in this process -------------------------------------------------------------------
@contextlib.asynccontextmanager
async def store_service(store: BeamStore) -> AsyncIterator[str]:
    """A store service over `store` on 127.0.0.1:0; yields its address."""
    async with GrpcServer([store_binding(store)], listen="127.0.0.1:0", grace_s=0) as server:
        yield server.address


@contextlib.asynccontextmanager
async def runner_service(settings: RunnerSettings) -> AsyncIterator[str]:
    """services/runner as `riverbeam serve runner` wires it, in this process; yields its address."""
    async with build_runner(settings) as app:
        try:
            async with GrpcServer(app.bindings, listen="127.0.0.1:0", grace_s=0) as server:
                try:
                    yield server.address
                finally:
                    if app.drain is not None:
                        await app.drain(1.0)
        finally:
            if app.close is not None:
                await app.close()


@contextlib.asynccontextmanager
async def configured_runner(
    store: BeamStore,
    nats_url: str,
    config: Path,
    script: list[Any],
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[RunnerClient, ChatServer]]:
    """A runner service with the agents of `config` (riverbeam.yaml), on a store service over
    `store`, its model a chat-completions server playing `script`; yields a client of it and
    the model server."""
    async with ChatServer(script, api_key="k") as model:
        monkeypatch.setenv("BEAM_API_KEY", "k")
        monkeypatch.setenv("BEAM_API_BASE_URL", model.url)
        async with store_service(store) as store_url:
            settings = runner_settings(nats_url, store_url, agents=None, config=config)
            async with runner_service(settings) as address:
                client = RunnerClient(address)
                try:
                    yield client, model
                finally:
                    await client.aclose()


async def invoke_until_held(
    client: RunnerClient,
    js: JetStreamContext,
    agent: str,
    text: str,
    session_id: str,
    model: ModelConfig,
) -> AgentResult:
    """Invoke `agent` streaming, for a caller who may not confirm, and read its frames: they
    are gap-free and end in a done frame whose result is interrupted; that result."""
    ack = await client.run_invoke(
        InvokeRequest.parse(text_request(agent, text, session_id, stream=True)),
        model=model,
        grant=Grant(may_confirm=False),
    )
    assert isinstance(ack, StreamAck)
    paused = await collect(js, ack.request_id)
    assert_gap_free(paused)
    result = paused[-1].result
    assert paused[-1].type == "done" and result is not None and result.interrupted
    return result


def runner_settings(nats_url: str, store_url: str, **overrides: Any) -> RunnerSettings:
    values: dict[str, Any] = {
        "listen": "127.0.0.1:0",
        "store_url": store_url,
        "sandbox_url": None,
        "nats_url": nats_url,
        "agents": HOOK,
        "runner_id": f"runner-{uid()[:8]}",
        **overrides,
    }
    return RunnerSettings(**values)


# ---- services as processes ----------------------------------------------------------------------
class ServiceProcess:
    """`python -m services.cli serve <name>` as a child process in a session of its own.

    Leaving the context kills the child's whole process group (it is ours alone) and reaps it.
    """

    def __init__(self, name: str, env: dict[str, str], workdir: Path) -> None:
        self.name = name
        self.env = env
        self.ready_file = workdir / f"{name}-{uid()[:8]}.ready"
        self.log_path = workdir / f"{name}-{uid()[:8]}.log"
        self.proc: asyncio.subprocess.Process | None = None
        self.address = ""

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    async def __aenter__(self) -> ServiceProcess:
        args = [
            sys.executable, "-m", "services.cli", "serve", self.name,
            "--listen", "127.0.0.1:0", "--ready-file", str(self.ready_file),
        ]  # fmt: skip
        with self.log_path.open("ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                *args,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                env=self.env,
                cwd=str(REPO_ROOT),
                start_new_session=True,
            )
        try:
            async with asyncio.timeout(SLOW_GUARD_S):
                while True:
                    with contextlib.suppress(OSError):
                        address = self.ready_file.read_text().strip()
                        if ":" in address:
                            self.address = address
                            return self
                    if self.proc.returncode is not None:
                        raise AssertionError(
                            f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}"
                        )
                    await asyncio.sleep(0.05)
        except BaseException:
            await self.kill()
            raise

    async def kill(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()

    async def __aexit__(self, *exc: object) -> None:
        await self.kill()


def service_env(**values: str) -> dict[str, str]:
    """The environment of a service process: ours without RIVERBEAM_*, plus `values`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIVERBEAM_")}
    env.update(PYTHONUNBUFFERED="1", RIVERBEAM_LOG_LEVEL="INFO", RIVERBEAM_SHUTDOWN_GRACE_S="1")
    env.update(values)
    return env
