"""The one catalog of Riverbeam error codes.

Every error a caller can see carries one of these codes. Codes are stable: a code is never
reused for a different meaning. Ranges:

- 0xx: requests, agents, sessions, routing, auth, resume, models and tools
- 1xx: memory, streams and the store
- 2xx: durable runs (260-289: version pins, expiring approvals)
- 3xx: the sandbox (paths, workspaces, git)
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
