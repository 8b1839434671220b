"""Identifiers."""

from __future__ import annotations

import functools
import uuid

__all__ = ["AGENT_NAMESPACE", "agent_id_for", "new_id"]

AGENT_NAMESPACE = uuid.UUID("6f2b1c8e-4a57-5d1e-9b3a-72c0e5d4f1a9")
"""The fixed namespace of agent ids: agent_id_for(name) = uuid5(AGENT_NAMESPACE, name)."""


@functools.lru_cache(maxsize=1024)
def agent_id_for(name: str) -> str:
    """The stable id of an agent: a UUIDv5 of its name, so one name always maps to one id."""
    return str(uuid.uuid5(AGENT_NAMESPACE, name))


def new_id() -> str:
    """A fresh random UUID (v4) as a string."""
    return str(uuid.uuid4())
