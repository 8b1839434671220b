"""Agents: the Agent protocol and registry, RigAgentRunner, completion clients, tools, skills.

Agent, AgentRegistry, EchoAgent, check_modalities       what the runner serves
RigAgentRunner, RigOptions                              the built-in tool loop
CompletionClient, EchoClient, ScriptedClient,
OpenAiCompatible, FallbackClient                        the model boundary
Tool, ToolSpec, json_params, ContextualTool,
ToolCallContext, RememberTool                           tools
Skill, builtin_skills, skill_by_name                    skills
RiverbeamConfig, AgentConfig, load_config, ...          riverbeam.yaml
McpHub, McpTool                                         tools of MCP servers
AgentTool, Crew                                         agents composed: as tools, as crews
AgentInput, AgentContext, ResumedAction, MemoryWriter   what an agent receives
OutputSpec, ResponseSchema                              structured output with repair
Guardrail, GuardrailConfig, MaxLength, DenyPatterns,
PiiDetector, JsonSchemaCheck, ModelJudge                guardrails
ToolPolicy, ToolPolicyConfig, ConfirmRequired,
ApproveTools, ApprovePathOutside, MaxToolCalls,
DenyTools, RedactResult (+ the decisions)               the tool-call policy chain
RunLimits, AgentLayerConfig                             run limits, deployment defaults
CompactionOptions, TokenCounter, EstimatingCounter      context compaction
"""

import importlib as _importlib
import typing as _typing

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_EXTRA_BODY",
    "DEFAULT_MODEL",
    "REMEMBER_TOOL_NAME",
    "SANDBOX_TOOL_NAMES",
    "STRUCTURED_OUTPUT_CAPABILITY",
    "TOOL_NAME_PATTERN",
    "Agent",
    "AgentConfig",
    "AgentContext",
    "AgentInput",
    "AgentLayerConfig",
    "AgentRegistry",
    "AgentTool",
    "ApprovalTool",
    "ApprovePathOutside",
    "ApproveTools",
    "ChatMessage",
    "CompactionOptions",
    "Completion",
    "CompletionClient",
    "CompletionEvent",
    "ConfirmRequired",
    "ContextualTool",
    "Crew",
    "Deny",
    "DenyFatal",
    "DenyPatterns",
    "DenyTools",
    "EchoAgent",
    "EchoClient",
    "EstimatingCounter",
    "FallbackClient",
    "FrameFactory",
    "Guardrail",
    "GuardrailConfig",
    "GuardrailEvent",
    "GuardrailResult",
    "GuardrailStage",
    "HttpMcpServer",
    "JsonSchemaCheck",
    "LoadedConfig",
    "MaxLength",
    "MaxToolCalls",
    "McpHub",
    "McpTool",
    "MemoryWriter",
    "ModelJudge",
    "OpenAiCompatible",
    "OutputSpec",
    "PendingToolCall",
    "PiiDetector",
    "PolicyCall",
    "RedactResult",
    "RememberTool",
    "RequireApproval",
    "ResponseSchema",
    "ResumedAction",
    "RewriteArgs",
    "RewriteResult",
    "RigAgentRunner",
    "RigOptions",
    "RiverbeamConfig",
    "RunLimits",
    "ScriptStep",
    "ScriptedCall",
    "ScriptedClient",
    "ShortCircuit",
    "Skill",
    "StdioMcpServer",
    "StructuredOutputClient",
    "Text",
    "TextDelta",
    "TokenCounter",
    "Tool",
    "ToolCallContext",
    "ToolCalls",
    "ToolErrorPolicy",
    "ToolPolicy",
    "ToolPolicyConfig",
    "ToolSpec",
    "UsageMeter",
    "build_messages",
    "builtin_skills",
    "check_modalities",
    "collect",
    "config_json_schema",
    "falls_through",
    "json_params",
    "load_agent_layer",
    "load_config",
    "mcp_tool_name",
    "new_tool_call_id",
    "parse_config",
    "parse_guardrails",
    "parse_policies",
    "skill_by_name",
]

if _typing.TYPE_CHECKING:
    from riverbeam.agents._agent import Agent, check_modalities
    from riverbeam.agents._chat import build_messages
    from riverbeam.agents._compaction import CompactionOptions
    from riverbeam.agents._completion import (
        ChatMessage,
        Completion,
        CompletionClient,
        CompletionEvent,
        PendingToolCall,
        StructuredOutputClient,
        Text,
        TextDelta,
        ToolCalls,
        collect,
        new_tool_call_id,
    )
    from riverbeam.agents._composition import AgentTool, Crew
    from riverbeam.agents._config import (
        AgentConfig,
        HttpMcpServer,
        RiverbeamConfig,
        StdioMcpServer,
        config_json_schema,
    )
    from riverbeam.agents._config_file import LoadedConfig, load_config, parse_config
    from riverbeam.agents._echo import EchoAgent, EchoClient
    from riverbeam.agents._fallback import FallbackClient, falls_through
    from riverbeam.agents._frames import FrameFactory
    from riverbeam.agents._guardrails import (
        DenyPatterns,
        Guardrail,
        GuardrailConfig,
        GuardrailEvent,
        GuardrailResult,
        GuardrailStage,
        JsonSchemaCheck,
        MaxLength,
        ModelJudge,
        PiiDetector,
        parse_guardrails,
    )
    from riverbeam.agents._io import (
        AgentContext,
        AgentInput,
        MemoryWriter,
        ResumedAction,
        UsageMeter,
    )
    from riverbeam.agents._layer_config import AgentLayerConfig, load_agent_layer
    from riverbeam.agents._limits import RunLimits
    from riverbeam.agents._mcp import McpHub, McpTool, mcp_tool_name
    from riverbeam.agents._openai import (
        DEFAULT_BASE_URL,
        DEFAULT_EXTRA_BODY,
        DEFAULT_MODEL,
        OpenAiCompatible,
    )
    from riverbeam.agents._output import STRUCTURED_OUTPUT_CAPABILITY, OutputSpec, ResponseSchema
    from riverbeam.agents._policies import (
        ApprovePathOutside,
        ApproveTools,
        ConfirmRequired,
        Deny,
        DenyFatal,
        DenyTools,
        MaxToolCalls,
        PolicyCall,
        RedactResult,
        RequireApproval,
        RewriteArgs,
        RewriteResult,
        ShortCircuit,
        ToolPolicy,
        ToolPolicyConfig,
        parse_policies,
    )
    from riverbeam.agents._registry import AgentRegistry
    from riverbeam.agents._remember import REMEMBER_TOOL_NAME, RememberTool
    from riverbeam.agents._rig import RigAgentRunner, RigOptions, ToolErrorPolicy
    from riverbeam.agents._scripted import ScriptedCall, ScriptedClient, ScriptStep
    from riverbeam.agents._skills import SANDBOX_TOOL_NAMES, Skill, builtin_skills, skill_by_name
    from riverbeam.agents._tokens import EstimatingCounter, TokenCounter
    from riverbeam.agents._tool import (
        TOOL_NAME_PATTERN,
        ApprovalTool,
        ContextualTool,
        Tool,
        ToolCallContext,
        ToolSpec,
        json_params,
    )

# Each name's module, imported on first use (PEP 562): importing this package costs only
# what the caller then uses.
_LAZY: dict[str, str] = {
    "Agent": "riverbeam.agents._agent",
    "check_modalities": "riverbeam.agents._agent",
    "build_messages": "riverbeam.agents._chat",
    "CompactionOptions": "riverbeam.agents._compaction",
    "ChatMessage": "riverbeam.agents._completion",
    "Completion": "riverbeam.agents._completion",
    "CompletionClient": "riverbeam.agents._completion",
    "CompletionEvent": "riverbeam.agents._completion",
    "PendingToolCall": "riverbeam.agents._completion",
    "StructuredOutputClient": "riverbeam.agents._completion",
    "Text": "riverbeam.agents._completion",
    "TextDelta": "riverbeam.agents._completion",
    "ToolCalls": "riverbeam.agents._completion",
    "collect": "riverbeam.agents._completion",
    "new_tool_call_id": "riverbeam.agents._completion",
    "AgentTool": "riverbeam.agents._composition",
    "Crew": "riverbeam.agents._composition",
    "AgentConfig": "riverbeam.agents._config",
    "HttpMcpServer": "riverbeam.agents._config",
    "RiverbeamConfig": "riverbeam.agents._config",
    "StdioMcpServer": "riverbeam.agents._config",
    "config_json_schema": "riverbeam.agents._config",
    "LoadedConfig": "riverbeam.agents._config_file",
    "load_config": "riverbeam.agents._config_file",
    "parse_config": "riverbeam.agents._config_file",
    "EchoAgent": "riverbeam.agents._echo",
    "EchoClient": "riverbeam.agents._echo",
    "FallbackClient": "riverbeam.agents._fallback",
    "falls_through": "riverbeam.agents._fallback",
    "FrameFactory": "riverbeam.agents._frames",
    "DenyPatterns": "riverbeam.agents._guardrails",
    "Guardrail": "riverbeam.agents._guardrails",
    "GuardrailConfig": "riverbeam.agents._guardrails",
    "GuardrailEvent": "riverbeam.agents._guardrails",
    "GuardrailResult": "riverbeam.agents._guardrails",
    "GuardrailStage": "riverbeam.agents._guardrails",
    "JsonSchemaCheck": "riverbeam.agents._guardrails",
    "MaxLength": "riverbeam.agents._guardrails",
    "ModelJudge": "riverbeam.agents._guardrails",
    "PiiDetector": "riverbeam.agents._guardrails",
    "parse_guardrails": "riverbeam.agents._guardrails",
    "AgentContext": "riverbeam.agents._io",
    "AgentInput": "riverbeam.agents._io",
    "MemoryWriter": "riverbeam.agents._io",
    "ResumedAction": "riverbeam.agents._io",
    "UsageMeter": "riverbeam.agents._io",
    "AgentLayerConfig": "riverbeam.agents._layer_config",
    "load_agent_layer": "riverbeam.agents._layer_config",
    "RunLimits": "riverbeam.agents._limits",
    "McpHub": "riverbeam.agents._mcp",
    "McpTool": "riverbeam.agents._mcp",
    "mcp_tool_name": "riverbeam.agents._mcp",
    "DEFAULT_BASE_URL": "riverbeam.agents._openai",
    "DEFAULT_EXTRA_BODY": "riverbeam.agents._openai",
    "DEFAULT_MODEL": "riverbeam.agents._openai",
    "OpenAiCompatible": "riverbeam.agents._openai",
    "STRUCTURED_OUTPUT_CAPABILITY": "riverbeam.agents._output",
    "OutputSpec": "riverbeam.agents._output",
    "ResponseSchema": "riverbeam.agents._output",
    "ApprovePathOutside": "riverbeam.agents._policies",
    "ApproveTools": "riverbeam.agents._policies",
    "ConfirmRequired": "riverbeam.agents._policies",
    "Deny": "riverbeam.agents._policies",
    "DenyFatal": "riverbeam.agents._policies",
    "DenyTools": "riverbeam.agents._policies",
    "MaxToolCalls": "riverbeam.agents._policies",
    "PolicyCall": "riverbeam.agents._policies",
    "RedactResult": "riverbeam.agents._policies",
    "RequireApproval": "riverbeam.agents._policies",
    "RewriteArgs": "riverbeam.agents._policies",
    "RewriteResult": "riverbeam.agents._policies",
    "ShortCircuit": "riverbeam.agents._policies",
    "ToolPolicy": "riverbeam.agents._policies",
    "ToolPolicyConfig": "riverbeam.agents._policies",
    "parse_policies": "riverbeam.agents._policies",
    "AgentRegistry": "riverbeam.agents._registry",
    "REMEMBER_TOOL_NAME": "riverbeam.agents._remember",
    "RememberTool": "riverbeam.agents._remember",
    "RigAgentRunner": "riverbeam.agents._rig",
    "RigOptions": "riverbeam.agents._rig",
    "ToolErrorPolicy": "riverbeam.agents._rig",
    "ScriptedCall": "riverbeam.agents._scripted",
    "ScriptedClient": "riverbeam.agents._scripted",
    "ScriptStep": "riverbeam.agents._scripted",
    "SANDBOX_TOOL_NAMES": "riverbeam.agents._skills",
    "Skill": "riverbeam.agents._skills",
    "builtin_skills": "riverbeam.agents._skills",
    "skill_by_name": "riverbeam.agents._skills",
    "EstimatingCounter": "riverbeam.agents._tokens",
    "TokenCounter": "riverbeam.agents._tokens",
    "TOOL_NAME_PATTERN": "riverbeam.agents._tool",
    "ApprovalTool": "riverbeam.agents._tool",
    "ContextualTool": "riverbeam.agents._tool",
    "Tool": "riverbeam.agents._tool",
    "ToolCallContext": "riverbeam.agents._tool",
    "ToolSpec": "riverbeam.agents._tool",
    "json_params": "riverbeam.agents._tool",
}


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
