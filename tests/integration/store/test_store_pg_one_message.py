"""The one-message statements (_pg_one_message: the message's columns as plain parameters)
return exactly what the flat-array statements return for the same step, over many shapes of
message and step. Both run in one transaction (the same now()), each in a savepoint rolled
back after it, so they see the same rows and write the same values."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import asyncpg
import pytest
from store_kit import OWNER, begin, uid

from riverbeam.store import NewMessage, PgBeamStore, _rows
from riverbeam.store._checks import interaction_after
from riverbeam.store._pg_begin import BeginArgs, begin_call, one_call_config
from riverbeam.store._pg_one_message import finish_call
from riverbeam.types import AgentResult, ContentPart, TokenUsage, TurnConfig

pytestmark = pytest.mark.postgres


def _plain(value: Any) -> Any:
    if isinstance(value, asyncpg.Record):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


async def _both(conn: Any, calls: list[tuple[str, list[Any]]]) -> list[Any]:
    """Each call's row (or its error), each in a savepoint of one transaction."""
    out: list[Any] = []
    async with conn.transaction():
        for query, params in calls:
            savepoint = conn.transaction()
            await savepoint.start()
            try:
                out.append(_plain(await conn.fetchrow(query, *params)))
            except asyncpg.PostgresError as exc:
                out.append((type(exc), exc.sqlstate, str(exc)))
            await savepoint.rollback()
    return out


def _message(shape: str) -> NewMessage:
    text = [ContentPart.of_text("hello, wörld \U0001f600 \\ \" ' {x} NULL")]
    if shape == "text":
        return NewMessage(role="human", content=text)
    if shape == "empty":
        return NewMessage(role="ai", content=[])
    if shape == "metadata":
        return NewMessage(
            role="human", content=text, metadata={"a": [1, 2.5, None, True], "b": {"c": "d"}}
        )
    if shape == "tool":
        return NewMessage(
            role="tool",
            type="tool_result",
            content=text,
            tool_call_id="call-1",
            tool_name="search",
            tool_args={"q": "x", "n": 3},
            tool_result={"hits": ["a", "b"], "total": 2},
        )
    if shape == "scalar_result":
        return NewMessage(role="tool", type="tool_result", tool_call_id="c", tool_result="ok")
    if shape == "parts":
        return NewMessage(
            role="ai",
            content=[ContentPart.of_text("one"), ContentPart.of_text(""), *text],
            metadata={},
        )
    raise AssertionError(shape)


SHAPES = ["text", "empty", "metadata", "tool", "scalar_result", "parts"]


def _args(session_id: str, **overrides: Any) -> BeginArgs:
    values: dict[str, Any] = {
        "session_id": session_id,
        "agent_name": "author",
        "run_id": uid(),
        "lease_owner": OWNER,
        "ttl": timedelta(seconds=60),
        "user_id": "u1",
        "profile_id": None,
        "org_id": "o1",
        "interaction_id": None,
        "request_id": uid(),
        "human_content": [ContentPart.of_text("hi")],
        "message_metadata": None,
        "exclusive": True,
        "action_responses": (),
        "limit": 50,
        "require_owner": None,
        "require_org": None,
        "agent_version": None,
        "policy": "pin",
        "session_config": None,
        "run_options": None,
        "session_config_narrows": False,
        "history_after": 0,
        "history_after_id": None,
    }
    values.update(overrides)
    return BeginArgs(**values)


BEGINS: dict[str, dict[str, Any]] = {
    "plain": {},
    "metadata": {"message_metadata": {"client": "t", "trace": {"depth": 2}}},
    "many_parts": {
        "human_content": [ContentPart.of_text("a"), ContentPart.of_text("b \U0001f600")]
    },
    "no_history": {"limit": 0, "exclusive": False, "request_id": None},
    "config": {"session_config": TurnConfig()},
    "other_owner": {"require_owner": "someone-else"},
}


@pytest.mark.parametrize("existing", [False, True])
@pytest.mark.parametrize("name", list(BEGINS))
async def test_begin_one_message_is_the_flat_statement(
    pg_store: PgBeamStore, name: str, existing: bool
) -> None:
    session_id = uid()
    if existing:  # a session with history, its run finished
        begun = await begin(pg_store, session_id=session_id, user_id="u1")
        await pg_store.finish_run(
            run_id=begun.run.run_id,
            lease_owner=OWNER,
            status="completed",
            messages=[_message("tool"), _message("text")],
        )
    args = _args(session_id, **BEGINS[name])
    config = one_call_config(args)
    assert config is not None
    messages = args.human_messages
    assert len(messages) == 1
    schema = pg_store.schema
    calls = [
        begin_call(schema, args, "i-" + args.run_id, messages, config, one=one)
        for one in (True, False)
    ]
    assert calls[0][0] != calls[1][0]
    async with pg_store._connection() as conn:
        one, flat = await _both(conn, calls)
    assert one == flat


FINISHES: dict[str, dict[str, Any]] = {
    "completed": {"status": "completed"},
    "failed": {"status": "failed", "error_code": "BEM-001", "error_message": "boom"},
    "usage_result": {
        "status": "completed",
        "token_usage": TokenUsage(prompt_tokens=3, completion_tokens=4, total_tokens=7),
        "result": AgentResult(content=[ContentPart.of_text("done")], agent_name="author"),
        "model_used": "m",
    },
    "interrupted": {"status": "interrupted", "interaction_status": "in_progress"},
    "stale_epoch": {"status": "completed", "epoch": 99},
    "other_owner": {"status": "completed", "owner": "not-the-owner"},
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", list(FINISHES))
async def test_finish_one_message_is_the_flat_statement(
    pg_store: PgBeamStore, name: str, shape: str
) -> None:
    begun = await begin(pg_store)
    step = FINISHES[name]
    status = step["status"]
    usage, result = step.get("token_usage"), step.get("result")
    head = (
        begun.run.run_id,
        step.get("owner", OWNER),
        status,
        step.get("error_code"),
        step.get("error_message"),
        _rows.dump(usage),
        step.get("model_used"),
        _rows.dump(result),
        step.get("epoch", begun.run.lease_epoch),
    )
    after = interaction_after(status, step.get("interaction_status"))
    messages = [_message(shape)]
    calls = [
        finish_call(
            pg_store._sql,
            pg_store.schema,
            head,
            messages,
            after,
            [],
            timedelta(seconds=30) if name == "interrupted" else None,
            one=one,
        )
        for one in (True, False)
    ]
    assert calls[0][0] != calls[1][0]
    async with pg_store._connection() as conn:
        one, flat = await _both(conn, calls)
    assert one == flat
    if name in ("stale_epoch", "other_owner"):
        assert one is None
    else:
        assert one is not None and one["status"] == status
