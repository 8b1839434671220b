"""What both ends of a step stream share (the store's RunSteps, the runner's RunInvokes).

A step stream carries unary calls of one service as messages on a long-lived bidi stream:
each step is one call's request with a step id, each result that call's response or the
status it would have ended with (a RunStepError). `StepWire` names a stream's messages and
fields; every step stream spells them alike:

- the request message has `steps` (each with `step_id`, `timeout_s`, `trace_context` and a
  oneof `step` with one field per unary method) and, where steps can be cancelled,
  `cancelled` (step ids);
- the response message has `results` (each with `step_id` and a oneof `outcome`: a field per
  method, of its response type, or `error`) and `drained_after`.

Messages are of bounded size (`Outbox`): the client's batches of steps, the server's of
results.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import grpc
from google.rpc import status_pb2

from riverbeam.core.errors import RiverbeamError
from riverbeam.server._status import error_from_status, rich_status
from riverbeam.v1 import store_service_pb2 as store_pb

__all__ = ["EOF", "MAX_BATCH_BYTES", "Outbox", "StepWire", "step_error"]

# Steps (or results) of at most this many bytes share a message; a larger one goes alone.
MAX_BATCH_BYTES = 4 * 1024 * 1024
EOF: Any = grpc.aio.EOF  # type: ignore[attr-defined]  # (not in grpc's stubs)
_CODES = {code.value[0]: code for code in grpc.StatusCode}

Translate = Callable[[RiverbeamError, grpc.StatusCode | None], RiverbeamError]


def _as_is(err: RiverbeamError, code: grpc.StatusCode | None) -> RiverbeamError:
    return err


@dataclass(frozen=True)
class StepWire:
    """One step stream: its service and method, its messages, and a field per unary method.

    `label` names the service in errors (as `error_from_rpc(service=...)` does); `translate`
    is what the service's unary client does to a failed call's error (the store's makes a
    transport failure BEM-120), so that a step fails exactly as its unary call would.
    `cancels`: the request message has `cancelled`, and a caller that stops waiting cancels
    its step on the server (a unary caller's cancel cancels the handler).
    """

    service: str
    method: str
    request: Any
    response: Any
    fields: Mapping[str, str]
    label: str
    translate: Translate = _as_is
    cancels: bool = False
    methods: Mapping[str, str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "methods", {f: m for m, f in self.fields.items()})

    @property
    def path(self) -> str:
        return f"/{self.service}/{self.method}"

    def error(self, code: grpc.StatusCode, message: str) -> RiverbeamError:
        """The error of a call that ended with `code` and no rich status (a transport
        failure), as the unary client would raise it."""
        return self.translate(error_from_status(code, message, None, service=self.label), code)

    def error_of(self, error: Any) -> RiverbeamError:
        """The error of a step answered with a RunStepError, as its unary call's."""
        code = _CODES.get(error.code, grpc.StatusCode.UNKNOWN)
        status = None
        if error.status_details:
            status = status_pb2.Status.FromString(error.status_details)
        return self.translate(
            error_from_status(code, error.message, status, service=self.label), code
        )


def step_error(err: RiverbeamError) -> Any:
    """The RunStepError of a step that raised `err`: the status its unary call would end with."""
    return store_pb.RunStepError(
        code=err.grpc_status.value[0],
        message=err.message,
        status_details=rich_status(err).SerializeToString(),
    )


M = TypeVar("M")


class Outbox(Generic[M]):
    """Messages to write, in order: what is added goes into the last while it has room."""

    __slots__ = ("_messages", "_new", "_room")

    def __init__(self, new: Callable[[], M]) -> None:
        self._new = new
        self._messages: list[M] = []
        self._room = 0

    def __bool__(self) -> bool:
        return bool(self._messages)

    def room_for(self, size: int) -> M:
        """The message to add `size` bytes to: the last, or a new one when it has no room."""
        if not self._messages or size > self._room:
            self._messages.append(self._new())
            self._room = MAX_BATCH_BYTES
        self._room -= size
        return self._messages[-1]

    def last(self) -> M:
        """The last message (a new, empty one when there is none)."""
        if not self._messages:
            self._messages.append(self._new())
            self._room = MAX_BATCH_BYTES
        return self._messages[-1]

    def take(self) -> list[M]:
        """Every message, in order; the outbox is empty after."""
        messages, self._messages = self._messages, []
        return messages
