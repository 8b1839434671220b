import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from riverbeam.v1 import ledger_pb2 as _ledger_pb2
from riverbeam.v1 import records_pb2 as _records_pb2
from riverbeam.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SummarizeUsageRequest(_message.Message):
    __slots__ = ("group_by", "start_time", "end_time", "user_id", "org_id", "session_id")
    GROUP_BY_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    ORG_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    group_by: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    user_id: str
    org_id: str
    session_id: str
    def __init__(self, group_by: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., user_id: _Optional[str] = ..., org_id: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class SummarizeUsageResponse(_message.Message):
    __slots__ = ("rows",)
    ROWS_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[_types_pb2.UsageRow]
    def __init__(self, rows: _Optional[_Iterable[_Union[_types_pb2.UsageRow, _Mapping]]] = ...) -> None: ...

class NewMessage(_message.Message):
    __slots__ = ("role", "type", "content", "message_id", "tool_call_id", "tool_name", "tool_args", "tool_result", "metadata")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_ARGS_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    role: str
    type: str
    content: _containers.RepeatedCompositeFieldContainer[_types_pb2.ContentPart]
    message_id: str
    tool_call_id: str
    tool_name: str
    tool_args: _struct_pb2.Struct
    tool_result: _struct_pb2.Value
    metadata: _struct_pb2.Struct
    def __init__(self, role: _Optional[str] = ..., type: _Optional[str] = ..., content: _Optional[_Iterable[_Union[_types_pb2.ContentPart, _Mapping]]] = ..., message_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., tool_args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tool_result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class MemoryScope(_message.Message):
    __slots__ = ("name", "id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    id: str
    def __init__(self, name: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class FetchSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class FetchSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _records_pb2.Session
    def __init__(self, session: _Optional[_Union[_records_pb2.Session, _Mapping]] = ...) -> None: ...

class FetchInteractionRequest(_message.Message):
    __slots__ = ("interaction_id",)
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    interaction_id: str
    def __init__(self, interaction_id: _Optional[str] = ...) -> None: ...

class FetchInteractionResponse(_message.Message):
    __slots__ = ("interaction",)
    INTERACTION_FIELD_NUMBER: _ClassVar[int]
    interaction: _records_pb2.Interaction
    def __init__(self, interaction: _Optional[_Union[_records_pb2.Interaction, _Mapping]] = ...) -> None: ...

class FetchRunRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class FetchRunResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _records_pb2.Run
    def __init__(self, run: _Optional[_Union[_records_pb2.Run, _Mapping]] = ...) -> None: ...

class FetchActionRequest(_message.Message):
    __slots__ = ("action_id",)
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    def __init__(self, action_id: _Optional[str] = ...) -> None: ...

class FetchActionResponse(_message.Message):
    __slots__ = ("action",)
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _records_pb2.Action
    def __init__(self, action: _Optional[_Union[_records_pb2.Action, _Mapping]] = ...) -> None: ...

class FetchRunByRequestRequest(_message.Message):
    __slots__ = ("request_id", "with_session")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    WITH_SESSION_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    with_session: bool
    def __init__(self, request_id: _Optional[str] = ..., with_session: _Optional[bool] = ...) -> None: ...

class FetchRunByRequestResponse(_message.Message):
    __slots__ = ("run", "session")
    RUN_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    run: _records_pb2.Run
    session: _records_pb2.Session
    def __init__(self, run: _Optional[_Union[_records_pb2.Run, _Mapping]] = ..., session: _Optional[_Union[_records_pb2.Session, _Mapping]] = ...) -> None: ...

class FetchRunsRequest(_message.Message):
    __slots__ = ("interaction_id",)
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    interaction_id: str
    def __init__(self, interaction_id: _Optional[str] = ...) -> None: ...

class FetchRunsResponse(_message.Message):
    __slots__ = ("runs",)
    RUNS_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[_records_pb2.Run]
    def __init__(self, runs: _Optional[_Iterable[_Union[_records_pb2.Run, _Mapping]]] = ...) -> None: ...

class FetchMessagesRequest(_message.Message):
    __slots__ = ("session_id", "page_size", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page_size: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class FetchMessagesResponse(_message.Message):
    __slots__ = ("messages", "next_page_token")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_records_pb2.Message]
    next_page_token: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_records_pb2.Message, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class FetchPendingActionsRequest(_message.Message):
    __slots__ = ("session_id", "user_id", "page_size", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    user_id: str
    page_size: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., user_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class FetchPendingActionsResponse(_message.Message):
    __slots__ = ("actions", "next_page_token")
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[_records_pb2.Action]
    next_page_token: str
    def __init__(self, actions: _Optional[_Iterable[_Union[_records_pb2.Action, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class BeginRunRequest(_message.Message):
    __slots__ = ("session_id", "user_id", "profile_id", "org_id", "agent_name", "interaction_id", "run_id", "request_id", "human_content", "message_metadata", "lease_owner", "lease_ttl_s", "exclusive", "action_responses", "agent_version", "version_policy", "history_limit", "require_owner", "require_org", "session_config", "run_options", "session_config_narrows", "history_after", "history_after_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_ID_FIELD_NUMBER: _ClassVar[int]
    ORG_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    HUMAN_CONTENT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_METADATA_FIELD_NUMBER: _ClassVar[int]
    LEASE_OWNER_FIELD_NUMBER: _ClassVar[int]
    LEASE_TTL_S_FIELD_NUMBER: _ClassVar[int]
    EXCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    ACTION_RESPONSES_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    VERSION_POLICY_FIELD_NUMBER: _ClassVar[int]
    HISTORY_LIMIT_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_OWNER_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_ORG_FIELD_NUMBER: _ClassVar[int]
    SESSION_CONFIG_FIELD_NUMBER: _ClassVar[int]
    RUN_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SESSION_CONFIG_NARROWS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_AFTER_FIELD_NUMBER: _ClassVar[int]
    HISTORY_AFTER_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    user_id: str
    profile_id: str
    org_id: str
    agent_name: str
    interaction_id: str
    run_id: str
    request_id: str
    human_content: _containers.RepeatedCompositeFieldContainer[_types_pb2.ContentPart]
    message_metadata: _struct_pb2.Struct
    lease_owner: str
    lease_ttl_s: float
    exclusive: bool
    action_responses: _containers.RepeatedCompositeFieldContainer[_types_pb2.ActionResponseEnvelope]
    agent_version: str
    version_policy: str
    history_limit: int
    require_owner: str
    require_org: str
    session_config: _types_pb2.TurnConfig
    run_options: _types_pb2.RunOptions
    session_config_narrows: bool
    history_after: int
    history_after_id: str
    def __init__(self, session_id: _Optional[str] = ..., user_id: _Optional[str] = ..., profile_id: _Optional[str] = ..., org_id: _Optional[str] = ..., agent_name: _Optional[str] = ..., interaction_id: _Optional[str] = ..., run_id: _Optional[str] = ..., request_id: _Optional[str] = ..., human_content: _Optional[_Iterable[_Union[_types_pb2.ContentPart, _Mapping]]] = ..., message_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., lease_owner: _Optional[str] = ..., lease_ttl_s: _Optional[float] = ..., exclusive: _Optional[bool] = ..., action_responses: _Optional[_Iterable[_Union[_types_pb2.ActionResponseEnvelope, _Mapping]]] = ..., agent_version: _Optional[str] = ..., version_policy: _Optional[str] = ..., history_limit: _Optional[int] = ..., require_owner: _Optional[str] = ..., require_org: _Optional[str] = ..., session_config: _Optional[_Union[_types_pb2.TurnConfig, _Mapping]] = ..., run_options: _Optional[_Union[_types_pb2.RunOptions, _Mapping]] = ..., session_config_narrows: _Optional[bool] = ..., history_after: _Optional[int] = ..., history_after_id: _Optional[str] = ...) -> None: ...

class BeginRunResponse(_message.Message):
    __slots__ = ("session", "interaction", "run", "human_message", "resolved_actions", "action_messages", "history", "history_after")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    HUMAN_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    ACTION_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    HISTORY_AFTER_FIELD_NUMBER: _ClassVar[int]
    session: _records_pb2.Session
    interaction: _records_pb2.Interaction
    run: _records_pb2.Run
    human_message: _records_pb2.Message
    resolved_actions: _containers.RepeatedCompositeFieldContainer[_records_pb2.Action]
    action_messages: _containers.RepeatedCompositeFieldContainer[_records_pb2.Message]
    history: _containers.RepeatedCompositeFieldContainer[_records_pb2.Message]
    history_after: int
    def __init__(self, session: _Optional[_Union[_records_pb2.Session, _Mapping]] = ..., interaction: _Optional[_Union[_records_pb2.Interaction, _Mapping]] = ..., run: _Optional[_Union[_records_pb2.Run, _Mapping]] = ..., human_message: _Optional[_Union[_records_pb2.Message, _Mapping]] = ..., resolved_actions: _Optional[_Iterable[_Union[_records_pb2.Action, _Mapping]]] = ..., action_messages: _Optional[_Iterable[_Union[_records_pb2.Message, _Mapping]]] = ..., history: _Optional[_Iterable[_Union[_records_pb2.Message, _Mapping]]] = ..., history_after: _Optional[int] = ...) -> None: ...

class FinishRunRequest(_message.Message):
    __slots__ = ("run_id", "lease_owner", "status", "messages", "pending_actions", "interaction_status", "error_code", "error_message", "token_usage", "model_used", "result", "lease_epoch", "action_ttl_s", "tool_executions", "brief")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_OWNER_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    PENDING_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_USAGE_FIELD_NUMBER: _ClassVar[int]
    MODEL_USED_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    ACTION_TTL_S_FIELD_NUMBER: _ClassVar[int]
    TOOL_EXECUTIONS_FIELD_NUMBER: _ClassVar[int]
    BRIEF_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    lease_owner: str
    status: _records_pb2.RunStatus
    messages: _containers.RepeatedCompositeFieldContainer[NewMessage]
    pending_actions: _containers.RepeatedCompositeFieldContainer[_types_pb2.ActionRequired]
    interaction_status: _records_pb2.InteractionStatus
    error_code: str
    error_message: str
    token_usage: _types_pb2.TokenUsage
    model_used: str
    result: _types_pb2.AgentResult
    lease_epoch: int
    action_ttl_s: float
    tool_executions: _containers.RepeatedCompositeFieldContainer[_ledger_pb2.ToolExecution]
    brief: bool
    def __init__(self, run_id: _Optional[str] = ..., lease_owner: _Optional[str] = ..., status: _Optional[_Union[_records_pb2.RunStatus, str]] = ..., messages: _Optional[_Iterable[_Union[NewMessage, _Mapping]]] = ..., pending_actions: _Optional[_Iterable[_Union[_types_pb2.ActionRequired, _Mapping]]] = ..., interaction_status: _Optional[_Union[_records_pb2.InteractionStatus, str]] = ..., error_code: _Optional[str] = ..., error_message: _Optional[str] = ..., token_usage: _Optional[_Union[_types_pb2.TokenUsage, _Mapping]] = ..., model_used: _Optional[str] = ..., result: _Optional[_Union[_types_pb2.AgentResult, _Mapping]] = ..., lease_epoch: _Optional[int] = ..., action_ttl_s: _Optional[float] = ..., tool_executions: _Optional[_Iterable[_Union[_ledger_pb2.ToolExecution, _Mapping]]] = ..., brief: _Optional[bool] = ...) -> None: ...

class FinishRunResponse(_message.Message):
    __slots__ = ("run", "as_sent")
    RUN_FIELD_NUMBER: _ClassVar[int]
    AS_SENT_FIELD_NUMBER: _ClassVar[int]
    run: _records_pb2.Run
    as_sent: bool
    def __init__(self, run: _Optional[_Union[_records_pb2.Run, _Mapping]] = ..., as_sent: _Optional[bool] = ...) -> None: ...

class RunStep(_message.Message):
    __slots__ = ("step_id", "begin_run", "finish_run", "timeout_s", "trace_context")
    class TraceContextEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    BEGIN_RUN_FIELD_NUMBER: _ClassVar[int]
    FINISH_RUN_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    begin_run: BeginRunRequest
    finish_run: FinishRunRequest
    timeout_s: float
    trace_context: _containers.ScalarMap[str, str]
    def __init__(self, step_id: _Optional[int] = ..., begin_run: _Optional[_Union[BeginRunRequest, _Mapping]] = ..., finish_run: _Optional[_Union[FinishRunRequest, _Mapping]] = ..., timeout_s: _Optional[float] = ..., trace_context: _Optional[_Mapping[str, str]] = ...) -> None: ...

class RunStepsRequest(_message.Message):
    __slots__ = ("steps",)
    STEPS_FIELD_NUMBER: _ClassVar[int]
    steps: _containers.RepeatedCompositeFieldContainer[RunStep]
    def __init__(self, steps: _Optional[_Iterable[_Union[RunStep, _Mapping]]] = ...) -> None: ...

class RunStepError(_message.Message):
    __slots__ = ("code", "message", "status_details")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STATUS_DETAILS_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    status_details: bytes
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., status_details: _Optional[bytes] = ...) -> None: ...

class RunStepResult(_message.Message):
    __slots__ = ("step_id", "begin_run", "finish_run", "error")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    BEGIN_RUN_FIELD_NUMBER: _ClassVar[int]
    FINISH_RUN_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    begin_run: BeginRunResponse
    finish_run: FinishRunResponse
    error: RunStepError
    def __init__(self, step_id: _Optional[int] = ..., begin_run: _Optional[_Union[BeginRunResponse, _Mapping]] = ..., finish_run: _Optional[_Union[FinishRunResponse, _Mapping]] = ..., error: _Optional[_Union[RunStepError, _Mapping]] = ...) -> None: ...

class RunStepsResponse(_message.Message):
    __slots__ = ("results", "drained_after")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    DRAINED_AFTER_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[RunStepResult]
    drained_after: int
    def __init__(self, results: _Optional[_Iterable[_Union[RunStepResult, _Mapping]]] = ..., drained_after: _Optional[int] = ...) -> None: ...

class RecordActionOutcomeRequest(_message.Message):
    __slots__ = ("action_id", "outcome", "result", "error", "run_id", "lease_epoch")
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    outcome: _records_pb2.ActionOutcome
    result: _struct_pb2.Value
    error: str
    run_id: str
    lease_epoch: int
    def __init__(self, action_id: _Optional[str] = ..., outcome: _Optional[_Union[_records_pb2.ActionOutcome, str]] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., error: _Optional[str] = ..., run_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ...) -> None: ...

class RecordActionOutcomeResponse(_message.Message):
    __slots__ = ("action",)
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _records_pb2.Action
    def __init__(self, action: _Optional[_Union[_records_pb2.Action, _Mapping]] = ...) -> None: ...

class AppendMessageRequest(_message.Message):
    __slots__ = ("session_id", "message", "interaction_id", "run_id", "lease_epoch")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    message: NewMessage
    interaction_id: str
    run_id: str
    lease_epoch: int
    def __init__(self, session_id: _Optional[str] = ..., message: _Optional[_Union[NewMessage, _Mapping]] = ..., interaction_id: _Optional[str] = ..., run_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ...) -> None: ...

class AppendMessageResponse(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: _records_pb2.Message
    def __init__(self, message: _Optional[_Union[_records_pb2.Message, _Mapping]] = ...) -> None: ...

class BeginChildRunRequest(_message.Message):
    __slots__ = ("parent_run_id", "run_id", "agent_name", "lease_owner", "lease_epoch", "agent_version")
    PARENT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    LEASE_OWNER_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    parent_run_id: str
    run_id: str
    agent_name: str
    lease_owner: str
    lease_epoch: int
    agent_version: str
    def __init__(self, parent_run_id: _Optional[str] = ..., run_id: _Optional[str] = ..., agent_name: _Optional[str] = ..., lease_owner: _Optional[str] = ..., lease_epoch: _Optional[int] = ..., agent_version: _Optional[str] = ...) -> None: ...

class BeginChildRunResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _records_pb2.Run
    def __init__(self, run: _Optional[_Union[_records_pb2.Run, _Mapping]] = ...) -> None: ...

class FinishChildRunRequest(_message.Message):
    __slots__ = ("run_id", "parent_run_id", "lease_owner", "lease_epoch", "status", "error_code", "error_message", "token_usage", "model_used", "result")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_OWNER_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_USAGE_FIELD_NUMBER: _ClassVar[int]
    MODEL_USED_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    parent_run_id: str
    lease_owner: str
    lease_epoch: int
    status: _records_pb2.RunStatus
    error_code: str
    error_message: str
    token_usage: _types_pb2.TokenUsage
    model_used: str
    result: _types_pb2.AgentResult
    def __init__(self, run_id: _Optional[str] = ..., parent_run_id: _Optional[str] = ..., lease_owner: _Optional[str] = ..., lease_epoch: _Optional[int] = ..., status: _Optional[_Union[_records_pb2.RunStatus, str]] = ..., error_code: _Optional[str] = ..., error_message: _Optional[str] = ..., token_usage: _Optional[_Union[_types_pb2.TokenUsage, _Mapping]] = ..., model_used: _Optional[str] = ..., result: _Optional[_Union[_types_pb2.AgentResult, _Mapping]] = ...) -> None: ...

class FinishChildRunResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _records_pb2.Run
    def __init__(self, run: _Optional[_Union[_records_pb2.Run, _Mapping]] = ...) -> None: ...

class RecordHandoffRequest(_message.Message):
    __slots__ = ("run_id", "lease_owner", "lease_epoch", "agent_name", "agent_version")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_OWNER_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    lease_owner: str
    lease_epoch: int
    agent_name: str
    agent_version: str
    def __init__(self, run_id: _Optional[str] = ..., lease_owner: _Optional[str] = ..., lease_epoch: _Optional[int] = ..., agent_name: _Optional[str] = ..., agent_version: _Optional[str] = ...) -> None: ...

class RecordHandoffResponse(_message.Message):
    __slots__ = ("interaction",)
    INTERACTION_FIELD_NUMBER: _ClassVar[int]
    interaction: _records_pb2.Interaction
    def __init__(self, interaction: _Optional[_Union[_records_pb2.Interaction, _Mapping]] = ...) -> None: ...

class RenewLeaseRequest(_message.Message):
    __slots__ = ("run_id", "lease_owner", "ttl_s", "lease_epoch")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_OWNER_FIELD_NUMBER: _ClassVar[int]
    TTL_S_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    lease_owner: str
    ttl_s: float
    lease_epoch: int
    def __init__(self, run_id: _Optional[str] = ..., lease_owner: _Optional[str] = ..., ttl_s: _Optional[float] = ..., lease_epoch: _Optional[int] = ...) -> None: ...

class RenewLeaseResponse(_message.Message):
    __slots__ = ("renewed",)
    RENEWED_FIELD_NUMBER: _ClassVar[int]
    renewed: bool
    def __init__(self, renewed: _Optional[bool] = ...) -> None: ...

class ReapExpiredRunsRequest(_message.Message):
    __slots__ = ("now", "limit")
    NOW_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    now: _timestamp_pb2.Timestamp
    limit: int
    def __init__(self, now: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class ReapExpiredRunsResponse(_message.Message):
    __slots__ = ("runs",)
    RUNS_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[_records_pb2.Run]
    def __init__(self, runs: _Optional[_Iterable[_Union[_records_pb2.Run, _Mapping]]] = ...) -> None: ...

class TakeOverExpiredRunsRequest(_message.Message):
    __slots__ = ("new_owner", "lease_ttl_s", "limit", "exclude_run_ids", "now")
    NEW_OWNER_FIELD_NUMBER: _ClassVar[int]
    LEASE_TTL_S_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_RUN_IDS_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    new_owner: str
    lease_ttl_s: float
    limit: int
    exclude_run_ids: _containers.RepeatedScalarFieldContainer[str]
    now: _timestamp_pb2.Timestamp
    def __init__(self, new_owner: _Optional[str] = ..., lease_ttl_s: _Optional[float] = ..., limit: _Optional[int] = ..., exclude_run_ids: _Optional[_Iterable[str]] = ..., now: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ExpirePendingActionsRequest(_message.Message):
    __slots__ = ("now", "limit")
    NOW_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    now: _timestamp_pb2.Timestamp
    limit: int
    def __init__(self, now: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class ExpirePendingActionsResponse(_message.Message):
    __slots__ = ("actions",)
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[_records_pb2.Action]
    def __init__(self, actions: _Optional[_Iterable[_Union[_records_pb2.Action, _Mapping]]] = ...) -> None: ...

class TakeOverExpiredRunsResponse(_message.Message):
    __slots__ = ("runs",)
    RUNS_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[TakenOverRun]
    def __init__(self, runs: _Optional[_Iterable[_Union[TakenOverRun, _Mapping]]] = ...) -> None: ...

class TakenOverRun(_message.Message):
    __slots__ = ("run", "previous_owner")
    RUN_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_OWNER_FIELD_NUMBER: _ClassVar[int]
    run: _records_pb2.Run
    previous_owner: str
    def __init__(self, run: _Optional[_Union[_records_pb2.Run, _Mapping]] = ..., previous_owner: _Optional[str] = ...) -> None: ...

class RememberRequest(_message.Message):
    __slots__ = ("scope_name", "scope_id", "content", "metadata", "org_id")
    SCOPE_NAME_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ORG_ID_FIELD_NUMBER: _ClassVar[int]
    scope_name: str
    scope_id: str
    content: str
    metadata: _struct_pb2.Struct
    org_id: str
    def __init__(self, scope_name: _Optional[str] = ..., scope_id: _Optional[str] = ..., content: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., org_id: _Optional[str] = ...) -> None: ...

class RememberResponse(_message.Message):
    __slots__ = ("entry",)
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    entry: _records_pb2.MemoryEntry
    def __init__(self, entry: _Optional[_Union[_records_pb2.MemoryEntry, _Mapping]] = ...) -> None: ...

class RecallRequest(_message.Message):
    __slots__ = ("scopes", "limit", "org_id")
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    ORG_ID_FIELD_NUMBER: _ClassVar[int]
    scopes: _containers.RepeatedCompositeFieldContainer[MemoryScope]
    limit: int
    org_id: str
    def __init__(self, scopes: _Optional[_Iterable[_Union[MemoryScope, _Mapping]]] = ..., limit: _Optional[int] = ..., org_id: _Optional[str] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_records_pb2.MemoryEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[_records_pb2.MemoryEntry, _Mapping]]] = ...) -> None: ...

class DeleteIdleSessionsRequest(_message.Message):
    __slots__ = ("older_than",)
    OLDER_THAN_FIELD_NUMBER: _ClassVar[int]
    older_than: _duration_pb2.Duration
    def __init__(self, older_than: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class DeleteIdleSessionsResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: int
    def __init__(self, deleted: _Optional[int] = ...) -> None: ...

class RunCheckpoint(_message.Message):
    __slots__ = ("run_id", "lease_epoch", "step", "state_json", "saved_at")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    SAVED_AT_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    lease_epoch: int
    step: int
    state_json: str
    saved_at: _timestamp_pb2.Timestamp
    def __init__(self, run_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ..., step: _Optional[int] = ..., state_json: _Optional[str] = ..., saved_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SaveRunCheckpointRequest(_message.Message):
    __slots__ = ("run_id", "lease_epoch", "step", "state_json")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    lease_epoch: int
    step: int
    state_json: str
    def __init__(self, run_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ..., step: _Optional[int] = ..., state_json: _Optional[str] = ...) -> None: ...

class SaveRunCheckpointResponse(_message.Message):
    __slots__ = ("checkpoint",)
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    checkpoint: RunCheckpoint
    def __init__(self, checkpoint: _Optional[_Union[RunCheckpoint, _Mapping]] = ...) -> None: ...

class FetchRunCheckpointRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class FetchRunCheckpointResponse(_message.Message):
    __slots__ = ("checkpoint",)
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    checkpoint: RunCheckpoint
    def __init__(self, checkpoint: _Optional[_Union[RunCheckpoint, _Mapping]] = ...) -> None: ...
