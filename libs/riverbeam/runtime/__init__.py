"""The runtime: the invoke/resume pipeline, the RiverBeam facade, crash recovery."""

import typing as _typing

from riverbeam._lazy import lazy_exports as _lazy_exports

__all__ = [
    "DEFAULT_MODEL",
    "AgentsHook",
    "CollectingSink",
    "FenceRevoker",
    "FrameSink",
    "Grant",
    "JetStreamFrames",
    "JetStreamSinks",
    "LocalRunner",
    "MemorySinks",
    "ModelConfigs",
    "Pipeline",
    "PipelineOptions",
    "PreparedRun",
    "RiverBeam",
    "RunnerClient",
    "RunnerReply",
    "SinkFactory",
    "active_agent",
    "default_client",
    "load_hook",
    "reap_once",
    "run_reaper",
    "wire_agents",
]

if _typing.TYPE_CHECKING:
    from riverbeam.runtime._client import RunnerClient, RunnerReply
    from riverbeam.runtime._facade import MemorySinks, RiverBeam
    from riverbeam.runtime._handoff import active_agent
    from riverbeam.runtime._jetstream import JetStreamSinks
    from riverbeam.runtime._jetstream_frames import JetStreamFrames
    from riverbeam.runtime._local import LocalRunner
    from riverbeam.runtime._model_configs import ModelConfigs
    from riverbeam.runtime._pipeline import Pipeline
    from riverbeam.runtime._pipeline_types import (
        DEFAULT_MODEL,
        Grant,
        PipelineOptions,
        PreparedRun,
    )
    from riverbeam.runtime._reaper import FenceRevoker, reap_once, run_reaper
    from riverbeam.runtime._sinks import CollectingSink, FrameSink, SinkFactory
    from riverbeam.runtime._wiring import AgentsHook, default_client, load_hook, wire_agents

# Each name's module, imported on first use (PEP 562): importing this package costs only
# what the caller then uses.
_LAZY: dict[str, str | tuple[str, str]] = {
    "RunnerClient": "riverbeam.runtime._client",
    "RunnerReply": "riverbeam.runtime._client",
    "MemorySinks": "riverbeam.runtime._facade",
    "RiverBeam": "riverbeam.runtime._facade",
    "active_agent": "riverbeam.runtime._handoff",
    "JetStreamFrames": "riverbeam.runtime._jetstream_frames",
    "JetStreamSinks": "riverbeam.runtime._jetstream",
    "LocalRunner": "riverbeam.runtime._local",
    "ModelConfigs": "riverbeam.runtime._model_configs",
    # The pipeline's value types are defined apart from it: the router needs Grant only.
    "DEFAULT_MODEL": "riverbeam.runtime._pipeline_types",
    "Grant": "riverbeam.runtime._pipeline_types",
    "Pipeline": "riverbeam.runtime._pipeline",
    "PipelineOptions": "riverbeam.runtime._pipeline_types",
    "PreparedRun": "riverbeam.runtime._pipeline_types",
    "FenceRevoker": "riverbeam.runtime._reaper",
    "reap_once": "riverbeam.runtime._reaper",
    "run_reaper": "riverbeam.runtime._reaper",
    "CollectingSink": "riverbeam.runtime._sinks",
    "FrameSink": "riverbeam.runtime._sinks",
    "SinkFactory": "riverbeam.runtime._sinks",
    "AgentsHook": "riverbeam.runtime._wiring",
    "default_client": "riverbeam.runtime._wiring",
    "load_hook": "riverbeam.runtime._wiring",
    "wire_agents": "riverbeam.runtime._wiring",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
