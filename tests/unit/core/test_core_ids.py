"""Agent ids: UUIDv5 of the name under one fixed namespace (seed 002)."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from riverbeam.core import AGENT_NAMESPACE, agent_id_for, new_id

# Changing the namespace changes every agent id already stored: it is part of the contract.
DOCUMENTED_NAMESPACE = uuid.UUID("6f2b1c8e-4a57-5d1e-9b3a-72c0e5d4f1a9")


def test_namespace_is_the_documented_one() -> None:
    assert AGENT_NAMESPACE == DOCUMENTED_NAMESPACE


def test_agent_id_is_uuid5_of_the_name() -> None:
    agent_id = agent_id_for("kb-assistant")
    parsed = uuid.UUID(agent_id)
    assert parsed.version == 5
    assert agent_id == str(uuid.uuid5(DOCUMENTED_NAMESPACE, "kb-assistant"))
    assert agent_id == str(parsed)  # canonical lowercase hyphenated form


def test_agent_id_is_stable() -> None:
    # A literal, so that an accidental change of algorithm or namespace shows up here.
    assert agent_id_for("kb-assistant") == "af819a62-a714-5123-9fbe-d3680767f752"
    assert agent_id_for("author") == agent_id_for("author")


@given(st.text(), st.text())
def test_different_names_differ(a: str, b: str) -> None:
    if a != b:
        assert agent_id_for(a) != agent_id_for(b)
    else:
        assert agent_id_for(a) == agent_id_for(b)


def test_names_are_case_sensitive() -> None:
    assert agent_id_for("Author") != agent_id_for("author")


def test_new_id_is_a_fresh_uuid4() -> None:
    ids = {new_id() for _ in range(1000)}
    assert len(ids) == 1000
    for value in list(ids)[:10]:
        assert uuid.UUID(value).version == 4
        assert value == str(uuid.UUID(value))


def test_every_new_id_is_canonical_rfc4122_v4() -> None:
    for _ in range(2000):
        value = new_id()
        parsed = uuid.UUID(value)
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
        assert value == str(parsed)
