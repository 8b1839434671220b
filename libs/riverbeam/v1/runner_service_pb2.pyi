from riverbeam.v1 import riverbeam_service_pb2 as _riverbeam_service_pb2
from riverbeam.v1 import store_service_pb2 as _store_service_pb2
from riverbeam.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CallerGrant(_message.Message):
    __slots__ = ("may_confirm", "subject", "require_owner", "require_org", "session_config_narrows_only")
    MAY_CONFIRM_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_OWNER_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_ORG_FIELD_NUMBER: _ClassVar[int]
    SESSION_CONFIG_NARROWS_ONLY_FIELD_NUMBER: _ClassVar[int]
    may_confirm: bool
    subject: str
    require_owner: str
    require_org: str
    session_config_narrows_only: bool
    def __init__(self, may_confirm: _Optional[bool] = ..., subject: _Optional[str] = ..., require_owner: _Optional[str] = ..., require_org: _Optional[str] = ..., session_config_narrows_only: _Optional[bool] = ...) -> None: ...

class RunInvokeRequest(_message.Message):
    __slots__ = ("request", "model", "grant")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    GRANT_FIELD_NUMBER: _ClassVar[int]
    request: _types_pb2.InvokeRequest
    model: _types_pb2.ModelConfig
    grant: CallerGrant
    def __init__(self, request: _Optional[_Union[_types_pb2.InvokeRequest, _Mapping]] = ..., model: _Optional[_Union[_types_pb2.ModelConfig, _Mapping]] = ..., grant: _Optional[_Union[CallerGrant, _Mapping]] = ...) -> None: ...

class RunInvokeResponse(_message.Message):
    __slots__ = ("result", "ack")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ACK_FIELD_NUMBER: _ClassVar[int]
    result: _types_pb2.AgentResult
    ack: _types_pb2.StreamAck
    def __init__(self, result: _Optional[_Union[_types_pb2.AgentResult, _Mapping]] = ..., ack: _Optional[_Union[_types_pb2.StreamAck, _Mapping]] = ...) -> None: ...

class RunInvokeStep(_message.Message):
    __slots__ = ("step_id", "run_invoke", "timeout_s", "trace_context")
    class TraceContextEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_INVOKE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    run_invoke: RunInvokeRequest
    timeout_s: float
    trace_context: _containers.ScalarMap[str, str]
    def __init__(self, step_id: _Optional[int] = ..., run_invoke: _Optional[_Union[RunInvokeRequest, _Mapping]] = ..., timeout_s: _Optional[float] = ..., trace_context: _Optional[_Mapping[str, str]] = ...) -> None: ...

class RunInvokesRequest(_message.Message):
    __slots__ = ("steps", "cancelled")
    STEPS_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    steps: _containers.RepeatedCompositeFieldContainer[RunInvokeStep]
    cancelled: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, steps: _Optional[_Iterable[_Union[RunInvokeStep, _Mapping]]] = ..., cancelled: _Optional[_Iterable[int]] = ...) -> None: ...

class RunInvokeStepResult(_message.Message):
    __slots__ = ("step_id", "run_invoke", "error")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_INVOKE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    run_invoke: _riverbeam_service_pb2.InvokeResponse
    error: _store_service_pb2.RunStepError
    def __init__(self, step_id: _Optional[int] = ..., run_invoke: _Optional[_Union[_riverbeam_service_pb2.InvokeResponse, _Mapping]] = ..., error: _Optional[_Union[_store_service_pb2.RunStepError, _Mapping]] = ...) -> None: ...

class RunInvokesResponse(_message.Message):
    __slots__ = ("results", "drained_after")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    DRAINED_AFTER_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[RunInvokeStepResult]
    drained_after: int
    def __init__(self, results: _Optional[_Iterable[_Union[RunInvokeStepResult, _Mapping]]] = ..., drained_after: _Optional[int] = ...) -> None: ...

class RunResumeRequest(_message.Message):
    __slots__ = ("request", "model", "grant")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    GRANT_FIELD_NUMBER: _ClassVar[int]
    request: _riverbeam_service_pb2.ResumeRequest
    model: _types_pb2.ModelConfig
    grant: CallerGrant
    def __init__(self, request: _Optional[_Union[_riverbeam_service_pb2.ResumeRequest, _Mapping]] = ..., model: _Optional[_Union[_types_pb2.ModelConfig, _Mapping]] = ..., grant: _Optional[_Union[CallerGrant, _Mapping]] = ...) -> None: ...

class RunResumeResponse(_message.Message):
    __slots__ = ("ack",)
    ACK_FIELD_NUMBER: _ClassVar[int]
    ack: _types_pb2.StreamAck
    def __init__(self, ack: _Optional[_Union[_types_pb2.StreamAck, _Mapping]] = ...) -> None: ...

class CancelRunRequest(_message.Message):
    __slots__ = ("request_id", "reason")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    reason: str
    def __init__(self, request_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CancelRunResponse(_message.Message):
    __slots__ = ("cancelled",)
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    cancelled: bool
    def __init__(self, cancelled: _Optional[bool] = ...) -> None: ...

class ListRegisteredAgentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListRegisteredAgentsResponse(_message.Message):
    __slots__ = ("agents",)
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[_types_pb2.AgentMetadata]
    def __init__(self, agents: _Optional[_Iterable[_Union[_types_pb2.AgentMetadata, _Mapping]]] = ...) -> None: ...
