"""SessionHistory: the windows a runner holds, joined with what the store sends, bounded."""

from __future__ import annotations

from datetime import UTC, datetime

from riverbeam.store._session_history import SessionHistory
from riverbeam.types import ContentPart, Message
from tests.support.copy_calls import copying_calls

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 1, 2, tzinfo=UTC)


def _msgs(first: int, last: int, session: str = "s") -> list[Message]:
    return [
        Message(
            message_id=f"{session}-{i}",
            session_id=session,
            seq=i,
            role="human",
            content=[ContentPart.of_text(str(i))],
            created_at=T0,
        )
        for i in range(first, last + 1)
    ]


def test_a_held_window_joins_the_rest_and_keeps_the_newest() -> None:
    held = SessionHistory()
    held.keep("s", T0, 4, _msgs(3, 6))
    anchor = held.anchor("s", 4)
    assert anchor is not None and (anchor.seq, anchor.message_id) == (6, "s-6")
    window = held.window(anchor, 6, T0, _msgs(7, 8), 4)
    assert window is not None and [m.seq for m in window] == [5, 6, 7, 8]


def test_what_cannot_be_joined_is_refused() -> None:
    held = SessionHistory()
    held.keep("s", T0, 4, _msgs(3, 6))
    anchor = held.anchor("s", 4)
    assert held.window(anchor, 6, T1, _msgs(7, 8), 4) is None  # another created_at
    assert held.window(anchor, 5, T0, _msgs(6, 8), 4) is None  # another seq than held
    assert held.window(anchor, 6, T0, _msgs(8, 9), 4) is None  # a gap
    assert held.window(None, 6, T0, _msgs(7, 8), 4) is None
    whole = held.window(anchor, 0, T0, _msgs(1, 8), 4)  # the store sent the whole window
    assert whole is not None and [m.seq for m in whole] == [5, 6, 7, 8]


def test_a_larger_limit_is_not_anchored_unless_the_window_starts_the_session() -> None:
    held = SessionHistory()
    held.keep("s", T0, 4, _msgs(3, 6))
    assert held.anchor("s", 5) is None
    assert held.anchor("s", 3) is not None
    held.keep("t", T0, 4, _msgs(1, 2, "t"))
    assert held.anchor("t", 200) is not None
    held.keep("u", T0, 4, [])
    assert held.anchor("u", 4) is None and len(held) == 2


def test_bounded_by_messages_least_recently_used_session_first() -> None:
    held = SessionHistory(max_messages=10)
    held.keep("a", T0, 4, _msgs(1, 4, "a"))
    held.keep("b", T0, 4, _msgs(1, 4, "b"))
    assert held.anchor("a", 4) is not None  # a is now the most recently used
    held.keep("c", T0, 4, _msgs(1, 4, "c"))
    assert held.anchor("b", 4) is None
    assert held.anchor("a", 4) is not None and held.anchor("c", 4) is not None
    assert held.message_count == 8
    held.keep("a", T0, 2, _msgs(3, 4, "a"))  # replacing a window replaces its count
    assert held.message_count == 6
    held.forget("c")
    assert held.message_count == 2 and len(held) == 1
    held.keep("d", T0, 20, _msgs(1, 11, "d"))  # larger than the whole bound: not held
    assert held.anchor("d", 20) is None


def test_a_held_window_hands_out_new_copies_and_keeps_the_makers_of_what_stays() -> None:
    held = SessionHistory()
    first = _msgs(1, 4)
    kept = held.keep("s", T0, 4, first)
    assert kept is not None
    copies, again = kept.copies(), kept.copies()
    assert copies == again == first
    assert not {id(m) for m in copies} & {id(m) for m in [*again, *first]}
    copies[0].content.append(ContentPart.of_text("changed"))
    copies[1].metadata = {"changed": True}
    assert kept.copies() == first  # what a caller does to its copies is not held
    # The next window keeps seqs 3 and 4 (the same objects) and adds 5 and 6: only those
    # two get new makers.
    anchor = held.anchor("s", 4)
    window = held.window(anchor, 4, T0, _msgs(5, 6), 4)
    assert window is not None
    after = held.keep("s", T0, 4, window)
    assert after is not None and after.copies() == window
    assert after.makers[:2] == kept.makers[2:]
    assert not set(after.makers[2:]) & set(kept.makers)


def test_nothing_held_is_none() -> None:
    assert SessionHistory(max_messages=0).keep("s", T0, 4, _msgs(1, 2)) is None
    assert SessionHistory().keep("s", T0, 0, _msgs(1, 2)) is None
    assert SessionHistory().keep("s", T0, 4, []) is None
    assert SessionHistory(max_messages=3).keep("s", T0, 4, _msgs(1, 4)) is None


def test_a_window_read_again_gets_new_makers() -> None:
    held = SessionHistory()
    kept = held.keep("s", T0, 4, _msgs(1, 4))
    again = held.keep("s", T0, 4, _msgs(1, 4))  # equal messages, but not the held objects
    assert kept is not None and again is not None
    assert not set(again.makers) & set(kept.makers)
    assert again.copies() == _msgs(1, 4)


def test_a_held_windows_copies_take_one_call_a_message() -> None:
    # Copying the held window is the runner's per-message cost every turn: one Python call a
    # message (the old plans made five for a message of one text part).
    held = SessionHistory()
    kept = held.keep("s", T0, 200, _msgs(1, 200))
    assert kept is not None
    assert copying_calls(kept.copies) == 200
    assert kept.copies() == _msgs(1, 200)
