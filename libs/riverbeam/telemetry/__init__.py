"""OpenTelemetry tracing for Riverbeam: off unless configured.

    configure_tracing(...)         install the process's TracerProvider (OTLP, or a given exporter)
    TracingServerInterceptor       SERVER span per RPC, continuing the caller's W3C traceparent
    tracing_client_interceptors()  CLIENT span per RPC + traceparent out; [] when tracing is off
    run_span / model_span / tool_span
                                   GenAI spans: invoke_agent, chat {model}, execute_tool {tool}

Every entry point takes an optional `tracer_provider`; without one it uses the configured
provider, and with none configured it does nothing.
"""

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
