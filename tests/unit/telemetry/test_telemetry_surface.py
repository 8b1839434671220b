"""The public surface of riverbeam.telemetry is what __all__ says."""

from __future__ import annotations

import riverbeam.telemetry as telemetry

EXPECTED = {
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
}


def test_all_is_the_public_surface() -> None:
    assert set(telemetry.__all__) == EXPECTED
    assert telemetry.__all__ == sorted(telemetry.__all__)
    for name in telemetry.__all__:
        assert getattr(telemetry, name) is not None
    public = {n for n in vars(telemetry) if not n.startswith("_")}
    assert public - EXPECTED == set(), "modules or names leaking into the package namespace"
