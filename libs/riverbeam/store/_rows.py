"""Database rows to records and back (JSON travels as text, cast to jsonb in SQL)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar, get_args

import asyncpg
from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticSerializationError

from riverbeam.store._json_text import model_json
from riverbeam.store._types import NewAction, NewMessage
from riverbeam.types import (
    Action,
    ActionPreview,
    ActionResponseEnvelope,
    AgentResult,
    ContentPart,
    Interaction,
    MemoryEntry,
    Message,
    Run,
    RunOptions,
    Session,
    TokenUsage,
    TurnConfig,
)
from riverbeam.types._base import INT32_MAX
from riverbeam.types._copying import model_of_valid

__all__ = [
    "action_flat",
    "action_of",
    "dump",
    "dump_content",
    "interaction_of",
    "memory_of",
    "message_flat",
    "message_of",
    "message_values",
    "run_of",
    "session_of",
]

Row = asyncpg.Record


def dump(value: Any) -> str | None:
    """A value as JSON text for a jsonb parameter; None stays SQL NULL.

    A model is written from its attributes where _json_text can (~30% fewer instructions for
    a run's result), else by pydantic's own JSON serializer: the same JSON values as
    json.dumps(model_dump(mode="json")), so the same jsonb (tests/unit/store/test_store_rows_dump.py
    pins it), in a third of the time. What it cannot write (a lone surrogate) takes the
    json.dumps path, which fails where it always failed: in the database.
    """
    if value is None:
        return None
    if isinstance(value, BaseModel):
        text = model_json(value)
        if text is not None:
            return text
        try:
            return value.model_dump_json(exclude_none=True)
        except PydanticSerializationError:
            return _dump_model(value)
    return json.dumps(value, ensure_ascii=False)


def _dump_model(value: BaseModel) -> str:
    return json.dumps(value.model_dump(mode="json", exclude_none=True))


def dump_content(parts: Sequence[ContentPart]) -> str:
    """A message's content parts as the JSON array text of a jsonb parameter (as dump)."""
    texts = [model_json(p) for p in parts]
    if None not in texts:
        return "[" + ",".join(texts) + "]"  # type: ignore[arg-type]
    try:
        return "[" + ",".join(p.model_dump_json(exclude_none=True) for p in parts) + "]"
    except PydanticSerializationError:
        return json.dumps(
            [p.model_dump(mode="json", exclude_none=True) for p in parts], ensure_ascii=False
        )


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


M = TypeVar("M", bound=BaseModel)


def _model(cls: type[M], text: str | None) -> M | None:
    """A jsonb column holding one model (TurnConfig, RunOptions, TokenUsage, AgentResult ...),
    or None when NULL.

    jsonb writes an object as `{...}`: pydantic validates that text in one pass, to the model
    json.loads and model_validate make of it (the same numbers, of the same types:
    tests/integration/store/test_store_pg_dump.py). Anything else takes that old path.
    """
    if text is None:
        return None
    if text[:1] == "{":
        return cls.model_validate_json(text)
    value = json.loads(text)
    return None if value is None else cls.model_validate(value)


_CONTENT: TypeAdapter[list[ContentPart]] = TypeAdapter(list[ContentPart])


def _content(text: str | None) -> list[ContentPart]:
    """A message's content column (a jsonb array, as _model reads an object)."""
    if text is not None and text[:1] == "[":
        return _CONTENT.validate_json(text)
    return [ContentPart.model_validate(p) for p in _load(text) or []]


def session_of(row: Row) -> Session:
    """A session row as its record: built directly where validation would keep every value (as
    message_of), validated otherwise. Every invoke reads one (begin_run), and its run twice."""
    values: dict[str, Any] = {
        "session_id": row["session_id"],
        "user_id": row["user_id"],
        "profile_id": row["profile_id"],
        "org_id": row["org_id"],
        "created_at": row["created_at"],
        "last_active_at": row["last_active_at"],
        "metadata": _load(row["metadata"]),
        "last_seq": row["last_seq"],
        "config": _model(TurnConfig, row["config"]),
    }
    if _session_kept_as_is(values):
        return model_of_valid(Session, values)
    return Session(**values)


def _session_kept_as_is(v: dict[str, Any]) -> bool:
    seq, metadata, config = v["last_seq"], v["metadata"], v["config"]
    return (
        _is_name(v["session_id"])
        and type(v["user_id"]) in _OPTIONAL_STR
        and type(v["profile_id"]) in _OPTIONAL_STR
        and type(v["org_id"]) in _OPTIONAL_STR
        and _is_utc(v["created_at"])
        and _is_utc(v["last_active_at"])
        and (metadata is None or (type(metadata) is dict and len(metadata) > 0))
        and type(seq) is int
        and 0 <= seq <= INT32_MAX
        and (config is None or type(config) is TurnConfig)
    )


def interaction_of(row: Row) -> Interaction:
    """An interaction row as its record (built directly or validated, as session_of)."""
    values: dict[str, Any] = {
        "interaction_id": row["interaction_id"],
        "session_id": row["session_id"],
        "agent_name": row["agent_name"],
        "status": row["status"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "agent_version": row["agent_version"],
    }
    if _interaction_kept_as_is(values):
        return model_of_valid(Interaction, values)
    return Interaction(**values)


def _interaction_kept_as_is(v: dict[str, Any]) -> bool:
    return (
        _is_name(v["interaction_id"])
        and _is_name(v["session_id"])
        and _is_name(v["agent_name"])
        and v["status"] in _INTERACTION_STATUSES
        and _is_utc(v["created_at"])
        and _is_utc(v["updated_at"])
        and type(v["agent_version"]) in _OPTIONAL_STR
    )


def run_of(row: Row) -> Run:
    """A run row as its record (built directly or validated, as session_of): begin_run and
    finish_run each read one, and pydantic's pass over its twenty fields was most of it."""
    values: dict[str, Any] = {
        "run_id": row["run_id"],
        "interaction_id": row["interaction_id"],
        "session_id": row["session_id"],
        "agent_name": row["agent_name"],
        "status": row["status"],
        "request_id": row["request_id"],
        "started_at": row["started_at"],
        "finished_at": row["finished_at"],
        "error_code": row["error_code"],
        "error_message": row["error_message"],
        "token_usage": _model(TokenUsage, row["token_usage"]),
        "model_used": row["model_used"],
        "lease_owner": row["lease_owner"],
        "lease_expires_at": row["lease_expires_at"],
        "result": _model(AgentResult, row["result"]),
        "lease_epoch": row["lease_epoch"],
        "agent_version": row["agent_version"],
        "options": _model(RunOptions, row["options"]),
        "holders": list(row["holders"] or []),
        "parent_run_id": row["parent_run_id"],
    }
    if _run_kept_as_is(values):
        return model_of_valid(Run, values)
    return Run(**values)


def _run_kept_as_is(v: dict[str, Any]) -> bool:
    usage, result, options, epoch = v["token_usage"], v["result"], v["options"], v["lease_epoch"]
    finished, expires = v["finished_at"], v["lease_expires_at"]
    return (
        _is_name(v["run_id"])
        and _is_name(v["interaction_id"])
        and _is_name(v["session_id"])
        and _is_name(v["agent_name"])
        and v["status"] in _RUN_STATUSES
        and type(v["request_id"]) in _OPTIONAL_STR
        and _is_utc(v["started_at"])
        and (finished is None or _is_utc(finished))
        and type(v["error_code"]) in _OPTIONAL_STR
        and type(v["error_message"]) in _OPTIONAL_STR
        and (usage is None or type(usage) is TokenUsage)
        and type(v["model_used"]) in _OPTIONAL_STR
        and type(v["lease_owner"]) in _OPTIONAL_STR
        and (expires is None or _is_utc(expires))
        and (result is None or type(result) is AgentResult)
        and (epoch is None or type(epoch) is int)
        and type(v["agent_version"]) in _OPTIONAL_STR
        and (options is None or type(options) is RunOptions)
        and all(type(h) is str for h in v["holders"])
        and type(v["parent_run_id"]) in _OPTIONAL_STR
    )


def _is_name(value: Any) -> bool:
    """A NonEmptyStr field's value that validation keeps."""
    return type(value) is str and value != ""


def _is_utc(value: Any) -> bool:
    """A UtcDatetime field's value that validation keeps (an aware time already in UTC)."""
    return type(value) is datetime and value.tzinfo is UTC


_INTERACTION_STATUSES = frozenset(get_args(Interaction.model_fields["status"].annotation))
_RUN_STATUSES = frozenset(get_args(Run.model_fields["status"].annotation))
_ROLES = frozenset(get_args(Message.model_fields["role"].annotation))
_KINDS = frozenset(get_args(Message.model_fields["type"].annotation))


def message_of(row: Row) -> Message:
    """A message row as its record.

    A begin step reads up to 200 of them for its history, and pydantic's pass over each
    (whose content _content has validated already) was most of a history message's cost in
    the store. Where validation would keep every value as it is (_kept_as_is), the record is
    built from them directly; anything else (an empty JSON object, a time not in UTC, a value
    the model refuses) is validated as before.
    """
    values: dict[str, Any] = {
        "message_id": row["message_id"],
        "session_id": row["session_id"],
        "interaction_id": row["interaction_id"],
        "run_id": row["run_id"],
        "seq": row["seq"],
        "role": row["role"],
        "type": row["type"],
        "content": _content(row["content"]),
        "tool_call_id": row["tool_call_id"],
        "tool_name": row["tool_name"],
        "tool_args": _load(row["tool_args"]),
        "tool_result": _load(row["tool_result"]),
        "metadata": _load(row["metadata"]),
        "created_at": row["created_at"],
    }
    if _kept_as_is(values):
        return model_of_valid(Message, values)
    return Message(**values)


def _kept_as_is(v: dict[str, Any]) -> bool:
    """Whether Message(**v) would hold exactly v: the columns' types hold the rest (text ids,
    a bigint seq, a timestamptz, JSON loaded by _load, content validated by _content). Spelled
    out check by check: it runs for every history message."""
    message_id, session_id, seq = v["message_id"], v["session_id"], v["seq"]
    created, args, metadata = v["created_at"], v["tool_args"], v["metadata"]
    return (
        _is_name(message_id)
        and _is_name(session_id)
        and type(v["interaction_id"]) in _OPTIONAL_STR
        and type(v["run_id"]) in _OPTIONAL_STR
        and type(v["tool_call_id"]) in _OPTIONAL_STR
        and type(v["tool_name"]) in _OPTIONAL_STR
        and type(seq) is int
        and 0 <= seq <= INT32_MAX
        and v["role"] in _ROLES
        and v["type"] in _KINDS
        and _is_utc(created)
        and (args is None or (type(args) is dict and len(args) > 0))
        and (metadata is None or (type(metadata) is dict and len(metadata) > 0))
    )


_OPTIONAL_STR = frozenset({str, type(None)})


def action_of(row: Row) -> Action:
    return Action(
        action_id=row["action_id"],
        session_id=row["session_id"],
        interaction_id=row["interaction_id"],
        run_id=row["run_id"],
        kind=row["kind"],
        tool=row["tool"],
        args=_load(row["args"]) or {},
        tool_call_id=row["tool_call_id"],
        status=row["status"],
        created_at=row["created_at"],
        resolved_at=row["resolved_at"],
        response=_model(ActionResponseEnvelope, row["response"]),
        outcome=row["outcome"],
        result=_load(row["result"]),
        error=row["error"],
        agent_name=row["agent_name"],
        user_id=row["user_id"],
        expires_at=row["expires_at"],
        preview=_model(ActionPreview, row["preview"]),
        child=_load(row["child"]),
    )


def memory_of(row: Row) -> MemoryEntry:
    return MemoryEntry(
        org_id=row["org_id"] or None,
        scope_name=row["scope_name"],
        scope_id=row["scope_id"],
        entry_id=row["entry_id"],
        content=row["content"],
        metadata=_load(row["metadata"]),
        created_at=row["created_at"],
    )


def message_values(m: NewMessage) -> list[Any]:
    """message_id, role, type, content, tool_call_id, tool_name, tool_args, tool_result, metadata."""
    return [
        m.message_id,
        m.role,
        m.type,
        dump_content(m.content),
        m.tool_call_id,
        m.tool_name,
        dump(m.tool_args),
        dump(m.tool_result),
        dump(m.metadata),
    ]


def message_flat(messages: Sequence[NewMessage]) -> list[Any]:
    """The columns of message_values in one list, column after column (cut apart in SQL by
    _sql.column_slices, len(messages) values each; none for no messages)."""
    if len(messages) == 1:
        return message_values(messages[0])
    rows = [message_values(m) for m in messages]
    return [value for column in zip(*rows, strict=True) for value in column]


def action_flat(actions: Sequence[NewAction]) -> list[str | None]:
    """finish_step's pending-action columns (id, kind, tool, args, tool call id, preview,
    child link) in one list, column after column (as message_flat); none for no actions,
    what nearly every finish step has."""
    if not actions:
        return []
    return [
        *(a.action_id for a in actions),
        *(a.kind for a in actions),
        *(a.tool for a in actions),
        *(dump(a.args) for a in actions),
        *(a.tool_call_id for a in actions),
        *action_previews(actions),
        *action_children(actions),
    ]


def action_previews(actions: Sequence[NewAction]) -> list[str | None]:
    """The pending actions' previews, one column of action_flat."""
    return [None if a.preview is None else dump(a.preview) for a in actions]


def action_children(actions: Sequence[NewAction]) -> list[str | None]:
    """The pending actions' child links, one column of action_flat."""
    return [None if a.child is None else dump(a.child) for a in actions]
