"""The Agent protocol, AgentRegistry, EchoAgent, the modality check and the public surface."""

from __future__ import annotations

import pytest
from agents_kit import SESSION, make_input, run

import riverbeam.agents as agents
from riverbeam.agents import Agent, AgentRegistry, EchoAgent, check_modalities
from riverbeam.core.errors import RiverbeamError
from riverbeam.core.ids import agent_id_for
from riverbeam.types import AgentMetadata, ContentPart


def test_public_surface_is_explicit() -> None:
    assert sorted(agents.__all__) == sorted(set(agents.__all__))
    for name in agents.__all__:
        assert hasattr(agents, name), name
    for name in (
        "Agent",
        "AgentRegistry",
        "EchoAgent",
        "RigAgentRunner",
        "OpenAiCompatible",
        "ScriptedClient",
        "FallbackClient",
        "EchoClient",
        "RememberTool",
        "builtin_skills",
    ):
        assert name in agents.__all__


def test_echo_agent_is_an_agent() -> None:
    assert isinstance(EchoAgent("assistant"), Agent)


async def test_echo_agent_replies_with_echo_prefix() -> None:
    frames = await run(EchoAgent("assistant"), make_input("what is riverbeam?", agent="assistant"))
    assert [f.type for f in frames] == ["chunk", "done"]
    done = frames[-1]
    assert done.result is not None
    assert done.result.text == "Echo: what is riverbeam?"
    assert done.result.agent_name == "assistant"
    assert done.result.interrupted is False
    for frame in frames:
        assert frame.agent_name == "assistant"
        assert frame.agent_id == agent_id_for("assistant")
        assert frame.session_id == SESSION
        assert frame.seq is None and frame.request_id is None


async def test_echo_agent_health() -> None:
    assert await EchoAgent().health_check() is True


def test_registry_register_get_list() -> None:
    registry = AgentRegistry()
    meta = registry.register(EchoAgent("b-agent"))
    registry.register_echo_agent("a-agent")
    assert meta.agent_id == agent_id_for("b-agent")
    assert registry.get("b-agent").metadata().name == "b-agent"
    assert [m.name for m in registry.list()] == ["a-agent", "b-agent"]
    assert all(m.agent_id == agent_id_for(m.name) for m in registry.list())
    assert registry.get_metadata("a-agent").tags == ["echo"]
    assert "a-agent" in registry and len(registry) == 2
    assert list(registry) == ["a-agent", "b-agent"]


def test_registry_unknown_agent_is_bem_020() -> None:
    registry = AgentRegistry()
    with pytest.raises(RiverbeamError) as caught:
        registry.get("nope")
    assert caught.value.bem == "BEM-020"
    with pytest.raises(RiverbeamError) as caught:
        registry.get_metadata("nope")
    assert caught.value.bem == "BEM-020"
    assert caught.value.details["agent"] == "nope"


def test_registry_refuses_a_second_agent_with_one_name_unless_replacing() -> None:
    registry = AgentRegistry()
    registry.register(EchoAgent("x"))
    with pytest.raises(RiverbeamError) as caught:
        registry.register(EchoAgent("x"))
    assert caught.value.bem == "BEM-021"
    replacement = EchoAgent("x", description="second")
    registry.register(replacement, replace=True)
    assert registry.get("x") is replacement


def test_check_modalities_accepts_supported_content() -> None:
    meta = AgentMetadata(name="a", supported_modalities=["text", "image"])
    check_modalities(
        meta, [ContentPart.of_text("hi"), ContentPart(type="image_url", url="http://x/y.png")]
    )


def test_check_modalities_rejects_unsupported_content_with_bem_040() -> None:
    meta = AgentMetadata(name="a")
    parts = [
        ContentPart.of_text("hi"),
        ContentPart(type="file", mime_type="audio/ogg", data="AAAA"),
        ContentPart(type="image_base64", data="AAAA"),
    ]
    with pytest.raises(RiverbeamError) as caught:
        check_modalities(meta, parts)
    assert caught.value.bem == "BEM-040"
    assert caught.value.details["modalities"] == "audio,image"
    assert caught.value.details["supported"] == "text"


def test_the_echo_agents_metadata_is_a_new_object_on_every_call() -> None:
    from riverbeam import __version__

    agent = EchoAgent("assistant", description="says it back")
    first = agent.metadata()
    assert first.name == "assistant" and first.description == "says it back"
    assert first.supported_modalities == ["text"] and first.output_modalities == ["text"]
    assert first.tags == ["echo"] and first.version == __version__
    assert first.default_model == "echo"
    first.tags.append("changed")
    first.supported_modalities.clear()
    second = agent.metadata()
    assert second is not first
    assert second.tags == ["echo"] and second.supported_modalities == ["text"]
    assert second == EchoAgent("assistant", description="says it back").metadata()
