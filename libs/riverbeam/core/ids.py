"""Identifiers."""

from __future__ import annotations

import functools
import os
import uuid

__all__ = ["AGENT_NAMESPACE", "agent_id_for", "new_id"]

AGENT_NAMESPACE = uuid.UUID("6f2b1c8e-4a57-5d1e-9b3a-72c0e5d4f1a9")
"""The fixed namespace of agent ids: agent_id_for(name) = uuid5(AGENT_NAMESPACE, name)."""


@functools.lru_cache(maxsize=1024)
def agent_id_for(name: str) -> str:
    """The stable id of an agent: a UUIDv5 of its name, so one name always maps to one id."""
    return str(uuid.uuid5(AGENT_NAMESPACE, name))


def new_id() -> str:
    """A fresh random UUID (v4) as a string: str(uuid.uuid4()), formatted from the random bytes
    directly (a third of the cost: several are made for every invoke)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
