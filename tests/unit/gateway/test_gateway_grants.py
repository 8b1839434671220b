"""StreamGrants: held for one principal identity, briefly, and never more than the bound."""

from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from riverbeam.auth import Principal, Role
from riverbeam.core.settings import MIN_RETENTION_IDLE_DAYS, StoreSettings
from riverbeam.gateway._grants import GRANT_TTL_S, MAX_GRANTS, StreamGrant, StreamGrants
from riverbeam.types import StreamAck
from riverbeam.v1 import types_pb2

ALICE = Principal("alice", org_id="acme")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def grant() -> StreamGrant:
    return StreamGrant(
        run_id=str(uuid.uuid4()), session_id=str(uuid.uuid4()), interaction_id=str(uuid.uuid4())
    )


def test_a_grant_is_answered_to_its_holder_only() -> None:
    grants = StreamGrants()
    request_id, held = str(uuid.uuid4()), grant()
    grants.record(ALICE, request_id, held)

    assert grants.lookup(ALICE, request_id) == held
    assert grants.lookup(Principal("alice", org_id="acme"), request_id) == held  # same identity
    others = [
        Principal("bob", org_id="acme"),  # another user of the org
        Principal("alice", org_id="globex"),  # the same user id in another org
        Principal("alice"),  # unscoped
        Principal("alice", org_id="acme", roles=frozenset({Role.USER, Role.APPROVER})),
        Principal("alice", org_id="acme", roles=frozenset({Role.BACKEND})),
        Principal("alice", org_id="acme", roles=frozenset({Role.ADMIN})),
    ]
    for other in others:
        assert grants.lookup(other, request_id) is None
    # Asking as someone else revoked nothing; another request id is not granted.
    assert grants.lookup(ALICE, request_id) == held
    assert grants.lookup(ALICE, str(uuid.uuid4())) is None


def test_a_grant_expires_after_its_ttl() -> None:
    clock = Clock()
    grants = StreamGrants(ttl_s=60.0, clock=clock)
    request_id, held = str(uuid.uuid4()), grant()
    grants.record(ALICE, request_id, held)

    clock.now += 59.999
    assert grants.lookup(ALICE, request_id) == held
    clock.now += 0.001
    assert grants.lookup(ALICE, request_id) is None
    assert len(grants) == 0  # dropped on the lookup that found it expired


def test_expired_grants_are_dropped_as_new_ones_come() -> None:
    clock = Clock()
    grants = StreamGrants(ttl_s=60.0, clock=clock)
    old = [str(uuid.uuid4()) for _ in range(3)]
    for request_id in old:
        grants.record(ALICE, request_id, grant())
    clock.now += 30
    young = str(uuid.uuid4())
    grants.record(ALICE, young, grant())
    assert len(grants) == 4

    clock.now += 30  # the first three expire, nobody looks them up
    grants.record(ALICE, str(uuid.uuid4()), grant())
    assert len(grants) == 2
    assert grants.lookup(ALICE, young) is not None


def test_the_bound_holds_and_the_oldest_goes_first() -> None:
    grants = StreamGrants(max_grants=3)
    ids = [str(uuid.uuid4()) for _ in range(5)]
    for request_id in ids:
        grants.record(ALICE, request_id, grant())
        assert len(grants) <= 3
    assert [grants.lookup(ALICE, r) is not None for r in ids] == [False, False, True, True, True]


def test_a_re_recorded_grant_is_the_newest() -> None:
    grants = StreamGrants(max_grants=2)
    first, second, third = (str(uuid.uuid4()) for _ in range(3))
    grants.record(ALICE, first, grant())
    grants.record(ALICE, second, grant())
    newer = grant()
    grants.record(ALICE, first, newer)
    grants.record(ALICE, third, grant())  # evicts `second`, now the oldest
    assert grants.lookup(ALICE, first) == newer
    assert grants.lookup(ALICE, second) is None
    assert len(grants) == 2


def test_the_default_bound() -> None:
    grants = StreamGrants()
    for _ in range(MAX_GRANTS + 5):
        grants.record(ALICE, str(uuid.uuid4()), grant())
    assert len(grants) == MAX_GRANTS


def _wire_ack(request_id: str, run_id: str | None) -> StreamAck:
    return StreamAck(
        request_id=request_id,
        interaction_id=str(uuid.uuid4()),
        session_id=str(uuid.uuid4()),
        subject=f"riverbeam.stream.{request_id}",
        stream_name="RIVERBEAM",
        run_id=run_id,
    )


@pytest.mark.parametrize("form", ["wire", "protobuf"])
def test_an_ack_is_recorded_only_for_its_own_request_and_with_a_run(form: str) -> None:
    grants = StreamGrants()
    request_id, run_id = str(uuid.uuid4()), str(uuid.uuid4())

    def ack(request_id: str, run_id: str | None) -> StreamAck | types_pb2.StreamAck:
        made = _wire_ack(request_id, run_id)
        return made if form == "wire" else made.to_proto()

    grants.record_ack(ALICE, request_id, ack(str(uuid.uuid4()), run_id))  # another request's
    grants.record_ack(ALICE, request_id, ack(request_id, None))  # no run named
    grants.record_ack(ALICE, None, ack(request_id, run_id))  # no request id
    assert len(grants) == 0

    acked = ack(request_id, run_id)
    grants.record_ack(ALICE, request_id, acked)
    assert grants.lookup(ALICE, request_id) == StreamGrant(
        run_id=run_id, session_id=acked.session_id, interaction_id=acked.interaction_id
    )


def test_a_grant_lives_far_shorter_than_the_shortest_retention_window() -> None:
    """A session is deleted only when idle that long; its begin-run step preceded the grant."""
    assert GRANT_TTL_S * 60 <= MIN_RETENTION_IDLE_DAYS * 86400
    assert StoreSettings(retention_idle_days=MIN_RETENTION_IDLE_DAYS).retention_idle_days
    with pytest.raises(ValidationError):
        StoreSettings(retention_idle_days=MIN_RETENTION_IDLE_DAYS / 2)
