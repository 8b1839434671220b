"""U+0000, which PostgreSQL cannot store, handled the same way by every store before any write.

PostgreSQL refuses NUL in `text` and `\\u0000` in `jsonb`. So that a model reply containing it
cannot make a finish step fail (and so that InMemoryStore behaves as PgBeamStore), each store
method passes its arguments through `nul_safe` first:

- ids and names given as arguments (session_id, run_id, user_id, org_id, agent_name,
  request_id, lease_owner, scope names ...) are refused with BEM-017: replacing a character
  would make them name something else;
- everything else (message content, tool args and results, metadata, action payloads, run
  results, error messages, memory content), at any depth and including object keys and ids
  nested in those records, is normalised: each U+0000 becomes U+FFFD.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterable
from datetime import date, datetime, timedelta
from typing import Any, ParamSpec, TypeVar, cast

from pydantic import BaseModel

from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = [
    "NUL",
    "REPLACEMENT",
    "may_hold_nul",
    "nul_free_call",
    "nul_safe",
    "nul_safe_but",
    "scrub",
]

NUL = "\x00"
REPLACEMENT = "\ufffd"

# Arguments that name something: refused, never rewritten.
_NAMES = frozenset(
    {
        "session_id",
        "interaction_id",
        "run_id",
        "action_id",
        "request_id",
        "message_id",
        "agent_name",
        "lease_owner",
        "user_id",
        "profile_id",
        "org_id",
        "require_owner",
        "require_org",
        "scope_name",
        "scope_id",
        "scopes",
        "page_token",
        "tool_call_id",
        "tool_name",
    }
)

P = ParamSpec("P")
T = TypeVar("T")


def scrub(value: T) -> T:
    """`value` with every U+0000 replaced by U+FFFD, at any depth (keys included).

    Returns `value` itself when it holds no U+0000, so the common case copies nothing (and
    only looks: the rebuilding walk runs only for a value that has one). Pydantic models are
    copied with the changed fields only.
    """
    if not _has_nul(value):
        return value
    cleaned, _ = _scrub(value)
    return cleaned  # type: ignore[no-any-return]


# Values that hold no string: nothing to look into.
_PLAIN: frozenset[type] = frozenset({int, float, bool, type(None), datetime, date, timedelta})


# How _has_nul walks a value of a type: decided once per type (by the isinstance checks it
# made on every value before, in their order) and then looked up.
_TEXT, _MAP, _SEQ, _MODEL, _OTHER = range(1, 6)
_WALKS: dict[type, int] = {str: _TEXT, dict: _MAP, list: _SEQ, tuple: _SEQ}


def _walk_of(kind: type) -> int:
    walk = _WALKS.get(kind)
    if walk is None:
        if issubclass(kind, str):
            walk = _TEXT
        elif issubclass(kind, dict):
            walk = _MAP
        elif issubclass(kind, list | tuple):
            walk = _SEQ
        elif issubclass(kind, BaseModel):
            walk = _MODEL
        else:
            walk = _OTHER
        _WALKS[kind] = walk
    return walk


def _has_nul(value: Any) -> bool:
    """Whether a U+0000 is anywhere in `value`, where _scrub would find it.

    The loop decides a str, and a value of a type without strings, in place: most of what a
    step carries (ids, texts, None), without a call each. A model's values are read from its
    __dict__ (its fields, in order), not looked up by field name, and the kind of walk is
    looked up by type: a finish step's result and message, 6.1 -> 3.3 us.
    """
    kind = type(value)
    if kind is str:
        return NUL in value
    if kind in _PLAIN:
        return False
    walk = _WALKS.get(kind) or _walk_of(kind)
    items: Iterable[Any]
    if walk == _MODEL:
        items = value.__dict__.values()
    elif walk == _SEQ:
        items = value
    elif walk == _MAP:
        for key in value:
            kind = type(key)
            if kind is str:
                if NUL in key:
                    return True
            elif kind not in _PLAIN and _has_nul(key):
                return True
        items = value.values()
    elif walk == _TEXT:
        return NUL in value
    else:
        return False
    for item in items:
        kind = type(item)
        if kind is str:
            if NUL in item:
                return True
        elif kind not in _PLAIN and _has_nul(item):
            return True
    return False


def _scrub(value: Any) -> tuple[Any, bool]:
    if isinstance(value, str):
        return (value.replace(NUL, REPLACEMENT), True) if NUL in value else (value, False)
    if isinstance(value, dict):
        items = [(_scrub(k), _scrub(v)) for k, v in value.items()]
        if not any(kc or vc for (_, kc), (_, vc) in items):
            return value, False
        return {k: v for (k, _), (v, _) in items}, True
    if isinstance(value, list | tuple):
        parts = [_scrub(v) for v in value]
        if not any(c for _, c in parts):
            return value, False
        cleaned = [v for v, _ in parts]
        return (tuple(cleaned) if isinstance(value, tuple) else cleaned), True
    if isinstance(value, BaseModel):
        update: dict[str, Any] = {}
        for name in type(value).model_fields:
            field_value, changed = _scrub(getattr(value, name))
            if changed:
                update[name] = field_value
        return (value.model_copy(update=update), True) if update else (value, False)
    return value, False


def _refuse_nul(name: str, value: Any) -> None:
    if isinstance(value, str):
        if NUL in value:
            raise RiverbeamError(ErrorCode.NUL_IN_TEXT, f"{name} contains U+0000", field=name)
    elif isinstance(value, list | tuple):
        for item in value:
            _refuse_nul(name, item)


def nul_safe(
    method: Callable[P, Coroutine[Any, Any, T]],
) -> Callable[P, Coroutine[Any, Any, T]]:
    """Refuse U+0000 in the method's id arguments and normalise it everywhere else.

    Store methods take keyword arguments only, so the check goes by argument name.
    """
    return _wrapped(method, frozenset())


def nul_safe_but(
    *deferred: str,
) -> Callable[[Callable[P, Coroutine[Any, Any, T]]], Callable[P, Coroutine[Any, Any, T]]]:
    """nul_safe, but the arguments named in `deferred` (none of them an id) reach the method as
    given: it writes them as statement parameters first, and through nul_free_call, which
    scrubs them only when those parameters may hold a U+0000. Walking a finish step's result
    and message for it cost ~50k instructions; looking for it in their JSON text a few."""
    names = frozenset(deferred)
    if names & _NAMES:
        raise ValueError(f"ids are always refused, never deferred: {sorted(names & _NAMES)}")

    def decorate(
        method: Callable[P, Coroutine[Any, Any, T]],
    ) -> Callable[P, Coroutine[Any, Any, T]]:
        return _wrapped(method, names)

    return decorate


def _wrapped(
    method: Callable[P, Coroutine[Any, Any, T]], deferred: frozenset[str]
) -> Callable[P, Coroutine[Any, Any, T]]:
    @functools.wraps(method)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        for name, value in kwargs.items():
            kind = type(value)
            if kind is str:  # most arguments: decided without a call
                if NUL in cast(str, value):
                    if name in _NAMES:
                        _refuse_nul(name, value)  # raises
                    kwargs[name] = cast(str, value).replace(NUL, REPLACEMENT)
            elif kind in _PLAIN:  # None, numbers, times: nothing to refuse or normalise
                continue
            elif name in _NAMES:
                _refuse_nul(name, value)
            elif name not in deferred:
                kwargs[name] = scrub(value)
        return await method(*args, **kwargs)

    return wrapper


_JSON_NUL = "\\u0000"  # how a JSON text writes U+0000 (json and pydantic alike)


def may_hold_nul(params: Iterable[Any]) -> bool:
    """Whether statement parameters may hold a U+0000: a text holding one, or its JSON escape
    (a JSON text holds no other spelling of it), or in a list's items; any value not text, a
    list or plain (a number, a time, None) is taken to. A text holding a backslash followed by
    `u0000` is taken to as well: that only costs the scrubbing walk."""
    for value in params:
        kind = type(value)
        if kind is str:
            if NUL in value or _JSON_NUL in value:
                return True
        elif kind is list:
            if may_hold_nul(value):
                return True
        elif kind not in _PLAIN:
            return True
    return False


def nul_free_call(
    build: Callable[..., tuple[str, list[Any]]], *values: Any
) -> tuple[str, list[Any]]:
    """`build(*(scrub(v) for v in values))`: a statement and its parameters from values that may
    hold a U+0000 (nul_safe_but's deferred arguments). Built from `values` as they are when its
    parameters hold none (then scrub would have returned each value itself), else again from
    the scrubbed values."""
    query, params = build(*values)
    if may_hold_nul(params):
        query, params = build(*(scrub(v) for v in values))
    return query, params
