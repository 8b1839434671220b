"""The four services as processes on real NATS and real PostgreSQL, driven like a user would.

One stack serves the whole module: the store on its own Postgres schema, the runner's built-in
agents pointed at the scriptable chat-completions server (a child process) and the author
skill's workspace pushing to a local bare repository the sandbox allows. Each test scripts the
model replies it needs, then talks to the router through the SDK and the `riverbeam` CLI.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pygit2
import pytest
import pytest_asyncio
from e2e_kit import (
    GUARD_S,
    SERVICE_NAMES,
    ChatProcess,
    CliResult,
    assert_sequenced,
    cli_env,
    health_status,
    nats_tap,
    pg_schema,
    reflected_services,
    run_cli,
    running_stack,
)
from grpc_health.v1 import health_pb2

from riverbeam.client import RiverbeamClient
from riverbeam.core.errors import RiverbeamError
from riverbeam.types import AgentResult, StreamAck, StreamChunk
from services.cli._up import LocalStack
from tests.support.chat_server import call, delayed, http_error, text, tool_calls

pytestmark = [pytest.mark.e2e, pytest.mark.nats, pytest.mark.postgres]
module_loop = pytest.mark.asyncio(loop_scope="module")


def branch_of(session_id: str) -> str:
    """The branch of a session's own workspace (workspace policy "session", the default)."""
    return f"riverbeam/s-{session_id}"


SLOW_S = 30.0  # a model reply held this long: the tests end the run long before


@dataclass(frozen=True, slots=True)
class Env:
    stack: LocalStack
    chat: ChatProcess
    origin: Path  # the bare repository the author workspace pushes to
    workspaces: Path  # the sandbox's base directory (a workspace per session under it)
    pg_url: str
    schema: str

    @property
    def router(self) -> str:
        return self.stack.router

    def workspace(self, session_id: str) -> Path:
        """A session's working tree, as the sandbox keeps it."""
        return self.workspaces / f"s-{session_id}" / "tree"

    def client(self) -> RiverbeamClient:
        return RiverbeamClient(self.stack.router, timeout_s=GUARD_S)

    async def cli(self, *args: str) -> CliResult:
        return await run_cli(*args, router=self.stack.router)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env(
    tmp_path_factory: pytest.TempPathFactory, pg_url: str, nats_url: str
) -> AsyncIterator[Env]:
    root = tmp_path_factory.mktemp("flows")
    origin = root / "origins" / "origin.git"
    pygit2.init_repository(str(origin), bare=True)
    async with pg_schema(pg_url, "e2e_flows") as schema, ChatProcess(root / "chat") as chat:
        overrides = {
            "store": {"RIVERBEAM_DB_SCHEMA": schema},
            "sandbox": {"RIVERBEAM_ALLOWED_ORIGIN_PREFIXES": json.dumps([str(origin)])},
            "runner": {
                **chat.model_env(),
                "RIVERBEAM_WORKSPACE_ORIGIN": str(origin),
            },
        }
        async with running_stack(
            database_url=pg_url, nats_url=nats_url, data_dir=root / "data", env_overrides=overrides
        ) as stack:
            yield Env(stack, chat, origin, stack.data_dir / "workspaces", pg_url, schema)


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def fresh_script(env: Env) -> None:
    """Each test starts with an empty model script (an empty script echoes the user)."""
    await env.chat.clear()


# ---- 1. echo invoke ----------------------------------------------------------------------------
@module_loop
async def test_echo_invoke_with_the_sdk_lands_in_postgres(env: Env) -> None:
    async with env.client() as client:
        result = await client.invoke("assistant", "hello from the sdk")
        assert isinstance(result, AgentResult)
        assert result.text == "Echo: hello from the sdk"
        assert result.session_id and result.run_id

        ack = await client.invoke(
            "assistant", "and streamed", session_id=result.session_id, stream=True
        )
        assert isinstance(ack, StreamAck)
        frames = [f async for f in client.follow(ack.request_id, timeout_s=GUARD_S)]
        assert_sequenced(frames)
        assert frames[-1].type == "done"
        assert frames[-1].result is not None
        assert frames[-1].result.text == "Echo: and streamed"

        run = await client.get_run(ack.run_id or "")
        assert run.status == "completed"
        messages = await client.list_messages(result.session_id)
    assert [(m.seq, m.role) for m in messages] == [(1, "human"), (2, "ai"), (3, "human"), (4, "ai")]

    # The records are in PostgreSQL, in the module's schema (not in a store's memory).
    conn = await asyncpg.connect(env.pg_url)
    try:
        rows = await conn.fetch(
            f'SELECT seq, role FROM "{env.schema}".messages WHERE session_id = $1 ORDER BY seq',
            result.session_id,
        )
    finally:
        await conn.close()
    assert [(r["seq"], r["role"]) for r in rows] == [(m.seq, m.role) for m in messages]


@module_loop
async def test_echo_invoke_with_the_cli(env: Env) -> None:
    session_id = str(uuid.uuid4())
    waited = await env.cli(
        "invoke",
        "assistant",
        "hello from the cli",
        "--session",
        session_id,
        "--no-stream",
        "--json",
    )
    assert waited.returncode == 0, waited
    result = AgentResult.model_validate(json.loads(waited.stdout))
    assert result.text == "Echo: hello from the cli"
    assert result.session_id == session_id

    streamed = await env.cli("invoke", "assistant", "streamed", "--session", session_id, "--json")
    assert streamed.returncode == 0, streamed
    frames = [StreamChunk.parse(line) for line in streamed.stdout.splitlines()]
    assert_sequenced(frames)
    assert frames[-1].type == "done"
    assert frames[-1].result is not None
    assert frames[-1].result.text == "Echo: streamed"

    shown = await env.cli("invoke", "assistant", "plain text", "--session", session_id)
    assert shown.returncode == 0, shown
    assert "Echo: plain text" in shown.stdout
    assert f"session {session_id}" in shown.stdout


# ---- 2. approve and decline a git push ---------------------------------------------------------
def _answer_command(output: CliResult, verb: str) -> list[str]:
    """The `riverbeam approve|decline <interaction> --session <sid>` an interrupted run printed."""
    found = re.search(rf"^{verb}: riverbeam ({verb} \S+ --session \S+)$", output.stdout, re.M)
    assert found, output
    return found.group(1).split()


def _commit_on(repo: pygit2.Repository, branch: str) -> pygit2.Commit | None:
    ref = repo.references.get(f"refs/heads/{branch}")
    if ref is None:
        return None
    commit = repo[ref.target]
    assert isinstance(commit, pygit2.Commit)
    return commit


def _read(repo: pygit2.Repository, commit: pygit2.Commit, path: str) -> str | None:
    try:
        entry = commit.tree[path]
    except KeyError:
        return None
    blob = repo[entry.id]
    assert isinstance(blob, pygit2.Blob)
    return blob.data.decode()


def _author_script(path: str, body: str, message: str, finish: str) -> list[dict[str, object]]:
    return [
        tool_calls([call("write_file", {"path": path, "body": body})], text="Writing it."),
        tool_calls([call("git_add", {"path": path})]),
        tool_calls([call("git_commit", {"message": message})]),
        tool_calls([call("git_push", {})], text="Committed; may I push it?"),
        text(finish),
    ]


@module_loop
async def test_author_push_waits_for_approval_then_reaches_the_origin(env: Env) -> None:
    session_id = str(uuid.uuid4())
    branch = branch_of(session_id)
    body = "# Notes\n\nWritten end to end.\n"
    await env.chat.push(*_author_script("notes/e2e.md", body, "Add e2e notes", "Pushed it."))

    invoked = await env.cli("invoke", "author", "Add notes and publish", "--session", session_id)
    assert invoked.returncode == 3, invoked  # interrupted: waiting for approval
    assert "git_push" in invoked.stdout
    request = re.search(r"request ([0-9a-f-]{36})", invoked.stderr)
    assert request, invoked
    replay = await env.cli("follow", request.group(1))
    assert replay.returncode == 3, replay  # following it again ends the same way
    assert _commit_on(pygit2.Repository(str(env.origin)), branch) is None  # nothing pushed yet

    pending = await env.cli("pending", "--session", session_id, "--json")
    assert pending.returncode == 0, pending
    [action] = json.loads(pending.stdout)
    assert (action["tool"], action["status"]) == ("git_push", "pending")
    # The approver sees the workspace and the branch the push is for, and what it would push;
    # the approval is bound to the previewed state.
    head = action["preview"]["state"]["head"]
    assert action["args"] == {
        "ref": branch,
        "workspace": f"s-{session_id}",
        "expect": {"head": head, "origin": "absent"},
    }
    assert action["preview"]["commits"][0]["id"] == head

    approved = await env.cli(*_answer_command(invoked, "approve"))
    assert approved.returncode == 0, approved
    assert "Pushed it." in approved.stdout
    assert await env.chat.remaining() == 0

    origin = pygit2.Repository(str(env.origin))
    pushed = _commit_on(origin, branch)
    assert pushed is not None, f"{branch} is not on the origin"
    assert pushed.message.strip() == "Add e2e notes"
    assert _read(origin, pushed, "notes/e2e.md") == body
    local = _commit_on(pygit2.Repository(str(env.workspace(session_id))), branch)
    assert local is not None and local.id == pushed.id  # exactly the workspace's commit

    async with env.client() as client:
        done = await client.get_action(action["action_id"])
        assert (done.status, done.outcome) == ("resolved", "approved_ran")
        assert await client.list_pending_actions(session_id=session_id) == []
    tree = await env.cli("session", session_id)
    assert tree.returncode == 0, tree
    assert f"action {action['action_id']}" in tree.stdout and "git_push" in tree.stdout

    # A second change in the same session, declined: the origin does not move.
    await env.chat.push(
        *_author_script("notes/declined.md", "not this one\n", "Add declined notes", "Not pushed.")
    )
    again = await env.cli("invoke", "author", "One more, publish it", "--session", session_id)
    assert again.returncode == 3, again
    declined = await env.cli(*_answer_command(again, "decline"))
    assert declined.returncode == 0, declined
    assert "Not pushed." in declined.stdout

    origin = pygit2.Repository(str(env.origin))
    after = _commit_on(origin, branch)
    assert after is not None and after.id == pushed.id
    mine = [r for r in origin.references if session_id in r]
    assert mine == [f"refs/heads/{branch}"]
    local = _commit_on(pygit2.Repository(str(env.workspace(session_id))), branch)
    assert local is not None and local.parents[0].id == pushed.id  # committed, never pushed
    assert local.message.strip() == "Add declined notes"

    # The model was told the push was declined.
    last = (await env.chat.completions())[-1]["body"]["messages"]
    assert any(m["role"] == "tool" and "declined" in str(m.get("content")) for m in last)


@module_loop
async def test_a_cancelled_sessions_draft_never_reaches_another_sessions_push(env: Env) -> None:
    """Issue 11, item 1: A writes a private draft and is cancelled before committing; B stages
    everything, commits, and its approved push reaches the origin without A's draft."""
    session_a, session_b = str(uuid.uuid4()), str(uuid.uuid4())
    draft = "notes/a-private-draft.md"
    before = len(await env.chat.completions())
    await env.chat.push(
        tool_calls([call("write_file", {"path": draft, "body": "A's card PIN is 4321\n"})]),
        delayed(text("never sent"), SLOW_S),
    )
    async with env.client() as client:
        ack = await client.invoke("author", "draft it", session_id=session_a, stream=True)
        assert isinstance(ack, StreamAck)
        await env.chat.wait_for_completions(before + 2)  # the draft is written; the model stalls
        await client.cancel(ack.request_id)
        last = [f async for f in client.follow(ack.request_id, timeout_s=GUARD_S)][-1]
        assert last.error_code == "BEM-033"

        await env.chat.clear()
        await env.chat.push(
            tool_calls([call("write_file", {"path": "notes/b.md", "body": "B's notes\n"})]),
            tool_calls([call("git_add", {"path": "."})]),
            tool_calls([call("git_commit", {"message": "B's notes"})]),
            tool_calls([call("git_push", {})], text="May I push?"),
            text("Pushed."),
        )
        first = await client.invoke("author", "notes, then push", session_id=session_b)
        assert isinstance(first, AgentResult) and first.interrupted, first
        staged = [c.result for c in first.tool_calls if c.tool_name == "git_add"]
        assert staged == [{"staged": ["notes/b.md"], "count": 1, "truncated": False}]
        actions = await client.pending_for(session_b, first.interaction_id or "")
        assert [(a.tool, {k: v for k, v in a.args.items() if k != "expect"}) for a in actions] == [
            ("git_push", {"ref": branch_of(session_b), "workspace": f"s-{session_b}"})
        ]
        assert actions[0].preview is not None
        assert actions[0].args["expect"]["head"] == actions[0].preview.state.head
        approved = await client.approve(session_b, first.interaction_id or "", actions=actions)
        assert isinstance(approved, StreamAck)
        done = [f async for f in client.follow(approved.request_id, timeout_s=GUARD_S)][-1]
        assert done.type == "done" and done.result is not None, done
        assert done.result.text == "Pushed."

    origin = pygit2.Repository(str(env.origin))
    tip = _commit_on(origin, branch_of(session_b))
    assert tip is not None and tip.message.strip() == "B's notes"
    assert _read(origin, tip, "notes/b.md") == "B's notes\n"
    assert _read(origin, tip, draft) is None
    assert not [r for r in origin.references if session_a in r]
    # A's draft is still in A's own workspace, uncommitted: what A's next run will see.
    assert (env.workspace(session_a) / draft).read_text() == "A's card PIN is 4321\n"
    assert _commit_on(pygit2.Repository(str(env.workspace(session_a))), branch_of(session_a))


@module_loop
async def test_concurrent_author_runs_of_two_sessions_both_commit(env: Env) -> None:
    """Issue 11, item 1: two sessions' author runs at once never break each other (BEM-321)."""
    sessions = [str(uuid.uuid4()), str(uuid.uuid4())]
    # One model turn writes, stages everything and commits: whichever run gets a turn does all
    # of it in its own workspace, however the two runs' model calls interleave.
    await env.chat.push(
        *(
            tool_calls(
                [
                    call("write_file", {"path": f"notes/turn-{n}.md", "body": f"turn {n}\n"}),
                    call("git_add", {"path": "."}),
                    call("git_commit", {"message": f"turn {n}"}),
                ]
            )
            for n in range(2)
        ),
        text("Committed."),
        text("Committed."),
    )
    async with env.client() as client:
        results = await asyncio.gather(
            *(client.invoke("author", "commit a note", session_id=s) for s in sessions)
        )
    commits = 0
    for session, result in zip(sessions, results, strict=True):
        assert isinstance(result, AgentResult) and result.text == "Committed.", result
        for record in result.tool_calls:
            assert "error" not in (record.result or {}), record
            if record.tool_name == "git_commit":
                commits += 1
                assert record.result["branch"] == branch_of(session)
                staged = [c.result for c in result.tool_calls if c.tool_name == "git_add"]
                assert all(len(s["staged"]) == 1 for s in staged), staged
    assert commits == 2


# ---- 3. a late follow replays what a live subscriber saw ---------------------------------------
@module_loop
async def test_late_follow_replays_every_frame_a_live_subscriber_saw(env: Env) -> None:
    request_id = str(uuid.uuid4())
    await env.chat.push(
        tool_calls([call("list_tree", {})], text="Looking first."),
        text("The tree has a README and some notes.", chunks=["The tree ", "has a README ", "and some notes."]),
    )  # fmt: skip
    async with nats_tap(env.stack.nats_url, request_id) as tap, env.client() as client:
        ack = await client.invoke(
            "author", "What is in the tree?", stream=True, request_id=request_id
        )
        assert isinstance(ack, StreamAck) and ack.request_id == request_id
        await tap.wait_terminal()
        run = await client.get_run(ack.run_id or "")
    live = tap.frames
    assert_sequenced(live)
    assert live[-1].type == "done"
    assert {"chunk", "tool", "done"} <= {f.type for f in live}
    # Each frame went out with its deduplication id, and the done frame is the recorded result.
    assert tap.msg_ids == [f"{request_id}:{f.seq}" for f in live]
    assert live[-1].result is not None and run.result is not None
    assert live[-1].result.to_json_dict() == run.result.to_json_dict()

    # Through the router: the same JSON values (the relay is protobuf, whose Struct does not
    # keep the key order of free-form objects such as tool results).
    followed = await env.cli("follow", request_id, "--json")
    assert followed.returncode == 0, followed
    assert followed.json_lines() == [json.loads(raw) for raw in tap.raw]

    # Straight from JetStream: the very bytes that were published.
    direct = await env.cli("follow", request_id, "--json", "--nats", env.stack.nats_url)
    assert direct.returncode == 0, direct
    assert direct.stdout.splitlines() == tap.raw

    # Picking up after frame 3 replays the rest.
    rest = await env.cli("follow", request_id, "--json", "--after", "3")
    assert rest.returncode == 0, rest
    assert rest.json_lines() == [json.loads(raw) for raw in tap.raw[3:]]


# ---- 4. cancel a run blocked in the model call -------------------------------------------------
async def _blocked_author_run(
    env: Env, client: RiverbeamClient, request_id: str | None = None
) -> StreamAck:
    """An author run that is waiting for a (held) model reply."""
    before = len(await env.chat.completions())
    await env.chat.push(delayed(text("too late"), SLOW_S))
    ack = await client.invoke("author", "take your time", stream=True, request_id=request_id)
    assert isinstance(ack, StreamAck)
    await env.chat.wait_for_completions(before + 1)
    return ack


async def _assert_cancelled(client: RiverbeamClient, ack: StreamAck) -> list[StreamChunk]:
    frames = [f async for f in client.follow(ack.request_id, timeout_s=GUARD_S)]
    assert_sequenced(frames)
    assert (frames[-1].type, frames[-1].error_code) == ("error", "BEM-033")
    assert "too late" not in json.dumps([f.to_json_dict() for f in frames])
    run = await client.get_run(ack.run_id or "")
    assert (run.status, run.error_code) == ("cancelled", "BEM-033")
    return frames


@module_loop
async def test_cli_cancel_stops_a_run_waiting_for_the_model(env: Env) -> None:
    request_id = str(uuid.uuid4())
    async with nats_tap(env.stack.nats_url, request_id) as tap, env.client() as client:
        ack = await _blocked_author_run(env, client, request_id)
        # Frames go out as they are made: the run is still waiting for the model, and a live
        # subscriber already has its first frames (and no terminal one).
        await tap.wait_frames(2)
        assert [f.type for f in tap.frames[:2]] == ["placeholder", "thinking"]
        assert not tap.terminal.is_set()

        cancelled = await env.cli("cancel", request_id, "--reason", "changed my mind")
        assert cancelled.returncode == 0, cancelled
        assert cancelled.stdout.strip() == "cancelled"
        frames = await _assert_cancelled(client, ack)
        await tap.wait_terminal()
        assert [f.to_json_dict() for f in tap.frames] == [f.to_json_dict() for f in frames]

        again = await env.cli("cancel", request_id)
        assert again.returncode == 0, again
        assert "no live run" in again.stdout

    followed = await env.cli("follow", request_id)
    assert followed.returncode == 4, followed  # the run was cancelled
    assert "error BEM-033" in followed.stderr


@module_loop
async def test_sdk_cancel_ends_a_followed_cli_invoke(env: Env) -> None:
    before = len(await env.chat.completions())
    await env.chat.push(delayed(text("too late"), SLOW_S))
    proc = await asyncio.create_subprocess_exec(
        *_python_cli("invoke", "author", "take your time"),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(env.router),
    )
    try:
        assert proc.stderr is not None
        header = (await asyncio.wait_for(proc.stderr.readline(), GUARD_S)).decode()
        found = re.search(r"request ([0-9a-f-]{36})", header)
        assert found, header
        request_id = found.group(1)
        await env.chat.wait_for_completions(before + 1)
        async with env.client() as client:
            assert await client.cancel(request_id, reason="stop") is True
            out, err = await asyncio.wait_for(proc.communicate(), GUARD_S)
            assert proc.returncode == 4, (out, err)  # the run failed: cancelled
            assert "error BEM-033" in err.decode()
            assert "Traceback" not in err.decode()
            assert await client.cancel(request_id) is False
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def _python_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "services.cli", *args]


# ---- more across the processes ----------------------------------------------------------------
@module_loop
async def test_two_concurrent_approvals_run_the_push_once(env: Env) -> None:
    session_id = str(uuid.uuid4())
    script = _author_script("notes/race.md", "raced\n", "Add race notes", "Pushed the race.")
    await env.chat.push(*script[:-1])
    async with env.client() as client:
        ack = await client.invoke("author", "race me", session_id=session_id, stream=True)
        assert isinstance(ack, StreamAck)
        done = [f async for f in client.follow(ack.request_id, timeout_s=GUARD_S)][-1]
        assert done.result is not None and done.result.interrupted
        actions = await client.pending_for(session_id, ack.interaction_id)
        assert [a.tool for a in actions] == ["git_push"]

        await env.chat.push(script[-1], script[-1])
        answers = await asyncio.gather(
            client.approve(session_id, ack.interaction_id, actions=actions),
            client.approve(session_id, ack.interaction_id, actions=actions),
            return_exceptions=True,
        )
        acks = [a for a in answers if isinstance(a, StreamAck)]
        refused = [a for a in answers if not isinstance(a, StreamAck)]
        assert len(acks) == 1, answers
        # The loser is refused and changes nothing: BEM-030 while the winner's run holds the
        # session (the busy check comes before the compare-and-set), BEM-066 after it.
        assert [getattr(e, "bem", e) for e in refused] == ["BEM-066"], answers
        frames = [f async for f in client.follow(acks[0].request_id, timeout_s=GUARD_S)]
        assert_sequenced(frames)
        assert frames[-1].type == "done"
        with pytest.raises(RiverbeamError) as late:
            await client.approve(session_id, ack.interaction_id, actions=actions)
        assert late.value.bem == "BEM-066"
        pushes = [f.data for f in frames if f.data is not None and f.data.tool_name == "git_push"]
        assert [d.type for d in pushes] == ["action", "tool_result"]  # announced, ran once
        action = await client.get_action(actions[0].action_id)
        assert (action.status, action.outcome) == ("resolved", "approved_ran")
    origin = pygit2.Repository(str(env.origin))
    pushed = _commit_on(origin, branch_of(session_id))
    assert pushed is not None and pushed.message.strip() == "Add race notes"


@module_loop
async def test_a_second_turn_while_the_session_is_busy_is_refused(env: Env) -> None:
    session_id = str(uuid.uuid4())
    before = len(await env.chat.completions())
    await env.chat.push(delayed(text("too late"), SLOW_S))
    async with env.client() as client:
        ack = await client.invoke("author", "slow", session_id=session_id, stream=True)
        assert isinstance(ack, StreamAck)
        await env.chat.wait_for_completions(before + 1)
        try:
            busy = await env.cli("invoke", "assistant", "me too", "--session", session_id)
            assert busy.returncode == 2, busy
            assert "error BEM-030" in busy.stderr
        finally:
            await client.cancel(ack.request_id)
        last = [f async for f in client.follow(ack.request_id, timeout_s=GUARD_S)][-1]
        assert last.error_code == "BEM-033"
        # Once the run has ended the session takes turns again.
        again = await client.invoke("assistant", "now?", session_id=session_id)
        assert isinstance(again, AgentResult) and again.text == "Echo: now?"


@module_loop
async def test_a_model_error_ends_the_run_with_an_error_frame(env: Env) -> None:
    session_id = str(uuid.uuid4())
    await env.chat.push(http_error(400, "this model does not like you"))
    invoked = await env.cli("invoke", "author", "hi", "--session", session_id, "--json")
    assert invoked.returncode == 4, invoked  # the run failed
    frames = [StreamChunk.parse(line) for line in invoked.stdout.splitlines()]
    assert_sequenced(frames)
    last = frames[-1]
    assert last.type == "error" and last.error_code is not None
    assert last.error_code.startswith("BEM-08"), last
    assert f"error {last.error_code}" in invoked.stderr
    assert "Traceback" not in invoked.stderr
    async with env.client() as client:
        run = await client.get_run(last.run_id or "")
    assert (run.status, run.error_code) == ("failed", last.error_code)


# ---- 7. health and reflection ------------------------------------------------------------------
@module_loop
async def test_every_service_reports_health_and_reflects_its_service(env: Env) -> None:
    serving = health_pb2.HealthCheckResponse.SERVING
    for name, service in SERVICE_NAMES.items():
        address = env.stack.endpoints[name]
        assert await health_status(address, "") == serving, name
        assert await health_status(address, service) == serving, name
        listed = await reflected_services(address)
        assert service in listed, (name, listed)
        assert "grpc.health.v1.Health" in listed, (name, listed)
