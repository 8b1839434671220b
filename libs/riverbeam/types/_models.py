"""Model configuration, agent metadata and stream acknowledgements."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from riverbeam.types._base import INT32_MAX, NonEmptyStr, WireModel
from riverbeam.types._content import Modality
from riverbeam.v1 import types_pb2

__all__ = ["AgentMetadata", "ModelConfig", "Provider", "StreamAck"]

Provider = Literal["openai", "anthropic", "custom", "ollama", "groq", "nvidia"]


def _text_only() -> list[Modality]:
    return ["text"]


class ModelConfig(WireModel):
    """One model the router may pick."""

    _proto = types_pb2.ModelConfig
    _always = frozenset({"modalities", "capabilities", "cost_per_1k_tokens", "max_tokens"})

    name: str = Field(min_length=1)
    provider: Provider
    modalities: list[Modality] = Field(default_factory=_text_only)
    capabilities: list[str] = Field(default_factory=list)
    cost_per_1k_tokens: float = Field(default=0.0, ge=0)
    max_tokens: int = Field(default=4096, gt=0, le=INT32_MAX)
    api_key: str | None = None
    provider_config: Any = None
    extra: Any = None


class AgentMetadata(WireModel):
    """What ListAgents tells about an agent."""

    _proto = types_pb2.AgentMetadata
    _always = frozenset({"supported_modalities", "output_modalities"})

    name: str = Field(min_length=1)
    description: str | None = None
    supported_modalities: list[Modality] = Field(default_factory=_text_only)
    output_modalities: list[Modality] = Field(default_factory=_text_only)
    tags: list[str] = Field(default_factory=list)
    version: str | None = None
    agent_id: str | None = None
    # The model the agent runs with when a request names none (a name of the model list).
    model: str | None = None
    # The model its client calls when the router names none: BEAM_MODEL, or "echo".
    default_model: str | None = None
    # A resume on a runner with another version of this agent: refuse (BEM-260), accept
    # when the major version matches, or accept any.
    version_policy: Literal["refuse", "major", "any"] | None = None
    # How long its approvals stay answerable; None: the deployment's default.
    approval_ttl_s: float | None = Field(default=None, gt=0)


class StreamAck(WireModel):
    """Returned at once when a request's frames go to the stream channel."""

    _proto = types_pb2.StreamAck

    request_id: NonEmptyStr
    interaction_id: NonEmptyStr
    session_id: NonEmptyStr
    subject: NonEmptyStr
    stream_name: NonEmptyStr
    run_id: str | None = None
