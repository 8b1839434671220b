import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ToolExecutionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_EXECUTION_STATUS_UNSPECIFIED: _ClassVar[ToolExecutionStatus]
    TOOL_EXECUTION_STATUS_REQUESTED: _ClassVar[ToolExecutionStatus]
    TOOL_EXECUTION_STATUS_STARTED: _ClassVar[ToolExecutionStatus]
    TOOL_EXECUTION_STATUS_SUCCEEDED: _ClassVar[ToolExecutionStatus]
    TOOL_EXECUTION_STATUS_FAILED: _ClassVar[ToolExecutionStatus]
    TOOL_EXECUTION_STATUS_CANCELLED: _ClassVar[ToolExecutionStatus]
    TOOL_EXECUTION_STATUS_UNKNOWN: _ClassVar[ToolExecutionStatus]
    TOOL_EXECUTION_STATUS_DENIED: _ClassVar[ToolExecutionStatus]
    TOOL_EXECUTION_STATUS_HELD: _ClassVar[ToolExecutionStatus]
TOOL_EXECUTION_STATUS_UNSPECIFIED: ToolExecutionStatus
TOOL_EXECUTION_STATUS_REQUESTED: ToolExecutionStatus
TOOL_EXECUTION_STATUS_STARTED: ToolExecutionStatus
TOOL_EXECUTION_STATUS_SUCCEEDED: ToolExecutionStatus
TOOL_EXECUTION_STATUS_FAILED: ToolExecutionStatus
TOOL_EXECUTION_STATUS_CANCELLED: ToolExecutionStatus
TOOL_EXECUTION_STATUS_UNKNOWN: ToolExecutionStatus
TOOL_EXECUTION_STATUS_DENIED: ToolExecutionStatus
TOOL_EXECUTION_STATUS_HELD: ToolExecutionStatus

class ToolExecution(_message.Message):
    __slots__ = ("execution_id", "tool_call_id", "run_id", "interaction_id", "session_id", "seq", "tool", "args", "status", "read_only", "idempotent", "action_id", "result_digest", "result_preview", "error_code", "error_message", "runner_id", "lease_epoch", "requested_at", "started_at", "finished_at")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENT_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_DIGEST_FIELD_NUMBER: _ClassVar[int]
    RESULT_PREVIEW_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RUNNER_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_AT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    tool_call_id: str
    run_id: str
    interaction_id: str
    session_id: str
    seq: int
    tool: str
    args: _struct_pb2.Struct
    status: ToolExecutionStatus
    read_only: bool
    idempotent: bool
    action_id: str
    result_digest: str
    result_preview: str
    error_code: str
    error_message: str
    runner_id: str
    lease_epoch: int
    requested_at: _timestamp_pb2.Timestamp
    started_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    def __init__(self, execution_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., run_id: _Optional[str] = ..., interaction_id: _Optional[str] = ..., session_id: _Optional[str] = ..., seq: _Optional[int] = ..., tool: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., status: _Optional[_Union[ToolExecutionStatus, str]] = ..., read_only: _Optional[bool] = ..., idempotent: _Optional[bool] = ..., action_id: _Optional[str] = ..., result_digest: _Optional[str] = ..., result_preview: _Optional[str] = ..., error_code: _Optional[str] = ..., error_message: _Optional[str] = ..., runner_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ..., requested_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RecordToolExecutionsRequest(_message.Message):
    __slots__ = ("run_id", "lease_epoch", "entries")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    lease_epoch: int
    entries: _containers.RepeatedCompositeFieldContainer[ToolExecution]
    def __init__(self, run_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ..., entries: _Optional[_Iterable[_Union[ToolExecution, _Mapping]]] = ...) -> None: ...

class RecordToolExecutionsResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[ToolExecution]
    def __init__(self, entries: _Optional[_Iterable[_Union[ToolExecution, _Mapping]]] = ...) -> None: ...

class FetchToolExecutionsRequest(_message.Message):
    __slots__ = ("run_id", "interaction_id", "page_size", "page_token")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    interaction_id: str
    page_size: int
    page_token: str
    def __init__(self, run_id: _Optional[str] = ..., interaction_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class FetchToolExecutionsResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[ToolExecution]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[ToolExecution, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListToolExecutionsRequest(_message.Message):
    __slots__ = ("run_id", "interaction_id", "page_size", "page_token")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    INTERACTION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    interaction_id: str
    page_size: int
    page_token: str
    def __init__(self, run_id: _Optional[str] = ..., interaction_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListToolExecutionsResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[ToolExecution]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[ToolExecution, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
