"""Requests: who is calling, the invocation, and answers to pending actions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal, cast

from pydantic import AliasChoices, ConfigDict, Field
from pydantic.config import JsonDict

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types._base import NonEmptyStr, OptionalJsonObject, UtcDatetime, UUIDStr, WireModel
from riverbeam.types._content import ContentPart
from riverbeam.v1 import riverbeam_service_pb2, types_pb2

__all__ = [
    "ActionResponseEnvelope",
    "ActionResponseStatus",
    "InvokeAuthContext",
    "InvokePayload",
    "InvokeRequest",
    "ResumePayload",
    "TurnConfig",
]

ActionResponseStatus = Literal["submitted", "cancelled", "expired", "invalid"]


def _organization_id_schema(schema: JsonDict) -> None:
    # The JSON Schema shows the validation alias too, and that only one of the two may be sent.
    properties = cast(JsonDict, schema["properties"])
    org_id = cast(JsonDict, properties["org_id"])
    properties["organization_id"] = {**org_id, "title": "Organization Id"}
    schema["not"] = {"required": ["org_id", "organization_id"]}


class InvokeAuthContext(WireModel):
    """Who is calling. `org_id` is also accepted as `organization_id`."""

    model_config = ConfigDict(json_schema_extra=_organization_id_schema)

    _proto = types_pb2.InvokeAuthContext

    user_id: str | None = None
    profile_id: str | None = None
    org_id: str | None = Field(
        default=None, validation_alias=AliasChoices("org_id", "organization_id")
    )
    mcp_token: str | None = None


def _now() -> datetime:
    return datetime.now(UTC)


class ActionResponseEnvelope(WireModel):
    """A client's answer to one pending action."""

    _proto = types_pb2.ActionResponseEnvelope
    _always = frozenset({"status", "responded_at"})

    action_id: UUIDStr
    kind: NonEmptyStr
    request_id: UUIDStr
    status: ActionResponseStatus = "submitted"
    payload: OptionalJsonObject = None
    errors: list[str] = Field(default_factory=list)
    responder_id: str | None = None
    responded_at: UtcDatetime = Field(default_factory=_now)
    lc_action_id: str | None = None


class TurnConfig(WireModel):
    """A turn's (or a session's) narrowing of the agent's tools, and instructions it adds.

    Narrowing only: `include_tools` keeps just those of the agent's tools (empty: all),
    `exclude_tools` removes some; a name the agent does not have is refused (BEM-220).
    """

    _proto = types_pb2.TurnConfig

    include_tools: list[NonEmptyStr] = Field(default_factory=list)
    exclude_tools: list[NonEmptyStr] = Field(default_factory=list)
    prepend_instructions: str | None = None
    append_instructions: str | None = None

    @property
    def is_empty(self) -> bool:
        return not (
            self.include_tools
            or self.exclude_tools
            or self.prepend_instructions
            or self.append_instructions
        )

    def then(self, other: TurnConfig) -> TurnConfig:
        """One config with the effect of this one, then `other`: never wider than either.

        Both include lists keep their intersection: this one's list stays the include, and
        the names of either list that the other lacks are excluded, so every name is still
        checked against the agent's allowlist (BEM-220) and an empty intersection leaves no
        tool rather than all. Instructions of both are kept, this one's first.
        """
        include = list(self.include_tools or other.include_tools)
        exclude = list(self.exclude_tools)
        if self.include_tools and other.include_tools:
            exclude += [t for t in self.include_tools if t not in other.include_tools]
            exclude += [t for t in other.include_tools if t not in self.include_tools]
        exclude += other.exclude_tools
        return TurnConfig(
            include_tools=include,
            exclude_tools=list(dict.fromkeys(exclude)),
            prepend_instructions=_joined(self.prepend_instructions, other.prepend_instructions),
            append_instructions=_joined(self.append_instructions, other.append_instructions),
        )


def _joined(a: str | None, b: str | None) -> str | None:
    parts = [p for p in (a, b) if p]
    return "\n\n".join(parts) if parts else None


class RunOptions(WireModel):
    """The per-request options a run was started with, recorded on it (`Run.options`).

    A resume of the interaction inherits them (docs/agents.md): it may add to them (its own
    schema applies too, the smaller limit wins, its turn_config narrows further), never
    loosen them.
    """

    _proto = types_pb2.RunOptions

    response_schema: OptionalJsonObject = None
    time_limit_s: float | None = Field(default=None, gt=0)
    token_budget: int | None = Field(default=None, gt=0, le=2**31 - 1)
    turn_config: TurnConfig | None = None

    @property
    def is_empty(self) -> bool:
        return (
            self.response_schema is None
            and self.time_limit_s is None
            and self.token_budget is None
            and (self.turn_config is None or self.turn_config.is_empty)
        )


class InvokePayload(WireModel):
    """The public invoke command: no interaction_id or actions (they are filled in)."""

    _proto = types_pb2.InvokeRequest
    _always = frozenset({"content"})

    agent_name: str = Field(min_length=1)
    content: list[ContentPart]
    session_id: UUIDStr
    model_override: str | None = None
    metadata: OptionalJsonObject = None
    request_id: UUIDStr | None = None
    stream: bool = False
    auth_context: InvokeAuthContext | None = None
    # The agent layer (docs/agents.md): all optional, all only narrow what the agent allows.
    response_schema: OptionalJsonObject = None
    time_limit_s: float | None = Field(default=None, gt=0)
    token_budget: int | None = Field(default=None, gt=0, le=2**31 - 1)
    turn_config: TurnConfig | None = None
    session_config: TurnConfig | None = None


class InvokeRequest(InvokePayload):
    """API -> runner: the body of one invocation (seed 001)."""

    interaction_id: UUIDStr | None = None
    actions: list[ActionResponseEnvelope] = Field(default_factory=list)


class ResumePayload(WireModel):
    """The resume command: the interaction to resume and one answer per pending action.

    `agent_name` may be left out: a resume always runs the interaction's own agent, and one
    naming another agent is refused (BEM-069) without changing anything.
    """

    _proto = riverbeam_service_pb2.ResumeRequest
    _always = frozenset({"content"})

    agent_name: str | None = Field(default=None, min_length=1)
    session_id: UUIDStr
    interaction_id: UUIDStr
    content: list[ContentPart] = Field(default_factory=list)
    actions: list[ActionResponseEnvelope]
    auth_context: InvokeAuthContext | None = None
    metadata: OptionalJsonObject = None
    request_id: UUIDStr | None = None
    model_override: str | None = None

    def with_agent_of(self, interaction_agent: str) -> ResumePayload:
        """This resume, naming `interaction_agent` (the agent of the interaction it resumes).

        Raises:
            RiverbeamError: BEM-069 when the resume names another agent.
        """
        if self.agent_name is None:
            return self.model_copy(update={"agent_name": interaction_agent})
        if self.agent_name != interaction_agent:
            raise RiverbeamError(
                ErrorCode.RESUME_AGENT_MISMATCH,
                "a resume must name the interaction's agent (or leave agent_name out)",
                field="agent_name",
                agent_name=interaction_agent,
            )
        return self

    def as_invoke_request(self, *, request_id: str) -> InvokeRequest:
        """The InvokeRequest this resume runs as (resume always streams).

        The agent must be known by now (BEM-011 otherwise): callers fill a left-out agent_name
        from the interaction (`with_agent_of`).
        """
        if self.agent_name is None:
            raise RiverbeamError(
                ErrorCode.MISSING_FIELD, "resume needs the interaction's agent", field="agent_name"
            )
        return InvokeRequest(
            agent_name=self.agent_name,
            content=self.content,
            session_id=self.session_id,
            model_override=self.model_override,
            metadata=self.metadata,
            request_id=request_id,
            stream=True,
            auth_context=self.auth_context,
            interaction_id=self.interaction_id,
            actions=self.actions,
        )
