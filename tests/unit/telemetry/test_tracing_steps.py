"""Store steps on RunSteps streams are traced as their unary calls are: a CLIENT and a SERVER
span per step, named after the unary method, in the caller's trace; a refused step records its
BEM code on both."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from riverbeam.core.errors import RiverbeamError
from riverbeam.server import GrpcServer
from riverbeam.store import InMemoryStore, StoreClient
from riverbeam.telemetry import configure_tracing
from riverbeam.telemetry._attributes import RIVERBEAM_ERROR_CODE
from riverbeam.types import ContentPart
from services.store.app import binding


async def test_each_step_on_a_lane_has_a_client_and_a_server_span() -> None:
    exporter = InMemorySpanExporter()
    configure_tracing("riverbeam-test", enabled=True, exporter=exporter, set_global=False)
    async with GrpcServer([binding(InMemoryStore())]) as server:
        client = StoreClient(server.address, step_lanes=1)
        try:
            begun = await client.begin_run(
                session_id="s-1",
                agent_name="author",
                run_id="r-1",
                lease_owner="runner-a",
                lease_ttl_s=60.0,
                human_content=[ContentPart.of_text("hi")],
            )
            with pytest.raises(RiverbeamError) as refused:  # another runner's lease
                await client.finish_run(run_id="r-1", lease_owner="runner-b", status="completed")
        finally:
            await client.aclose()
    assert begun.run.run_id == "r-1"
    spans = exporter.get_finished_spans()
    named = {(s.kind, s.name) for s in spans}
    for name in ("BeginRun", "FinishRun"):
        assert (SpanKind.CLIENT, f"riverbeam.v1.StoreService/{name}") in named
        assert (SpanKind.SERVER, f"riverbeam.v1.StoreService/{name}") in named
    assert not any(s.name.endswith("/RunSteps") for s in spans)
    by_name = {(s.kind, s.name): s for s in spans}
    for name in ("BeginRun", "FinishRun"):
        client_span = by_name[(SpanKind.CLIENT, f"riverbeam.v1.StoreService/{name}")]
        server_span = by_name[(SpanKind.SERVER, f"riverbeam.v1.StoreService/{name}")]
        assert server_span.parent is not None
        assert server_span.parent.span_id == client_span.context.span_id
        assert server_span.context.trace_id == client_span.context.trace_id
    finish = [s for s in spans if s.name.endswith("/FinishRun")]
    assert all(s.attributes is not None for s in finish)
    assert {s.attributes[RIVERBEAM_ERROR_CODE] for s in finish if s.attributes} == {
        refused.value.bem
    }
