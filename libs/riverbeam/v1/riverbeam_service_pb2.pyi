import datetime

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

class InvokeResponse(_message.Message):
    __slots__ = ("result", "ack")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ACK_FIELD_NUMBER: _ClassVar[int]
    result: _types_pb2.AgentResult
    ack: _types_pb2.StreamAck
    def __init__(self, result: _Optional[_Union[_types_pb2.AgentResult, _Mapping]] = ..., ack: _Optional[_Union[_types_pb2.StreamAck, _Mapping]] = ...) -> None: ...

class ResumeRequest(_message.Message):
    __slots__ = ("agent_name", "session_id", "interaction_id", "content", "actions", "auth_context", "metadata", "request_id", "model_override")
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    AUTH_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_OVERRIDE_FIELD_NUMBER: _ClassVar[int]
    agent_name: str
    session_id: str
    interaction_id: str
    content: _containers.RepeatedCompositeFieldContainer[_types_pb2.ContentPart]
    actions: _containers.RepeatedCompositeFieldContainer[_types_pb2.ActionResponseEnvelope]
    auth_context: _types_pb2.InvokeAuthContext
    metadata: _struct_pb2.Struct
    request_id: str
    model_override: str
    def __init__(self, agent_name: _Optional[str] = ..., session_id: _Optional[str] = ..., interaction_id: _Optional[str] = ..., content: _Optional[_Iterable[_Union[_types_pb2.ContentPart, _Mapping]]] = ..., actions: _Optional[_Iterable[_Union[_types_pb2.ActionResponseEnvelope, _Mapping]]] = ..., auth_context: _Optional[_Union[_types_pb2.InvokeAuthContext, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., request_id: _Optional[str] = ..., model_override: _Optional[str] = ...) -> None: ...

class ResumeResponse(_message.Message):
    __slots__ = ("ack",)
    ACK_FIELD_NUMBER: _ClassVar[int]
    ack: _types_pb2.StreamAck
    def __init__(self, ack: _Optional[_Union[_types_pb2.StreamAck, _Mapping]] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ("request_id", "reason")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    reason: str
    def __init__(self, request_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CancelResponse(_message.Message):
    __slots__ = ("cancelled",)
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    cancelled: bool
    def __init__(self, cancelled: _Optional[bool] = ...) -> None: ...

class ListAgentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListAgentsResponse(_message.Message):
    __slots__ = ("agents",)
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[_types_pb2.AgentMetadata]
    def __init__(self, agents: _Optional[_Iterable[_Union[_types_pb2.AgentMetadata, _Mapping]]] = ...) -> None: ...

class GetAgentRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetAgentResponse(_message.Message):
    __slots__ = ("agent",)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: _types_pb2.AgentMetadata
    def __init__(self, agent: _Optional[_Union[_types_pb2.AgentMetadata, _Mapping]] = ...) -> None: ...

class ListModelsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListModelsResponse(_message.Message):
    __slots__ = ("models",)
    MODELS_FIELD_NUMBER: _ClassVar[int]
    models: _containers.RepeatedCompositeFieldContainer[_types_pb2.ModelConfig]
    def __init__(self, models: _Optional[_Iterable[_Union[_types_pb2.ModelConfig, _Mapping]]] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _records_pb2.Session
    def __init__(self, session: _Optional[_Union[_records_pb2.Session, _Mapping]] = ...) -> None: ...

class ListMessagesRequest(_message.Message):
    __slots__ = ("session_id", "page_size", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page_size: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMessagesResponse(_message.Message):
    __slots__ = ("messages", "next_page_token")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_records_pb2.Message]
    next_page_token: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_records_pb2.Message, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetInteractionRequest(_message.Message):
    __slots__ = ("interaction_id",)
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    interaction_id: str
    def __init__(self, interaction_id: _Optional[str] = ...) -> None: ...

class GetInteractionResponse(_message.Message):
    __slots__ = ("interaction",)
    INTERACTION_FIELD_NUMBER: _ClassVar[int]
    interaction: _records_pb2.Interaction
    def __init__(self, interaction: _Optional[_Union[_records_pb2.Interaction, _Mapping]] = ...) -> None: ...

class GetRunRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class GetRunResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _records_pb2.Run
    def __init__(self, run: _Optional[_Union[_records_pb2.Run, _Mapping]] = ...) -> None: ...

class GetActionRequest(_message.Message):
    __slots__ = ("action_id",)
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    action_id: str
    def __init__(self, action_id: _Optional[str] = ...) -> None: ...

class GetActionResponse(_message.Message):
    __slots__ = ("action",)
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _records_pb2.Action
    def __init__(self, action: _Optional[_Union[_records_pb2.Action, _Mapping]] = ...) -> None: ...

class ListPendingActionsRequest(_message.Message):
    __slots__ = ("session_id", "page_size", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page_size: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListPendingActionsResponse(_message.Message):
    __slots__ = ("actions", "next_page_token")
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[_records_pb2.Action]
    next_page_token: str
    def __init__(self, actions: _Optional[_Iterable[_Union[_records_pb2.Action, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class FollowStreamRequest(_message.Message):
    __slots__ = ("request_id", "after_seq")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    after_seq: int
    def __init__(self, request_id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class FollowStreamResponse(_message.Message):
    __slots__ = ("chunk",)
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    chunk: _types_pb2.StreamChunk
    def __init__(self, chunk: _Optional[_Union[_types_pb2.StreamChunk, _Mapping]] = ...) -> None: ...

class InvokeStreamRequest(_message.Message):
    __slots__ = ("request",)
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    request: _types_pb2.InvokeRequest
    def __init__(self, request: _Optional[_Union[_types_pb2.InvokeRequest, _Mapping]] = ...) -> None: ...

class InvokeStreamResponse(_message.Message):
    __slots__ = ("ack", "chunk")
    ACK_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    ack: _types_pb2.StreamAck
    chunk: _types_pb2.StreamChunk
    def __init__(self, ack: _Optional[_Union[_types_pb2.StreamAck, _Mapping]] = ..., chunk: _Optional[_Union[_types_pb2.StreamChunk, _Mapping]] = ...) -> None: ...

class ResumeStreamRequest(_message.Message):
    __slots__ = ("request",)
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    request: ResumeRequest
    def __init__(self, request: _Optional[_Union[ResumeRequest, _Mapping]] = ...) -> None: ...

class ResumeStreamResponse(_message.Message):
    __slots__ = ("ack", "chunk")
    ACK_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    ack: _types_pb2.StreamAck
    chunk: _types_pb2.StreamChunk
    def __init__(self, ack: _Optional[_Union[_types_pb2.StreamAck, _Mapping]] = ..., chunk: _Optional[_Union[_types_pb2.StreamChunk, _Mapping]] = ...) -> None: ...

class GetUsageRequest(_message.Message):
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

class GetUsageResponse(_message.Message):
    __slots__ = ("rows", "total")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[_types_pb2.UsageRow]
    total: _types_pb2.UsageRow
    def __init__(self, rows: _Optional[_Iterable[_Union[_types_pb2.UsageRow, _Mapping]]] = ..., total: _Optional[_Union[_types_pb2.UsageRow, _Mapping]] = ...) -> None: ...
