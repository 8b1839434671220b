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

from riverbeam.core import _codes_agent_layer as _agent_layer
from riverbeam.core import _codes_gateway as _gateway
from riverbeam.core import _codes_requests as _requests
from riverbeam.core import _codes_sandbox as _sandbox
from riverbeam.core import _codes_store as _store
from riverbeam.core._error_spec import ErrorSpec

__all__ = ["ErrorCode", "ErrorSpec", "by_code", "catalog"]


class ErrorCode(enum.Enum):
    """Every BEM code. The value is the ErrorSpec, defined in the module of its range."""

    INTERNAL = _requests.INTERNAL
    INVALID_ARGUMENT = _requests.INVALID_ARGUMENT
    SERVICE_UNAVAILABLE = _requests.SERVICE_UNAVAILABLE
    INVALID_UUID = _requests.INVALID_UUID
    MISSING_FIELD = _requests.MISSING_FIELD
    CONTENT_TOO_LARGE = _requests.CONTENT_TOO_LARGE
    METADATA_TOO_LARGE = _requests.METADATA_TOO_LARGE
    INVALID_ENUM = _requests.INVALID_ENUM
    INVALID_PAGE_TOKEN = _requests.INVALID_PAGE_TOKEN
    INVALID_DOCUMENT = _requests.INVALID_DOCUMENT
    NUL_IN_TEXT = _requests.NUL_IN_TEXT
    MALFORMED_REQUEST = _requests.MALFORMED_REQUEST
    REQUEST_TOO_LARGE = _requests.REQUEST_TOO_LARGE
    STRING_TOO_LONG = _requests.STRING_TOO_LONG
    AGENT_NOT_REGISTERED = _requests.AGENT_NOT_REGISTERED
    AGENT_ALREADY_REGISTERED = _requests.AGENT_ALREADY_REGISTERED
    SESSION_NOT_FOUND = _requests.SESSION_NOT_FOUND
    INTERACTION_NOT_FOUND = _requests.INTERACTION_NOT_FOUND
    ACTION_NOT_FOUND = _requests.ACTION_NOT_FOUND
    RUN_NOT_FOUND = _requests.RUN_NOT_FOUND
    SESSION_BUSY = _requests.SESSION_BUSY
    REQUEST_ID_REUSED = _requests.REQUEST_ID_REUSED
    REQUEST_NOT_FOUND = _requests.REQUEST_NOT_FOUND
    RUN_CANCELLED = _requests.RUN_CANCELLED
    RUN_LOST = _requests.RUN_LOST
    STALE_EPOCH = _requests.STALE_EPOCH
    FINISH_NOT_CONFIRMED = _requests.FINISH_NOT_CONFIRMED
    MODALITY_NOT_SUPPORTED = _requests.MODALITY_NOT_SUPPORTED
    MODALITY_NOT_ROUTABLE = _requests.MODALITY_NOT_ROUTABLE
    UNKNOWN_MODEL = _requests.UNKNOWN_MODEL
    NO_MODEL_FOR_CAPABILITIES = _requests.NO_MODEL_FOR_CAPABILITIES
    MODEL_LIST_SECRET = _requests.MODEL_LIST_SECRET
    MODEL_LIST_INVALID = _requests.MODEL_LIST_INVALID
    UNAUTHENTICATED = _requests.UNAUTHENTICATED
    PERMISSION_DENIED = _requests.PERMISSION_DENIED
    ACT_FOR_USER_DENIED = _requests.ACT_FOR_USER_DENIED
    APPROVAL_DENIED = _requests.APPROVAL_DENIED
    TOKENS_FILE_INVALID = _requests.TOKENS_FILE_INVALID
    MISSING_INTERACTION_ID = _requests.MISSING_INTERACTION_ID
    ACTION_ID_NOT_UUID = _requests.ACTION_ID_NOT_UUID
    ACTION_WRONG_INTERACTION = _requests.ACTION_WRONG_INTERACTION
    INTERACTION_NOT_RESUMABLE = _requests.INTERACTION_NOT_RESUMABLE
    ACTION_NOT_PENDING = _requests.ACTION_NOT_PENDING
    RESUME_WITHOUT_ACTIONS = _requests.RESUME_WITHOUT_ACTIONS
    DUPLICATE_ACTION = _requests.DUPLICATE_ACTION
    RESUME_AGENT_MISMATCH = _requests.RESUME_AGENT_MISMATCH
    MODEL_ERROR = _requests.MODEL_ERROR
    SCRIPT_EXHAUSTED = _requests.SCRIPT_EXHAUSTED
    MODEL_AUTH = _requests.MODEL_AUTH
    MODEL_RATE_LIMITED = _requests.MODEL_RATE_LIMITED
    MODEL_CONTEXT_LENGTH = _requests.MODEL_CONTEXT_LENGTH
    MODEL_UNAVAILABLE = _requests.MODEL_UNAVAILABLE
    STREAM_WITHOUT_DONE = _requests.STREAM_WITHOUT_DONE
    AGENT_ERROR_FRAME = _requests.AGENT_ERROR_FRAME
    TOO_MANY_TOOL_ROUNDS = _requests.TOO_MANY_TOOL_ROUNDS
    UNKNOWN_TOOL = _requests.UNKNOWN_TOOL
    INVALID_TOOL_ARGS = _requests.INVALID_TOOL_ARGS
    TOOL_TIMEOUT = _requests.TOOL_TIMEOUT
    TOOL_FAILED = _requests.TOOL_FAILED
    MODEL_BAD_RESPONSE = _requests.MODEL_BAD_RESPONSE
    INVALID_TOOL_NAME = _requests.INVALID_TOOL_NAME
    ALL_MODELS_FAILED = _requests.ALL_MODELS_FAILED
    INVALID_MEMORY_SCOPE = _store.INVALID_MEMORY_SCOPE
    MEMORY_NOT_CONFIGURED = _store.MEMORY_NOT_CONFIGURED
    STREAM_PUBLISH_FAILED = _store.STREAM_PUBLISH_FAILED
    STREAM_NOT_FOUND = _store.STREAM_NOT_FOUND
    STREAM_GAP = _store.STREAM_GAP
    STREAM_TIMEOUT = _store.STREAM_TIMEOUT
    STREAM_UNAVAILABLE = _store.STREAM_UNAVAILABLE
    STREAM_FENCED = _store.STREAM_FENCED
    STORE_UNAVAILABLE = _store.STORE_UNAVAILABLE
    STORE_CONFLICT = _store.STORE_CONFLICT
    STORE_MIGRATION = _store.STORE_MIGRATION
    OUTPUT_INVALID = _agent_layer.OUTPUT_INVALID
    RESPONSE_SCHEMA_INVALID = _agent_layer.RESPONSE_SCHEMA_INVALID
    INPUT_GUARDRAIL_TRIPPED = _agent_layer.INPUT_GUARDRAIL_TRIPPED
    OUTPUT_GUARDRAIL_TRIPPED = _agent_layer.OUTPUT_GUARDRAIL_TRIPPED
    TOOL_RESULT_GUARDRAIL_TRIPPED = _agent_layer.TOOL_RESULT_GUARDRAIL_TRIPPED
    GUARDRAIL_FAILED = _agent_layer.GUARDRAIL_FAILED
    GUARDRAIL_CONFIG_INVALID = _agent_layer.GUARDRAIL_CONFIG_INVALID
    TOOL_CALL_DENIED = _agent_layer.TOOL_CALL_DENIED
    TOOL_POLICY_INVALID = _agent_layer.TOOL_POLICY_INVALID
    RUN_TIME_LIMIT = _agent_layer.RUN_TIME_LIMIT
    TOKEN_BUDGET_EXCEEDED = _agent_layer.TOKEN_BUDGET_EXCEEDED
    RUN_LIMIT_INVALID = _agent_layer.RUN_LIMIT_INVALID
    TURN_CONFIG_INVALID = _agent_layer.TURN_CONFIG_INVALID
    SESSION_CONFIG_DENIED = _agent_layer.SESSION_CONFIG_DENIED
    CONTEXT_OVER_BUDGET = _agent_layer.CONTEXT_OVER_BUDGET
    CONFIG_INVALID = _agent_layer.CONFIG_INVALID
    CONFIG_UNKNOWN_NAME = _agent_layer.CONFIG_UNKNOWN_NAME
    CONFIG_ENTRY_POINT = _agent_layer.CONFIG_ENTRY_POINT
    CONFIG_NOT_SUPPORTED = _agent_layer.CONFIG_NOT_SUPPORTED
    AGENT_TOOL_UNSUPPORTED = _agent_layer.AGENT_TOOL_UNSUPPORTED
    CHILD_APPROVAL_UNSUPPORTED = _agent_layer.CHILD_APPROVAL_UNSUPPORTED
    HANDOFF_INVALID = _agent_layer.HANDOFF_INVALID
    CHILD_RUN_INVALID = _agent_layer.CHILD_RUN_INVALID
    CHILD_RESUME_INVALID = _agent_layer.CHILD_RESUME_INVALID
    MCP_UNAVAILABLE = _agent_layer.MCP_UNAVAILABLE
    MCP_PROTOCOL = _agent_layer.MCP_PROTOCOL
    MCP_TOOL_ERROR = _agent_layer.MCP_TOOL_ERROR
    MCP_TOOL_GONE = _agent_layer.MCP_TOOL_GONE
    EVAL_SUITE_INVALID = _agent_layer.EVAL_SUITE_INVALID
    PATH_ABSOLUTE = _sandbox.PATH_ABSOLUTE
    PATH_PARENT = _sandbox.PATH_PARENT
    PATH_BAD_CHARACTER = _sandbox.PATH_BAD_CHARACTER
    PATH_EMPTY = _sandbox.PATH_EMPTY
    PATH_TOO_LONG = _sandbox.PATH_TOO_LONG
    PATH_ESCAPES_ROOT = _sandbox.PATH_ESCAPES_ROOT
    PATH_GIT_DIR = _sandbox.PATH_GIT_DIR
    PATH_HARD_LINK = _sandbox.PATH_HARD_LINK
    PATH_NOT_FOUND = _sandbox.PATH_NOT_FOUND
    PATH_WRONG_KIND = _sandbox.PATH_WRONG_KIND
    WORKSPACE_NOT_FOUND = _sandbox.WORKSPACE_NOT_FOUND
    WORKSPACE_EXISTS = _sandbox.WORKSPACE_EXISTS
    WORKSPACE_BAD_NAME = _sandbox.WORKSPACE_BAD_NAME
    WORKSPACE_NOT_ALLOWED = _sandbox.WORKSPACE_NOT_ALLOWED
    FILE_TOO_LARGE = _sandbox.FILE_TOO_LARGE
    WORKSPACE_MISMATCH = _sandbox.WORKSPACE_MISMATCH
    ORIGIN_PATH_COLLISION = _sandbox.ORIGIN_PATH_COLLISION
    ORIGIN_UNSAFE_ENTRY = _sandbox.ORIGIN_UNSAFE_ENTRY
    ORIGIN_BLOB_TOO_LARGE = _sandbox.ORIGIN_BLOB_TOO_LARGE
    ORIGIN_FETCH_FAILED = _sandbox.ORIGIN_FETCH_FAILED
    GIT_FAILED = _sandbox.GIT_FAILED
    NOTHING_TO_COMMIT = _sandbox.NOTHING_TO_COMMIT
    COMMIT_ON_PROTECTED = _sandbox.COMMIT_ON_PROTECTED
    CHECKOUT_PROTECTED = _sandbox.CHECKOUT_PROTECTED
    NO_ORIGIN = _sandbox.NO_ORIGIN
    INVALID_REF = _sandbox.INVALID_REF
    NO_BRANCH = _sandbox.NO_BRANCH
    DIRTY_WORKTREE = _sandbox.DIRTY_WORKTREE
    PUSH_PROTECTED = _sandbox.PUSH_PROTECTED
    INVALID_ORIGIN = _sandbox.INVALID_ORIGIN
    PUSH_REJECTED = _sandbox.PUSH_REJECTED
    WORKSPACE_POLICY_REFUSED = _sandbox.WORKSPACE_POLICY_REFUSED
    FENCE_STALE = _sandbox.FENCE_STALE
    FENCE_INVALID = _sandbox.FENCE_INVALID
    LISTEN_FAILED = _gateway.LISTEN_FAILED
    METRICS_LISTEN_FAILED = _gateway.METRICS_LISTEN_FAILED
    PORT_IN_USE = _gateway.PORT_IN_USE
    USAGE_RANGE_INVALID = _gateway.USAGE_RANGE_INVALID
    RUNNER_STOPPING = _gateway.RUNNER_STOPPING
    HTTP_NOT_FOUND = _gateway.HTTP_NOT_FOUND
    HTTP_BODY_TOO_LARGE = _gateway.HTTP_BODY_TOO_LARGE
    HTTP_BAD_CURSOR = _gateway.HTTP_BAD_CURSOR
    HTTP_INVALID_JSON = _gateway.HTTP_INVALID_JSON
    HTTP_METHOD_NOT_ALLOWED = _gateway.HTTP_METHOD_NOT_ALLOWED
    HTTP_UNSUPPORTED_MEDIA_TYPE = _gateway.HTTP_UNSUPPORTED_MEDIA_TYPE
    HTTP_BAD_AUTHORIZATION = _gateway.HTTP_BAD_AUTHORIZATION
    CHAT_NO_USER_MESSAGE = _gateway.CHAT_NO_USER_MESSAGE
    AGENT_VERSION_MISMATCH = _agent_layer.AGENT_VERSION_MISMATCH
    ACTION_EXPIRED = _agent_layer.ACTION_EXPIRED
    INVALID_VERSION_POLICY = _agent_layer.INVALID_VERSION_POLICY
    TOOL_EXECUTION_CONFLICT = _agent_layer.TOOL_EXECUTION_CONFLICT
    INVALID_TOOL_EXECUTION = _agent_layer.INVALID_TOOL_EXECUTION
    LEDGER_QUERY = _agent_layer.LEDGER_QUERY
    TOO_MANY_TAKEOVERS = _agent_layer.TOO_MANY_TAKEOVERS
    RECOVERY_FAILED = _agent_layer.RECOVERY_FAILED
    INVALID_OUTCOME_DECISION = _agent_layer.INVALID_OUTCOME_DECISION
    RUN_STILL_RECOVERING = _agent_layer.RUN_STILL_RECOVERING
    RESUME_CALL_NOT_RUN = _agent_layer.RESUME_CALL_NOT_RUN
    ACTION_STATE_MOVED = _agent_layer.ACTION_STATE_MOVED
    PREVIEW_UNSUPPORTED = _agent_layer.PREVIEW_UNSUPPORTED

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
