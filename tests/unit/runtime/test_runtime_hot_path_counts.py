"""Work a plain invoke no longer does: counted, so it cannot silently come back."""

from __future__ import annotations

import uuid

import pytest

from riverbeam.agents import EchoAgent
from riverbeam.runtime import PipelineOptions, RiverBeam, _checkpointing
from riverbeam.types import AgentMetadata, InvokeRequest


class CountingEcho(EchoAgent):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.metadata_reads = 0

    def metadata(self) -> AgentMetadata:
        self.metadata_reads += 1
        return super().metadata()


def _request() -> InvokeRequest:
    return InvokeRequest.parse(
        {
            "agent_name": "assistant",
            "session_id": str(uuid.uuid4()),
            "content": [{"type": "text", "text": "hello"}],
        }
    )


async def test_a_run_without_checkpoints_never_serialises_its_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str] = []
    original = _checkpointing._fixed_part

    def counting(prepared: _checkpointing.PreparedRun) -> dict[str, object]:
        built.append(prepared.run_id)
        return original(prepared)

    monkeypatch.setattr(_checkpointing, "_fixed_part", counting)
    beam = RiverBeam(options=PipelineOptions(checkpoints=True))
    beam.register_echo_agent()
    result = await beam.invoke(_request())
    assert result.content
    # The echo agent saves no checkpoint: the checkpoint's fixed part is never built.
    assert built == []


async def test_prepare_reads_the_agent_metadata_once() -> None:
    beam = RiverBeam()
    agent = CountingEcho("assistant")
    beam.register_agent(agent)
    before = agent.metadata_reads
    prepared = await beam.pipeline.prepare(_request())
    assert agent.metadata_reads == before + 1
    await beam.pipeline.execute(prepared)
