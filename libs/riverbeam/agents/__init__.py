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
AgentTool, Crew, HandoffTool, ChildRunHost             agents composed: as tools, as crews,
                                                        by handoff; child runs
ChildHeld, ChildHold, ChildTool                         a called agent paused for approval
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

import typing as _typing

from riverbeam._lazy import lazy_exports as _lazy_exports

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
    "ChildHeld",
    "ChildHold",
    "ChildRunHost",
    "ChildTool",
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
    "HandoffTool",
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
    "PreviewTool",
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
    from riverbeam.agents._child_hold import ChildHeld, ChildHold
    from riverbeam.agents._child_resume import ChildTool
    from riverbeam.agents._child_runs import ChildRunHost
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
    from riverbeam.agents._handoff import HandoffTool
    from riverbeam.agents._io import (
        AgentContext,
        AgentInput,
        MemoryWriter,
        ResumedAction,
        UsageMeter,
    )
    from riverbeam.agents._layer_config import AgentLayerConfig
    from riverbeam.agents._layer_env import load_agent_layer
    from riverbeam.agents._limits import RunLimits
    from riverbeam.agents._mcp import McpHub, McpTool, mcp_tool_name
    from riverbeam.agents._model_env import DEFAULT_BASE_URL, DEFAULT_MODEL
    from riverbeam.agents._openai import DEFAULT_EXTRA_BODY, OpenAiCompatible
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
        PreviewTool,
        Tool,
        ToolCallContext,
        ToolSpec,
        json_params,
    )

# Each name's module, imported on first use (PEP 562): importing this package costs only
# what the caller then uses.
_LAZY: dict[str, str | tuple[str, str]] = {
    "Agent": ("riverbeam.agents._agent", "Agent"),
    "check_modalities": ("riverbeam.agents._agent", "check_modalities"),
    "build_messages": ("riverbeam.agents._chat", "build_messages"),
    "ChildHeld": ("riverbeam.agents._child_hold", "ChildHeld"),
    "ChildHold": ("riverbeam.agents._child_hold", "ChildHold"),
    "ChildTool": ("riverbeam.agents._child_resume", "ChildTool"),
    "ChildRunHost": ("riverbeam.agents._child_runs", "ChildRunHost"),
    "CompactionOptions": ("riverbeam.agents._compaction", "CompactionOptions"),
    "ChatMessage": ("riverbeam.agents._completion", "ChatMessage"),
    "Completion": ("riverbeam.agents._completion", "Completion"),
    "CompletionClient": ("riverbeam.agents._completion", "CompletionClient"),
    "CompletionEvent": ("riverbeam.agents._completion", "CompletionEvent"),
    "PendingToolCall": ("riverbeam.agents._completion", "PendingToolCall"),
    "StructuredOutputClient": ("riverbeam.agents._completion", "StructuredOutputClient"),
    "Text": ("riverbeam.agents._completion", "Text"),
    "TextDelta": ("riverbeam.agents._completion", "TextDelta"),
    "ToolCalls": ("riverbeam.agents._completion", "ToolCalls"),
    "collect": ("riverbeam.agents._completion", "collect"),
    "new_tool_call_id": ("riverbeam.agents._completion", "new_tool_call_id"),
    "AgentTool": ("riverbeam.agents._composition", "AgentTool"),
    "Crew": ("riverbeam.agents._composition", "Crew"),
    "AgentConfig": ("riverbeam.agents._config", "AgentConfig"),
    "HttpMcpServer": ("riverbeam.agents._config", "HttpMcpServer"),
    "RiverbeamConfig": ("riverbeam.agents._config", "RiverbeamConfig"),
    "StdioMcpServer": ("riverbeam.agents._config", "StdioMcpServer"),
    "config_json_schema": ("riverbeam.agents._config", "config_json_schema"),
    "LoadedConfig": ("riverbeam.agents._config_file", "LoadedConfig"),
    "load_config": ("riverbeam.agents._config_file", "load_config"),
    "parse_config": ("riverbeam.agents._config_file", "parse_config"),
    "EchoAgent": ("riverbeam.agents._echo", "EchoAgent"),
    "EchoClient": ("riverbeam.agents._echo", "EchoClient"),
    "FallbackClient": ("riverbeam.agents._fallback", "FallbackClient"),
    "falls_through": ("riverbeam.agents._fallback", "falls_through"),
    "FrameFactory": ("riverbeam.agents._frames", "FrameFactory"),
    "DenyPatterns": ("riverbeam.agents._guardrails", "DenyPatterns"),
    "Guardrail": ("riverbeam.agents._guardrails", "Guardrail"),
    "GuardrailConfig": ("riverbeam.agents._guardrails", "GuardrailConfig"),
    "GuardrailEvent": ("riverbeam.agents._guardrails", "GuardrailEvent"),
    "GuardrailResult": ("riverbeam.agents._guardrails", "GuardrailResult"),
    "GuardrailStage": ("riverbeam.agents._guardrails", "GuardrailStage"),
    "JsonSchemaCheck": ("riverbeam.agents._guardrails", "JsonSchemaCheck"),
    "MaxLength": ("riverbeam.agents._guardrails", "MaxLength"),
    "ModelJudge": ("riverbeam.agents._guardrails", "ModelJudge"),
    "PiiDetector": ("riverbeam.agents._guardrails", "PiiDetector"),
    "parse_guardrails": ("riverbeam.agents._guardrails", "parse_guardrails"),
    "HandoffTool": ("riverbeam.agents._handoff", "HandoffTool"),
    "AgentContext": ("riverbeam.agents._io", "AgentContext"),
    "AgentInput": ("riverbeam.agents._io", "AgentInput"),
    "MemoryWriter": ("riverbeam.agents._io", "MemoryWriter"),
    "ResumedAction": ("riverbeam.agents._io", "ResumedAction"),
    "UsageMeter": ("riverbeam.agents._io", "UsageMeter"),
    "AgentLayerConfig": ("riverbeam.agents._layer_config", "AgentLayerConfig"),
    "load_agent_layer": ("riverbeam.agents._layer_env", "load_agent_layer"),
    "RunLimits": ("riverbeam.agents._limits", "RunLimits"),
    "McpHub": ("riverbeam.agents._mcp", "McpHub"),
    "McpTool": ("riverbeam.agents._mcp", "McpTool"),
    "mcp_tool_name": ("riverbeam.agents._mcp", "mcp_tool_name"),
    "DEFAULT_BASE_URL": ("riverbeam.agents._model_env", "DEFAULT_BASE_URL"),
    "DEFAULT_EXTRA_BODY": ("riverbeam.agents._openai", "DEFAULT_EXTRA_BODY"),
    "DEFAULT_MODEL": ("riverbeam.agents._model_env", "DEFAULT_MODEL"),
    "OpenAiCompatible": ("riverbeam.agents._openai", "OpenAiCompatible"),
    "STRUCTURED_OUTPUT_CAPABILITY": ("riverbeam.agents._output", "STRUCTURED_OUTPUT_CAPABILITY"),
    "OutputSpec": ("riverbeam.agents._output", "OutputSpec"),
    "ResponseSchema": ("riverbeam.agents._output", "ResponseSchema"),
    "ApprovePathOutside": ("riverbeam.agents._policies", "ApprovePathOutside"),
    "ApproveTools": ("riverbeam.agents._policies", "ApproveTools"),
    "ConfirmRequired": ("riverbeam.agents._policies", "ConfirmRequired"),
    "Deny": ("riverbeam.agents._policies", "Deny"),
    "DenyFatal": ("riverbeam.agents._policies", "DenyFatal"),
    "DenyTools": ("riverbeam.agents._policies", "DenyTools"),
    "MaxToolCalls": ("riverbeam.agents._policies", "MaxToolCalls"),
    "PolicyCall": ("riverbeam.agents._policies", "PolicyCall"),
    "RedactResult": ("riverbeam.agents._policies", "RedactResult"),
    "RequireApproval": ("riverbeam.agents._policies", "RequireApproval"),
    "RewriteArgs": ("riverbeam.agents._policies", "RewriteArgs"),
    "RewriteResult": ("riverbeam.agents._policies", "RewriteResult"),
    "ShortCircuit": ("riverbeam.agents._policies", "ShortCircuit"),
    "ToolPolicy": ("riverbeam.agents._policies", "ToolPolicy"),
    "ToolPolicyConfig": ("riverbeam.agents._policies", "ToolPolicyConfig"),
    "parse_policies": ("riverbeam.agents._policies", "parse_policies"),
    "AgentRegistry": ("riverbeam.agents._registry", "AgentRegistry"),
    "REMEMBER_TOOL_NAME": ("riverbeam.agents._remember", "REMEMBER_TOOL_NAME"),
    "RememberTool": ("riverbeam.agents._remember", "RememberTool"),
    "RigAgentRunner": ("riverbeam.agents._rig", "RigAgentRunner"),
    "RigOptions": ("riverbeam.agents._rig", "RigOptions"),
    "ToolErrorPolicy": ("riverbeam.agents._rig", "ToolErrorPolicy"),
    "ScriptedCall": ("riverbeam.agents._scripted", "ScriptedCall"),
    "ScriptedClient": ("riverbeam.agents._scripted", "ScriptedClient"),
    "ScriptStep": ("riverbeam.agents._scripted", "ScriptStep"),
    "SANDBOX_TOOL_NAMES": ("riverbeam.agents._skills", "SANDBOX_TOOL_NAMES"),
    "Skill": ("riverbeam.agents._skills", "Skill"),
    "builtin_skills": ("riverbeam.agents._skills", "builtin_skills"),
    "skill_by_name": ("riverbeam.agents._skills", "skill_by_name"),
    "EstimatingCounter": ("riverbeam.agents._tokens", "EstimatingCounter"),
    "TokenCounter": ("riverbeam.agents._tokens", "TokenCounter"),
    "TOOL_NAME_PATTERN": ("riverbeam.agents._tool", "TOOL_NAME_PATTERN"),
    "ApprovalTool": ("riverbeam.agents._tool", "ApprovalTool"),
    "ContextualTool": ("riverbeam.agents._tool", "ContextualTool"),
    "PreviewTool": ("riverbeam.agents._tool", "PreviewTool"),
    "Tool": ("riverbeam.agents._tool", "Tool"),
    "ToolCallContext": ("riverbeam.agents._tool", "ToolCallContext"),
    "ToolSpec": ("riverbeam.agents._tool", "ToolSpec"),
    "json_params": ("riverbeam.agents._tool", "json_params"),
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
