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
from collections.abc import Callable, Coroutine
from datetime import date, datetime, timedelta
from typing import Any, ParamSpec, TypeVar, cast

from pydantic import BaseModel

from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["NUL", "REPLACEMENT", "nul_safe", "scrub"]

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


def _has_nul(value: Any) -> bool:
    """Whether a U+0000 is anywhere in `value`, where _scrub would find it.

    The loops decide a str, and a value of a type without strings, in place: most of what a
    step carries (ids, texts, None), without a call each.
    """
    kind = type(value)
    if kind is str:
        return NUL in value
    if kind in _PLAIN:
        return False
    if isinstance(value, str):
        return NUL in value
    if isinstance(value, dict):
        for key, item in value.items():
            if _has_nul(key):
                return True
            kind = type(item)
            if kind is str:
                if NUL in item:
                    return True
            elif kind not in _PLAIN and _has_nul(item):
                return True
        return False
    if isinstance(value, list | tuple):
        for item in value:
            kind = type(item)
            if kind is str:
                if NUL in item:
                    return True
            elif kind not in _PLAIN and _has_nul(item):
                return True
        return False
    if isinstance(value, BaseModel):
        # The field values are the __dict__'s (the extra and the private values live in slots
        # of their own): read without a lookup by name each. A key that is no field (which
        # model_copy(update=...) can add) is looked at too; _scrub goes by the fields and
        # leaves such a model as it is.
        for field in value.__dict__.values():
            kind = type(field)
            if kind is str:
                if NUL in field:
                    return True
            elif kind not in _PLAIN and _has_nul(field):
                return True
        return False
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

    @functools.wraps(method)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        for name, value in kwargs.items():
            kind = type(value)
            if kind in _PLAIN:  # None, numbers, times: nothing to refuse or normalise
                continue
            if name in _NAMES:
                _refuse_nul(name, value)
            elif kind is not str:
                kwargs[name] = scrub(value)
            elif NUL in cast(str, value):
                kwargs[name] = cast(str, value).replace(NUL, REPLACEMENT)
        return await method(*args, **kwargs)

    return wrapper
