"""A refused request writes nothing; a run that fails before its agent starts still ends."""

from __future__ import annotations

from typing import Any

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.runtime import JetStreamSinks, PipelineOptions, RiverBeam
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection, StreamConfig
from riverbeam.types import AgentResult, StreamAck
from tests.integration.runtime.rt_kit import GUARD_S, assert_gap_free, collect, text_request, uid

pytestmark = pytest.mark.nats


class FlakyRecall:
    """The store, except that recalling memory fails once (the store went away).

    Memory is the one store read left between the begin-run step and the agent: the history
    arrives with the step itself.
    """

    def __init__(self, inner: BeamStore) -> None:
        self._inner = inner
        self.failures = 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def recall(self, **kwargs: Any) -> Any:
        if self.failures:
            self.failures -= 1
            raise RiverbeamError(ErrorCode.STORE_UNAVAILABLE, "store went away")
        return await self._inner.recall(**kwargs)


def beam_on(store: Any, nats: NatsConnection) -> RiverBeam:
    beam = RiverBeam(
        store=store,
        sinks=JetStreamSinks(nats.js, StreamConfig()),
        options=PipelineOptions(lease_ttl_s=30),
    )
    beam.register_echo_agent("assistant")
    return beam


async def test_bad_memory_scopes_are_refused_before_anything_is_written(
    store: BeamStore, nats: NatsConnection
) -> None:
    beam = beam_on(store, nats)
    session_id = uid()
    try:
        with pytest.raises(RiverbeamError) as info:
            await beam.invoke(
                text_request(
                    "assistant", "hi", session_id, metadata={"memory_scopes": [{"nope": 1}]}
                )
            )
        assert info.value.code is ErrorCode.INVALID_MEMORY_SCOPE
        with pytest.raises(RiverbeamError) as missing:
            await store.get_session(session_id=session_id)
        assert missing.value.code is ErrorCode.SESSION_NOT_FOUND
        # Nothing holds the session: the next turn runs at once.
        result = await beam.invoke(text_request("assistant", "hi again", session_id))
        assert isinstance(result, AgentResult) and result.text == "Echo: hi again"
    finally:
        await beam.aclose(grace_s=1)


async def test_store_failure_before_the_agent_starts_fails_the_run_at_once(
    store: BeamStore, nats: NatsConnection
) -> None:
    beam = beam_on(FlakyRecall(store), nats)
    scopes = {"memory_scopes": [{"name": "user", "id": "u1"}]}
    session_id = uid()
    try:
        ack = await beam.invoke(
            text_request("assistant", "hi", session_id, stream=True, metadata=scopes)
        )
        assert isinstance(ack, StreamAck)
        frames = await collect(nats.js, ack.request_id, guard_s=GUARD_S)
        await beam.wait_idle()
        assert_gap_free(frames)
        assert [(f.type, f.error_code) for f in frames] == [("error", "BEM-120")]
        run = await store.get_run(run_id=ack.run_id or "")
        assert (run.status, run.error_code) == ("failed", "BEM-120")
        # Not left running until a reaper finds it: the session takes the next turn.
        result = await beam.invoke(text_request("assistant", "again", session_id, metadata=scopes))
        assert isinstance(result, AgentResult) and result.text == "Echo: again"
    finally:
        await beam.aclose(grace_s=1)
