"""The public API's logic, served by the router."""

from riverbeam.gateway._gateway import Gateway
from riverbeam.gateway._invoke_stream import stream_request
from riverbeam.gateway._ports import FramesPort, RunnerPort

__all__ = ["FramesPort", "Gateway", "RunnerPort", "stream_request"]
