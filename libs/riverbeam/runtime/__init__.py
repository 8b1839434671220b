"""The runtime: the invoke/resume pipeline, the RiverBeam facade, crash recovery."""

from riverbeam.runtime._client import RunnerClient
from riverbeam.runtime._facade import MemorySinks, RiverBeam
from riverbeam.runtime._jetstream import JetStreamFrames, JetStreamSinks
from riverbeam.runtime._local import LocalRunner
from riverbeam.runtime._pipeline import DEFAULT_MODEL, Grant, Pipeline, PipelineOptions, PreparedRun
from riverbeam.runtime._reaper import FenceRevoker, reap_once, run_reaper
from riverbeam.runtime._sinks import CollectingSink, FrameSink, SinkFactory
from riverbeam.runtime._wiring import AgentsHook, default_client, load_hook, wire_agents

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
    "Pipeline",
    "PipelineOptions",
    "PreparedRun",
    "RiverBeam",
    "RunnerClient",
    "SinkFactory",
    "default_client",
    "load_hook",
    "reap_once",
    "run_reaper",
    "wire_agents",
]
