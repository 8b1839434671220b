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
from riverbeam.agents._io import AgentContext, AgentInput, MemoryWriter, ResumedAction, UsageMeter
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
    PreviewTool,
    Tool,
    ToolCallContext,
    ToolSpec,
    json_params,
)

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
