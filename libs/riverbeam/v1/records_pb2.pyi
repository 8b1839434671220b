import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from riverbeam.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class InteractionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INTERACTION_STATUS_UNSPECIFIED: _ClassVar[InteractionStatus]
    INTERACTION_STATUS_IN_PROGRESS: _ClassVar[InteractionStatus]
    INTERACTION_STATUS_COMPLETED: _ClassVar[InteractionStatus]
    INTERACTION_STATUS_FAILED: _ClassVar[InteractionStatus]
    INTERACTION_STATUS_CANCELLED: _ClassVar[InteractionStatus]

class RunStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_STATUS_UNSPECIFIED: _ClassVar[RunStatus]
    RUN_STATUS_RUNNING: _ClassVar[RunStatus]
    RUN_STATUS_COMPLETED: _ClassVar[RunStatus]
    RUN_STATUS_FAILED: _ClassVar[RunStatus]
    RUN_STATUS_INTERRUPTED: _ClassVar[RunStatus]
    RUN_STATUS_CANCELLED: _ClassVar[RunStatus]

class ActionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_STATUS_UNSPECIFIED: _ClassVar[ActionStatus]
    ACTION_STATUS_PENDING: _ClassVar[ActionStatus]
    ACTION_STATUS_RESOLVED: _ClassVar[ActionStatus]
    ACTION_STATUS_CANCELLED: _ClassVar[ActionStatus]
    ACTION_STATUS_EXPIRED: _ClassVar[ActionStatus]

class ActionOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_OUTCOME_UNSPECIFIED: _ClassVar[ActionOutcome]
    ACTION_OUTCOME_APPROVED_UNKNOWN: _ClassVar[ActionOutcome]
    ACTION_OUTCOME_APPROVED_RAN: _ClassVar[ActionOutcome]
    ACTION_OUTCOME_APPROVED_FAILED: _ClassVar[ActionOutcome]
    ACTION_OUTCOME_DECLINED: _ClassVar[ActionOutcome]
INTERACTION_STATUS_UNSPECIFIED: InteractionStatus
INTERACTION_STATUS_IN_PROGRESS: InteractionStatus
INTERACTION_STATUS_COMPLETED: InteractionStatus
INTERACTION_STATUS_FAILED: InteractionStatus
INTERACTION_STATUS_CANCELLED: InteractionStatus
RUN_STATUS_UNSPECIFIED: RunStatus
RUN_STATUS_RUNNING: RunStatus
RUN_STATUS_COMPLETED: RunStatus
RUN_STATUS_FAILED: RunStatus
RUN_STATUS_INTERRUPTED: RunStatus
RUN_STATUS_CANCELLED: RunStatus
ACTION_STATUS_UNSPECIFIED: ActionStatus
ACTION_STATUS_PENDING: ActionStatus
ACTION_STATUS_RESOLVED: ActionStatus
ACTION_STATUS_CANCELLED: ActionStatus
ACTION_STATUS_EXPIRED: ActionStatus
ACTION_OUTCOME_UNSPECIFIED: ActionOutcome
ACTION_OUTCOME_APPROVED_UNKNOWN: ActionOutcome
ACTION_OUTCOME_APPROVED_RAN: ActionOutcome
ACTION_OUTCOME_APPROVED_FAILED: ActionOutcome
ACTION_OUTCOME_DECLINED: ActionOutcome

class Session(_message.Message):
    __slots__ = ("session_id", "user_id", "profile_id", "org_id", "created_at", "last_active_at", "metadata", "last_seq", "config")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_ID_FIELD_NUMBER: _ClassVar[int]
    ORG_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_ACTIVE_AT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    user_id: str
    profile_id: str
    org_id: str
    created_at: _timestamp_pb2.Timestamp
    last_active_at: _timestamp_pb2.Timestamp
    metadata: _struct_pb2.Struct
    last_seq: int
    config: _types_pb2.TurnConfig
    def __init__(self, session_id: _Optional[str] = ..., user_id: _Optional[str] = ..., profile_id: _Optional[str] = ..., org_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_active_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., last_seq: _Optional[int] = ..., config: _Optional[_Union[_types_pb2.TurnConfig, _Mapping]] = ...) -> None: ...

class Interaction(_message.Message):
    __slots__ = ("interaction_id", "session_id", "agent_name", "status", "created_at", "updated_at", "agent_version")
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    interaction_id: str
    session_id: str
    agent_name: str
    status: InteractionStatus
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    agent_version: str
    def __init__(self, interaction_id: _Optional[str] = ..., session_id: _Optional[str] = ..., agent_name: _Optional[str] = ..., status: _Optional[_Union[InteractionStatus, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., agent_version: _Optional[str] = ...) -> None: ...

class Run(_message.Message):
    __slots__ = ("run_id", "interaction_id", "session_id", "agent_name", "status", "request_id", "started_at", "finished_at", "error_code", "error_message", "token_usage", "model_used", "lease_owner", "lease_expires_at", "result", "lease_epoch", "options", "agent_version", "holders", "parent_run_id")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_USAGE_FIELD_NUMBER: _ClassVar[int]
    MODEL_USED_FIELD_NUMBER: _ClassVar[int]
    LEASE_OWNER_FIELD_NUMBER: _ClassVar[int]
    LEASE_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    HOLDERS_FIELD_NUMBER: _ClassVar[int]
    PARENT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    interaction_id: str
    session_id: str
    agent_name: str
    status: RunStatus
    request_id: str
    started_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    error_code: str
    error_message: str
    token_usage: _types_pb2.TokenUsage
    model_used: str
    lease_owner: str
    lease_expires_at: _timestamp_pb2.Timestamp
    result: _types_pb2.AgentResult
    lease_epoch: int
    options: _types_pb2.RunOptions
    agent_version: str
    holders: _containers.RepeatedScalarFieldContainer[str]
    parent_run_id: str
    def __init__(self, run_id: _Optional[str] = ..., interaction_id: _Optional[str] = ..., session_id: _Optional[str] = ..., agent_name: _Optional[str] = ..., status: _Optional[_Union[RunStatus, str]] = ..., request_id: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., error_code: _Optional[str] = ..., error_message: _Optional[str] = ..., token_usage: _Optional[_Union[_types_pb2.TokenUsage, _Mapping]] = ..., model_used: _Optional[str] = ..., lease_owner: _Optional[str] = ..., lease_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., result: _Optional[_Union[_types_pb2.AgentResult, _Mapping]] = ..., lease_epoch: _Optional[int] = ..., options: _Optional[_Union[_types_pb2.RunOptions, _Mapping]] = ..., agent_version: _Optional[str] = ..., holders: _Optional[_Iterable[str]] = ..., parent_run_id: _Optional[str] = ...) -> None: ...

class Message(_message.Message):
    __slots__ = ("message_id", "session_id", "interaction_id", "run_id", "seq", "role", "type", "content", "tool_call_id", "tool_name", "tool_args", "tool_result", "metadata", "created_at")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_ARGS_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    session_id: str
    interaction_id: str
    run_id: str
    seq: int
    role: str
    type: str
    content: _containers.RepeatedCompositeFieldContainer[_types_pb2.ContentPart]
    tool_call_id: str
    tool_name: str
    tool_args: _struct_pb2.Struct
    tool_result: _struct_pb2.Value
    metadata: _struct_pb2.Struct
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, message_id: _Optional[str] = ..., session_id: _Optional[str] = ..., interaction_id: _Optional[str] = ..., run_id: _Optional[str] = ..., seq: _Optional[int] = ..., role: _Optional[str] = ..., type: _Optional[str] = ..., content: _Optional[_Iterable[_Union[_types_pb2.ContentPart, _Mapping]]] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., tool_args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tool_result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("action_id", "session_id", "interaction_id", "run_id", "kind", "tool", "args", "tool_call_id", "status", "created_at", "resolved_at", "response", "outcome", "result", "error", "agent_name", "user_id", "expires_at", "preview", "child")
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_AT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    CHILD_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    session_id: str
    interaction_id: str
    run_id: str
    kind: str
    tool: str
    args: _struct_pb2.Struct
    tool_call_id: str
    status: ActionStatus
    created_at: _timestamp_pb2.Timestamp
    resolved_at: _timestamp_pb2.Timestamp
    response: _types_pb2.ActionResponseEnvelope
    outcome: ActionOutcome
    result: _struct_pb2.Value
    error: str
    agent_name: str
    user_id: str
    expires_at: _timestamp_pb2.Timestamp
    preview: _types_pb2.ActionPreview
    child: _struct_pb2.Struct
    def __init__(self, action_id: _Optional[str] = ..., session_id: _Optional[str] = ..., interaction_id: _Optional[str] = ..., run_id: _Optional[str] = ..., kind: _Optional[str] = ..., tool: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tool_call_id: _Optional[str] = ..., status: _Optional[_Union[ActionStatus, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., resolved_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., response: _Optional[_Union[_types_pb2.ActionResponseEnvelope, _Mapping]] = ..., outcome: _Optional[_Union[ActionOutcome, str]] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., error: _Optional[str] = ..., agent_name: _Optional[str] = ..., user_id: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., preview: _Optional[_Union[_types_pb2.ActionPreview, _Mapping]] = ..., child: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class MemoryEntry(_message.Message):
    __slots__ = ("scope_name", "scope_id", "entry_id", "content", "metadata", "created_at", "org_id")
    SCOPE_NAME_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    ORG_ID_FIELD_NUMBER: _ClassVar[int]
    scope_name: str
    scope_id: str
    entry_id: str
    content: str
    metadata: _struct_pb2.Struct
    created_at: _timestamp_pb2.Timestamp
    org_id: str
    def __init__(self, scope_name: _Optional[str] = ..., scope_id: _Optional[str] = ..., entry_id: _Optional[str] = ..., content: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., org_id: _Optional[str] = ...) -> None: ...
