"""RiverbeamClient against the fake router: typed results, errors, auth, pagination."""

from __future__ import annotations

import uuid

import pytest

import riverbeam.client as client_pkg
from riverbeam.client import RiverbeamClient
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import GrpcServer
from riverbeam.types import (
    Action,
    AgentMetadata,
    AgentResult,
    ContentPart,
    InvokeAuthContext,
    Message,
    ModelConfig,
    StreamAck,
)
from tests.unit.client.fake_router import (
    ACTION_PENDING,
    INTERACTION_WAITING,
    RUN_WAITING,
    SESSION,
    FakeRiverbeam,
    serve_fake,
)


def test_public_surface() -> None:
    assert sorted(client_pkg.__all__) == [
        "DEFAULT_TARGET",
        "RiverbeamClient",
        "SequenceGuard",
        "action_response",
        "follow_nats",
    ]
    for name in client_pkg.__all__:
        assert getattr(client_pkg, name) is not None
    assert client_pkg.DEFAULT_TARGET == "127.0.0.1:50051"


async def test_invoke_without_stream_returns_the_result(
    client: RiverbeamClient, fake: FakeRiverbeam
) -> None:
    result = await client.invoke("assistant", "hello")
    assert isinstance(result, AgentResult)
    assert result.text == "Hello world"
    assert result.token_usage is not None and result.token_usage.total_tokens == 17
    sent = fake.invokes[-1]
    assert sent.stream is False
    assert [p.text for p in sent.content] == ["hello"]
    assert uuid.UUID(sent.session_id).version == 4  # a new session when none is given


async def test_invoke_passes_every_field(client: RiverbeamClient, fake: FakeRiverbeam) -> None:
    request_id = str(uuid.uuid4())
    parts = [ContentPart.of_text("look"), ContentPart(type="image_url", url="https://x/y.png")]
    ack = await client.invoke(
        "assistant",
        parts,
        session_id=SESSION,
        stream=True,
        metadata={"ticket": 7},
        model_override="echo-1",
        auth_context=InvokeAuthContext(user_id="u1"),
        request_id=request_id,
    )
    assert isinstance(ack, StreamAck)
    assert ack.request_id == request_id
    assert ack.session_id == SESSION
    assert ack.subject == f"riverbeam.stream.{request_id}"
    sent = fake.invokes[-1]
    assert sent.stream is True
    assert sent.session_id == SESSION
    assert sent.metadata == {"ticket": 7}
    assert sent.model_override == "echo-1"
    assert sent.auth_context == InvokeAuthContext(user_id="u1")
    assert sent.content == parts


async def test_bad_input_fails_before_the_network(
    client: RiverbeamClient, fake: FakeRiverbeam
) -> None:
    with pytest.raises(RiverbeamError) as info:
        await client.invoke("assistant", "hi", session_id="not-a-uuid")
    assert info.value.code is ErrorCode.INVALID_UUID
    assert fake.calls == []


async def test_server_error_arrives_with_its_code(client: RiverbeamClient) -> None:
    with pytest.raises(RiverbeamError) as info:
        await client.invoke("missing", "hello")
    assert info.value.code is ErrorCode.AGENT_NOT_REGISTERED
    assert info.value.details == {"agent": "missing"}
    with pytest.raises(RiverbeamError) as info:
        await client.get_agent("nope")
    assert info.value.code is ErrorCode.AGENT_NOT_REGISTERED
    assert "nope" in info.value.message


async def test_token_is_sent_as_bearer_metadata(fake: FakeRiverbeam) -> None:
    fake.token = "s3cret"
    async with serve_fake(fake) as address:
        async with RiverbeamClient(address, token="s3cret") as client:
            agents = await client.list_agents()
        assert [a.name for a in agents] == ["assistant", "author"]
        assert fake.authorizations[-1] == "Bearer s3cret"

        async with RiverbeamClient(address) as anonymous:
            with pytest.raises(RiverbeamError) as info:
                await anonymous.list_agents()
        assert info.value.code is ErrorCode.UNAUTHENTICATED
        assert fake.authorizations[-1] is None


async def test_reads_return_wire_types(client: RiverbeamClient) -> None:
    agents = await client.list_agents()
    assert all(isinstance(a, AgentMetadata) for a in agents)
    assert (await client.get_agent("assistant")).name == "assistant"
    models = await client.list_models()
    assert all(isinstance(m, ModelConfig) for m in models)
    assert models[1].modalities == ["text", "image"]
    session = await client.get_session(SESSION)
    assert session.user_id == "u1"
    interaction = await client.get_interaction(INTERACTION_WAITING)
    assert interaction.status == "in_progress"
    run = await client.get_run(RUN_WAITING)
    assert run.status == "interrupted"
    assert run.result is not None and run.result.action_required[0].action_id == ACTION_PENDING
    action = await client.get_action(ACTION_PENDING)
    assert action.status == "pending" and action.tool == "git_push"


async def test_list_messages_follows_every_page(
    client: RiverbeamClient, fake: FakeRiverbeam
) -> None:
    messages = await client.list_messages(SESSION)
    assert all(isinstance(m, Message) for m in messages)
    assert [m.seq for m in messages] == [1, 2, 3, 4, 5, 6]
    assert fake.pages_served["ListMessages"] == 3  # the fake serves at most 2 per page


async def test_list_pending_actions_all_pages_and_by_session(
    client: RiverbeamClient, fake: FakeRiverbeam
) -> None:
    fake.page_limit = 1
    everything = await client.list_pending_actions()
    assert all(isinstance(a, Action) for a in everything)
    assert len(everything) == 2
    assert fake.pages_served["ListPendingActions"] == 2
    mine = await client.list_pending_actions(session_id=SESSION)
    assert [a.action_id for a in mine] == [ACTION_PENDING]


async def test_cancel(client: RiverbeamClient) -> None:
    ack = await client.invoke("assistant", "hello", stream=True)
    assert await client.cancel(ack.request_id, reason="changed my mind") is True
    assert await client.cancel(str(uuid.uuid4())) is False


async def test_unreachable_router_is_a_riverbeam_error() -> None:
    server = GrpcServer([], listen="127.0.0.1:0")
    await server.start()
    address = server.address
    await server.stop(0)  # a port nothing listens on any more
    async with RiverbeamClient(address, timeout_s=5) as client:
        with pytest.raises(RiverbeamError) as info:
            await client.list_agents()
    assert info.value.grpc_status.name == "UNAVAILABLE"
    assert info.value.details["target"] == address
    assert address in info.value.message


async def test_close_is_idempotent_and_final(address: str) -> None:
    client = RiverbeamClient(address)
    assert (await client.list_models())[0].name == "echo-1"
    await client.close()
    await client.close()
    with pytest.raises(RuntimeError):
        await client.list_models()
