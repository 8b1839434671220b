"""Input checks shared by every store implementation, so they reject the same things."""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal, get_args

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store._types import FinishStatus, NewMessage, RecordedOutcome
from riverbeam.types import (
    ActionOutcome,
    ActionResponseEnvelope,
    Interaction,
    InteractionStatus,
    Message,
)

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
DEFAULT_REAP_LIMIT = 100
DEFAULT_RECALL_LIMIT = 20
MAX_HISTORY_LIMIT = 1000
MAX_SCOPE_NAME = 128
MAX_SCOPE_ID = 256
# The shortest idle window delete_idle_sessions takes: RIVERBEAM_RETENTION_IDLE_DAYS's minimum
# (core.settings.MIN_RETENTION_IDLE_DAYS, one hour; a test holds the two equal), so that no
# caller of the store, over gRPC or in process, deletes a session a router's stream grant
# still names. Spelled here so the store does not import pydantic-settings.
MIN_IDLE_WINDOW = timedelta(hours=1)

_FINISH_STATUSES: frozenset[str] = frozenset(get_args(FinishStatus))
_INTERACTION_STATUSES: frozenset[str] = frozenset(get_args(InteractionStatus))
_RECORDED: frozenset[str] = frozenset(get_args(RecordedOutcome))

# What an interaction becomes when its run finishes, unless the caller says otherwise.
_INTERACTION_AFTER: dict[str, InteractionStatus] = {
    "completed": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
    "interrupted": "in_progress",
}


def page_size(value: int | None) -> int:
    """AIP-158: 0 or None means the default; larger than the maximum is clamped."""
    if value is None or value == 0:
        return DEFAULT_PAGE_SIZE
    if value < 0:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "page_size must not be negative", field="page_size"
        )
    return min(value, MAX_PAGE_SIZE)


def encode_page_token(position: int) -> str:
    """An opaque token for "after this position" (a message seq or an action ordinal)."""
    return base64.urlsafe_b64encode(str(position).encode()).decode().rstrip("=")


def decode_page_token(token: str | None) -> int:
    """The position a token stands for; 0 (the start) for no token. Bad tokens are BEM-015."""
    if not token:
        return 0
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        text = raw.decode("ascii")
        if not text.isdigit():
            raise ValueError(text)
        return int(text)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise RiverbeamError(ErrorCode.INVALID_PAGE_TOKEN, field="page_token") from None


def finish_status(status: str) -> FinishStatus:
    if status not in _FINISH_STATUSES:
        raise RiverbeamError(
            ErrorCode.INVALID_ENUM,
            f"a run finishes as one of {sorted(_FINISH_STATUSES)}",
            field="status",
        )
    return status  # type: ignore[return-value]


def interaction_after(status: FinishStatus, explicit: str | None) -> InteractionStatus:
    """The interaction status a finished run leaves behind."""
    if explicit is None:
        return _INTERACTION_AFTER[status]
    if explicit not in _INTERACTION_STATUSES:
        raise RiverbeamError(
            ErrorCode.INVALID_ENUM,
            f"interaction_status must be one of {sorted(_INTERACTION_STATUSES)}",
            field="interaction_status",
        )
    return explicit  # type: ignore[return-value]


def recorded_outcome(outcome: str) -> ActionOutcome:
    if outcome not in _RECORDED:
        raise RiverbeamError(
            ErrorCode.INVALID_ENUM, f"outcome must be one of {sorted(_RECORDED)}", field="outcome"
        )
    return outcome  # type: ignore[return-value]


VersionPolicy = Literal["refuse", "major", "any"]
_VERSION_POLICIES: frozenset[str] = frozenset(get_args(VersionPolicy))


def version_policy(value: str | None) -> VersionPolicy:
    """None is the default, `refuse`; anything else unknown is BEM-262."""
    if value is None or value == "":
        return "refuse"
    if value not in _VERSION_POLICIES:
        raise RiverbeamError(ErrorCode.INVALID_VERSION_POLICY, policy=value)
    return value  # type: ignore[return-value]


def _major(version: str) -> str:
    return version.strip().lstrip("vV").split(".", 1)[0]


def session_busy(session_id: str, run_id: str, request_id: str | None) -> RiverbeamError:
    """BEM-030 naming the running run (what a busy-session `interrupt` cancels)."""
    return RiverbeamError(
        ErrorCode.SESSION_BUSY, session_id=session_id, run_id=run_id, request_id=request_id
    )


def version_pin(interaction: Interaction, current: str | None, policy: VersionPolicy) -> None:
    """A resume of an interaction pinned to its agent_version by a runner with `current`
    (BEM-260). An interaction recorded before pinning (no version) takes any runner.
    """
    pinned, interaction_id = interaction.agent_version, interaction.interaction_id
    if pinned is None or pinned == current or policy == "any":
        return
    if policy == "major" and current is not None and _major(pinned) == _major(current):
        return
    raise RiverbeamError(
        ErrorCode.AGENT_VERSION_MISMATCH,
        f"the interaction was started by agent version {pinned!r}; this runner has"
        f" {current!r} (version policy {policy!r})",
        interaction_id=interaction_id,
        pinned_version=pinned,
        runner_version=current,
        policy=policy,
    )


def action_ttl(ttl_s: float | None) -> timedelta | None:
    if ttl_s is None:
        return None
    if not ttl_s > 0:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "an approval lasts a positive time", field="action_ttl_s"
        )
    return timedelta(seconds=ttl_s)


def lease_ttl(ttl_s: float) -> timedelta:
    if not ttl_s > 0:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "a lease lasts a positive time", field="lease_ttl_s"
        )
    return timedelta(seconds=ttl_s)


def idle_cutoff(older_than: timedelta) -> timedelta:
    if older_than < MIN_IDLE_WINDOW:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT,
            f"older_than must be at least {MIN_IDLE_WINDOW}",
            field="older_than",
            minimum_s=int(MIN_IDLE_WINDOW.total_seconds()),
        )
    return older_than


def positive_limit(limit: int | None, default: int) -> int:
    if limit is None or limit == 0:
        return default
    if limit < 0:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "limit must not be negative", field="limit"
        )
    return min(limit, MAX_PAGE_SIZE)


def history_limit(limit: int) -> int:
    """How many earlier messages begin_run returns: 0 means none; above the maximum is clamped."""
    if limit < 0:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "history_limit must not be negative", field="history_limit"
        )
    return min(limit, MAX_HISTORY_LIMIT)


def known_history(messages: Sequence[Message], after: int, after_id: str | None) -> int:
    """`after` when the session's message numbered `after` (messages: the session's, from seq
    1, dense) has message_id `after_id`, else 0: what begin_run's history may leave out."""
    if after <= 0 or after_id is None or after > len(messages):
        return 0
    held = messages[after - 1]
    return after if held.seq == after and held.message_id == after_id else 0


def action_responses(responses: Sequence[ActionResponseEnvelope]) -> None:
    """Each answered action id is a canonical UUID (BEM-063) and is answered once (BEM-068);
    an answer to an `outcome_unknown` action says retry, skip or done (BEM-269)."""
    seen: set[str] = set()
    for response in responses:
        action_id = response.action_id
        try:
            canonical = str(uuid.UUID(action_id))
        except (ValueError, AttributeError, TypeError):
            canonical = ""
        if canonical != action_id.lower() or len(action_id) != 36:
            raise RiverbeamError(ErrorCode.ACTION_ID_NOT_UUID, action_id=action_id)
        if canonical in seen:
            raise RiverbeamError(ErrorCode.DUPLICATE_ACTION, action_id=action_id)
        seen.add(canonical)
        outcome_decision(response)


OUTCOME_DECISIONS = ("retry", "skip", "done")
"""How a person answers an `outcome_unknown` action (durable runs, docs/durability.md)."""


def outcome_decision(response: ActionResponseEnvelope) -> str | None:
    """The decision of a submitted answer to an `outcome_unknown` action (BEM-269 when it is
    not retry, skip or done); None for any other answer."""
    if response.kind != "outcome_unknown" or response.status != "submitted":
        return None
    decision = (response.payload or {}).get("decision")
    if decision not in OUTCOME_DECISIONS:
        raise RiverbeamError(
            ErrorCode.INVALID_OUTCOME_DECISION,
            f"decision {decision!r} is none of retry, skip, done",
            action_id=response.action_id,
        )
    return str(decision)


def memory_scope(scope_name: str, scope_id: str) -> None:
    """A scope is (name, id): both non-empty, bounded, and free of control characters."""
    for value, limit, field in (
        (scope_name, MAX_SCOPE_NAME, "scope_name"),
        (scope_id, MAX_SCOPE_ID, "scope_id"),
    ):
        if not value or len(value) > limit or any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise RiverbeamError(
                ErrorCode.INVALID_MEMORY_SCOPE,
                f"{field} must be 1..{limit} printable characters",
                field=field,
            )


def memory_org(org_id: str | None) -> str:
    """The organisation key of memory: "" for an unscoped caller (None), else the org id.

    Memory is keyed by (org, scope_name, scope_id), so equal scopes of two organisations never
    share entries; the unscoped key "" is an organisation of its own.
    """
    if org_id is None or org_id == "":
        return ""
    if len(org_id) > MAX_SCOPE_ID or any(ord(c) < 32 or ord(c) == 127 for c in org_id):
        raise RiverbeamError(
            ErrorCode.INVALID_MEMORY_SCOPE,
            f"org_id must be at most {MAX_SCOPE_ID} printable characters",
            field="org_id",
        )
    return org_id


def new_message(**fields: object) -> NewMessage:
    """A NewMessage from loose arguments, validated (bad role/type is a catalog error)."""
    return NewMessage.parse({k: v for k, v in fields.items() if v is not None})


def aware(now: datetime | None) -> datetime | None:
    """An instant must carry its time zone: a naive datetime means different things to each store."""
    if now is not None and (now.tzinfo is None or now.utcoffset() is None):
        raise RiverbeamError(ErrorCode.INVALID_ARGUMENT, "now must be timezone-aware", field="now")
    return now


def lease_epoch(epoch: int | None) -> int | None:
    """A lease epoch a caller says it holds: None (not fenced) or an integer >= 1."""
    if epoch is None:
        return None
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT, "lease_epoch must be an integer >= 1", field="lease_epoch"
        )
    return epoch


def stale_epoch(run_id: str, held: int, current: int | None) -> RiverbeamError:
    """The refusal of a write made under an epoch the run has moved past."""
    return RiverbeamError(
        ErrorCode.STALE_EPOCH,
        f"lease epoch {held} of run {run_id} is stale (the run is at epoch {current})",
        run_id=run_id,
        lease_epoch=held,
        current_epoch=current,
    )
