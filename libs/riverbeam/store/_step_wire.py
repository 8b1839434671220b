"""What both ends of RunSteps share: the service's name, a step's two names, and messages of
bounded size (the client's batches of steps, the store's of results)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import grpc

from riverbeam.v1 import store_service_pb2 as pb

__all__ = ["EOF", "FIELDS", "MAX_BATCH_BYTES", "METHODS", "SERVICE", "Outbox"]

SERVICE: str = pb.DESCRIPTOR.services_by_name["StoreService"].full_name
# A step's unary method, and its field in RunStep and RunStepResult.
FIELDS: dict[str, str] = {"BeginRun": "begin_run", "FinishRun": "finish_run"}
METHODS: dict[str, str] = {field: method for method, field in FIELDS.items()}
# Steps (or results) of at most this many bytes share a message; a larger one goes alone.
MAX_BATCH_BYTES = 4 * 1024 * 1024
EOF: Any = grpc.aio.EOF  # type: ignore[attr-defined]  # (not in grpc's stubs)

M = TypeVar("M")


class Outbox(Generic[M]):
    """Messages to write, in order: what is added goes into the last while it has room."""

    __slots__ = ("_messages", "_new", "_room")

    def __init__(self, new: Callable[[], M]) -> None:
        self._new = new
        self._messages: list[M] = []
        self._room = 0

    def __bool__(self) -> bool:
        return bool(self._messages)

    def room_for(self, size: int) -> M:
        """The message to add `size` bytes to: the last, or a new one when it has no room."""
        if not self._messages or size > self._room:
            self._messages.append(self._new())
            self._room = MAX_BATCH_BYTES
        self._room -= size
        return self._messages[-1]

    def last(self) -> M:
        """The last message (a new, empty one when there is none)."""
        if not self._messages:
            self._messages.append(self._new())
            self._room = MAX_BATCH_BYTES
        return self._messages[-1]

    def take(self) -> list[M]:
        """Every message, in order; the outbox is empty after."""
        messages, self._messages = self._messages, []
        return messages
