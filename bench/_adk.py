"""Google ADK's api_server as a peer in the four-process benchmark (issue 16's ADK column).

Issue 16 sets some goals against ADK (an invoke below ADK's create + run, invokes/s at c32 at
least 2x ADK's in memory and 1.3x on Postgres) from figures measured on another machine. Here
ADK runs in the same run, interleaved with our stacks and driven by the same client process,
so those goals are ratios of one run like every other row.

What runs: `adk api_server` (FastAPI on uvicorn, one process) from its own virtualenv
(bench/.adk, made by `make bench-stack` from bench/adk-requirements.txt), serving one app,
`assistant`: an LlmAgent whose model echoes the user's text, as our echo agent's model does, so
both sides run their agent loop around a model that costs nothing. Sessions in memory, or on
PostgreSQL (its DatabaseSessionService on asyncpg) in a database of its own; artifacts in memory
(the echo agent makes none). It is driven over HTTP/1.1 with keep-alive (aiohttp: httpx costs
~0.8 ms of the client's CPU a request here, which would count against ADK's latency):
- an invoke on a new session is POST .../sessions then POST /run (ADK has no create-on-run in
  its default configuration); a later turn is POST /run;
- a stream is POST /run_sse with `streaming: true` on a session made beforehand: the first
  and the last server-sent event stand for our first and terminal frame at a NATS subscriber.

Settings (environment): RIVERBEAM_BENCH_ADK=0 leaves the peer out, =1 fails the benchmark when
ADK cannot be run; RIVERBEAM_BENCH_ADK_PYTHON names another interpreter that has google-adk.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from bench._kit import per_call

ROOT = Path(__file__).resolve().parent.parent
APP = "assistant"
USER = "bench"
_READY_TIMEOUT_S = 120.0

# The app ADK serves: its agent loop (LlmAgent) around a model that answers with the user's
# last text, like Riverbeam's echo model client.
_AGENT_PY = '''\
"""The benchmark's echo agent for ADK (written by bench/_adk.py)."""

from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class EchoLlm(BaseLlm):
    model: str = "echo"

    async def generate_content_async(
        self, llm_request, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        text = ""
        for content in reversed(llm_request.contents):
            if content.role == "user":
                text = "".join(part.text or "" for part in content.parts or [])
                break
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


root_agent = LlmAgent(name="assistant", model=EchoLlm(), instruction="Repeat the user's message.")
'''


class AdkUnavailable(RuntimeError):
    """ADK was asked for (RIVERBEAM_BENCH_ADK=1) but cannot be run here."""


def adk_python() -> Path | None:
    """The interpreter to run ADK with, or None when the peer is left out.

    Raises:
        AdkUnavailable: RIVERBEAM_BENCH_ADK=1 and no interpreter with google-adk was found.
    """
    wanted = os.environ.get("RIVERBEAM_BENCH_ADK", "")
    if wanted == "0":
        return None
    python = Path(os.environ.get("RIVERBEAM_BENCH_ADK_PYTHON") or ROOT / "bench/.adk/bin/python")
    found = python.exists() and (
        subprocess.run(
            [str(python), "-c", "import google.adk"], capture_output=True, timeout=120
        ).returncode
        == 0
    )
    if found:
        return python
    if wanted == "1":
        raise AdkUnavailable(
            f"RIVERBEAM_BENCH_ADK=1 but {python} cannot import google.adk "
            "(make bench-stack installs it into bench/.adk)"
        )
    return None


def adk_database_url(pg_url: str, database: str) -> str:
    """`pg_url` (postgresql://...) on another database, in the form SQLAlchemy's asyncpg
    dialect takes (postgresql+asyncpg://...), for ADK's --session_service_uri."""
    parts = urlsplit(pg_url)
    return urlunsplit(("postgresql+asyncpg", parts.netloc, f"/{database}", "", ""))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class AdkServer:
    """`adk api_server` as a child process serving the echo app; `url` and `pid` once ready."""

    def __init__(
        self,
        python: Path,
        workdir: Path,
        *,
        name: str,
        session_uri: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self._python = python
        self._dir = workdir / f"adk-{uuid.uuid4().hex[:8]}"
        self.name = name
        self._session_uri = session_uri
        self._env = env
        self._proc: asyncio.subprocess.Process | None = None
        self.url = ""
        self.log = self._dir / "adk.log"

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def _write_app(self) -> Path:
        """The agents directory ADK is given: one app, the echo agent."""
        app = self._dir / "apps" / APP
        app.mkdir(parents=True)
        (app / "__init__.py").write_text("from . import agent\n", encoding="utf-8")
        (app / "agent.py").write_text(_AGENT_PY, encoding="utf-8")
        return app.parent

    async def __aenter__(self) -> AdkServer:
        apps = await asyncio.to_thread(self._write_app)
        port = _free_port()
        # Explicit services: without them ADK keeps sessions in a SQLite file in the agents
        # directory (--use_local_storage, its default), which is not its in-memory service.
        args = [
            "-m", "google.adk.cli", "api_server", "--host", "127.0.0.1", "--port", str(port),
            "--session_service_uri", self._session_uri or "memory://",
            "--artifact_service_uri", "memory://",
        ]  # fmt: skip
        log = await asyncio.to_thread(self.log.open, "wb")
        try:
            self._proc = await asyncio.create_subprocess_exec(
                str(self._python),
                *args,
                str(apps),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=str(self._dir),
                env=self._env,
            )
        finally:
            log.close()  # the child has its own descriptor
        self.url = f"http://127.0.0.1:{port}"
        try:
            await self._ready()
        except BaseException:
            await self._stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stop()

    async def _ready(self) -> None:
        deadline = time.monotonic() + _READY_TIMEOUT_S
        timeout = aiohttp.ClientTimeout(total=5)
        async with aiohttp.ClientSession(self.url, timeout=timeout) as http:
            while time.monotonic() < deadline:
                assert self._proc is not None
                if self._proc.returncode is not None:
                    break
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    async with http.get("/list-apps") as resp:
                        if resp.status == 200:
                            return
                await asyncio.sleep(0.2)
        text = await asyncio.to_thread(self.log.read_text, encoding="utf-8", errors="replace")
        tail = text[-2000:]
        raise RuntimeError(f"{self.name}: adk api_server did not start; its log ends:\n{tail}")

    async def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.returncode is not None:
            return
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()

    def to_json(self, database: str | None = None) -> dict[str, Any]:
        return {"name": self.name, "url": self.url, "pids": {"adk": self.pid}, "database": database}


Samples = dict[str, list[float]]


class AdkClient:
    """The benchmark's client of one ADK server: the cases of bench/_driver.py's StackClient
    that ADK has (no FollowStream, no stored-runs fill), timed the same way."""

    def __init__(self, spec: dict[str, Any], pg: Any, text: str, reaped: dict[str, int]) -> None:
        """`reaped`: the ended Postgres backends' entry (bench._driver.reaped_backends)."""
        self.reaped = reaped
        self.name: str = spec["name"]
        self.pids: dict[str, int] = spec["pids"]
        self.database: str | None = spec.get("database")
        self.pg = pg
        self._text = text
        self._url: str = spec["url"]
        self._http: aiohttp.ClientSession | None = None
        self.history_session = ""

    @property
    def http(self) -> aiohttp.ClientSession:
        """The client's session, made on first use (it belongs to the running loop)."""
        if self._http is None:
            self._http = aiohttp.ClientSession(
                self._url,
                timeout=aiohttp.ClientTimeout(total=60),
                connector=aiohttp.TCPConnector(limit=64),
            )
        return self._http

    def _message(self, session_id: str, *, streaming: bool = False) -> dict[str, Any]:
        return {
            "app_name": APP,
            "user_id": USER,
            "session_id": session_id,
            "new_message": {"role": "user", "parts": [{"text": self._text}]},
            "streaming": streaming,
        }

    async def create(self) -> str:
        session_id = str(uuid.uuid4())
        path = f"/apps/{APP}/users/{USER}/sessions"
        async with self.http.post(path, json={"session_id": session_id}) as resp:
            resp.raise_for_status()
            await resp.read()
        return session_id

    async def run(self, session_id: str) -> None:
        async with self.http.post("/run", json=self._message(session_id)) as resp:
            resp.raise_for_status()
            events = await resp.json()
        assert events and events[-1]["content"]["parts"][0]["text"] == self._text, events

    async def invoke(self) -> None:
        await self.run(await self.create())

    async def new_c1(self, n: int) -> Samples:
        return {"new": await per_call(self.invoke)(n)}

    async def turn2_c1(self, n: int) -> Samples:
        session_id = ""

        async def first_turn() -> None:
            nonlocal session_id
            session_id = await self.create()
            await self.run(session_id)

        return {"turn2": await per_call(lambda: self.run(session_id), prepare=first_turn)(n)}

    async def prepare_history(self, turns: int) -> None:
        self.history_session = await self.create()
        for _ in range(turns):
            await self.run(self.history_session)

    async def history_c1(self, n: int) -> Samples:
        return {"history": await per_call(lambda: self.run(self.history_session))(n)}

    async def stream_c1(self, n: int) -> Samples:
        first: list[float] = []
        done: list[float] = []
        for _ in range(n):
            session_id = await self.create()
            arrived: list[float] = []
            start = time.perf_counter()
            body = self._message(session_id, streaming=True)
            async with self.http.post("/run_sse", json=body) as resp:
                resp.raise_for_status()
                async for line in resp.content:
                    if line.startswith(b"data:"):
                        arrived.append(time.perf_counter())
            assert arrived, "no server-sent event"
            first.append(arrived[0] - start)
            done.append(time.perf_counter() - start)
        return {"first": first, "done": done}

    async def backend_pids(self) -> dict[str, int]:
        if self.pg is None or self.database is None:
            return {}
        rows = await self.pg.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = $1", self.database
        )
        return {f"postgres[{r['pid']}]": int(r["pid"]) for r in rows} | self.reaped

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()
