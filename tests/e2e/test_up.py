"""`riverbeam up` end to end: NATS and the four real services as processes, in-memory store.

One LocalStack per module serves the SDK and CLI checks; the last test runs `riverbeam up`
itself as a child process and stops it with SIGINT, then checks that nothing it started is
left running.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from riverbeam.client import RiverbeamClient
from riverbeam.stream import find_nats_server
from riverbeam.types import AgentResult, StreamAck, StreamChunk
from services.cli._up import LocalStack

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.nats,
    pytest.mark.skipif(find_nats_server() is None, reason="nats-server not found"),
    # Enabled by the lead once the four services land (the runner did not start yet when this
    # was written): delete this marker.
    pytest.mark.skip(reason="riverbeam up e2e: waiting for the services to land"),
]

AGENT = "assistant"  # the agent `riverbeam up` tells users to try first


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LocalStack]:
    data_dir = tmp_path_factory.mktemp("up")
    async with LocalStack(data_dir=data_dir, ready_timeout_s=90) as running:
        yield running


def _cli(*args: str, router: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RIVERBEAM_ROUTER": router, "COLUMNS": "200", "NO_COLOR": "1"}
    env.pop("RIVERBEAM_TOKEN", None)
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


def _processes_mentioning(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and int(entry.name) != os.getpid():
            pids.append(int(entry.name))
    return pids


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find leftover processes")
def test_riverbeam_up_runs_until_ctrl_c_and_leaves_nothing(tmp_path: Path) -> None:
    base = _free_base_port()
    data_dir = tmp_path / "data"
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "up", "--data-dir", str(data_dir), "--base-port", str(base)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
    )  # fmt: skip
    output: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            output.append(line)
            if "Ctrl-C stops everything" in line:
                break
        text = "".join(output)
        assert "riverbeam is up" in text, text
        assert f'riverbeam invoke assistant "hello" --router 127.0.0.1:{base}' in text
        for svc in ("router", "runner", "sandbox", "store", "nats"):
            assert (data_dir / "logs" / f"{svc}.log").exists()

        invoked = _cli("invoke", AGENT, "hello", router=f"127.0.0.1:{base}")
        assert invoked.returncode == 0, invoked.stderr

        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=60)
        output.append(rest)
        assert proc.returncode == 0, "".join(output)
        assert "stopped" in rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    leftovers: list[int] = []
    for _ in range(50):
        leftovers = _processes_mentioning(str(data_dir))
        if not leftovers:
            break
        time.sleep(0.1)
    assert leftovers == []
