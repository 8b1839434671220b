"""Work a plain invoke no longer does: counted, so it cannot silently come back."""

from __future__ import annotations

import sys
import uuid
from collections import Counter
from typing import Any

import pytest
from pydantic import BaseModel

from riverbeam.agents import EchoAgent
from riverbeam.core.errors import RiverbeamError
from riverbeam.runtime import MemorySinks, ModelConfigs, PipelineOptions, RiverBeam, _checkpointing
from riverbeam.types import AgentMetadata, AgentResult, InvokeRequest, ModelConfig
from riverbeam.types._copying import updated_copy
from riverbeam.v1 import types_pb2


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


class _Copies:
    """Copies made by the runtime's own modules (not its sinks), per model type: model_copy
    calls, and updated_copy calls (model_copy's result, made without its generic path)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.by_type: Counter[str] = Counter()
        original = BaseModel.model_copy
        copies = self

        def counting(self: BaseModel, *args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_code.co_filename.replace("\\", "/")
            if "/riverbeam/runtime/" in caller and not caller.endswith("/_sinks.py"):
                copies.by_type[type(self).__name__] += 1
            return original(self, *args, **kwargs)

        monkeypatch.setattr(BaseModel, "model_copy", counting)

        def counting_updated(model: BaseModel, update: Any) -> Any:
            copies.by_type[type(model).__name__] += 1
            return updated_copy(model, update)

        # Each runtime module that imported updated_copy calls it through its own name.
        for name, module in list(sys.modules.items()):
            if name.startswith("riverbeam.runtime.") and not name.endswith("._sinks"):
                if getattr(module, "updated_copy", None) is updated_copy:
                    monkeypatch.setattr(module, "updated_copy", counting_updated)


async def test_a_new_turn_copies_its_request_once(monkeypatch: pytest.MonkeyPatch) -> None:
    beam = RiverBeam()
    beam.register_echo_agent()
    copies = _Copies(monkeypatch)
    prepared = await beam.pipeline.prepare(_request())
    # Only to give it its request and interaction ids: its own run options need no copy.
    assert copies.by_type["InvokeRequest"] == 1
    await beam.pipeline.execute(prepared)


async def test_a_completed_run_copies_its_result_once_and_its_done_frame_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    beam = RiverBeam()
    beam.register_echo_agent()
    copies = _Copies(monkeypatch)
    result = await beam.invoke(_request())
    assert isinstance(result, AgentResult) and result.latency_ms is not None
    # The result: once with the run's ids (its latency set on that copy). The frames: each
    # stamped once (chunk, done), and the done frame once more to carry the recorded result.
    assert copies.by_type["AgentResult"] == 1
    assert copies.by_type["StreamChunk"] == 3
    frames = beam.sinks.frames(result.request_id or "")  # type: ignore[attr-defined]
    assert frames[-1].type == "done" and frames[-1].result == result


async def test_an_invoke_reads_the_agent_metadata_once() -> None:
    beam = RiverBeam()
    agent = CountingEcho("assistant")
    beam.register_agent(agent)
    before = agent.metadata_reads
    await beam.invoke(_request())
    # prepare() reads it; the finish step takes the approval TTL from what prepare() read.
    assert agent.metadata_reads == before + 1


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of every model ModelConfig.from_proto validates, in order."""
    names: list[str] = []
    original = ModelConfig.from_proto.__func__  # type: ignore[attr-defined]

    def counting(cls: type[ModelConfig], message: Any) -> ModelConfig:
        names.append(message.name)
        model: ModelConfig = original(cls, message)
        return model

    monkeypatch.setattr(ModelConfig, "from_proto", classmethod(counting))
    return names


def test_the_model_of_a_request_is_validated_once_per_distinct_message(
    validated: list[str],
) -> None:
    models = ModelConfigs()
    first = ModelConfig(name="m1", provider="openai", provider_config={"region": "eu"})
    other = ModelConfig(name="m2", provider="openai")
    got = [models.from_proto(m.to_proto()) for m in (first, first, other, first)]
    assert validated == ["m1", "m2"]
    assert got == [first, first, other, first]
    # Each run gets its own object, sharing nothing mutable with another's.
    assert got[0] is not got[1] and got[0].provider_config is not got[1].provider_config


def test_a_model_that_fails_validation_is_not_remembered() -> None:
    models = ModelConfigs()
    bad = types_pb2.ModelConfig(name="m", provider="custom", max_tokens=-1)
    for _ in range(2):
        with pytest.raises(RiverbeamError):
            models.from_proto(bad)


async def test_the_runner_service_validates_the_routed_model_once(
    validated: list[str],
) -> None:
    from bench._stack import run_invoke_request
    from services.runner.servicer import RunnerServicer

    beam = RiverBeam()
    beam.register_echo_agent()
    servicer = RunnerServicer(beam)
    for _ in range(3):
        reply = await servicer.RunInvoke(run_invoke_request(), None)
        assert reply.result.content[0].text.startswith("Echo: ")
    # The router sends the same model with every invoke: it is converted the first time only.
    assert len(validated) == 1


async def test_a_counting_sinks_run_copies_no_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    from riverbeam.runtime._sinks import CountingSink

    class Counting:
        stream = MemorySinks().stream

        async def open(self, request_id: str, *, stream: bool) -> CountingSink:
            return CountingSink()

    beam = RiverBeam(sinks=Counting())  # type: ignore[arg-type]
    beam.register_echo_agent()
    copies = _Copies(monkeypatch)
    result = await beam.invoke(_request())
    assert isinstance(result, AgentResult) and result.latency_ms is not None
    # The echo agent's frames carry their timestamps: neither is stamped, nor the result
    # copied into the done frame; the done frame is still stamped (the outcome reads it).
    assert copies.by_type["StreamChunk"] == 1
    assert copies.by_type["AgentResult"] == 1


async def test_a_run_that_resumed_nothing_records_no_action_outcome(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from riverbeam.runtime import _pipeline

    recorded: list[object] = []

    async def counting(*args: Any, **kwargs: Any) -> None:
        recorded.append(args)

    monkeypatch.setattr(_pipeline, "record_outcomes", counting)
    beam = RiverBeam()
    beam.register_echo_agent()
    assert isinstance(await beam.invoke(_request()), AgentResult)
    assert recorded == []
