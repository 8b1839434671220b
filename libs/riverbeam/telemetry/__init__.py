"""OpenTelemetry tracing for Riverbeam: off unless configured.

    configure_tracing(...)         install the process's TracerProvider (OTLP, or a given exporter)
    TracingServerInterceptor       SERVER span per RPC, continuing the caller's W3C traceparent
    tracing_client_interceptors()  CLIENT span per RPC + traceparent out; [] when tracing is off
    run_span / model_span / tool_span
                                   GenAI spans: invoke_agent, chat {model}, execute_tool {tool}

Every entry point takes an optional `tracer_provider`; without one it uses the configured
provider, and with none configured it does nothing.
"""

import typing as _typing

from riverbeam._lazy import lazy_exports as _lazy_exports

__all__ = [
    "ModelSpan",
    "TracingServerInterceptor",
    "TracingUnaryStreamClientInterceptor",
    "TracingUnaryUnaryClientInterceptor",
    "configure_tracing",
    "current_log_context",
    "current_tracer_provider",
    "log_context",
    "model_span",
    "run_span",
    "shutdown_tracing",
    "tool_span",
    "tracing_client_interceptors",
    "tracing_requested",
    "tracing_server_interceptors",
]

if _typing.TYPE_CHECKING:
    from riverbeam.telemetry._client import (
        TracingUnaryStreamClientInterceptor,
        TracingUnaryUnaryClientInterceptor,
        tracing_client_interceptors,
    )
    from riverbeam.telemetry._genai import ModelSpan, model_span, run_span, tool_span
    from riverbeam.telemetry._log_context import current_log_context, log_context
    from riverbeam.telemetry._server import TracingServerInterceptor, tracing_server_interceptors
    from riverbeam.telemetry._setup import (
        configure_tracing,
        current_tracer_provider,
        shutdown_tracing,
        tracing_requested,
    )

# Each name's module, imported on first use (PEP 562): importing this package costs only
# what the caller then uses.
_LAZY: dict[str, str | tuple[str, str]] = {
    "TracingUnaryStreamClientInterceptor": "riverbeam.telemetry._client",
    "TracingUnaryUnaryClientInterceptor": "riverbeam.telemetry._client",
    "tracing_client_interceptors": "riverbeam.telemetry._client",
    "ModelSpan": "riverbeam.telemetry._genai",
    "model_span": "riverbeam.telemetry._genai",
    "run_span": "riverbeam.telemetry._genai",
    "tool_span": "riverbeam.telemetry._genai",
    "current_log_context": "riverbeam.telemetry._log_context",
    "log_context": "riverbeam.telemetry._log_context",
    "TracingServerInterceptor": "riverbeam.telemetry._server",
    "tracing_server_interceptors": "riverbeam.telemetry._server",
    "configure_tracing": "riverbeam.telemetry._setup",
    "current_tracer_provider": "riverbeam.telemetry._setup",
    "shutdown_tracing": "riverbeam.telemetry._setup",
    "tracing_requested": "riverbeam.telemetry._setup",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
