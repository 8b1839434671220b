"""MessageCache: the converted history the runner's StoreClient remembers between turns."""

from __future__ import annotations

from datetime import UTC, datetime

from riverbeam.store._history_cache import MessageCache
from riverbeam.types import ContentPart, Message


def _message(seq: int, text: str = "hello", **extra: object) -> Message:
    return Message(
        message_id=f"m{seq}",
        session_id="s",
        seq=seq,
        role="ai",
        content=[ContentPart(type="text", text=text)],
        metadata={"k": ["v"]},
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
        **extra,  # type: ignore[arg-type]
    )


def test_a_hit_is_an_equal_copy_that_shares_nothing_with_the_cache() -> None:
    cache = MessageCache()
    proto = _message(1).to_proto()
    first = cache.convert(proto)
    assert (cache.hits, cache.misses) == (0, 1)
    second = cache.convert(proto)
    assert (cache.hits, cache.misses) == (1, 1)
    assert first == second == Message.from_proto(proto)
    second.content[0].text = "changed"
    assert second.metadata is not None
    second.metadata["k"].append("w")
    third = cache.convert(proto)
    assert third == first == Message.from_proto(proto)


def test_any_difference_in_the_message_is_a_miss() -> None:
    cache = MessageCache()
    cache.convert(_message(1).to_proto())
    for variant in (
        _message(1, "hello!"),
        _message(2),
        _message(1, run_id="r"),
        _message(1, tool_result={"ok": True}),
    ):
        assert cache.convert(variant.to_proto()) == variant
    assert (cache.hits, cache.misses) == (0, 5)


def test_the_cache_is_bounded_and_drops_the_least_recently_used() -> None:
    cache = MessageCache(size=2)
    a, b, c = (_message(i).to_proto() for i in (1, 2, 3))
    cache.convert(a)
    cache.convert(b)
    cache.convert(a)  # a is now the most recently used
    cache.convert(c)  # b goes
    assert len(cache) == 2
    cache.convert(a)
    assert cache.hits == 2
    cache.convert(b)
    assert cache.misses == 4


def test_size_zero_converts_every_time() -> None:
    cache = MessageCache(size=0)
    proto = _message(1).to_proto()
    assert cache.convert(proto) == cache.convert(proto)
    assert len(cache) == 0
