"""Model routing through the API: the model the router resolves is the one the agent runs with."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from riverbeam.client import RiverbeamClient
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentResult, ContentPart, InvokePayload
from riverbeam.v1 import riverbeam_service_pb2 as pb
from tests.integration.router.router_kit import (
    TOKENS,
    Stack,
    auth,
    open_router,
    refused,
    text_only_models,
)

pytestmark = pytest.mark.nats

IMAGE = ContentPart(type="image_url", url="https://example.invalid/cat.png")


def model_seen(result: AgentResult) -> str:
    """The model name the inspect agent found in its context."""
    seen: dict[str, Any] = json.loads(result.text)
    name: str = seen["model"]
    assert result.model_used == name  # and the run records the same
    return name


@pytest.mark.parametrize(
    ("agent", "content", "options", "model"),
    [
        ("inspect", "hi", {}, "small"),  # list order breaks the cost tie with "local"
        ("inspect", "hi", {"model_override": "coder"}, "coder"),
        ("inspect", "hi", {"model_override": "local"}, "local"),
        ("inspect", "hi", {"metadata": {"capabilities": ["code"]}}, "coder"),
        ("inspect", "hi", {"metadata": {"capabilities": ["Vision"]}}, "vision"),
        ("coding", "hi", {}, "coder"),  # the agent is tagged "code"
        ("seer", [ContentPart.of_text("what is this?"), IMAGE], {}, "vision"),
    ],
    ids=["list-order", "override", "override-tie", "capability", "capability-case", "tag", "image"],
)
async def test_the_resolved_model_reaches_the_agent(
    stack: Stack, agent: str, content: Any, options: dict[str, Any], model: str
) -> None:
    result = await stack.client("alice").invoke(agent, content, **options)
    assert model_seen(result) == model
    assert result.run_id
    run = await stack.client("alice").get_run(result.run_id)
    assert run.model_used == model


async def test_cost_decides_between_capable_models(stack: Stack) -> None:
    # "tools": small (0.1) and coder (3.0) have it; the cheaper one wins.
    result = await stack.client("alice").invoke(
        "inspect", "hi", metadata={"capabilities": ["tools"]}
    )
    assert model_seen(result) == "small"


def invoke(agent: str, content: list[ContentPart], **extra: Any) -> Any:
    return InvokePayload.parse(
        {
            "agent_name": agent,
            "content": [p.to_json_dict() for p in content],
            "session_id": str(uuid.uuid4()),
            **extra,
        }
    ).to_proto()


@pytest.mark.parametrize(
    ("request_args", "code", "bem"),
    [
        (
            ("inspect", [ContentPart.of_text("hi")], {"model_override": "gpt-17"}),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BEM-042",
        ),
        (
            ("seer", [IMAGE], {"model_override": "small"}),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BEM-041",
        ),
        (
            ("inspect", [IMAGE], {}),  # a model could take it; the agent cannot
            grpc.StatusCode.INVALID_ARGUMENT,
            "BEM-040",
        ),
        (
            ("inspect", [ContentPart.of_text("hi")], {"metadata": {"capabilities": ["teleport"]}}),
            grpc.StatusCode.FAILED_PRECONDITION,
            "BEM-043",
        ),
        (
            ("inspect", [ContentPart.of_text("hi")], {"metadata": {"capabilities": "code"}}),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BEM-002",
        ),
        (
            ("seer", [ContentPart(type="audio", data="AAAA")], {}),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BEM-040",
        ),
    ],
    ids=[
        "unknown-override",
        "override-text-only",
        "agent-text-only",
        "capability",
        "not-a-list",
        "audio",
    ],
)
async def test_routing_refusals_record_nothing(
    stack: Stack, request_args: tuple[str, list[ContentPart], dict[str, Any]], code: Any, bem: str
) -> None:
    agent, content, extra = request_args
    before = stack.records()
    error = await refused(
        stack.stub().Invoke(invoke(agent, content, **extra), metadata=auth("alice"))
    )
    assert (error.code, error.bem, error.domain) == (code, bem, "riverbeam")
    assert stack.records() == before


@pytest.fixture
async def text_only_router(stack: Stack, nats_url: str) -> AsyncIterator[RiverbeamClient]:
    """A second router over the same runner and store, configured with text models only."""
    async with open_router(
        store_address=stack.store_address,
        runner_address=stack.runner_address,
        nats_url=nats_url,
        models=text_only_models(),
        stream_config=stack.stream_config,
    ) as address:
        async with RiverbeamClient(address, token=TOKENS["alice"]) as client:
            yield client


async def test_image_content_with_only_text_models_is_refused_at_routing(
    stack: Stack, text_only_router: RiverbeamClient
) -> None:
    before = stack.records()
    with pytest.raises(RiverbeamError) as info:
        await text_only_router.invoke("seer", [ContentPart.of_text("look"), IMAGE])
    assert info.value.code is ErrorCode.MODALITY_NOT_ROUTABLE
    assert "only text models" in info.value.message
    # The agent's own check comes first: a text-only agent gets 040 whatever the models.
    with pytest.raises(RiverbeamError) as info:
        await text_only_router.invoke("inspect", [IMAGE])
    assert info.value.code is ErrorCode.MODALITY_NOT_SUPPORTED
    assert stack.records() == before
    # Text still routes, to the only model there is.
    assert model_seen(await text_only_router.invoke("seer", "hi")) == "plain"
    assert [m.name for m in await text_only_router.list_models()] == ["plain"]


async def test_get_agent_shows_what_routing_reads(stack: Stack) -> None:
    reply = await stack.stub().GetAgent(pb.GetAgentRequest(name="seer"), metadata=auth("alice"))
    assert list(reply.agent.supported_modalities) == ["text", "image"]
    reply = await stack.stub().GetAgent(pb.GetAgentRequest(name="coding"), metadata=auth("alice"))
    assert list(reply.agent.tags) == ["code"]
