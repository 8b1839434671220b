"""The flat parameters of the Postgres steps: columns one after the other (cut apart in SQL
by _sql.column_slices), and nothing at all for no rows."""

from __future__ import annotations

from riverbeam.store import NewAction, NewMessage, _rows
from riverbeam.types import ContentPart


def test_no_actions_and_no_messages_are_empty() -> None:
    assert _rows.action_flat([]) == []
    assert _rows.message_flat([]) == []


def test_actions_go_column_after_column() -> None:
    actions = [
        NewAction(action_id="a-1", tool="git_push", args={"ref": "main"}, tool_call_id="c-1"),
        NewAction(action_id="a-2", tool="write_file", child={"agent": "helper"}),
    ]
    assert _rows.action_flat(actions) == [
        "a-1", "a-2",
        "confirmation", "confirmation",
        "git_push", "write_file",
        '{"ref": "main"}', "{}",
        "c-1", None,
        None, None,
        None, '{"agent": "helper"}',
    ]  # fmt: skip


def test_messages_go_column_after_column() -> None:
    messages = [
        NewMessage(message_id="m-1", role="human", content=[ContentPart.of_text("hi")]),
        NewMessage(message_id="m-2", role="ai", content=[], metadata={"k": 1}),
    ]
    flat = _rows.message_flat(messages)
    assert len(flat) == 18
    assert flat[0:2] == ["m-1", "m-2"]
    assert flat[2:4] == ["human", "ai"]
    assert flat[-2:] == [None, '{"k": 1}']
    assert _rows.message_flat(messages[:1]) == _rows.message_values(messages[0])
