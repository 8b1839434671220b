"""The store's step stream, RunSteps: BeginRun and FinishRun as messages (server/_step_wire.py).

A step that fails in transport is BEM-120 (the store is unreachable), as the unary call is.
"""

from __future__ import annotations

import grpc

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server._step_wire import StepWire
from riverbeam.v1 import store_service_pb2 as pb

__all__ = ["STORE_STEPS", "store_error"]

# Statuses a transport failure (no Riverbeam ErrorInfo) can carry: the store is unreachable.
_TRANSPORT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def store_error(err: RiverbeamError, code: grpc.StatusCode | None) -> RiverbeamError:
    """A transport failure of a store call is BEM-120 (the store is unreachable)."""
    if err.transport and code in _TRANSPORT:
        return RiverbeamError(ErrorCode.STORE_UNAVAILABLE, err.message, **err.details)
    return err


STORE_STEPS = StepWire(
    service=pb.DESCRIPTOR.services_by_name["StoreService"].full_name,
    method="RunSteps",
    request=pb.RunStepsRequest,
    response=pb.RunStepsResponse,
    fields={"BeginRun": "begin_run", "FinishRun": "finish_run"},
    label="store",
    translate=store_error,
)
