"""The `riverbeam.yaml` schema: agents, their tools, MCP servers and the workspace.

Plain pydantic data, no behaviour: `riverbeam.agents._config_file` reads a file into it (with
line numbers for errors) and `riverbeam.runtime` builds agents from it. Every section that
chooses between shapes has a `kind`, so the published JSON Schema (schemas/config/) lets an
editor complete it.

    version: 1
    builtin_agents: true            # or false, or the names to keep
    workspace: {name: docs}
    mcp_servers:
      files: {kind: stdio, command: python, args: [-m, my_server]}
      search: {kind: http, url: "https://mcp.example.com/mcp",
               headers: {Authorization: "Bearer ${SEARCH_TOKEN}"}}
    agents:
      - name: docs-helper
        skill: consume
        model: fast
        tools: [read_file, {kind: mcp, server: search}, {kind: python, entry: "tools:WordCount"}]
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from riverbeam.agents._guardrails import (
    DenyPatterns,
    GuardrailStage,
    JsonSchemaCheck,
    MaxLength,
    ModelJudge,
    PiiDetector,
)
from riverbeam.agents._policies import (
    ApprovePathOutside,
    ApproveTools,
    ConfirmRequired,
    DenyTools,
    MaxToolCalls,
    RedactResult,
)
from riverbeam.agents._skills import SANDBOX_TOOL_NAMES
from riverbeam.types import Modality

__all__ = [
    "CONFIG_SCHEMA_ID",
    "AgentConfig",
    "AgentToolRef",
    "ConfirmPolicy",
    "CrewConfig",
    "DenyPolicy",
    "GuardrailConfig",
    "HttpMcpServer",
    "JsonSchemaOutput",
    "LimitsConfig",
    "McpServerConfig",
    "McpToolRef",
    "PolicyConfig",
    "PythonToolRef",
    "RiverbeamConfig",
    "SandboxToolRef",
    "StdioMcpServer",
    "TextOutput",
    "ToolRef",
    "WorkspaceConfig",
    "config_json_schema",
]

CONFIG_SCHEMA_ID = "https://riverbeam.dev/schemas/config/riverbeam.schema.json"

AgentName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
ServerName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")]
"""MCP server names; no double underscore either, since `server__tool` names their tools."""
EntryPoint = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_.]*$",
        description="module:object, importable from the runner's or the config file's directory",
    ),
]
SandboxToolName = Literal[
    "list_tree",
    "read_file",
    "write_file",
    "git_status",
    "git_diff",
    "git_log",
    "git_add",
    "git_commit",
    "git_push",
]
assert set(SandboxToolName.__args__) == set(SANDBOX_TOOL_NAMES)  # type: ignore[attr-defined]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# ---- workspace ------------------------------------------------------------------------------------
class WorkspaceConfig(_Section):
    """Where the sandbox tools work: a workspace per session by default (see docs/isolation.md).

    `name` is the one workspace every run shares, used only with `policy: shared`.
    """

    policy: Literal["session", "user", "shared"] | None = Field(
        default=None,
        description="one workspace per session, per user, or one shared by every run "
        "(default: RIVERBEAM_WORKSPACE_POLICY)",
    )
    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$")] = "default"
    origin: str | None = Field(default=None, description="the origin pushes go to")


# ---- MCP servers ----------------------------------------------------------------------------------
class _McpCommon(_Section):
    timeout_s: float = Field(default=30.0, gt=0, description="time limit of one tool call")
    startup_timeout_s: float = Field(default=20.0, gt=0, description="time to connect and list")
    include: list[str] | None = Field(
        default=None, description="offer only these tools of the server (MCP names)"
    )
    confirm: list[str] = Field(
        default_factory=list,
        description='tools (MCP names, "*" for all) a person must approve before they run',
    )


class StdioMcpServer(_McpCommon):
    """A server the runner starts as a child process and talks to over stdin/stdout."""

    kind: Literal["stdio"]
    command: str = Field(min_length=1, description="`python` is the runner's own interpreter")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(
        default_factory=dict, description="extra environment; ${VAR} reads the runner's"
    )
    cwd: str | None = Field(default=None, description="relative to the config file")


class HttpMcpServer(_McpCommon):
    """A server reached over streamable HTTP."""

    kind: Literal["http"]
    url: Annotated[str, Field(pattern=r"^https?://")]
    headers: dict[str, str] = Field(
        default_factory=dict, description="request headers; ${VAR} reads the runner's environment"
    )


McpServerConfig = Annotated[StdioMcpServer | HttpMcpServer, Field(discriminator="kind")]


# ---- tools ----------------------------------------------------------------------------------------
class SandboxToolRef(_Section):
    """Sandbox tools (all nine when `names` is omitted)."""

    kind: Literal["sandbox"]
    names: list[SandboxToolName] | None = None


class McpToolRef(_Section):
    """The tools of an MCP server (all it offers, or the ones named)."""

    kind: Literal["mcp"]
    server: str
    tools: list[str] | None = Field(default=None, description="MCP tool names; omitted: all")


class PythonToolRef(_Section):
    """A Tool from Python: an instance, a class (called without arguments) or a function
    returning a Tool or a list of them."""

    kind: Literal["python"]
    entry: EntryPoint


class AgentToolRef(_Section):
    """Another agent, called as a tool taking a `task` (agent as tool)."""

    kind: Literal["agent"]
    agent: str
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")] | None = Field(
        default=None, description="the tool's name (default ask_<agent>)"
    )
    description: str | None = None


class RememberToolRef(_Section):
    """The remember tool (writes memory entries)."""

    kind: Literal["remember"]


ToolRef = Annotated[
    SandboxToolName
    | Literal["remember"]
    | Annotated[
        SandboxToolRef | McpToolRef | PythonToolRef | RememberToolRef | AgentToolRef,
        Field(discriminator="kind"),
    ],
    Field(description="a sandbox tool name, `remember`, or an object with a kind"),
]


# ---- output, guardrails, policies, limits ---------------------------------------------------------
class TextOutput(_Section):
    kind: Literal["text"]


class JsonSchemaOutput(_Section):
    """A structured answer: JSON that validates against `schema`."""

    kind: Literal["json_schema"]
    json_schema: dict[str, Any] = Field(alias="schema")
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")] | None = Field(
        default=None, description="the schema's name in a native response format"
    )
    repair_attempts: int = Field(
        default=1, ge=0, le=5, description="how often an invalid answer is sent back"
    )

    @field_validator("json_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        _check_json_schema(value)
        return value


OutputConfig = Annotated[TextOutput | JsonSchemaOutput, Field(discriminator="kind")]


def _input_only() -> list[GuardrailStage]:
    return ["input"]


class MaxInputCharsGuardrail(_Section):
    """Blocks a user turn longer than `limit` characters."""

    kind: Literal["max_input_chars"]
    limit: int = Field(gt=0)


class RegexGuardrail(_Section):
    """Trips when the pattern matches the text of the stages named (the user's turn by default).

    (`stages`, not `on`: YAML reads a bare `on` key as the boolean true.)
    """

    kind: Literal["regex"]
    pattern: str
    stages: list[GuardrailStage] = Field(default_factory=_input_only, min_length=1)
    message: str | None = Field(default=None, description="the reason given when it blocks")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


class PythonGuardrail(_Section):
    """A Guardrail from Python (name, applies_to, check): an instance, a class or a factory."""

    kind: Literal["python"]
    entry: EntryPoint
    stages: list[GuardrailStage] = Field(default_factory=_input_only, min_length=1)


GuardrailConfig = Annotated[
    MaxInputCharsGuardrail
    | RegexGuardrail
    | PythonGuardrail
    | MaxLength
    | DenyPatterns
    | PiiDetector
    | JsonSchemaCheck
    | ModelJudge,
    Field(discriminator="kind"),
]
"""The file's own shorthands, or any built-in guardrail of the agent layer (its `kind`)."""


class ConfirmPolicy(_Section):
    """A person approves each call of these tools (as offered to the model) before it runs."""

    kind: Literal["confirm"]
    tools: list[str] = Field(min_length=1)


class DenyPolicy(_Section):
    """These tools are never offered to the model."""

    kind: Literal["deny"]
    tools: list[str] = Field(min_length=1)


class PythonPolicy(_Section):
    """A ToolPolicy from Python (name, before, after): an instance, a class or a factory."""

    kind: Literal["python"]
    entry: EntryPoint


PolicyConfig = Annotated[
    ConfirmPolicy
    | DenyPolicy
    | PythonPolicy
    | ConfirmRequired
    | ApproveTools
    | ApprovePathOutside
    | MaxToolCalls
    | DenyTools
    | RedactResult,
    Field(discriminator="kind"),
]
"""`confirm`/`deny` (applied to the tool list), or any built-in tool policy of the agent
layer, run in the call chain in the order given."""


class LimitsConfig(_Section):
    max_rounds: int | None = Field(default=None, ge=0, description="tool rounds per run")
    tool_timeout_s: float | None = Field(
        default=None, gt=0, description="time limit of a call whose tool sets none"
    )
    max_tokens: int | None = Field(default=None, gt=0, description="tokens per run")
    max_seconds: float | None = Field(default=None, gt=0, description="wall time per run")


# ---- agents ---------------------------------------------------------------------------------------
class AgentConfig(_Section):
    """One agent, run by the built-in tool loop."""

    name: AgentName
    description: str | None = None
    version: str | None = None
    modalities: list[Modality] = Field(
        default_factory=lambda: list[Modality](["text"]),
        min_length=1,
        description="input modalities accepted",
    )
    tags: list[str] = Field(default_factory=list)
    skill: str | None = Field(
        default=None,
        description="a built-in skill: its prompt, and its tool allowlist when tools is omitted",
    )
    instructions: str | None = Field(
        default=None, description="the system prompt (after the skill's, when both are given)"
    )
    model: str | None = Field(
        default=None, description="a model of the model list, used when a request names none"
    )
    tools: list[ToolRef] | None = Field(
        default=None, description="omitted: the skill's sandbox tools; []: none"
    )
    tool_errors: Literal["fatal", "model"] = "fatal"
    handoffs: list[AgentName] = Field(
        default_factory=list,
        description="agents this one may hand the conversation to (a transfer_to_<agent> "
        "tool each); later turns of the interaction go to the agent handed to",
    )
    output: OutputConfig | None = None
    guardrails: list[GuardrailConfig] = Field(default_factory=list)
    policies: list[PolicyConfig] = Field(default_factory=list)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)

    @model_validator(mode="after")
    def _prompt(self) -> AgentConfig:
        if self.skill is None and self.instructions is None:
            raise ValueError("an agent needs a skill or instructions")
        return self


class CrewConfig(_Section):
    """Agents composed into one agent (see riverbeam.agents.Crew)."""

    name: AgentName
    kind: Literal["sequential", "parallel", "route"]
    description: str | None = None
    version: str | None = None
    tags: list[str] = Field(default_factory=list)
    agents: list[str] = Field(default_factory=list, description="sequential and parallel")
    join: str | None = Field(default=None, description="parallel: the agent that merges")
    router: str | None = Field(default=None, description="route: the agent that picks")
    routes: dict[str, str] = Field(default_factory=dict, description="route: key -> agent")
    fallback: str | None = Field(default=None, description="route: when no key matches")

    @model_validator(mode="after")
    def _shape(self) -> CrewConfig:
        if self.kind in ("sequential", "parallel") and not self.agents:
            raise ValueError(f"a {self.kind} crew needs agents")
        if self.kind == "route" and (self.router is None or not self.routes):
            raise ValueError("a route crew needs a router and routes")
        return self


class RiverbeamConfig(_Section):
    """The whole file."""

    version: Literal[1] = 1
    builtin_agents: bool | list[str] = Field(
        default=True, description="keep the built-in agents (all, none, or these names)"
    )
    workspace: WorkspaceConfig | None = None
    mcp_servers: dict[ServerName, McpServerConfig] = Field(default_factory=dict)
    agents: list[AgentConfig] = Field(default_factory=list)
    crews: list[CrewConfig] = Field(default_factory=list)

    @field_validator("mcp_servers")
    @classmethod
    def _server_names(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            if "__" in name:
                raise ValueError(f"server name {name!r} has a double underscore")
        return value


def config_json_schema() -> dict[str, Any]:
    """The JSON Schema of riverbeam.yaml (what schemas/config/riverbeam.schema.json holds)."""
    schema = RiverbeamConfig.model_json_schema(by_alias=True)
    schema.pop("title", None)
    schema.pop("$schema", None)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": CONFIG_SCHEMA_ID,
        "title": "riverbeam.yaml",
        **schema,
    }


def _check_json_schema(value: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
    from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

    try:
        Draft202012Validator.check_schema(value)
    except SchemaError as exc:
        raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
