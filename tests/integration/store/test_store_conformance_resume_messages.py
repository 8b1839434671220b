"""The messages a begin step saves statement by statement (a resume, a narrowing session
configuration): every column of each, numbered in order, as a later read returns them. On
Postgres their columns travel as one flat array cut apart in SQL (_sql.column_slices)."""

from __future__ import annotations

from store_kit import answer, begin, interrupted_with, resume

from riverbeam.store import BeamStore
from riverbeam.types import ContentPart, TurnConfig


async def test_a_resume_saves_its_action_results_and_human_message_in_order(
    store: BeamStore,
) -> None:
    begun, ids = await interrupted_with(store, count=2)
    before = begun.session.last_seq + 1  # the interrupted run's reply
    resumed = await resume(
        store,
        begun,
        answer(ids[0]),
        answer(ids[1], status="cancelled"),
        human_content=[ContentPart.of_text("and then?"), ContentPart.of_text("second part")],
        message_metadata={"client": {"name": "cli", "n": 2}},
    )
    saved = [*resumed.action_messages, resumed.human_message]
    assert [m.seq for m in saved if m is not None] == [before + 1, before + 2, before + 3]
    first, second, human = resumed.action_messages[0], resumed.action_messages[1], saved[2]
    assert first.type == "action_result" and second.type == "action_result"
    assert [a.action_id for a in resumed.resolved_actions] == ids
    assert human is not None and human.role == "human" and human.type == "message"
    assert [p.text for p in human.content] == ["and then?", "second part"]
    assert human.metadata == {"client": {"name": "cli", "n": 2}}
    assert {m.run_id for m in saved if m is not None} == {resumed.run.run_id}
    listed, _ = await store.list_messages(session_id=begun.session.session_id)
    assert listed[-3:] == saved


async def test_a_narrowing_config_without_a_message_saves_none(store: BeamStore) -> None:
    begun = await begin(store)
    narrowed = await begin(
        store,
        session_id=begun.session.session_id,
        human_content=[],
        session_config=TurnConfig(include_tools=["search"]),
        session_config_narrows=True,
    )
    assert narrowed.human_message is None and narrowed.action_messages == []
    assert narrowed.session.last_seq == begun.session.last_seq
    listed, _ = await store.list_messages(session_id=begun.session.session_id)
    assert [m.message_id for m in listed] == [begun.human_message.message_id]  # type: ignore[union-attr]
