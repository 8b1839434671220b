"""The runner's step stream, RunInvokes: the router's RunInvoke calls as messages.

A RunInvoke call's setup costs more than the runner's whole answer to an echo invoke takes
to send; on a stream that is already open an invoke is one message each way (see
server/_step_lanes.py for what a stream guarantees). A step fails exactly as the unary call
would: a runner lost mid-step is the transport error (BEM-003, unavailable) the router's
lost-runner path waits on, and a caller that goes away cancels its step, as it cancels a
unary call's handler.
"""

from __future__ import annotations

from riverbeam.server._step_wire import StepWire
from riverbeam.v1 import runner_service_pb2 as pb

__all__ = ["RUNNER_INVOKES", "RUNS_IN_FLIGHT"]

RUNNER_INVOKES = StepWire(
    service=pb.DESCRIPTOR.services_by_name["RunnerService"].full_name,
    method="RunInvokes",
    request=pb.RunInvokesRequest,
    response=pb.RunInvokesResponse,
    fields={"RunInvoke": "run_invoke"},
    label="runner",
    cancels=True,
)

# Runs of one stream at once, at most. A run may last minutes (a model's answer, a tool, an
# approval's wait), so the bound is far above the store's steps': it is only a backstop.
RUNS_IN_FLIGHT = 10_000
