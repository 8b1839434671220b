"""NATS subjects of a request: its frames and its cancel control.

A request id becomes a subject token, so it is validated as a canonical UUID first: nothing a
caller sends can add a token (`.`), a wildcard (`*`, `>`) or whitespace to a subject.
"""

from __future__ import annotations

import re
import uuid

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream._config import CANCEL_SUBJECT_PREFIX, DEFAULT_SUBJECT_PREFIX

__all__ = [
    "cancel_subject_for",
    "msg_id_for",
    "msg_id_of_token",
    "request_id_token",
    "subject_for",
]

# The 36-character form, ASCII hex digits in either case.
_HYPHENATED = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


def request_id_token(request_id: object) -> str:
    """The canonical (lowercase, hyphenated) form of a request id, safe as a subject token.

    Raises:
        RiverbeamError: INVALID_UUID when `request_id` is not a UUID in its 36-character form.
    """
    if type(request_id) is str and _HYPHENATED.fullmatch(request_id):
        # What _parsed_token gives back for this form, without parsing it into a uuid.UUID
        # and formatting that again (20.3k instructions a call, five calls a streamed run).
        return request_id.lower()
    return _parsed_token(request_id)


def _parsed_token(request_id: object) -> str:
    """request_id_token, by way of uuid.UUID: what the fast path must agree with."""
    if isinstance(request_id, str) and len(request_id) == 36:
        try:
            parsed = uuid.UUID(request_id)
        except ValueError:
            pass
        else:
            canonical = str(parsed)
            # uuid.UUID ignores where the hyphens are; insist on the canonical layout.
            if request_id.lower() == canonical:
                return canonical
    raise RiverbeamError(
        ErrorCode.INVALID_UUID,
        f"request_id {request_id!r} is not a UUID",
        field="request_id",
    )


def subject_for(request_id: str, *, prefix: str = DEFAULT_SUBJECT_PREFIX) -> str:
    """The subject of a request's frames: `riverbeam.stream.<request_id>`."""
    return f"{prefix}.{request_id_token(request_id)}"


def cancel_subject_for(request_id: str) -> str:
    """The subject that asks whichever runner holds a request to cancel it."""
    return f"{CANCEL_SUBJECT_PREFIX}.{request_id_token(request_id)}"


def msg_id_for(request_id: str, seq: int) -> str:
    """The `Nats-Msg-Id` of frame `seq` of a request: `<request_id>:<seq>`."""
    return msg_id_of_token(request_id_token(request_id), seq)


def msg_id_of_token(token: str, seq: int) -> str:
    """msg_id_for, of a request id already in its canonical form (request_id_token's)."""
    return f"{token}:{seq}"
