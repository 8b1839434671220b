"""RunnerClient sends RunInvoke a copy of a held template (model and grant set) instead of a
new message made from both: what reaches the runner is the message made anew, for any
sequence of grants and models, a model changed under its name included."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from riverbeam.runtime import Grant, RunnerClient, _client
from riverbeam.types import ContentPart, InvokeRequest, ModelConfig
from riverbeam.v1 import riverbeam_service_pb2 as service_pb
from riverbeam.v1 import runner_service_pb2 as runner_pb

MODELS = [
    ModelConfig(name="a", provider="custom"),
    ModelConfig(name="a", provider="custom", max_tokens=77, capabilities=["tools"]),
    ModelConfig(name="b", provider="openai", cost_per_1k_tokens=0.5),
]
maybe_name = st.none() | st.sampled_from(["", "alice", "acme", "bob"])
grants = st.builds(
    Grant,
    may_confirm=st.booleans(),
    subject=maybe_name,
    require_owner=maybe_name,
    require_org=maybe_name,
    session_config_narrows_only=st.booleans(),
)


class _Stub:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def RunInvoke(self, message: Any, **_: Any) -> Any:
        self.sent.append(message.SerializeToString(deterministic=True))
        return service_pb.InvokeResponse()


def _request() -> InvokeRequest:
    return InvokeRequest(
        agent_name="assistant",
        content=[ContentPart.of_text("hi")],
        session_id=str(uuid.uuid4()),
        request_id=str(uuid.uuid4()),
    )


def _made_anew(request: InvokeRequest, model: ModelConfig, grant: Grant) -> bytes:
    message = runner_pb.RunInvokeRequest(model=model.to_proto(), grant=_client._grant(grant))
    _client._fill_request(message.request, request, None, frozenset())
    return message.SerializeToString(deterministic=True)


async def _send_all(calls: list[tuple[int, Grant]], held: int) -> None:
    client = RunnerClient("127.0.0.1:1", invoke_lanes=0)
    stub = _Stub()
    client._stub = stub
    try:
        for index, grant in calls:
            model = MODELS[index]
            request = _request()
            await client.run_invoke_reply(request, model=model, grant=grant)
            assert stub.sent[-1] == _made_anew(request, model, grant)
            assert len(client._templates) <= held
    finally:
        await client.aclose()


@settings(max_examples=200, deadline=None)
@given(calls=st.lists(st.tuples(st.integers(0, len(MODELS) - 1), grants), max_size=10))
def test_runner_is_sent_the_message_made_anew(calls: list[tuple[int, Grant]]) -> None:
    asyncio.run(_send_all(calls, _client._TEMPLATES_HELD))


def test_templates_are_bounded_and_left_unchanged(monkeypatch: Any) -> None:
    monkeypatch.setattr(_client, "_TEMPLATES_HELD", 2)
    calls = [(n % len(MODELS), Grant(subject=f"user-{n}")) for n in range(9)]
    asyncio.run(_send_all(calls + calls, 2))
