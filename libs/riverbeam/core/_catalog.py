"""The one catalog of Riverbeam error codes.

Every error a caller can see carries one of these codes. Codes are stable: a code is never
reused for a different meaning. Ranges:

- 0xx: requests, agents, sessions, routing, auth, resume, models and tools
- 1xx: memory, streams and the store
- 2xx: the agent layer: structured output, guardrails, tool policies, turn configuration,
  run limits, context compaction (200-229); configuration, MCP, evals (230-259); durable
  runs: version pins, expiring approvals, approval previews (260-289)
- 3xx: the sandbox (paths, workspaces, git)
- 40x-41x: the HTTP gateway and console
- 42x-43x: operations (starting services, ports, usage reports)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import grpc

__all__ = ["ErrorCode", "ErrorSpec", "catalog"]


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    """What a code means and how it travels."""

    code: str
    title: str
    http_status: int
    grpc_status: grpc.StatusCode
    hint: str = ""


_S = grpc.StatusCode


class ErrorCode(enum.Enum):
    """Every BEM code. The value is the ErrorSpec."""

    INTERNAL = ErrorSpec("BEM-001", "internal error", 500, _S.INTERNAL, "see the service log")
    INVALID_ARGUMENT = ErrorSpec("BEM-002", "invalid argument", 400, _S.INVALID_ARGUMENT)
    SERVICE_UNAVAILABLE = ErrorSpec(
        "BEM-003",
        "a service is unavailable",
        503,
        _S.UNAVAILABLE,
        "check that every service is running (riverbeam up)",
    )
    INVALID_UUID = ErrorSpec("BEM-010", "field is not a UUID", 400, _S.INVALID_ARGUMENT)
    MISSING_FIELD = ErrorSpec("BEM-011", "required field missing", 400, _S.INVALID_ARGUMENT)
    CONTENT_TOO_LARGE = ErrorSpec(
        "BEM-012",
        "content too large",
        400,
        _S.INVALID_ARGUMENT,
        "split the turn or send media by reference",
    )
    METADATA_TOO_LARGE = ErrorSpec("BEM-013", "metadata too large", 400, _S.INVALID_ARGUMENT)
    INVALID_ENUM = ErrorSpec(
        "BEM-014", "value not one of the allowed values", 400, _S.INVALID_ARGUMENT
    )
    INVALID_PAGE_TOKEN = ErrorSpec("BEM-015", "invalid page token", 400, _S.INVALID_ARGUMENT)
    INVALID_DOCUMENT = ErrorSpec("BEM-016", "invalid wire document", 400, _S.INVALID_ARGUMENT)
    NUL_IN_TEXT = ErrorSpec(
        "BEM-017",
        "U+0000 in an id, name or key",
        400,
        _S.INVALID_ARGUMENT,
        "U+0000 in free text is stored as U+FFFD; ids and names may not hold it (docs/store.md)",
    )
    MALFORMED_REQUEST = ErrorSpec(
        "BEM-018",
        "request is not a valid protobuf message",
        400,
        _S.INVALID_ARGUMENT,
        "send the message the RPC's proto declares, encoded by a protobuf library",
    )
    REQUEST_TOO_LARGE = ErrorSpec(
        "BEM-019",
        "request message too large",
        400,
        _S.INVALID_ARGUMENT,
        "at most 16 MiB per request; send media by reference",
    )
    STRING_TOO_LONG = ErrorSpec(
        "BEM-022", "string field too long", 400, _S.INVALID_ARGUMENT, "docs/api.md lists the bounds"
    )
    AGENT_NOT_REGISTERED = ErrorSpec(
        "BEM-020", "agent not registered", 404, _S.NOT_FOUND, "list agents with `riverbeam agents`"
    )
    AGENT_ALREADY_REGISTERED = ErrorSpec(
        "BEM-021", "agent already registered", 409, _S.ALREADY_EXISTS
    )
    SESSION_NOT_FOUND = ErrorSpec("BEM-025", "session not found", 404, _S.NOT_FOUND)
    INTERACTION_NOT_FOUND = ErrorSpec("BEM-026", "interaction not found", 404, _S.NOT_FOUND)
    ACTION_NOT_FOUND = ErrorSpec("BEM-027", "action not found", 404, _S.NOT_FOUND)
    RUN_NOT_FOUND = ErrorSpec("BEM-028", "run not found", 404, _S.NOT_FOUND)
    SESSION_BUSY = ErrorSpec(
        "BEM-030",
        "session already has a run in progress",
        409,
        _S.FAILED_PRECONDITION,
        "wait for the running request to finish, or cancel it",
    )
    REQUEST_ID_REUSED = ErrorSpec("BEM-031", "request_id already used", 409, _S.ALREADY_EXISTS)
    REQUEST_NOT_FOUND = ErrorSpec("BEM-032", "no live run for this request", 404, _S.NOT_FOUND)
    RUN_CANCELLED = ErrorSpec("BEM-033", "run cancelled", 499, _S.CANCELLED)
    RUN_LOST = ErrorSpec(
        "BEM-034",
        "run lost: its runner stopped renewing its lease",
        503,
        _S.UNAVAILABLE,
        "invoke again",
    )
    STALE_EPOCH = ErrorSpec(
        "BEM-035",
        "stale lease epoch: the run was taken over by another holder",
        409,
        _S.ABORTED,
        "the run's outcome is whatever its new holder records",
    )
    FINISH_NOT_CONFIRMED = ErrorSpec(
        "BEM-036",
        "the run's finish step could not be written before its retry budget ran out",
        503,
        _S.UNAVAILABLE,
        "the run is ended by the reaper once its lease expires; check the store",
    )
    MODALITY_NOT_SUPPORTED = ErrorSpec(
        "BEM-040", "content modality not supported by the agent", 400, _S.INVALID_ARGUMENT
    )
    MODALITY_NOT_ROUTABLE = ErrorSpec(
        "BEM-041", "non-text content but only text models are configured", 400, _S.INVALID_ARGUMENT
    )
    UNKNOWN_MODEL = ErrorSpec(
        "BEM-042", "unknown model", 400, _S.INVALID_ARGUMENT, "list models with `riverbeam models`"
    )
    NO_MODEL_FOR_CAPABILITIES = ErrorSpec(
        "BEM-043", "no model has the required capabilities", 400, _S.FAILED_PRECONDITION
    )
    MODEL_LIST_SECRET = ErrorSpec(
        "BEM-044",
        "model list contains an API key",
        500,
        _S.FAILED_PRECONDITION,
        "remove api_key and set BEAM_API_KEY in the environment",
    )
    MODEL_LIST_INVALID = ErrorSpec(
        "BEM-045", "model list file invalid", 500, _S.FAILED_PRECONDITION
    )
    UNAUTHENTICATED = ErrorSpec(
        "BEM-050",
        "missing or invalid bearer token",
        401,
        _S.UNAUTHENTICATED,
        "send `authorization: Bearer <token>` metadata",
    )
    PERMISSION_DENIED = ErrorSpec("BEM-051", "permission denied", 403, _S.PERMISSION_DENIED)
    ACT_FOR_USER_DENIED = ErrorSpec(
        "BEM-052", "only a backend may act for another user", 403, _S.PERMISSION_DENIED
    )
    APPROVAL_DENIED = ErrorSpec(
        "BEM-053", "caller may not approve these actions", 403, _S.PERMISSION_DENIED
    )
    TOKENS_FILE_INVALID = ErrorSpec(
        "BEM-054",
        "tokens file invalid or auth mode misconfigured",
        500,
        _S.FAILED_PRECONDITION,
        "check RIVERBEAM_TOKENS_FILE, or set RIVERBEAM_DEV_MODE=true for local use",
    )
    MISSING_INTERACTION_ID = ErrorSpec(
        "BEM-062", "interaction_id is required", 400, _S.INVALID_ARGUMENT
    )
    ACTION_ID_NOT_UUID = ErrorSpec("BEM-063", "action_id is not a UUID", 400, _S.INVALID_ARGUMENT)
    ACTION_WRONG_INTERACTION = ErrorSpec(
        "BEM-064", "action does not belong to this interaction", 400, _S.FAILED_PRECONDITION
    )
    INTERACTION_NOT_RESUMABLE = ErrorSpec(
        "BEM-065", "interaction not found in this session", 404, _S.NOT_FOUND
    )
    ACTION_NOT_PENDING = ErrorSpec(
        "BEM-066",
        "action is not pending",
        400,
        _S.FAILED_PRECONDITION,
        "an action is answered once; ask the agent again in a new message",
    )
    RESUME_WITHOUT_ACTIONS = ErrorSpec(
        "BEM-067", "resume needs at least one action", 400, _S.INVALID_ARGUMENT
    )
    DUPLICATE_ACTION = ErrorSpec(
        "BEM-068", "action answered twice in one resume", 400, _S.INVALID_ARGUMENT
    )
    RESUME_AGENT_MISMATCH = ErrorSpec(
        "BEM-069",
        "resume names another agent than the interaction's",
        400,
        _S.FAILED_PRECONDITION,
        "name the interaction's agent in a resume, or leave agent_name out",
    )
    MODEL_ERROR = ErrorSpec("BEM-080", "model call failed", 502, _S.UNAVAILABLE)
    SCRIPT_EXHAUSTED = ErrorSpec("BEM-081", "scripted client ran out of steps", 500, _S.INTERNAL)
    MODEL_AUTH = ErrorSpec(
        "BEM-082",
        "model endpoint refused the credentials",
        502,
        _S.FAILED_PRECONDITION,
        "check BEAM_API_KEY",
    )
    MODEL_RATE_LIMITED = ErrorSpec(
        "BEM-083", "model endpoint rate limit", 429, _S.RESOURCE_EXHAUSTED
    )
    MODEL_CONTEXT_LENGTH = ErrorSpec(
        "BEM-084", "conversation exceeds the model's context length", 400, _S.OUT_OF_RANGE
    )
    MODEL_UNAVAILABLE = ErrorSpec(
        "BEM-085", "model endpoint unavailable after retries", 503, _S.UNAVAILABLE
    )
    STREAM_WITHOUT_DONE = ErrorSpec(
        "BEM-086", "agent stream ended without a done frame", 500, _S.INTERNAL
    )
    AGENT_ERROR_FRAME = ErrorSpec("BEM-087", "agent reported an error", 500, _S.INTERNAL)
    TOO_MANY_TOOL_ROUNDS = ErrorSpec("BEM-088", "too many tool rounds", 500, _S.ABORTED)
    UNKNOWN_TOOL = ErrorSpec(
        "BEM-089", "model called a tool the agent does not have", 502, _S.INTERNAL
    )
    INVALID_TOOL_ARGS = ErrorSpec(
        "BEM-090", "tool arguments do not match the schema", 400, _S.INVALID_ARGUMENT
    )
    TOOL_TIMEOUT = ErrorSpec("BEM-091", "tool timed out", 504, _S.DEADLINE_EXCEEDED)
    TOOL_FAILED = ErrorSpec("BEM-092", "tool failed", 500, _S.INTERNAL)
    MODEL_BAD_RESPONSE = ErrorSpec(
        "BEM-093", "model returned a malformed response", 502, _S.INTERNAL
    )
    INVALID_TOOL_NAME = ErrorSpec(
        "BEM-094", "tool name must match [A-Za-z0-9_-]{1,64}", 400, _S.INVALID_ARGUMENT
    )
    ALL_MODELS_FAILED = ErrorSpec(
        "BEM-095", "every client in the fallback chain failed", 503, _S.UNAVAILABLE
    )
    INVALID_MEMORY_SCOPE = ErrorSpec("BEM-100", "invalid memory scope", 400, _S.INVALID_ARGUMENT)
    MEMORY_NOT_CONFIGURED = ErrorSpec(
        "BEM-109", "remember needs a memory store, and this runner has none", 501, _S.UNIMPLEMENTED
    )
    STREAM_PUBLISH_FAILED = ErrorSpec("BEM-110", "frame publish failed", 503, _S.UNAVAILABLE)
    STREAM_NOT_FOUND = ErrorSpec("BEM-111", "no frames for this request", 404, _S.NOT_FOUND)
    STREAM_GAP = ErrorSpec("BEM-112", "frame sequence has a gap", 500, _S.DATA_LOSS)
    STREAM_TIMEOUT = ErrorSpec("BEM-113", "no frame arrived in time", 504, _S.DEADLINE_EXCEEDED)
    STREAM_UNAVAILABLE = ErrorSpec(
        "BEM-114", "NATS unavailable", 503, _S.UNAVAILABLE, "check RIVERBEAM_NATS_URL"
    )
    STREAM_FENCED = ErrorSpec(
        "BEM-115",
        "frame refused: another writer already published on this request",
        409,
        _S.ABORTED,
    )
    STORE_UNAVAILABLE = ErrorSpec("BEM-120", "store unavailable", 503, _S.UNAVAILABLE)
    STORE_CONFLICT = ErrorSpec("BEM-121", "store write conflict", 409, _S.ABORTED)
    STORE_MIGRATION = ErrorSpec("BEM-122", "store migration failed", 500, _S.FAILED_PRECONDITION)
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
    PATH_ABSOLUTE = ErrorSpec("BEM-300", "absolute path rejected", 400, _S.INVALID_ARGUMENT)
    PATH_PARENT = ErrorSpec("BEM-301", "`..` path component rejected", 400, _S.INVALID_ARGUMENT)
    PATH_BAD_CHARACTER = ErrorSpec(
        "BEM-302",
        "path has a forbidden character (NUL, control, backslash, invisible)",
        400,
        _S.INVALID_ARGUMENT,
    )
    PATH_EMPTY = ErrorSpec("BEM-303", "empty path or path component", 400, _S.INVALID_ARGUMENT)
    PATH_TOO_LONG = ErrorSpec("BEM-304", "path or component too long", 400, _S.INVALID_ARGUMENT)
    PATH_ESCAPES_ROOT = ErrorSpec(
        "BEM-305", "path resolves outside the sandbox root (symlink)", 403, _S.PERMISSION_DENIED
    )
    PATH_GIT_DIR = ErrorSpec(
        "BEM-306", "the .git directory is off limits", 403, _S.PERMISSION_DENIED
    )
    PATH_HARD_LINK = ErrorSpec(
        "BEM-307", "file has more than one hard link", 403, _S.PERMISSION_DENIED
    )
    PATH_NOT_FOUND = ErrorSpec("BEM-308", "no such file or directory", 404, _S.NOT_FOUND)
    PATH_WRONG_KIND = ErrorSpec(
        "BEM-309", "not a regular file or directory as expected", 400, _S.INVALID_ARGUMENT
    )
    WORKSPACE_NOT_FOUND = ErrorSpec("BEM-310", "workspace not found", 404, _S.NOT_FOUND)
    WORKSPACE_EXISTS = ErrorSpec("BEM-311", "workspace already exists", 409, _S.ALREADY_EXISTS)
    WORKSPACE_BAD_NAME = ErrorSpec(
        "BEM-312", "workspace name must match [a-z0-9][a-z0-9_-]{0,62}", 400, _S.INVALID_ARGUMENT
    )
    WORKSPACE_NOT_ALLOWED = ErrorSpec(
        "BEM-313", "request may not choose this workspace", 403, _S.PERMISSION_DENIED
    )
    FILE_TOO_LARGE = ErrorSpec("BEM-314", "file too large", 400, _S.INVALID_ARGUMENT)
    WORKSPACE_MISMATCH = ErrorSpec(
        "BEM-315",
        "the call names another workspace than the run's",
        409,
        _S.FAILED_PRECONDITION,
        "approve a push from the session that asked for it",
    )
    ORIGIN_PATH_COLLISION = ErrorSpec(
        "BEM-316",
        "origin tree has paths that collide by case or Unicode normalisation",
        422,
        _S.FAILED_PRECONDITION,
    )
    ORIGIN_UNSAFE_ENTRY = ErrorSpec(
        "BEM-317",
        "origin tree has an entry the sandbox refuses (submodule or non-file entry)",
        422,
        _S.FAILED_PRECONDITION,
    )
    ORIGIN_BLOB_TOO_LARGE = ErrorSpec(
        "BEM-318", "origin has a file or pack larger than the limit", 422, _S.FAILED_PRECONDITION
    )
    ORIGIN_FETCH_FAILED = ErrorSpec(
        "BEM-319", "cannot fetch the workspace's origin", 502, _S.UNAVAILABLE
    )
    GIT_FAILED = ErrorSpec("BEM-320", "git operation failed", 500, _S.INTERNAL)
    NOTHING_TO_COMMIT = ErrorSpec("BEM-321", "nothing to commit", 400, _S.FAILED_PRECONDITION)
    COMMIT_ON_PROTECTED = ErrorSpec(
        "BEM-322",
        "commits on a protected branch are refused",
        403,
        _S.PERMISSION_DENIED,
        "check out a branch of your own first",
    )
    CHECKOUT_PROTECTED = ErrorSpec(
        "BEM-323", "protected ref cannot be checked out", 403, _S.PERMISSION_DENIED
    )
    NO_ORIGIN = ErrorSpec(
        "BEM-324", "workspace has no origin configured", 400, _S.FAILED_PRECONDITION
    )
    INVALID_REF = ErrorSpec("BEM-325", "invalid branch or ref name", 400, _S.INVALID_ARGUMENT)
    NO_BRANCH = ErrorSpec("BEM-326", "HEAD is detached or unborn", 400, _S.FAILED_PRECONDITION)
    DIRTY_WORKTREE = ErrorSpec(
        "BEM-327",
        "working tree has uncommitted changes",
        409,
        _S.FAILED_PRECONDITION,
        "commit the changes first",
    )
    PUSH_PROTECTED = ErrorSpec(
        "BEM-328", "push of a protected ref refused", 403, _S.PERMISSION_DENIED
    )
    INVALID_ORIGIN = ErrorSpec("BEM-329", "origin URL not allowed", 400, _S.INVALID_ARGUMENT)
    PUSH_REJECTED = ErrorSpec("BEM-330", "push rejected by the remote", 409, _S.ABORTED)
    WORKSPACE_POLICY_REFUSED = ErrorSpec(
        "BEM-331",
        "the workspace policy cannot place this run",
        400,
        _S.FAILED_PRECONDITION,
        "a shared workspace needs the deployment to opt in",
    )
    FENCE_STALE = ErrorSpec(
        "BEM-340",
        "sandbox call refused: its run's lease epoch is stale",
        409,
        _S.ABORTED,
        "the run was taken over; its new holder acts for it",
    )
    FENCE_INVALID = ErrorSpec(
        "BEM-341", "invalid fence (run_id and an epoch >= 1)", 400, _S.INVALID_ARGUMENT
    )
    LISTEN_FAILED = ErrorSpec(
        "BEM-420",
        "cannot listen on the gRPC address",
        503,
        _S.UNAVAILABLE,
        "another process holds the port: stop it, or choose another (--base-port, RIVERBEAM_LISTEN)",
    )
    METRICS_LISTEN_FAILED = ErrorSpec(
        "BEM-421",
        "cannot listen on the metrics port",
        503,
        _S.UNAVAILABLE,
        "another process holds the port: choose another RIVERBEAM_METRICS_PORT "
        "(under `riverbeam up`, --metrics-port is a base: one port per service)",
    )
    PORT_IN_USE = ErrorSpec(
        "BEM-422",
        "a port `riverbeam up` needs is in use",
        409,
        _S.FAILED_PRECONDITION,
        "is another `riverbeam up` running? choose other ports with --base-port / --metrics-port",
    )
    USAGE_RANGE_INVALID = ErrorSpec(
        "BEM-425",
        "invalid usage report range or grouping",
        400,
        _S.INVALID_ARGUMENT,
        "give start before end, and group by run, session, user or org",
    )
    HTTP_NOT_FOUND = ErrorSpec(
        "BEM-400", "no such HTTP endpoint", 404, _S.NOT_FOUND, "see /docs for the HTTP API"
    )
    HTTP_BODY_TOO_LARGE = ErrorSpec(
        "BEM-401",
        "request body too large",
        413,
        _S.INVALID_ARGUMENT,
        "the console's limit is RIVERBEAM_MAX_REQUEST_BYTES",
    )
    HTTP_BAD_CURSOR = ErrorSpec(
        "BEM-402",
        "invalid Last-Event-ID or after_seq",
        400,
        _S.INVALID_ARGUMENT,
        "send the id of the last frame received (a non-negative integer)",
    )
    HTTP_INVALID_JSON = ErrorSpec(
        "BEM-403", "request body is not valid JSON", 400, _S.INVALID_ARGUMENT
    )
    HTTP_METHOD_NOT_ALLOWED = ErrorSpec(
        "BEM-404", "HTTP method not allowed here", 405, _S.INVALID_ARGUMENT, "see /docs"
    )
    HTTP_UNSUPPORTED_MEDIA_TYPE = ErrorSpec(
        "BEM-405",
        "request body must be application/json",
        415,
        _S.INVALID_ARGUMENT,
        "send Content-Type: application/json",
    )
    HTTP_BAD_AUTHORIZATION = ErrorSpec(
        "BEM-406",
        "malformed Authorization header",
        401,
        _S.UNAUTHENTICATED,
        "send Authorization: Bearer <token>",
    )
    CHAT_NO_USER_MESSAGE = ErrorSpec(
        "BEM-407",
        "chat request has no user message with text",
        400,
        _S.INVALID_ARGUMENT,
        "the last message must have role user and a text part",
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

    @property
    def code(self) -> str:
        return self.value.code

    @property
    def spec(self) -> ErrorSpec:
        return self.value


_BY_CODE: dict[str, ErrorCode] = {member.value.code: member for member in ErrorCode}
if len(_BY_CODE) != len(ErrorCode):  # pragma: no cover - guarded by a unit test too
    raise RuntimeError("duplicate BEM code in the catalog")


def catalog() -> list[ErrorSpec]:
    """Every code, in code order."""
    return sorted((m.value for m in ErrorCode), key=lambda s: s.code)


def by_code(code: str) -> ErrorCode | None:
    """The catalog entry for a "BEM-NNN" string, or None."""
    return _BY_CODE.get(code)
