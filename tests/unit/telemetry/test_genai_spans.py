"""GenAI spans: invoke_agent, chat {model}, execute_tool {tool}, in the OpenTelemetry conventions."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.telemetry import ModelSpan, model_span, run_span, tool_span


async def test_a_run_with_a_model_call_and_a_tool_call(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    async with run_span("author", "run-1", "sess-1", "req-1", tracer_provider=provider):
        async with model_span("gpt-4o", "openai", tracer_provider=provider) as call:
            call.record_usage(120, 45, "gpt-4o-2024-08-06")
        async with tool_span("read_file", "call_abc", tracer_provider=provider):
            pass

    model, tool, run = exporter.get_finished_spans()  # in the order they ended
    assert (run.name, run.kind) == ("invoke_agent author", SpanKind.INTERNAL)
    assert run.attributes == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "author",
        "gen_ai.conversation.id": "sess-1",
        "riverbeam.run_id": "run-1",
        "riverbeam.session_id": "sess-1",
        "riverbeam.request_id": "req-1",
    }
    assert (model.name, model.kind) == ("chat gpt-4o", SpanKind.CLIENT)
    assert model.attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.provider.name": "openai",
        "gen_ai.system": "openai",
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 45,
        "gen_ai.response.model": "gpt-4o-2024-08-06",
    }
    assert (tool.name, tool.kind) == ("execute_tool read_file", SpanKind.INTERNAL)
    assert tool.attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "read_file",
        "gen_ai.tool.call.id": "call_abc",
    }
    assert run.context is not None
    for child in (model, tool):
        assert child.parent is not None and child.parent.span_id == run.context.span_id
        assert child.context is not None and child.context.trace_id == run.context.trace_id
        assert child.status.status_code is StatusCode.UNSET


async def test_optional_fields_are_left_out(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    async with model_span("m", None, "text_completion", tracer_provider=provider) as call:
        call.record_usage(None, 3)
    async with tool_span("t", None, tracer_provider=provider):
        pass
    model, tool = exporter.get_finished_spans()
    assert model.name == "text_completion m"
    assert model.attributes == {
        "gen_ai.operation.name": "text_completion",
        "gen_ai.request.model": "m",
        "gen_ai.usage.output_tokens": 3,
    }
    assert tool.attributes is not None and "gen_ai.tool.call.id" not in tool.attributes


async def test_failed_tool_records_its_bem_code(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    with pytest.raises(RiverbeamError):
        async with tool_span("push", "call_1", tracer_provider=provider):
            raise RiverbeamError(ErrorCode.TOOL_FAILED, "push rejected")
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "BEM-092: push rejected"
    assert span.attributes is not None
    assert span.attributes["error.type"] == "BEM-092"
    assert span.attributes["riverbeam.error.code"] == "BEM-092"
    assert [e.name for e in span.events] == ["exception"]


async def test_cancelled_model_call_is_marked_and_still_cancels(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    with pytest.raises(asyncio.CancelledError):
        async with model_span("m", tracer_provider=provider):
            raise asyncio.CancelledError
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None and span.attributes["error.type"] == "CancelledError"


async def test_spans_are_current_inside_the_block(provider: TracerProvider) -> None:
    async with run_span("a", None, None, None, tracer_provider=provider):
        assert trace.get_current_span().is_recording()
    assert not trace.get_current_span().is_recording()


async def test_off_everything_is_a_no_op(exporter: InMemorySpanExporter) -> None:
    async with run_span("a", "r", "s", "q"):
        assert trace.get_current_span() is trace.INVALID_SPAN
        async with model_span("m", "openai") as call:
            assert isinstance(call, ModelSpan)
            call.record_usage(1, 2, "m")
            assert trace.get_current_span() is trace.INVALID_SPAN
        async with tool_span("t", "c"):
            assert trace.get_current_span() is trace.INVALID_SPAN
    with pytest.raises(RiverbeamError):
        async with tool_span("t"):
            raise RiverbeamError(ErrorCode.TOOL_FAILED)
    assert exporter.get_finished_spans() == ()
