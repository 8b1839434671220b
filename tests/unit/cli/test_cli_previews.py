"""`riverbeam pending` shows what each action would do (its preview); `--diff` the whole diff.

Through the CLI against the fake router, which serves the preview as the real one does (on
the Action record of ListPendingActions)."""

from __future__ import annotations

import io
import json

from rich.console import Console

from riverbeam.types import ActionPreview, AgentResult
from services.cli._errors import ExitCode
from services.cli._render import render_interrupted
from tests.unit.cli.cli_harness import Cli
from tests.unit.client.fake_router import ACTION_PENDING, SESSION

HEAD = "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
PREVIEW = ActionPreview.model_validate(
    {
        "tool": "git_push",
        "summary": "1 commit to docs/update, 1 file changed",
        "commits": [
            {"id": HEAD, "summary": "Add the intro", "author": "Agent <agent@riverbeam.invalid>"}
        ],
        "diff": "diff --git a/intro.md b/intro.md\n--- a/intro.md\n+++ b/intro.md\n"
        "@@ -1 +1,2 @@\n # Intro\n+Riverbeam runs agents.\n",
        "diff_bytes": 103,
        "state": {"branch": "docs/update", "head": HEAD, "origin": "absent"},
    }
)


def _with_preview(cli: Cli) -> None:
    cli.fake.actions = [
        a.model_copy(update={"preview": PREVIEW}) if a.action_id == ACTION_PENDING else a
        for a in cli.fake.actions
    ]


def test_pending_shows_the_summary_and_commits_but_not_the_diff(cli: Cli) -> None:
    _with_preview(cli)
    result = cli("pending")
    assert result.exit_code == ExitCode.OK, result.output
    out = result.stdout
    assert "preview 1 commit to docs/update, 1 file changed · head 1a2b3c4d5e6f" in out
    assert "1a2b3c4d5e6f Add the intro  Agent <agent@riverbeam.invalid>" in out
    assert "+Riverbeam runs agents." not in out
    assert "riverbeam pending --diff" in out


def test_pending_diff_shows_the_whole_diff(cli: Cli) -> None:
    _with_preview(cli)
    result = cli("pending", "--diff")
    assert result.exit_code == ExitCode.OK, result.output
    assert "+++ b/intro.md" in result.stdout and "+Riverbeam runs agents." in result.stdout


def test_pending_json_carries_the_preview(cli: Cli) -> None:
    _with_preview(cli)
    actions = {a["action_id"]: a for a in json.loads(cli("pending", "--json").stdout)}
    assert actions[ACTION_PENDING]["preview"]["state"]["head"] == HEAD
    assert actions[ACTION_PENDING]["preview"]["diff"] == PREVIEW.diff


def test_an_interrupted_run_shows_its_actions_previews() -> None:
    result = AgentResult.model_validate(
        {
            "agent_name": "author",
            "interrupted": True,
            "action_required": [
                {
                    "action_id": ACTION_PENDING,
                    "tool": "git_push",
                    "args": {"ref": "docs/update"},
                    "preview": PREVIEW.to_json_dict(),
                }
            ],
        }
    )
    out = io.StringIO()
    render_interrupted(Console(file=out, width=200, color_system=None), result)
    text = out.getvalue()
    assert "preview 1 commit to docs/update" in text and "Add the intro" in text


def test_the_session_tree_shows_an_actions_preview_summary(cli: Cli) -> None:
    _with_preview(cli)
    result = cli("session", SESSION)
    assert result.exit_code == ExitCode.OK, result.output
    # The tree line of the action (the ledger table below the run names the action too).
    (line,) = [x for x in result.stdout.splitlines() if f"action {ACTION_PENDING} git_push" in x]
    assert "1 commit to docs/update, 1 file changed" in line
