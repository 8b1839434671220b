import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class InvokeAuthContext(_message.Message):
    __slots__ = ("user_id", "profile_id", "org_id", "mcp_token")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_ID_FIELD_NUMBER: _ClassVar[int]
    ORG_ID_FIELD_NUMBER: _ClassVar[int]
    MCP_TOKEN_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    profile_id: str
    org_id: str
    mcp_token: str
    def __init__(self, user_id: _Optional[str] = ..., profile_id: _Optional[str] = ..., org_id: _Optional[str] = ..., mcp_token: _Optional[str] = ...) -> None: ...

class ContentPart(_message.Message):
    __slots__ = ("type", "text", "url", "data", "mime_type", "media_id", "metadata")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    MEDIA_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    type: str
    text: str
    url: str
    data: str
    mime_type: str
    media_id: str
    metadata: _struct_pb2.Struct
    def __init__(self, type: _Optional[str] = ..., text: _Optional[str] = ..., url: _Optional[str] = ..., data: _Optional[str] = ..., mime_type: _Optional[str] = ..., media_id: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ActionResponseEnvelope(_message.Message):
    __slots__ = ("action_id", "kind", "request_id", "status", "payload", "errors", "responder_id", "responded_at", "lc_action_id")
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    RESPONDER_ID_FIELD_NUMBER: _ClassVar[int]
    RESPONDED_AT_FIELD_NUMBER: _ClassVar[int]
    LC_ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    kind: str
    request_id: str
    status: str
    payload: _struct_pb2.Struct
    errors: _containers.RepeatedScalarFieldContainer[str]
    responder_id: str
    responded_at: _timestamp_pb2.Timestamp
    lc_action_id: str
    def __init__(self, action_id: _Optional[str] = ..., kind: _Optional[str] = ..., request_id: _Optional[str] = ..., status: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., errors: _Optional[_Iterable[str]] = ..., responder_id: _Optional[str] = ..., responded_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., lc_action_id: _Optional[str] = ...) -> None: ...

class InvokeRequest(_message.Message):
    __slots__ = ("agent_name", "content", "session_id", "model_override", "metadata", "interaction_id", "request_id", "stream", "actions", "auth_context", "response_schema", "time_limit_s", "token_budget", "turn_config", "session_config")
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_OVERRIDE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    AUTH_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_S_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    TURN_CONFIG_FIELD_NUMBER: _ClassVar[int]
    SESSION_CONFIG_FIELD_NUMBER: _ClassVar[int]
    agent_name: str
    content: _containers.RepeatedCompositeFieldContainer[ContentPart]
    session_id: str
    model_override: str
    metadata: _struct_pb2.Struct
    interaction_id: str
    request_id: str
    stream: bool
    actions: _containers.RepeatedCompositeFieldContainer[ActionResponseEnvelope]
    auth_context: InvokeAuthContext
    response_schema: _struct_pb2.Struct
    time_limit_s: float
    token_budget: int
    turn_config: TurnConfig
    session_config: TurnConfig
    def __init__(self, agent_name: _Optional[str] = ..., content: _Optional[_Iterable[_Union[ContentPart, _Mapping]]] = ..., session_id: _Optional[str] = ..., model_override: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., interaction_id: _Optional[str] = ..., request_id: _Optional[str] = ..., stream: _Optional[bool] = ..., actions: _Optional[_Iterable[_Union[ActionResponseEnvelope, _Mapping]]] = ..., auth_context: _Optional[_Union[InvokeAuthContext, _Mapping]] = ..., response_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., time_limit_s: _Optional[float] = ..., token_budget: _Optional[int] = ..., turn_config: _Optional[_Union[TurnConfig, _Mapping]] = ..., session_config: _Optional[_Union[TurnConfig, _Mapping]] = ...) -> None: ...

class TurnConfig(_message.Message):
    __slots__ = ("include_tools", "exclude_tools", "prepend_instructions", "append_instructions")
    INCLUDE_TOOLS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_TOOLS_FIELD_NUMBER: _ClassVar[int]
    PREPEND_INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    APPEND_INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    include_tools: _containers.RepeatedScalarFieldContainer[str]
    exclude_tools: _containers.RepeatedScalarFieldContainer[str]
    prepend_instructions: str
    append_instructions: str
    def __init__(self, include_tools: _Optional[_Iterable[str]] = ..., exclude_tools: _Optional[_Iterable[str]] = ..., prepend_instructions: _Optional[str] = ..., append_instructions: _Optional[str] = ...) -> None: ...

class RunOptions(_message.Message):
    __slots__ = ("response_schema", "time_limit_s", "token_budget", "turn_config")
    RESPONSE_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_S_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    TURN_CONFIG_FIELD_NUMBER: _ClassVar[int]
    response_schema: _struct_pb2.Struct
    time_limit_s: float
    token_budget: int
    turn_config: TurnConfig
    def __init__(self, response_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., time_limit_s: _Optional[float] = ..., token_budget: _Optional[int] = ..., turn_config: _Optional[_Union[TurnConfig, _Mapping]] = ...) -> None: ...

class TokenUsage(_message.Message):
    __slots__ = ("prompt_tokens", "completion_tokens", "total_tokens")
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    def __init__(self, prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ..., total_tokens: _Optional[int] = ...) -> None: ...

class ToolCallRecord(_message.Message):
    __slots__ = ("tool_name", "args", "tool_call_id", "result", "latency_ms", "decisions")
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    tool_name: str
    args: _struct_pb2.Struct
    tool_call_id: str
    result: _struct_pb2.Value
    latency_ms: float
    decisions: _containers.RepeatedCompositeFieldContainer[ToolDecision]
    def __init__(self, tool_name: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tool_call_id: _Optional[str] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., latency_ms: _Optional[float] = ..., decisions: _Optional[_Iterable[_Union[ToolDecision, _Mapping]]] = ...) -> None: ...

class ToolDecision(_message.Message):
    __slots__ = ("policy", "action", "message")
    POLICY_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    policy: str
    action: str
    message: str
    def __init__(self, policy: _Optional[str] = ..., action: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class ActionRequired(_message.Message):
    __slots__ = ("action_id", "kind", "tool", "args", "tool_call_id", "preview", "child")
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    CHILD_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    kind: str
    tool: str
    args: _struct_pb2.Struct
    tool_call_id: str
    preview: ActionPreview
    child: _struct_pb2.Struct
    def __init__(self, action_id: _Optional[str] = ..., kind: _Optional[str] = ..., tool: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tool_call_id: _Optional[str] = ..., preview: _Optional[_Union[ActionPreview, _Mapping]] = ..., child: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class PreviewCommit(_message.Message):
    __slots__ = ("id", "summary", "author")
    ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    id: str
    summary: str
    author: str
    def __init__(self, id: _Optional[str] = ..., summary: _Optional[str] = ..., author: _Optional[str] = ...) -> None: ...

class PreviewState(_message.Message):
    __slots__ = ("branch", "head", "origin", "path", "blob")
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    HEAD_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    BLOB_FIELD_NUMBER: _ClassVar[int]
    branch: str
    head: str
    origin: str
    path: str
    blob: str
    def __init__(self, branch: _Optional[str] = ..., head: _Optional[str] = ..., origin: _Optional[str] = ..., path: _Optional[str] = ..., blob: _Optional[str] = ...) -> None: ...

class ActionPreview(_message.Message):
    __slots__ = ("tool", "summary", "commits", "diff", "truncated", "diff_bytes", "state", "commits_truncated")
    TOOL_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    COMMITS_FIELD_NUMBER: _ClassVar[int]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    DIFF_BYTES_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    COMMITS_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    tool: str
    summary: str
    commits: _containers.RepeatedCompositeFieldContainer[PreviewCommit]
    diff: str
    truncated: bool
    diff_bytes: int
    state: PreviewState
    commits_truncated: bool
    def __init__(self, tool: _Optional[str] = ..., summary: _Optional[str] = ..., commits: _Optional[_Iterable[_Union[PreviewCommit, _Mapping]]] = ..., diff: _Optional[str] = ..., truncated: _Optional[bool] = ..., diff_bytes: _Optional[int] = ..., state: _Optional[_Union[PreviewState, _Mapping]] = ..., commits_truncated: _Optional[bool] = ...) -> None: ...

class AgentResult(_message.Message):
    __slots__ = ("content", "agent_name", "model_used", "session_id", "request_id", "interaction_id", "token_usage", "tool_calls", "metadata", "latency_ms", "interrupted", "action_required", "run_id", "output", "handoff_to")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    MODEL_USED_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_USAGE_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    INTERRUPTED_FIELD_NUMBER: _ClassVar[int]
    ACTION_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    HANDOFF_TO_FIELD_NUMBER: _ClassVar[int]
    content: _containers.RepeatedCompositeFieldContainer[ContentPart]
    agent_name: str
    model_used: str
    session_id: str
    request_id: str
    interaction_id: str
    token_usage: TokenUsage
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCallRecord]
    metadata: _struct_pb2.Struct
    latency_ms: float
    interrupted: bool
    action_required: _containers.RepeatedCompositeFieldContainer[ActionRequired]
    run_id: str
    output: _struct_pb2.Value
    handoff_to: str
    def __init__(self, content: _Optional[_Iterable[_Union[ContentPart, _Mapping]]] = ..., agent_name: _Optional[str] = ..., model_used: _Optional[str] = ..., session_id: _Optional[str] = ..., request_id: _Optional[str] = ..., interaction_id: _Optional[str] = ..., token_usage: _Optional[_Union[TokenUsage, _Mapping]] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCallRecord, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., latency_ms: _Optional[float] = ..., interrupted: _Optional[bool] = ..., action_required: _Optional[_Iterable[_Union[ActionRequired, _Mapping]]] = ..., run_id: _Optional[str] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., handoff_to: _Optional[str] = ...) -> None: ...

class AgentMessage(_message.Message):
    __slots__ = ("role", "type", "content", "id", "timestamp", "agent_name", "session_id", "interaction_id", "run_id", "step_id", "tool_call_id", "tool_name", "tool_args", "tool_result", "tool_calls", "is_delta", "phase", "preview")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_ARGS_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    IS_DELTA_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    role: str
    type: str
    content: _containers.RepeatedCompositeFieldContainer[ContentPart]
    id: str
    timestamp: _timestamp_pb2.Timestamp
    agent_name: str
    session_id: str
    interaction_id: str
    run_id: str
    step_id: str
    tool_call_id: str
    tool_name: str
    tool_args: _struct_pb2.Struct
    tool_result: _struct_pb2.Value
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCallRecord]
    is_delta: bool
    phase: str
    preview: ActionPreview
    def __init__(self, role: _Optional[str] = ..., type: _Optional[str] = ..., content: _Optional[_Iterable[_Union[ContentPart, _Mapping]]] = ..., id: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., agent_name: _Optional[str] = ..., session_id: _Optional[str] = ..., interaction_id: _Optional[str] = ..., run_id: _Optional[str] = ..., step_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., tool_args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tool_result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCallRecord, _Mapping]]] = ..., is_delta: _Optional[bool] = ..., phase: _Optional[str] = ..., preview: _Optional[_Union[ActionPreview, _Mapping]] = ...) -> None: ...

class StreamChunk(_message.Message):
    __slots__ = ("type", "data", "result", "error", "agent_name", "agent_id", "session_id", "interaction_id", "run_id", "step_id", "message_id", "id", "timestamp", "seq", "request_id", "error_code", "parent_run_id")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    PARENT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    type: str
    data: AgentMessage
    result: AgentResult
    error: str
    agent_name: str
    agent_id: str
    session_id: str
    interaction_id: str
    run_id: str
    step_id: str
    message_id: str
    id: str
    timestamp: _timestamp_pb2.Timestamp
    seq: int
    request_id: str
    error_code: str
    parent_run_id: str
    def __init__(self, type: _Optional[str] = ..., data: _Optional[_Union[AgentMessage, _Mapping]] = ..., result: _Optional[_Union[AgentResult, _Mapping]] = ..., error: _Optional[str] = ..., agent_name: _Optional[str] = ..., agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., interaction_id: _Optional[str] = ..., run_id: _Optional[str] = ..., step_id: _Optional[str] = ..., message_id: _Optional[str] = ..., id: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., seq: _Optional[int] = ..., request_id: _Optional[str] = ..., error_code: _Optional[str] = ..., parent_run_id: _Optional[str] = ...) -> None: ...

class ModelConfig(_message.Message):
    __slots__ = ("name", "provider", "modalities", "capabilities", "cost_per_1k_tokens", "max_tokens", "api_key", "provider_config", "extra")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    MODALITIES_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    COST_PER_1K_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_CONFIG_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    name: str
    provider: str
    modalities: _containers.RepeatedScalarFieldContainer[str]
    capabilities: _containers.RepeatedScalarFieldContainer[str]
    cost_per_1k_tokens: float
    max_tokens: int
    api_key: str
    provider_config: _struct_pb2.Value
    extra: _struct_pb2.Value
    def __init__(self, name: _Optional[str] = ..., provider: _Optional[str] = ..., modalities: _Optional[_Iterable[str]] = ..., capabilities: _Optional[_Iterable[str]] = ..., cost_per_1k_tokens: _Optional[float] = ..., max_tokens: _Optional[int] = ..., api_key: _Optional[str] = ..., provider_config: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., extra: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class AgentMetadata(_message.Message):
    __slots__ = ("name", "description", "supported_modalities", "output_modalities", "tags", "version", "agent_id", "model", "default_model", "version_policy", "approval_ttl_s")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SUPPORTED_MODALITIES_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_MODALITIES_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_MODEL_FIELD_NUMBER: _ClassVar[int]
    VERSION_POLICY_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_TTL_S_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    supported_modalities: _containers.RepeatedScalarFieldContainer[str]
    output_modalities: _containers.RepeatedScalarFieldContainer[str]
    tags: _containers.RepeatedScalarFieldContainer[str]
    version: str
    agent_id: str
    model: str
    default_model: str
    version_policy: str
    approval_ttl_s: float
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., supported_modalities: _Optional[_Iterable[str]] = ..., output_modalities: _Optional[_Iterable[str]] = ..., tags: _Optional[_Iterable[str]] = ..., version: _Optional[str] = ..., agent_id: _Optional[str] = ..., model: _Optional[str] = ..., default_model: _Optional[str] = ..., version_policy: _Optional[str] = ..., approval_ttl_s: _Optional[float] = ...) -> None: ...

class StreamAck(_message.Message):
    __slots__ = ("request_id", "interaction_id", "session_id", "subject", "stream_name", "run_id")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    STREAM_NAME_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    interaction_id: str
    session_id: str
    subject: str
    stream_name: str
    run_id: str
    def __init__(self, request_id: _Optional[str] = ..., interaction_id: _Optional[str] = ..., session_id: _Optional[str] = ..., subject: _Optional[str] = ..., stream_name: _Optional[str] = ..., run_id: _Optional[str] = ...) -> None: ...

class UsageRow(_message.Message):
    __slots__ = ("key", "model", "runs", "prompt_tokens", "completion_tokens", "total_tokens", "cost")
    KEY_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    key: str
    model: str
    runs: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost: float
    def __init__(self, key: _Optional[str] = ..., model: _Optional[str] = ..., runs: _Optional[int] = ..., prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ..., total_tokens: _Optional[int] = ..., cost: _Optional[float] = ...) -> None: ...
