"""Catalog entries: Requests, agents, sessions, routing, auth, resume, models and tools (0xx).

Each is an ErrorSpec; riverbeam.core._catalog.ErrorCode names them all.
"""

from __future__ import annotations

import grpc

from riverbeam.core._error_spec import ErrorSpec

_S = grpc.StatusCode

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
INVALID_ENUM = ErrorSpec("BEM-014", "value not one of the allowed values", 400, _S.INVALID_ARGUMENT)
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
AGENT_ALREADY_REGISTERED = ErrorSpec("BEM-021", "agent already registered", 409, _S.ALREADY_EXISTS)
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
MODEL_LIST_INVALID = ErrorSpec("BEM-045", "model list file invalid", 500, _S.FAILED_PRECONDITION)
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
MODEL_RATE_LIMITED = ErrorSpec("BEM-083", "model endpoint rate limit", 429, _S.RESOURCE_EXHAUSTED)
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
UNKNOWN_TOOL = ErrorSpec("BEM-089", "model called a tool the agent does not have", 502, _S.INTERNAL)
INVALID_TOOL_ARGS = ErrorSpec(
    "BEM-090", "tool arguments do not match the schema", 400, _S.INVALID_ARGUMENT
)
TOOL_TIMEOUT = ErrorSpec("BEM-091", "tool timed out", 504, _S.DEADLINE_EXCEEDED)
TOOL_FAILED = ErrorSpec("BEM-092", "tool failed", 500, _S.INTERNAL)
MODEL_BAD_RESPONSE = ErrorSpec("BEM-093", "model returned a malformed response", 502, _S.INTERNAL)
INVALID_TOOL_NAME = ErrorSpec(
    "BEM-094", "tool name must match [A-Za-z0-9_-]{1,64}", 400, _S.INVALID_ARGUMENT
)
ALL_MODELS_FAILED = ErrorSpec(
    "BEM-095", "every client in the fallback chain failed", 503, _S.UNAVAILABLE
)
