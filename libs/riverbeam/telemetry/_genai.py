"""Spans of an agent's work, in the OpenTelemetry GenAI conventions: run, model call, tool call."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Span, SpanKind
from opentelemetry.util.types import AttributeValue

from riverbeam.telemetry._attributes import (
    GEN_AI_AGENT_NAME,
    GEN_AI_CONVERSATION_ID,
    GEN_AI_OPERATION_NAME,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_SYSTEM,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_NAME,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    RIVERBEAM_REQUEST_ID,
    RIVERBEAM_RUN_ID,
    RIVERBEAM_SESSION_ID,
)
from riverbeam.telemetry._setup import resolve_tracer
from riverbeam.telemetry._span import traced

__all__ = ["ModelSpan", "model_span", "run_span", "tool_span"]


class ModelSpan:
    """The span of one model call, to record what the response reported."""

    __slots__ = ("_span",)

    def __init__(self, span: Span) -> None:
        self._span = span

    def record_usage(
        self,
        input_tokens: int | None,
        output_tokens: int | None,
        response_model: str | None = None,
    ) -> None:
        """Token usage and the model that answered; None for what the endpoint did not say."""
        if input_tokens is not None:
            self._span.set_attribute(GEN_AI_USAGE_INPUT_TOKENS, input_tokens)
        if output_tokens is not None:
            self._span.set_attribute(GEN_AI_USAGE_OUTPUT_TOKENS, output_tokens)
        if response_model:
            self._span.set_attribute(GEN_AI_RESPONSE_MODEL, response_model)


_OFF = ModelSpan(INVALID_SPAN)


@asynccontextmanager
async def model_span(
    model: str,
    provider: str | None = None,
    operation: str = "chat",
    *,
    tracer_provider: trace.TracerProvider | None = None,
) -> AsyncIterator[ModelSpan]:
    """A CLIENT span `"{operation} {model}"` around one model call.

    `async with model_span("gpt-4o", "openai") as call: ...; call.record_usage(12, 40, "gpt-4o-2024-08-06")`

    Args:
        model: the model requested (gen_ai.request.model).
        provider: gen_ai.provider.name, e.g. "openai"; also written as gen_ai.system.
        operation: gen_ai.operation.name: "chat", "text_completion", "embeddings", ...
        tracer_provider: where the span goes; None means the configured one (or nothing).
    """
    tracer = resolve_tracer(tracer_provider)
    if tracer is None:
        yield _OFF
        return
    attributes: dict[str, AttributeValue] = {
        GEN_AI_OPERATION_NAME: operation,
        GEN_AI_REQUEST_MODEL: model,
    }
    if provider:
        attributes[GEN_AI_PROVIDER_NAME] = provider
        attributes[GEN_AI_SYSTEM] = provider
    name = f"{operation} {model}" if model else operation
    with traced(tracer, name, kind=SpanKind.CLIENT, attributes=attributes) as span:
        yield ModelSpan(span)


@asynccontextmanager
async def tool_span(
    tool_name: str,
    tool_call_id: str | None = None,
    *,
    tracer_provider: trace.TracerProvider | None = None,
) -> AsyncIterator[None]:
    """An INTERNAL span `"execute_tool {tool_name}"` around one tool call.

    Args:
        tool_name: gen_ai.tool.name.
        tool_call_id: gen_ai.tool.call.id, the id the model gave the call.
        tracer_provider: where the span goes; None means the configured one (or nothing).
    """
    tracer = resolve_tracer(tracer_provider)
    if tracer is None:
        yield
        return
    attributes: dict[str, AttributeValue] = {
        GEN_AI_OPERATION_NAME: "execute_tool",
        GEN_AI_TOOL_NAME: tool_name,
    }
    if tool_call_id:
        attributes[GEN_AI_TOOL_CALL_ID] = tool_call_id
    with traced(tracer, f"execute_tool {tool_name}", kind=SpanKind.INTERNAL, attributes=attributes):
        yield


@asynccontextmanager
async def run_span(
    agent_name: str,
    run_id: str | None,
    session_id: str | None,
    request_id: str | None,
    *,
    tracer_provider: trace.TracerProvider | None = None,
) -> AsyncIterator[None]:
    """An INTERNAL span `"invoke_agent {agent_name}"` around one agent run.

    Carries gen_ai.operation.name=invoke_agent, gen_ai.agent.name, gen_ai.conversation.id
    (the session) and riverbeam.run_id / session_id / request_id, so a trace is found from
    any of the ids in a log line or a frame.
    """
    tracer = resolve_tracer(tracer_provider)
    if tracer is None:
        yield
        return
    attributes: dict[str, AttributeValue] = {
        GEN_AI_OPERATION_NAME: "invoke_agent",
        GEN_AI_AGENT_NAME: agent_name,
    }
    for key, value in (
        (GEN_AI_CONVERSATION_ID, session_id),
        (RIVERBEAM_RUN_ID, run_id),
        (RIVERBEAM_SESSION_ID, session_id),
        (RIVERBEAM_REQUEST_ID, request_id),
    ):
        if value:
            attributes[key] = value
    with traced(
        tracer, f"invoke_agent {agent_name}", kind=SpanKind.INTERNAL, attributes=attributes
    ):
        yield
