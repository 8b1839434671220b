"""`riverbeam session|follow|agents|models|cancel|schema`."""

from __future__ import annotations

import json
import uuid

from riverbeam.types import StreamChunk
from services.cli._errors import ExitCode
from tests.unit.cli.cli_harness import Cli
from tests.unit.client.fake_router import (
    ACTION_PENDING,
    ACTION_RAN,
    INTERACTION_DONE,
    INTERACTION_WAITING,
    RUN_DONE,
    RUN_WAITING,
    RUN_WROTE,
    SESSION,
)


def test_session_tree(cli: Cli) -> None:
    result = cli("session", SESSION)
    assert result.exit_code == ExitCode.OK, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"session {SESSION} · user u1 · 6 messages")

    def line_of(fragment: str) -> int:
        return next(i for i, line in enumerate(lines) if fragment in line)

    # hierarchy: interaction → run → messages and actions, in order
    order = [
        f"interaction {INTERACTION_DONE} assistant completed",
        f"run {RUN_DONE} completed · 17 tokens · echo-1",
        "#1 human  hello",
        "#2 ai     Hi there!",
        f"interaction {INTERACTION_WAITING} author in_progress",
        f"run {RUN_WROTE} interrupted",
        "#3 human  update the docs and push",
        f'action {ACTION_RAN} write_file {{"path": "docs/index.md"}} resolved · approved_ran',
        f"run {RUN_WAITING} interrupted",
        '#5 tool   action_result write_file {"ok": true}',
        "#6 ai     Written. May I push docs/update?",
        f'action {ACTION_PENDING} git_push {{"ref": "docs/update"}} pending',
    ]
    positions = [line_of(fragment) for fragment in order]
    assert positions == sorted(positions)
    # nesting shows in the indentation
    assert lines[line_of("#1 human")].index("#1") > lines[line_of(f"run {RUN_DONE}")].index("run")


def test_session_shows_each_runs_tool_ledger(cli: Cli) -> None:
    result = cli("session", SESSION)
    assert result.exit_code == ExitCode.OK, result.output
    lines = result.stdout.splitlines()

    def line_of(*fragments: str) -> int:
        return next(i for i, line in enumerate(lines) if all(f in line for f in fragments))

    # One table per run, under that run, one row per call in call order.
    order = [
        line_of(f"run {RUN_WROTE}"),
        line_of("write_file", "held", "side effect", f"action {ACTION_RAN}"),
        line_of(f"run {RUN_WAITING}"),
        line_of("write_file", "succeeded", '{"ok":true}', "42 ms"),
        line_of("read_file", "failed", "read-only", "BEM-301 no such file"),
        line_of("git_push", "held", f"action {ACTION_PENDING}"),
    ]
    assert order == sorted(order)
    header = line_of("tool", "status", "kind", "args", "result / error", "took")
    assert order[0] < header < order[1]
    # The assistant's run made no tool call: no table under it.
    assert sum("result / error" in line for line in lines) == 2


def test_session_json(cli: Cli) -> None:
    result = cli("session", SESSION, "--json")
    assert result.exit_code == ExitCode.OK
    view = json.loads(result.stdout)
    assert view["session"]["session_id"] == SESSION
    [done, waiting] = view["interactions"]
    assert done["interaction"]["interaction_id"] == INTERACTION_DONE
    assert [r["run"]["run_id"] for r in waiting["runs"]] == [RUN_WROTE, RUN_WAITING]
    assert [a["action_id"] for a in waiting["runs"][1]["actions"]] == [ACTION_PENDING]
    ledger = waiting["runs"][1]["tool_executions"]
    assert [(e["seq"], e["tool"], e["status"]) for e in ledger] == [
        (1, "write_file", "succeeded"),
        (2, "read_file", "failed"),
        (3, "git_push", "held"),
    ]
    assert done["runs"][0]["tool_executions"] == []


def test_session_not_found(cli: Cli) -> None:
    result = cli("session", str(uuid.uuid4()))
    assert result.exit_code == ExitCode.USAGE
    assert "error BEM-025" in result.stderr


def _request(cli: Cli, agent: str = "assistant") -> str:
    result = cli("invoke", agent, "hello", "--json")
    return StreamChunk.parse(result.stdout.splitlines()[0]).request_id or ""


def test_follow_replays_a_request(cli: Cli) -> None:
    request_id = _request(cli)
    result = cli("follow", request_id)
    assert result.exit_code == ExitCode.OK
    assert "Hello world" in result.stdout
    assert "→ tool write_file" in result.stdout


def test_follow_after_json(cli: Cli) -> None:
    request_id = _request(cli)
    result = cli("follow", request_id, "--after", "5", "--json")
    assert result.exit_code == ExitCode.OK
    assert [StreamChunk.parse(line).seq for line in result.stdout.splitlines()] == [6, 7]
    follows = [r for name, r in cli.fake.calls if name == "FollowStream"]
    assert follows[-1].after_seq == 5


def test_follow_exit_codes_follow_the_run(cli: Cli) -> None:
    assert cli("follow", _request(cli, "author")).exit_code == ExitCode.INTERRUPTED
    assert cli("follow", _request(cli, "broken")).exit_code == ExitCode.RUN_FAILED


def test_follow_gap_is_an_error(cli: Cli) -> None:
    request_id = _request(cli)
    cli.fake.gap_at = 2
    result = cli("follow", request_id)
    assert result.exit_code == ExitCode.ERROR
    assert "error BEM-112: request" in result.stderr


def test_follow_unknown_request(cli: Cli) -> None:
    result = cli("follow", str(uuid.uuid4()))
    assert result.exit_code == ExitCode.USAGE
    assert "error BEM-111" in result.stderr


def test_follow_negative_after_is_a_usage_error(cli: Cli) -> None:
    result = cli("follow", str(uuid.uuid4()), "--after", "-1")
    assert result.exit_code == ExitCode.USAGE


def test_agents_and_models(cli: Cli) -> None:
    agents = cli("agents")
    assert agents.exit_code == ExitCode.OK
    assert "assistant" in agents.stdout and "Writes docs in a git workspace" in agents.stdout
    models = cli("models")
    assert models.exit_code == ExitCode.OK
    assert "gpt-vision" in models.stdout and "128000" in models.stdout
    as_json = json.loads(cli("models", "--json").stdout)
    assert [m["name"] for m in as_json] == ["echo-1", "gpt-vision"]
    assert [a["name"] for a in json.loads(cli("agents", "--json").stdout)] == [
        "assistant",
        "author",
    ]


def test_cancel(cli: Cli) -> None:
    request_id = _request(cli)
    result = cli("cancel", request_id)
    assert result.exit_code == ExitCode.OK
    assert "cancelled" in result.stdout


def test_schema_still_works(cli: Cli) -> None:
    result = cli("schema", "StreamAck")
    assert result.exit_code == ExitCode.OK
    assert json.loads(result.stdout)["title"] == "StreamAck"
    unknown = cli("schema", "Nope")
    assert unknown.exit_code == ExitCode.USAGE
    assert unknown.stderr.startswith("error BEM-002:")


def test_help_lists_every_command(cli: Cli) -> None:
    result = cli("--help")
    for command in (
        "serve", "up", "schema", "invoke", "approve", "decline", "follow", "cancel",
        "pending", "agents", "models", "session",
    ):  # fmt: skip
        assert command in result.stdout


def test_session_shows_the_holders_of_a_run_taken_over(cli: Cli) -> None:
    run = cli.fake.runs[RUN_WAITING]
    cli.fake.runs[RUN_WAITING] = run.model_copy(
        update={"holders": ["runner-a", "runner-b", "runner-c"]}
    )
    result = cli("session", SESSION)
    assert result.exit_code == ExitCode.OK, result.output
    [line] = [line for line in result.stdout.splitlines() if f"run {RUN_WAITING}" in line]
    assert "held by runner-a → runner-b → runner-c (2 takeovers)" in line
    # A run its first runner finished names no holders.
    [done] = [line for line in result.stdout.splitlines() if f"run {RUN_DONE}" in line]
    assert "held by" not in done
    view = json.loads(cli("session", SESSION, "--json").stdout)
    runs = {r["run"]["run_id"]: r["run"] for i in view["interactions"] for r in i["runs"]}
    assert runs[RUN_WAITING]["holders"] == ["runner-a", "runner-b", "runner-c"]
