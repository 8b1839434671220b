"""`riverbeam pending` shows how long each action has left before it expires."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

from rich.console import Console

from riverbeam.types import Action
from services.cli._render import pending_view, time_left

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_time_left() -> None:
    assert time_left(None, NOW) == "never"
    assert time_left(NOW, NOW) == "expired"
    assert time_left(NOW - timedelta(seconds=5), NOW) == "expired"
    assert time_left(NOW + timedelta(seconds=9), NOW) == "9s left"
    assert time_left(NOW + timedelta(minutes=4, seconds=10), NOW) == "4m 10s left"
    assert time_left(NOW + timedelta(hours=1, minutes=5), NOW) == "1h 5m left"


def test_the_inbox_shows_the_time_left() -> None:
    def action(expires_at: datetime | None) -> Action:
        return Action(
            action_id=f"a-{expires_at is None}",
            session_id="s",
            interaction_id="i",
            run_id="r",
            tool="git_push",
            created_at=NOW - timedelta(minutes=1),
            expires_at=expires_at,
        )

    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(
        pending_view([action(NOW + timedelta(minutes=3)), action(None)], now=NOW)
    )
    text = out.getvalue()
    assert "expires" in text and "3m 0s left" in text and "never" in text


def test_the_inbox_names_the_called_agent_a_held_call_belongs_to() -> None:
    held = Action(
        action_id="a-child",
        session_id="s",
        interaction_id="i",
        run_id="r",
        tool="git_push",
        created_at=NOW,
        child={"agent": "helper", "run_id": "c", "parent_tool": "ask_helper"},
    )
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(pending_view([held], now=NOW))
    assert "git_push (in helper)" in out.getvalue()
