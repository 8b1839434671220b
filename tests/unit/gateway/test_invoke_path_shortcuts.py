"""The router's invoke path takes shortcuts that must answer exactly as the long way did."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import grpc
import pytest

from riverbeam.auth import Principal, Role, sanitize_invoke
from riverbeam.auth._sanitize import _auth_context
from riverbeam.routing import ModelList, ModelRouter
from riverbeam.runtime import Grant, RunnerClient, RunnerReply
from riverbeam.server._logging import LogContextFilter
from riverbeam.telemetry import current_log_context, log_context
from riverbeam.types import (
    AgentMetadata,
    ContentPart,
    InvokeAuthContext,
    InvokeRequest,
    ModelConfig,
)
from riverbeam.v1 import riverbeam_service_pb2 as service_pb
from riverbeam.v1 import runner_service_pb2 as runner_pb
from riverbeam.v1 import types_pb2
from services.router.servicer import RiverbeamServicer


def _fields(descriptor: Any) -> list[tuple[Any, ...]]:
    return [
        (
            f.name,
            f.number,
            f.type,
            f.message_type.full_name if f.message_type else None,
            f.containing_oneof.name if f.containing_oneof else None,
        )
        for f in descriptor.fields
    ]


def test_a_run_invoke_response_is_an_invoke_response_on_the_wire() -> None:
    # RunnerClient reads the runner's answer as the router's InvokeResponse: exact only while
    # the two messages have the same fields.
    assert _fields(runner_pb.RunInvokeResponse.DESCRIPTOR) == _fields(
        service_pb.InvokeResponse.DESCRIPTOR
    )


def _result() -> Any:
    result = types_pb2.AgentResult(
        agent_name="echo",
        content=[types_pb2.ContentPart(type="text", text="hello back")],
        model_used="echo",
        session_id=str(uuid.uuid4()),
        request_id=str(uuid.uuid4()),
        interaction_id=str(uuid.uuid4()),
        run_id=str(uuid.uuid4()),
    )
    result.metadata.update({"k": "v"})
    return result


async def test_runner_client_reads_the_answer_as_an_invoke_response() -> None:
    sent = runner_pb.RunInvokeResponse(result=_result())

    async def run_invoke(request: bytes, context: Any) -> bytes:
        assert runner_pb.RunInvokeRequest.FromString(request).request.agent_name == "echo"
        return sent.SerializeToString()

    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "riverbeam.v1.RunnerService",
                {"RunInvoke": grpc.unary_unary_rpc_method_handler(run_invoke)},
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    client = RunnerClient(f"127.0.0.1:{port}")
    try:
        request = InvokeRequest(
            agent_name="echo",
            content=[ContentPart(type="text", text="hi")],
            session_id=str(uuid.uuid4()),
            request_id=str(uuid.uuid4()),
        )
        reply = await client.run_invoke_reply(
            request, model=ModelList.default().models[0], grant=Grant(), timeout_s=10
        )
    finally:
        await client.aclose()
        await server.stop(None)
    assert type(reply.message) is service_pb.InvokeResponse
    assert reply.message.SerializeToString() == sent.SerializeToString()
    assert reply.message.result == sent.result
    assert reply.ack is None
    assert reply.outcome() == RunnerReply(sent).outcome()


class _Gateway:
    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome

    def authenticate(self, authorization: str | None) -> Principal:
        return Principal("u")

    async def invoke_relayed(self, principal: Principal, request: Any, **_: Any) -> Any:
        return self.outcome


class _Ctx:
    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()

    def time_remaining(self) -> float:
        return 30.0


def _wire_request() -> Any:
    return types_pb2.InvokeRequest(
        agent_name="echo",
        content=[types_pb2.ContentPart(type="text", text="hi")],
        session_id=str(uuid.uuid4()),
    )


async def test_the_servicer_answers_with_the_runners_invoke_response_itself() -> None:
    message = service_pb.InvokeResponse(result=_result())
    servicer = RiverbeamServicer(_Gateway(RunnerReply(message)))  # type: ignore[arg-type]
    assert await servicer.Invoke(_wire_request(), _Ctx()) is message


@pytest.mark.parametrize("outcome", ["result", "ack"])
async def test_a_run_invoke_response_is_still_answered_as_before(outcome: str) -> None:
    if outcome == "ack":
        reply = runner_pb.RunInvokeResponse(
            ack=types_pb2.StreamAck(request_id=str(uuid.uuid4()), subject="s")
        )
    else:
        reply = runner_pb.RunInvokeResponse(result=_result())
    servicer = RiverbeamServicer(_Gateway(RunnerReply(reply)))  # type: ignore[arg-type]
    response = await servicer.Invoke(_wire_request(), _Ctx())
    assert type(response) is service_pb.InvokeResponse
    assert response.SerializeToString() == reply.SerializeToString()


def _models() -> ModelList:
    return ModelList(
        [
            ModelConfig(name="cheap", provider="custom", cost_per_1k_tokens=0.1),
            ModelConfig(
                name="tagged", provider="custom", cost_per_1k_tokens=0.5, capabilities=["code"]
            ),
            ModelConfig(
                name="vision",
                provider="custom",
                cost_per_1k_tokens=1.0,
                modalities=["text", "image"],
            ),
        ]
    )


@pytest.mark.parametrize(
    ("tags", "metadata", "parts"),
    [
        ([], None, [ContentPart(type="text", text="hi")]),
        (["code"], None, [ContentPart(type="text", text="hi")]),
        ([" Code "], {"capabilities": ["code"]}, [ContentPart(type="text", text="hi")]),
        ([], None, [ContentPart(type="image_url", url="https://x/y.png")]),
    ],
)
def test_a_kept_routing_decision_is_the_one_routing_makes(
    tags: list[str], metadata: dict[str, Any] | None, parts: list[ContentPart]
) -> None:
    agent = AgentMetadata(name="a", description="d", tags=tags)
    kept = ModelRouter(_models())
    first = kept.resolve(content=parts, metadata=metadata, agent=agent, share_model=True)
    again = kept.resolve(content=parts, metadata=metadata, agent=agent, share_model=True)
    fresh = ModelRouter(_models()).resolve(content=parts, metadata=metadata, agent=agent)
    assert again is first
    assert (first.model, first.reason, first.candidates) == (
        fresh.model,
        fresh.reason,
        fresh.candidates,
    )
    # Without share_model every decision still gets its own copy of the model.
    copied = kept.resolve(content=parts, metadata=metadata, agent=agent)
    assert copied.model == first.model and copied.model is not first.model


def test_kept_decisions_differ_by_tags_and_refusals_are_not_kept() -> None:
    router = ModelRouter(_models())
    text = [ContentPart(type="text", text="hi")]
    plain = router.resolve(
        content=text,
        metadata=None,
        agent=AgentMetadata(name="a", description="d"),
        share_model=True,
    )
    tagged = router.resolve(
        content=text,
        metadata=None,
        agent=AgentMetadata(name="a", description="d", tags=["code"]),
        share_model=True,
    )
    assert (plain.model.name, tagged.model.name) == ("cheap", "tagged")
    agent = AgentMetadata(name="a", description="d")
    for _ in range(2):
        with pytest.raises(Exception, match="capabilities"):
            router.resolve(
                content=text, metadata={"capabilities": ["none"]}, agent=agent, share_model=True
            )


class _Text(str):
    pass


@pytest.mark.parametrize(
    "values",
    [
        ("u", None, None, None),
        ("u", "org", "profile", "token"),
        (_Text("u"), _Text("org"), None, None),
    ],
)
def test_the_identity_is_the_model_validation_makes(values: tuple[Any, ...]) -> None:
    user_id, org_id, profile_id, mcp_token = values
    made = _auth_context(user_id, org_id, profile_id, mcp_token)
    validated = InvokeAuthContext(
        user_id=user_id, org_id=org_id, profile_id=profile_id, mcp_token=mcp_token
    )
    assert made == validated
    assert list(made.__dict__.items()) == list(validated.__dict__.items())
    assert [type(v) for v in made.__dict__.values()] == [
        type(v) for v in validated.__dict__.values()
    ]
    assert made.model_fields_set == validated.model_fields_set
    assert made.to_proto() == validated.to_proto()


def test_sanitising_still_sets_the_identity_for_user_and_backend() -> None:
    request = InvokeRequest(
        agent_name="echo",
        content=[ContentPart(type="text", text="hi")],
        session_id=str(uuid.uuid4()),
        auth_context=InvokeAuthContext(user_id="other", profile_id="p"),
    )
    backend = Principal("svc", org_id="o", roles=frozenset({Role.BACKEND}))
    clean = sanitize_invoke(request, backend)
    assert clean.request.auth_context == InvokeAuthContext(
        user_id="other", org_id="o", profile_id="p"
    )
    assert clean.acting_for_user
    assert "auth_context" in clean.replaced


def _record() -> logging.LogRecord:
    return logging.LogRecord("t", logging.INFO, "", 0, "m", (), None)


def test_the_log_filter_stamps_the_bound_ids_and_keeps_a_records_own() -> None:
    record = _record()
    record.session_id = "own"
    with log_context(request_id="r", session_id="bound"):
        assert LogContextFilter().filter(record)
        expected = current_log_context()
    assert record.__dict__["request_id"] == "r"
    assert record.__dict__["session_id"] == "own"
    assert expected == {"request_id": "r", "session_id": "bound"}
    bare = _record()
    LogContextFilter().filter(bare)
    assert not hasattr(bare, "request_id")
