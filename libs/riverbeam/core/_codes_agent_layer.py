"""Catalog entries: The agent layer (200-229); configuration, MCP and evals (230-259); durable runs:
version pins, expiring approvals, the tool-execution ledger, recovery and approval previews
(260-289).

Each is an ErrorSpec; riverbeam.core._catalog.ErrorCode names them all.
"""

from __future__ import annotations

import grpc

from riverbeam.core._error_spec import ErrorSpec

_S = grpc.StatusCode

OUTPUT_INVALID = ErrorSpec(
    "BEM-200",
    "final answer does not match the response schema after repair attempts",
    422,
    _S.FAILED_PRECONDITION,
    "details.errors holds the last validation errors",
)
RESPONSE_SCHEMA_INVALID = ErrorSpec(
    "BEM-201", "response schema is not a valid JSON Schema", 400, _S.INVALID_ARGUMENT
)
INPUT_GUARDRAIL_TRIPPED = ErrorSpec(
    "BEM-205", "an input guardrail blocked the turn", 400, _S.FAILED_PRECONDITION
)
OUTPUT_GUARDRAIL_TRIPPED = ErrorSpec(
    "BEM-206", "an output guardrail blocked the answer", 422, _S.FAILED_PRECONDITION
)
TOOL_RESULT_GUARDRAIL_TRIPPED = ErrorSpec(
    "BEM-207", "a guardrail blocked a tool result", 422, _S.FAILED_PRECONDITION
)
GUARDRAIL_FAILED = ErrorSpec(
    "BEM-208",
    "a guardrail could not decide (it failed closed)",
    503,
    _S.UNAVAILABLE,
    "a model-judged guardrail needs its model to answer yes or no",
)
GUARDRAIL_CONFIG_INVALID = ErrorSpec(
    "BEM-209", "guardrail configuration invalid", 400, _S.INVALID_ARGUMENT
)
TOOL_CALL_DENIED = ErrorSpec(
    "BEM-210", "a tool policy denied the call and ended the run", 403, _S.PERMISSION_DENIED
)
TOOL_POLICY_INVALID = ErrorSpec(
    "BEM-211", "tool policy configuration invalid", 400, _S.INVALID_ARGUMENT
)
RUN_TIME_LIMIT = ErrorSpec("BEM-215", "run exceeded its time limit", 504, _S.DEADLINE_EXCEEDED)
TOKEN_BUDGET_EXCEEDED = ErrorSpec(
    "BEM-216", "run exceeded its token budget", 429, _S.RESOURCE_EXHAUSTED
)
RUN_LIMIT_INVALID = ErrorSpec(
    "BEM-217", "run limit invalid (must be positive)", 400, _S.INVALID_ARGUMENT
)
TURN_CONFIG_INVALID = ErrorSpec(
    "BEM-220",
    "turn configuration names a tool outside the agent's allowlist",
    400,
    _S.INVALID_ARGUMENT,
)
SESSION_CONFIG_DENIED = ErrorSpec(
    "BEM-221", "caller may not set this session configuration", 403, _S.PERMISSION_DENIED
)
CONTEXT_OVER_BUDGET = ErrorSpec(
    "BEM-225",
    "the request does not fit the model's context even after compaction",
    400,
    _S.FAILED_PRECONDITION,
    "shorten the turn, the instructions or the tool list",
)
CONFIG_INVALID = ErrorSpec(
    "BEM-230",
    "agent configuration file invalid",
    500,
    _S.FAILED_PRECONDITION,
    "the message names the file, line and field; schemas/config/riverbeam.schema.json",
)
CONFIG_UNKNOWN_NAME = ErrorSpec(
    "BEM-231",
    "agent configuration names something that does not exist",
    500,
    _S.FAILED_PRECONDITION,
    "check the skill, model, tool or MCP server name against what is configured",
)
CONFIG_ENTRY_POINT = ErrorSpec(
    "BEM-232",
    "a Python entry point (module:object) cannot be loaded",
    500,
    _S.FAILED_PRECONDITION,
    "the module must be importable from the runner's directory or the config file's",
)
CONFIG_NOT_SUPPORTED = ErrorSpec(
    "BEM-233",
    "configuration section not supported by this runner",
    501,
    _S.UNIMPLEMENTED,
    "remove the section, or run a runner that has the feature",
)
AGENT_TOOL_UNSUPPORTED = ErrorSpec(
    "BEM-234",
    "an agent called as a tool did something agent-as-tool does not support yet",
    501,
    _S.UNIMPLEMENTED,
    "approvals inside a called agent and deep nesting are not supported yet",
)
CHILD_APPROVAL_UNSUPPORTED = ErrorSpec(
    "BEM-235",
    "an agent the conversation was handed to stopped for a person's approval in that turn",
    501,
    _S.UNIMPLEMENTED,
    "no longer raised: a handoff target's approval in the handed turn now pauses the "
    "interaction and is resumed by the target (docs/agents.md#handoff); kept so the code "
    "keeps its meaning",
)
HANDOFF_INVALID = ErrorSpec(
    "BEM-236",
    "handoff refused: the target is not registered, is the agent itself, or the "
    "handoff came from inside a child run",
    400,
    _S.FAILED_PRECONDITION,
    "hand off to another registered agent, from the agent that talks to the user",
)
CHILD_RUN_INVALID = ErrorSpec(
    "BEM-237",
    "child run refused: no such child run, or it belongs to another parent",
    409,
    _S.FAILED_PRECONDITION,
)
CHILD_RESUME_INVALID = ErrorSpec(
    "BEM-238",
    "answered actions belong to a called agent this agent can no longer continue",
    409,
    _S.FAILED_PRECONDITION,
    "the agent's tool that called the paused agent is gone (the agent changed since it "
    "paused); start a new interaction (docs/agents.md#approvals-inside-a-called-agent)",
)
MCP_UNAVAILABLE = ErrorSpec(
    "BEM-240",
    "MCP server unavailable",
    503,
    _S.UNAVAILABLE,
    "the server is starting, restarting or down; see the runner log",
)
MCP_PROTOCOL = ErrorSpec(
    "BEM-241", "MCP server answered something that is not valid MCP", 502, _S.INTERNAL
)
MCP_TOOL_ERROR = ErrorSpec("BEM-242", "MCP tool reported an error", 500, _S.INTERNAL)
MCP_TOOL_GONE = ErrorSpec(
    "BEM-243", "MCP server no longer offers this tool", 502, _S.FAILED_PRECONDITION
)
EVAL_SUITE_INVALID = ErrorSpec(
    "BEM-250",
    "eval suite file invalid",
    400,
    _S.INVALID_ARGUMENT,
    "the message names the file, line and field; see docs/agents.md#evals",
)
# ---- durable runs (issue 13): 260-289 ----
AGENT_VERSION_MISMATCH = ErrorSpec(
    "BEM-260",
    "the interaction was started by another version of the agent",
    409,
    _S.FAILED_PRECONDITION,
    "resume on a runner with the interaction's agent version, or set the agent's"
    " version_policy to `major` or `any`; nothing was changed",
)
ACTION_EXPIRED = ErrorSpec(
    "BEM-261",
    "the action expired before it was answered",
    400,
    _S.FAILED_PRECONDITION,
    "ask the agent again in a new message",
)
INVALID_VERSION_POLICY = ErrorSpec(
    "BEM-262", "version policy is refuse, major or any", 400, _S.INVALID_ARGUMENT
)
# The tool-execution ledger (docs/durability.md).
TOOL_EXECUTION_CONFLICT = ErrorSpec(
    "BEM-263",
    "the tool-execution entry cannot take this transition",
    409,
    _S.FAILED_PRECONDITION,
    "a finished entry never changes and an entry never moves back; nothing was written",
)
INVALID_TOOL_EXECUTION = ErrorSpec(
    "BEM-264",
    "invalid tool-execution entry",
    400,
    _S.INVALID_ARGUMENT,
    "an entry names its run's own ids, a known status and a preview of at most 2048 characters",
)
LEDGER_QUERY = ErrorSpec(
    "BEM-265",
    "name exactly one of run_id and interaction_id",
    400,
    _S.INVALID_ARGUMENT,
)
TOO_MANY_TAKEOVERS = ErrorSpec(
    "BEM-267",
    "run failed: it was taken over more often than RIVERBEAM_MAX_TAKEOVERS allows",
    503,
    _S.UNAVAILABLE,
    "the runners holding it kept dying; look at their logs, then invoke again",
)
RECOVERY_FAILED = ErrorSpec(
    "BEM-268",
    "run lost: its checkpoint could not be continued on this runner",
    503,
    _S.UNAVAILABLE,
    "the agent is not served here or the checkpoint is unreadable; invoke again",
)
INVALID_OUTCOME_DECISION = ErrorSpec(
    "BEM-269",
    "an outcome_unknown action is answered with decision retry, skip or done",
    400,
    _S.INVALID_ARGUMENT,
    'send payload {"decision": "retry" | "skip" | "done"} (done may add "result")',
)
RUN_STILL_RECOVERING = ErrorSpec(
    "BEM-270",
    "the runner holding this run stopped and the run is still being continued",
    504,
    _S.DEADLINE_EXCEEDED,
    "another replica continues it: read it with GetRun (run_id) or FollowStream "
    "(request_id); do not invoke again",
)
RESUME_CALL_NOT_RUN = ErrorSpec(
    "BEM-271",
    "approved call not run: an earlier approved call's outcome is unknown",
    409,
    _S.ABORTED,
    "its runner stopped during the earlier call; answer that outcome_unknown action, "
    "then ask for this one again",
)
ACTION_STATE_MOVED = ErrorSpec(
    "BEM-275",
    "the workspace changed since the approval's preview",
    409,
    _S.FAILED_PRECONDITION,
    "nothing was pushed or written; a fresh preview waits for approval",
)
PREVIEW_UNSUPPORTED = ErrorSpec(
    "BEM-276",
    "no preview for this tool, or a malformed expected state",
    400,
    _S.INVALID_ARGUMENT,
    "previews exist for git_push and write_file; leave `expect` to Riverbeam",
)
