"""Converted history: each stored message is validated once per process, not once per turn.

Every turn the begin-run step sends the session's recent history (up to 200 messages) back to
the runner, and each message would go through `Message.from_proto` again: a dict per field
and a pydantic validation, ~50 us a message. Stored messages never change, so the runner
remembers the model it built for each message, keyed by the message's serialized bytes: the
same bytes always decode to the same model, and a message that differs in any field is a
different key (a miss, converted as before). Hits are handed out as copies (`deep_copy`), so
a caller that changes one never changes what the cache holds. Bounded, least recently used
first out.
"""

from __future__ import annotations

from collections import OrderedDict

from riverbeam.types import Message, deep_copy
from riverbeam.v1 import records_pb2

__all__ = ["MessageCache"]

DEFAULT_SIZE = 2048


class MessageCache:
    """`Message.from_proto`, remembered by the serialized message (bounded, LRU)."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = max(0, size)
        self._items: OrderedDict[bytes, Message] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def convert(self, message: records_pb2.Message) -> Message:
        if self._size == 0:
            return Message.from_proto(message)
        key = message.SerializeToString(deterministic=True)
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
            self.hits += 1
            return deep_copy(found)
        self.misses += 1
        model = Message.from_proto(message)
        self._items[key] = deep_copy(model)
        if len(self._items) > self._size:
            self._items.popitem(last=False)
        return model
