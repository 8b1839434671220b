"""Conformance of the session configuration and the run options (issue 12), everywhere.

Part of the BeamStore conformance suite: `store` is InMemoryStore, PgBeamStore, and
StoreClient -> store service -> PgBeamStore, and every test runs unchanged on each.
"""

from __future__ import annotations

from store_kit import begin, expect, uid

from riverbeam.core.errors import ErrorCode
from riverbeam.store import BeamStore
from riverbeam.types import RunOptions, TurnConfig

CONFIG = TurnConfig(exclude_tools=["git_push"], append_instructions="Answer in one line.")


async def test_a_session_config_is_stored_on_the_session_until_changed(store: BeamStore) -> None:
    first = await begin(store, session_config=CONFIG)
    sid = first.session.session_id
    assert first.session.config == CONFIG
    assert (await store.get_session(session_id=sid)).config == CONFIG
    # A later step that sends none leaves it as it is.
    later = await begin(store, session_id=sid, interaction_id=uid())
    assert later.session.config == CONFIG
    assert (await store.get_session(session_id=sid)).config == CONFIG
    # Another one replaces it whole.
    other = TurnConfig(include_tools=["read_file"])
    changed = await begin(store, session_id=sid, interaction_id=uid(), session_config=other)
    assert changed.session.config == other
    assert (await store.get_session(session_id=sid)).config == other


async def test_an_empty_session_config_clears_it(store: BeamStore) -> None:
    first = await begin(store, session_config=CONFIG)
    sid = first.session.session_id
    cleared = await begin(store, session_id=sid, interaction_id=uid(), session_config=TurnConfig())
    assert cleared.session.config is None
    assert (await store.get_session(session_id=sid)).config is None


async def test_a_session_without_config_has_none(store: BeamStore) -> None:
    begun = await begin(store)
    assert begun.session.config is None
    assert begun.run.options is None


async def test_run_options_are_recorded_on_the_run(store: BeamStore) -> None:
    options = RunOptions(
        response_schema={"type": "object", "required": ["name"]},
        time_limit_s=12.5,
        token_budget=4000,
        turn_config=TurnConfig(include_tools=["read_file"], prepend_instructions="Be brief."),
    )
    begun = await begin(store, run_options=options)
    assert begun.run.options == options
    assert (await store.get_run(run_id=begun.run.run_id)).options == options
    runs = await store.list_runs(interaction_id=begun.interaction.interaction_id)
    assert [r.options for r in runs] == [options]


async def test_empty_run_options_record_nothing(store: BeamStore) -> None:
    begun = await begin(store, run_options=RunOptions(turn_config=TurnConfig()))
    assert (await store.get_run(run_id=begun.run.run_id)).options is None


async def test_a_refused_step_changes_no_session_config(store: BeamStore) -> None:
    first = await begin(store, session_config=CONFIG)
    sid = first.session.session_id
    # A reused request id refuses the step: the new configuration is not kept.
    with expect(ErrorCode.REQUEST_ID_REUSED):
        await begin(
            store,
            session_id=sid,
            request_id=first.run.request_id,
            session_config=TurnConfig(include_tools=["x"]),
        )
    # A busy session rolls the whole step back too.
    with expect(ErrorCode.SESSION_BUSY):
        await begin(
            store,
            session_id=sid,
            interaction_id=uid(),
            exclusive=True,
            session_config=TurnConfig(include_tools=["y"]),
        )
    assert (await store.get_session(session_id=sid)).config == CONFIG


# ---- narrowing (a caller that is not a backend or admin) -----------------------------------------
async def test_a_narrowing_session_config_adds_to_the_stored_one(store: BeamStore) -> None:
    first = await begin(store, session_config=CONFIG)
    sid = first.session.session_id
    narrowed = await begin(
        store,
        session_id=sid,
        interaction_id=uid(),
        session_config=TurnConfig(include_tools=["read_file"]),
        session_config_narrows=True,
    )
    expected = TurnConfig(
        include_tools=["read_file"],
        exclude_tools=["git_push"],
        append_instructions="Answer in one line.",  # kept: only narrowed
    )
    assert narrowed.session.config == expected
    assert (await store.get_session(session_id=sid)).config == expected


async def test_a_narrowing_empty_session_config_clears_nothing(store: BeamStore) -> None:
    first = await begin(store, session_config=CONFIG)
    sid = first.session.session_id
    kept = await begin(
        store,
        session_id=sid,
        interaction_id=uid(),
        session_config=TurnConfig(),
        session_config_narrows=True,
    )
    assert kept.session.config == CONFIG
    assert (await store.get_session(session_id=sid)).config == CONFIG


async def test_a_narrowing_session_config_on_a_new_session_is_stored_as_sent(
    store: BeamStore,
) -> None:
    only = TurnConfig(exclude_tools=["git_push"])
    begun = await begin(store, session_config=only, session_config_narrows=True)
    assert begun.session.config == only
