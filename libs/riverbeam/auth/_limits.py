"""Size limits on what a caller may send, checked before anything is stored or run.

UUID fields are already checked by the wire types (BEM-010, and BEM-063 for action ids);
these checks cover what a type cannot: sizes and nesting.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import ContentPart, InvokePayload, InvokeRequest, ResumePayload

__all__ = ["RequestLimits", "check_string", "validate_invoke_limits"]


@dataclass(frozen=True, slots=True)
class RequestLimits:
    """The limits of one invoke or resume request.

    Attributes:
        max_content_bytes: Sum over content parts of the UTF-8 size of text, url and data,
            plus each part's metadata as compact JSON (BEM-012).
        max_parts: Number of content parts (BEM-012).
        max_metadata_bytes: Request metadata as compact JSON; also each action payload
            (BEM-013).
        max_metadata_depth: Nesting of metadata, part metadata and action payloads; an
            object or list is one level (BEM-013).
        max_actions: Number of action responses in a resume (BEM-013).
        max_name_chars: Names and ids that are not UUIDs: agent_name, model_override,
            auth_context.user_id / org_id / profile_id, a part's mime_type, an action
            response's kind and lc_action_id, a cancel's reason (BEM-022).
        max_token_chars: auth_context.mcp_token (BEM-022).
        max_errors: Entries of an action response's `errors`, each of at most
            4 * max_name_chars characters (BEM-022).
    """

    max_content_bytes: int = 1 << 20
    max_parts: int = 64
    max_metadata_bytes: int = 64 << 10
    max_metadata_depth: int = 16
    max_actions: int = 64
    max_name_chars: int = 256
    max_token_chars: int = 8192
    max_errors: int = 32


DEFAULT_LIMITS = RequestLimits()


def validate_invoke_limits(
    request: InvokePayload | ResumePayload, limits: RequestLimits = DEFAULT_LIMITS
) -> None:
    """Refuse a request that is too large or too deeply nested.

    Args:
        request: An invoke (InvokePayload or InvokeRequest) or resume request.
        limits: The limits to apply.

    Raises:
        RiverbeamError: BEM-012 for content, BEM-013 for metadata and action payloads; the
            details name the field, the limit and the size found.
    """
    if not _plainly_within(request, limits):
        _check_strings(request, limits)
        _check_content(request.content, limits)
    if request.metadata is not None:
        _check_json("metadata", request.metadata, limits)
    if isinstance(request, InvokePayload) and request.response_schema is not None:
        _check_json("response_schema", request.response_schema, limits)
    actions = request.actions if isinstance(request, ResumePayload | InvokeRequest) else []
    if len(actions) > limits.max_actions:
        raise RiverbeamError(
            ErrorCode.METADATA_TOO_LARGE,
            f"{len(actions)} action responses; at most {limits.max_actions}",
            field="actions",
            limit=limits.max_actions,
            actual=len(actions),
        )
    for index, action in enumerate(actions):
        if action.payload is not None:
            _check_json(f"actions[{index}].payload", action.payload, limits)


def _plainly_within(request: InvokePayload | ResumePayload, limits: RequestLimits) -> bool:
    """True when `_check_strings` and `_check_content` surely pass, for a request without
    action responses or part metadata (the usual invoke), at a fraction of their cost: every
    name is within the limit when all of them together are, and an ASCII string's UTF-8 size
    is its length. False: run them (they may pass, or say what is too large).
    """
    if isinstance(request, ResumePayload | InvokeRequest) and request.actions:
        return False
    parts = request.content
    if len(parts) > limits.max_parts:
        return False
    chars = len(request.agent_name or "") + len(request.model_override or "")
    auth = request.auth_context
    if auth is not None:
        token = auth.mcp_token
        if token is not None and len(token) > limits.max_token_chars:
            return False
        chars += len(auth.user_id or "") + len(auth.org_id or "") + len(auth.profile_id or "")
    for part in parts:
        if part.metadata is not None:
            return False
        chars += len(part.mime_type or "")
    if chars > limits.max_name_chars:
        return False
    # As _check_content sums it, part by part: a part that takes the total over the limit is
    # left to it, so that a later part's encoding (an unpaired surrogate) is not reached first.
    total = 0
    for part in parts:
        for value in (part.text, part.url, part.data):
            if value:
                total += len(value) if value.isascii() else len(value.encode("utf-8"))
        if total > limits.max_content_bytes:
            return False
    return True


def check_string(field: str, value: str | None, limit: int) -> None:
    """Refuse a string field longer than `limit` characters (BEM-022); None passes.

    The message names the field and the limit, never the value.
    """
    if value is not None and len(value) > limit:
        raise RiverbeamError(
            ErrorCode.STRING_TOO_LONG,
            f"{field} is {len(value)} characters; at most {limit}",
            field=field,
            limit=limit,
            actual=len(value),
        )


def _check_strings(request: InvokePayload | ResumePayload, limits: RequestLimits) -> None:
    names = limits.max_name_chars
    check_string("agent_name", request.agent_name, names)
    check_string("model_override", request.model_override, names)
    auth = request.auth_context
    if auth is not None:
        check_string("auth_context.user_id", auth.user_id, names)
        check_string("auth_context.org_id", auth.org_id, names)
        check_string("auth_context.profile_id", auth.profile_id, names)
        check_string("auth_context.mcp_token", auth.mcp_token, limits.max_token_chars)
    for index, part in enumerate(request.content[: limits.max_parts]):
        check_string(f"content[{index}].mime_type", part.mime_type, names)
    actions = request.actions if isinstance(request, ResumePayload | InvokeRequest) else []
    for index, action in enumerate(actions[: limits.max_actions]):
        check_string(f"actions[{index}].kind", action.kind, names)
        check_string(f"actions[{index}].lc_action_id", action.lc_action_id, names)
        check_string(f"actions[{index}].responder_id", action.responder_id, names)
        if len(action.errors) > limits.max_errors:
            raise RiverbeamError(
                ErrorCode.STRING_TOO_LONG,
                f"actions[{index}].errors has {len(action.errors)} entries; at most "
                f"{limits.max_errors}",
                field=f"actions[{index}].errors",
                limit=limits.max_errors,
                actual=len(action.errors),
            )
        for n, text in enumerate(action.errors):
            check_string(f"actions[{index}].errors[{n}]", text, names * 4)


def _check_content(parts: Sequence[ContentPart], limits: RequestLimits) -> None:
    if len(parts) > limits.max_parts:
        raise RiverbeamError(
            ErrorCode.CONTENT_TOO_LARGE,
            f"{len(parts)} content parts; at most {limits.max_parts}",
            field="content",
            limit=limits.max_parts,
            actual=len(parts),
        )
    total = 0
    for index, part in enumerate(parts):
        for value in (part.text, part.url, part.data):
            if value:
                total += len(value.encode("utf-8"))
        if part.metadata is not None:
            _check_depth(f"content[{index}].metadata", part.metadata, limits.max_metadata_depth)
            total += len(_compact_json(part.metadata))
        if total > limits.max_content_bytes:
            raise RiverbeamError(
                ErrorCode.CONTENT_TOO_LARGE,
                f"content exceeds {limits.max_content_bytes} bytes",
                field="content",
                limit=limits.max_content_bytes,
                actual=total,
            )


def _check_json(field: str, value: Any, limits: RequestLimits) -> None:
    # Depth first: it bounds the recursion of the JSON encoder that measures the size.
    bound = _flat_size_bound(value)
    if bound is None or limits.max_metadata_depth < 1:  # a flat object is one level deep
        _check_depth(field, value, limits.max_metadata_depth)
    if bound is not None and bound <= limits.max_metadata_bytes:
        return  # within the limit however it is encoded: not encoded to measure it
    size = len(_compact_json(value))
    if size > limits.max_metadata_bytes:
        raise RiverbeamError(
            ErrorCode.METADATA_TOO_LARGE,
            f"{field} is {size} bytes as JSON; at most {limits.max_metadata_bytes}",
            field=field,
            limit=limits.max_metadata_bytes,
            actual=size,
        )


# The most compact JSON can take per value of a type whose every value it writes in a bounded
# number of bytes: a float's repr is at most 24 characters ("-2.2250738585072014e-308"),
# "Infinity" and "NaN" fewer.
_BOUNDED_SIZE: dict[type, int] = {bool: 5, type(None): 4, float: 24}


def _flat_size_bound(value: Any) -> int | None:
    """A number of bytes the compact JSON of `value` never exceeds, for an object whose keys
    are ASCII strings and whose values are ASCII strings, ints, floats, booleans or null (a
    request's usual metadata); None for anything else (measured by encoding it).

    An ASCII character takes at most 6 bytes (a control character as \\u00XX).
    """
    if type(value) is not dict:
        return None
    total = 2  # {}
    for key, item in value.items():
        if type(key) is not str or not key.isascii():
            return None
        kind = type(item)
        if kind is str:
            if not item.isascii():
                return None
            size = 2 + 6 * len(item)
        elif kind is int:
            size = len(str(item))
        else:
            bounded = _BOUNDED_SIZE.get(kind)
            if bounded is None:
                return None
            size = bounded
        total += 4 + 6 * len(key) + size  # "key": value, (the last comma is not written)
    return total


def _check_depth(field: str, value: Any, limit: int) -> None:
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > limit:
            raise RiverbeamError(
                ErrorCode.METADATA_TOO_LARGE,
                f"{field} is nested more than {limit} levels deep",
                field=field,
                limit=limit,
            )
        stack.extend((child, depth) for child in children)


# One encoder for every check: json.dumps with these options builds a new one on each call.
_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def _compact_json(value: Any) -> bytes:
    return _compact(value).encode("utf-8")
