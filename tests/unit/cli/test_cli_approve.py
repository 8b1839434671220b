"""`riverbeam approve|decline` and `riverbeam pending`: the approval inbox and its answers."""

from __future__ import annotations

import json
import uuid

from riverbeam.types import StreamChunk
from services.cli._errors import ExitCode
from tests.unit.cli.cli_harness import Cli
from tests.unit.client.fake_router import (
    ACTION_OTHER,
    ACTION_PENDING,
    ACTION_RAN,
    INTERACTION_DONE,
    INTERACTION_WAITING,
    SESSION,
)


def test_approve_resumes_with_submitted_envelopes_and_follows(cli: Cli) -> None:
    result = cli("approve", INTERACTION_WAITING, "--session", SESSION)
    assert result.exit_code == ExitCode.OK, result.output
    resumed = cli.fake.resumes[-1]
    assert resumed.agent_name == "author"
    assert resumed.session_id == SESSION
    assert resumed.interaction_id == INTERACTION_WAITING
    [envelope] = resumed.actions
    assert envelope.action_id == ACTION_PENDING
    assert envelope.kind == "confirmation"
    assert envelope.status == "submitted"
    assert uuid.UUID(envelope.request_id)
    assert f'approve git_push {{"ref": "docs/update"}}  ({ACTION_PENDING})' in result.stderr
    assert "← git_push" in result.stdout
    assert "Pushed." in result.stdout
    # The answer and the resumed run's frames on one call.
    calls = [name for name, _ in cli.fake.calls]
    assert calls[-1] == "ResumeStream" and "Resume" not in calls and "FollowStream" not in calls


def test_decline_sends_cancelled(cli: Cli) -> None:
    result = cli(
        "decline", INTERACTION_WAITING, "--session", SESSION, "--reason", "not on a Friday"
    )
    assert result.exit_code == ExitCode.OK, result.output
    [envelope] = cli.fake.resumes[-1].actions
    assert envelope.status == "cancelled"
    assert envelope.payload == {"approved": False, "reason": "not on a Friday"}
    assert "Understood, not pushing." in result.stdout


def test_approve_one_action_with_an_explicit_agent(cli: Cli) -> None:
    result = cli(
        "approve", INTERACTION_WAITING, "--session", SESSION,
        "--action", ACTION_PENDING, "--agent", "reviewer", "--json",
    )  # fmt: skip
    assert result.exit_code == ExitCode.OK, result.output
    assert cli.fake.resumes[-1].agent_name == "reviewer"
    assert [a.action_id for a in cli.fake.resumes[-1].actions] == [ACTION_PENDING]
    frames = [StreamChunk.parse(line) for line in result.stdout.splitlines()]
    assert frames[-1].type == "done"


def test_approve_an_action_already_answered(cli: Cli) -> None:
    result = cli("approve", INTERACTION_WAITING, "--session", SESSION, "--action", ACTION_RAN)
    assert result.exit_code == ExitCode.USAGE
    assert f"error BEM-066: action {ACTION_RAN} is resolved" in result.stderr
    assert "hint: an action is answered once" in result.stderr
    assert cli.fake.resumes == []


def test_approve_an_action_of_another_interaction(cli: Cli) -> None:
    result = cli("approve", INTERACTION_WAITING, "--session", SESSION, "--action", ACTION_OTHER)
    assert result.exit_code == ExitCode.USAGE
    assert "error BEM-064" in result.stderr


def test_approve_with_nothing_pending(cli: Cli) -> None:
    result = cli("approve", INTERACTION_DONE, "--session", SESSION)
    assert result.exit_code == ExitCode.USAGE
    assert f"error BEM-066: interaction {INTERACTION_DONE} has no pending actions" in result.stderr


def test_approve_needs_a_session(cli: Cli) -> None:
    result = cli("approve", INTERACTION_WAITING)
    assert result.exit_code == ExitCode.USAGE
    assert "--session" in result.output


def test_pending_lists_the_inbox_with_approve_commands(cli: Cli) -> None:
    result = cli("pending")
    assert result.exit_code == ExitCode.OK
    out = result.stdout
    assert "2 pending action(s)" in out
    assert ACTION_PENDING in out and ACTION_OTHER in out
    assert "git_push" in out and '{"ref": "docs/update"}' in out
    assert f"riverbeam approve {INTERACTION_WAITING} --session {SESSION}" in out


def test_pending_of_one_session(cli: Cli) -> None:
    result = cli("pending", "--session", SESSION)
    assert ACTION_PENDING in result.stdout
    assert ACTION_OTHER not in result.stdout
    listed = [r for name, r in cli.fake.calls if name == "ListPendingActions"]
    assert listed[-1].session_id == SESSION


def test_pending_json(cli: Cli) -> None:
    result = cli("pending", "--json")
    assert result.exit_code == ExitCode.OK
    actions = json.loads(result.stdout)
    assert {a["action_id"] for a in actions} == {ACTION_PENDING, ACTION_OTHER}


def test_pending_empty(cli: Cli) -> None:
    cli.fake.actions = []
    result = cli("pending")
    assert result.exit_code == ExitCode.OK
    assert "no pending actions" in result.stdout
