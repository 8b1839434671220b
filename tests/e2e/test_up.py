"""`riverbeam up` end to end: NATS and the four real services as processes, in-memory store.

One LocalStack per module serves the SDK and CLI checks; the last tests run `riverbeam up`
itself as a child process, note the process ids of everything it started, and check that none
of them is left once `up` ends: stopped with Ctrl-C (SIGINT), after one of its services died,
and killed by its terminal closing (SIGHUP).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from e2e_kit import hermetic_env

from riverbeam.client import RiverbeamClient
from riverbeam.types import AgentResult, StreamAck, StreamChunk
from services.cli._up import LocalStack

pytestmark = [pytest.mark.e2e, pytest.mark.nats]

AGENT = "assistant"  # the agent `riverbeam up` tells users to try first


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(
    tmp_path_factory: pytest.TempPathFactory, nats_binary: str
) -> AsyncIterator[LocalStack]:
    data_dir = tmp_path_factory.mktemp("up")
    async with LocalStack(
        data_dir=data_dir, ready_timeout_s=90, base_env=hermetic_env()
    ) as running:
        yield running


def _cli(*args: str, router: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = hermetic_env(RIVERBEAM_ROUTER=router, COLUMNS="200", NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "services.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_endpoints_and_logs(stack: LocalStack) -> None:
    assert set(stack.endpoints) == {"nats", "router", "runner", "sandbox", "store"}
    for name in ("router", "runner", "sandbox", "store", "nats"):
        assert stack.log_path(name).exists()


@pytest.mark.asyncio(loop_scope="module")
async def test_sdk_invoke_follow_and_records(stack: LocalStack) -> None:
    async with RiverbeamClient(stack.router, timeout_s=60) as client:
        agents = [a.name for a in await client.list_agents()]
        assert AGENT in agents
        assert await client.list_models()

        result = await client.invoke(AGENT, "hello")
        assert isinstance(result, AgentResult)
        assert result.session_id

        ack = await client.invoke(AGENT, "hello again", session_id=result.session_id, stream=True)
        assert isinstance(ack, StreamAck)
        frames = [f async for f in client.follow(ack.request_id)]
        assert frames[-1].type == "done"
        assert [f.seq for f in frames] == list(range(1, len(frames) + 1))

        direct: list[StreamChunk] = [
            f async for f in client.follow_nats(stack.nats_url, ack.request_id, timeout_s=30)
        ]
        assert [f.to_json() for f in direct] == [f.to_json() for f in frames]

        messages = await client.list_messages(result.session_id)
        assert [m.seq for m in messages] == list(range(1, len(messages) + 1))
        assert len(messages) >= 4  # two turns, each a human and an ai message
        session = await client.get_session(result.session_id)
        assert session.session_id == result.session_id


@pytest.mark.asyncio(loop_scope="module")
async def test_cli_against_the_stack(stack: LocalStack) -> None:
    session_id = str(uuid.uuid4())
    invoked = await asyncio.to_thread(
        _cli, "invoke", AGENT, "hello", "--session", session_id, router=stack.router
    )
    assert invoked.returncode == 0, invoked.stderr
    assert "tokens" in invoked.stdout
    assert session_id in invoked.stdout

    as_json = await asyncio.to_thread(
        _cli, "invoke", AGENT, "more", "--session", session_id, "--json", router=stack.router
    )
    assert as_json.returncode == 0, as_json.stderr
    frames = [StreamChunk.parse(line) for line in as_json.stdout.splitlines()]
    assert frames[-1].type == "done"

    tree = await asyncio.to_thread(_cli, "session", session_id, router=stack.router)
    assert tree.returncode == 0, tree.stderr
    assert f"session {session_id}" in tree.stdout
    assert "#1 human" in tree.stdout

    agents = await asyncio.to_thread(_cli, "agents", "--json", router=stack.router)
    assert AGENT in [a["name"] for a in json.loads(agents.stdout)]

    missing = await asyncio.to_thread(_cli, "invoke", "no-such-agent", "hi", router=stack.router)
    assert missing.returncode == 2
    assert "error BEM-020" in missing.stderr
    assert "Traceback" not in missing.stderr


def _free_base_port() -> int:
    """A base port with four free ports after it (best effort)."""
    for _ in range(50):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            base = sock.getsockname()[1]
        if base + 3 > 65535:
            continue
        ok = True
        for port in range(base, base + 4):
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise RuntimeError("no four free ports in a row")


def _cmdline(pid: int) -> str | None:
    """A live process's command line; None when there is no such process (or a zombie)."""
    proc = Path("/proc") / str(pid)
    try:
        if (proc / "stat").read_text().rpartition(")")[2].split()[0] == "Z":
            return None
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except (OSError, IndexError):
        return None


def _descendants(root: int) -> dict[int, str]:
    """Every process below `root` (children, their children, ...) with its command line."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rpartition(")")[2].split()[1])
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                cmd = _cmdline(pid)
                if cmd is not None:
                    found[pid] = cmd
                    frontier.append(pid)
    return found


def _still_running(processes: dict[int, str]) -> dict[int, str]:
    """Those of `processes` that still run (the same pid with the same command line)."""
    return {pid: cmd for pid, cmd in processes.items() if _cmdline(pid) == cmd}


def _processes_mentioning(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        cmdline = _cmdline(int(entry.name))
        if cmdline is not None and text in cmdline:
            pids.append(int(entry.name))
    return pids


def _read_until_ready(proc: subprocess.Popen[str], output: list[str]) -> None:
    """Collect `up`'s output until it says how to stop it (or it exits)."""
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            return
        output.append(line)
        if "Ctrl-C stops everything" in line:
            return


def _stop(proc: subprocess.Popen[str], started: dict[int, str]) -> None:
    """Whatever happened: Ctrl-C for `up`, then SIGKILL for anything of it still running."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for pid in _still_running(started):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if proc.stdout is not None:  # a retried attempt's pipe, too: left open it warns (an error)
        proc.stdout.close()


@dataclass(slots=True)
class _Up:
    """A `riverbeam up` child process, ready, and what it started."""

    proc: subprocess.Popen[str]
    base: int
    data_dir: Path
    output: list[str]
    started: dict[int, str]

    @property
    def router(self) -> str:
        return f"127.0.0.1:{self.base}"


@contextlib.contextmanager
def _riverbeam_up(tmp_path: Path, *args: str, **env: str) -> Iterator[_Up]:
    """`riverbeam up` on four free ports, once it says it is up; stopped (by pid) afterwards."""
    for attempt in range(3):  # another process may take one of the four ports meanwhile
        base = _free_base_port()
        data_dir = tmp_path / f"data{attempt}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "services.cli", "up", "--data-dir", str(data_dir), "--base-port", str(base), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=hermetic_env(COLUMNS="200", NO_COLOR="1", **env),
        )  # fmt: skip
        up = _Up(proc, base, data_dir, [], {})
        try:
            _read_until_ready(proc, up.output)
            if proc.poll() is not None and "in use" in "".join(up.output):
                continue
            assert "riverbeam is up" in "".join(up.output), "".join(up.output)
            up.started = _descendants(proc.pid)
            yield up
        finally:
            _stop(proc, up.started)
        return
    pytest.fail("three free base ports were each taken before `riverbeam up` could bind them")


def _service_pids(up: _Up) -> dict[str, int]:
    return {
        svc: pid
        for svc in ("router", "runner", "sandbox", "store")
        for pid, cmd in up.started.items()
        if f"services.cli serve {svc} " in cmd
    }


needs_proc = pytest.mark.skipif(
    not Path("/proc").is_dir(), reason="needs /proc to find the processes"
)


@needs_proc
def test_riverbeam_up_runs_until_ctrl_c_and_leaves_nothing(
    tmp_path: Path, nats_binary: str
) -> None:
    with _riverbeam_up(tmp_path) as up:
        text = "".join(up.output)
        for offset, svc in enumerate(("router", "runner", "sandbox", "store")):
            assert svc in text and f"127.0.0.1:{up.base + offset}" in text, text
            assert (up.data_dir / "logs" / f"{svc}.log").exists()
        assert "nats://127.0.0.1:" in text, text
        assert f'riverbeam invoke assistant "hello" --router {up.router}' in text
        assert "console: http://127.0.0.1:" in text, text  # 8080, or a free port if taken

        assert sorted(_service_pids(up)) == ["router", "runner", "sandbox", "store"], up.started
        assert sum("nats-server" in cmd for cmd in up.started.values()) == 1, up.started

        invoked = _cli("invoke", AGENT, "hello", router=up.router)
        assert invoked.returncode == 0, invoked.stderr
        assert "Echo: hello" in invoked.stdout

        up.proc.send_signal(signal.SIGINT)
        rest, _ = up.proc.communicate(timeout=60)
        assert up.proc.returncode == 0, text + rest
        assert "stopped" in rest
        # `up` waited for each child: none is left, not even as a zombie.
        assert _still_running(up.started) == {}
        assert _processes_mentioning(str(up.data_dir)) == []


@needs_proc
def test_riverbeam_up_with_a_metrics_port_serves_metrics_on_every_service(
    tmp_path: Path, nats_binary: str
) -> None:
    """`RIVERBEAM_METRICS_PORT=9464 make up` (issue 17): a base port, one port per service."""
    import urllib.request

    metrics_base = _free_base_port()
    with _riverbeam_up(tmp_path, RIVERBEAM_METRICS_PORT=str(metrics_base)) as up:
        text = "".join(up.output)
        for offset in range(4):  # router, runner, sandbox, store
            url = f"http://127.0.0.1:{metrics_base + offset}/metrics"
            assert url in text, text
            with urllib.request.urlopen(url, timeout=10) as response:
                body = response.read().decode()
            assert "riverbeam_rpc_requests_total" in body or "python_info" in body, body[:200]
        assert "echo client" in text, text
        log = (up.data_dir / "logs" / "router.log").read_text()
        assert "riverbeam router listening on" in log
        up.proc.send_signal(signal.SIGINT)
        up.proc.communicate(timeout=60)
        assert up.proc.returncode == 0


@needs_proc
def test_riverbeam_up_demo_runs_the_readme_tour_as_printed(
    tmp_path: Path, nats_binary: str
) -> None:
    """`riverbeam up --demo`, then the README's commands: invoke author, approve, session."""
    import re

    import pygit2

    with _riverbeam_up(tmp_path, "--demo") as up:
        text = "".join(up.output)
        assert "skills call model demo-model at http://127.0.0.1:" in text, text
        assert 'riverbeam invoke author "Add a CONTRIBUTING.md and push it"' in text, text
        invoked = _cli("invoke", "author", "Add a CONTRIBUTING.md and push it", router=up.router)
        assert invoked.returncode == 3, invoked.stdout + invoked.stderr
        assert "→ tool write_file" in invoked.stdout and "model demo-model" in invoked.stdout
        assert "⏸ waiting for approval" in invoked.stdout
        approve = re.search(r"approve: (riverbeam approve \S+ --session \S+)", invoked.stdout)
        assert approve is not None, invoked.stdout
        approved = _cli(*approve.group(1).split()[1:], router=up.router)
        assert approved.returncode == 0, approved.stdout + approved.stderr
        session = re.search(r"--session (\S+)", approve.group(1))
        assert session is not None
        # The session's own branch (a workspace per session, docs/isolation.md).
        branch = f"riverbeam/s-{session.group(1)}"
        assert f"Pushed {branch} to origin" in approved.stdout, approved.stdout
        origin = pygit2.Repository(str(up.data_dir / "demo" / "origins" / "origin.git"))
        assert f"refs/heads/{branch}" in list(origin.references)
        # The two runs' tokens, by the model that served them (GetUsage through the router).
        usage = _cli("usage", "--by", "session", "--since", "1h", "--json", router=up.router)
        assert usage.returncode == 0, usage.stdout + usage.stderr
        report = json.loads(usage.stdout)
        [row] = report["rows"]
        assert row["model"] == "demo-model" and row["runs"] == 2, report
        assert row["total_tokens"] > 0 and report["total"]["total_tokens"] == row["total_tokens"]
        up.proc.send_signal(signal.SIGINT)
        up.proc.communicate(timeout=60)
        assert up.proc.returncode == 0


@needs_proc
def test_riverbeam_up_stops_everything_when_a_service_dies(
    tmp_path: Path, nats_binary: str
) -> None:
    with _riverbeam_up(tmp_path) as up:
        os.kill(_service_pids(up)["runner"], signal.SIGKILL)
        rest, _ = up.proc.communicate(timeout=60)
        assert up.proc.returncode == 1, rest
        assert "runner exited unexpectedly" in rest, rest
        assert f"logs kept in {up.data_dir / 'logs'}" in rest.replace("\n", ""), rest
        assert _still_running(up.started) == {}
        assert _processes_mentioning(str(up.data_dir)) == []


@needs_proc
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the death signal is Linux's")
def test_riverbeam_up_killed_by_its_terminal_takes_its_services_with_it(
    tmp_path: Path, nats_binary: str
) -> None:
    """SIGHUP (the terminal closed) ends `up` at once; its children must not outlive it."""
    with _riverbeam_up(tmp_path) as up:
        assert len(up.started) == 6, up.started  # NATS, the four services and the console
        up.proc.send_signal(signal.SIGHUP)
        up.proc.communicate(timeout=60)
        assert up.proc.returncode == -signal.SIGHUP
        deadline = time.monotonic() + 60  # a guard: the services drain, then exit
        while _still_running(up.started) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _still_running(up.started) == {}
        assert _processes_mentioning(str(up.data_dir)) == []
