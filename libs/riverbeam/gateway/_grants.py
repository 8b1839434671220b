"""Stream grants: the requests this router just acknowledged, and to whom.

A client that streams calls Invoke (stream=true), gets a StreamAck, and at once calls
FollowStream on the same router. The runner's begin-run step has then just checked, atomically
in the store, that the caller may use the request's session (the Gateway's Grant:
require_owner / require_org; an admin may use any). So the router remembers, briefly, that
this caller may follow that request, and its FollowStream skips the store read and the
ownership check (`OwnershipChecks._may_reach`) that would only say yes again.

A grant is held for one principal identity (subject, organisation and roles: everything the
ownership check reads of a principal) and is never answered to any other; a FollowStream by
anyone else, on another router, or after the grant expired or was evicted takes the full check.

Why a grant cannot outlive what it stands for: a session's owner never changes (the first owner
ids stick; a null organisation is filled in by the first begin-run that names one, and then
matches the caller that named it), and a session is deleted only by retention, once idle
longer than `RIVERBEAM_RETENTION_IDLE_DAYS`, at least one hour (StoreSettings), while the
begin-run step that preceded the grant touched it. GRANT_TTL_S is far below that.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from riverbeam.auth import Principal, Role

__all__ = ["GRANT_TTL_S", "MAX_GRANTS", "StreamGrant", "StreamGrants"]

# Long enough for a client's FollowStream right after its StreamAck (and a reconnect or two);
# far below the shortest retention window (one hour), so a granted session still exists.
GRANT_TTL_S = 60.0
# At most this many grants are held (the oldest goes first): ~6 MB when full.
MAX_GRANTS = 10_000

# What the ownership check reads of a principal: its subject, organisation and roles.
_Holder = tuple[str, str | None, frozenset[Role]]


def _holder(principal: Principal) -> _Holder:
    return (principal.subject, principal.org_id, principal.roles)


class _Ack(Protocol):
    """A StreamAck: the wire type, or its protobuf message (run_id "" when unset)."""

    @property
    def request_id(self) -> str: ...
    @property
    def run_id(self) -> str | None: ...
    @property
    def session_id(self) -> str: ...
    @property
    def interaction_id(self) -> str: ...


@dataclass(frozen=True, slots=True)
class StreamGrant:
    """The run a granted request began (the ids of its StreamAck)."""

    run_id: str
    session_id: str
    interaction_id: str


class StreamGrants:
    """A bounded, short-lived map: request id -> (holder, expiry, grant).

    Every grant lives the same TTL, so insertion order is expiry order: expired grants are
    dropped from the front as new ones come (and on lookup), and the oldest is evicted when
    the map is full. Each operation is O(1) (amortised: a grant is dropped at most once).
    """

    def __init__(
        self,
        *,
        ttl_s: float = GRANT_TTL_S,
        max_grants: int = MAX_GRANTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_grants < 1:
            raise ValueError("max_grants must be at least 1")
        self._ttl_s = ttl_s
        self._max = max_grants
        self._clock = clock
        self._held: OrderedDict[str, tuple[_Holder, float, StreamGrant]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._held)

    def record(self, principal: Principal, request_id: str, grant: StreamGrant) -> None:
        """Remember that `principal` may follow `request_id` (its StreamAck was handed to it)."""
        now = self._clock()
        self._drop_expired(now)
        self._held.pop(request_id, None)  # re-recorded: it moves to the end, with a new expiry
        self._held[request_id] = (_holder(principal), now + self._ttl_s, grant)
        if len(self._held) > self._max:
            self._held.popitem(last=False)

    def record_ack(self, principal: Principal, request_id: str | None, ack: _Ack) -> None:
        """Record the grant of a StreamAck handed to `principal` for `request_id`; an ack
        of another request, or naming no run, is not kept."""
        if not request_id or ack.request_id != request_id or not ack.run_id:
            return
        grant = StreamGrant(
            run_id=ack.run_id, session_id=ack.session_id, interaction_id=ack.interaction_id
        )
        self.record(principal, request_id, grant)

    def lookup(self, principal: Principal, request_id: str) -> StreamGrant | None:
        """The grant of `request_id` if it was made to this very principal and is still live.

        A lookup by another principal changes nothing: it cannot revoke the holder's grant.
        """
        held = self._held.get(request_id)
        if held is None:
            return None
        holder, expires, grant = held
        if self._clock() >= expires:
            del self._held[request_id]
            return None
        if holder != _holder(principal):
            return None
        return grant

    def _drop_expired(self, now: float) -> None:
        while self._held:
            _, (_, expires, _) = next(iter(self._held.items()))
            if now < expires:
                return
            self._held.popitem(last=False)
