"""text_result: the AgentResult of a one-text-part reply, built without validation passes.

The echo agent ends every run with `AgentResult(content=[ContentPart.of_text(reply)], ...)`
of values validation keeps as they are (its reply, its name, the run's ids, a latency):
~42k instructions for the two validation passes (callgrind), against ~19k for building the
same two models directly. `text_result` builds them directly when every value is one of
those, and validates exactly as before otherwise: a subclass, an int latency, an infinity,
an empty name are converted, or refused, by AgentResult itself.
tests/unit/agents/test_agents_plain_result.py checks over generated values that both build
the same models (their values, the order and types of them, the fields set) and refuse the
same.
"""

from __future__ import annotations

from riverbeam.types import AgentResult, ContentPart
from riverbeam.types._copying import field_defaults, model_of_valid

__all__ = ["text_part", "text_result"]


_RESULT = field_defaults(AgentResult)
_PART = field_defaults(ContentPart)
_RESULT_SET = frozenset(
    ("content", "agent_name", "session_id", "request_id", "interaction_id", "run_id", "latency_ms")
)
_PART_SET = frozenset(("type", "text"))


def text_result(
    text: str,
    *,
    agent_name: str,
    session_id: str | None,
    request_id: str | None,
    interaction_id: str | None,
    run_id: str | None,
    latency_ms: float,
) -> AgentResult:
    """`AgentResult(content=[ContentPart.of_text(text)], agent_name=..., ...)` with these
    keywords: the same model, built directly when every value is plain.

    Raises:
        pydantic.ValidationError: as AgentResult (or ContentPart) does, for values it refuses.
    """
    if not (
        type(text) is str
        and type(agent_name) is str
        and agent_name  # NonEmptyStr
        and (session_id is None or type(session_id) is str)
        and (request_id is None or type(request_id) is str)
        and (interaction_id is None or type(interaction_id) is str)
        and (run_id is None or type(run_id) is str)
        # An int would become a float; an infinity or NaN is refused (allow_inf_nan is off).
        and type(latency_ms) is float
        and latency_ms - latency_ms == 0.0
    ):
        return AgentResult(
            content=[ContentPart.of_text(text)],
            agent_name=agent_name,
            session_id=session_id,
            request_id=request_id,
            interaction_id=interaction_id,
            run_id=run_id,
            latency_ms=latency_ms,
        )
    values = _RESULT.copy()
    values["content"] = [text_part(text)]
    values["agent_name"] = agent_name
    values["session_id"] = session_id
    values["request_id"] = request_id
    values["interaction_id"] = interaction_id
    values["run_id"] = run_id
    values["tool_calls"] = []
    values["latency_ms"] = latency_ms
    values["action_required"] = []
    return model_of_valid(AgentResult, values, _RESULT_SET)


def text_part(text: str) -> ContentPart:
    """`ContentPart.of_text(text)` of an exact str, built directly (the caller checked it)."""
    values = _PART.copy()
    values["type"] = "text"
    values["text"] = text
    return model_of_valid(ContentPart, values, _PART_SET)
