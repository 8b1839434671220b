"""Input guardrails before the turn is stored: nothing unredacted is persisted (issue 12).

The pipeline asks the agent to guard the user's turn before the begin-run step saves the
human message (`guard_input`, an optional method of an agent; RigAgentRunner has it). The
stage runs once, there: a rewrite (redaction) changes the stored message and what the model
sees alike; a tripwire or a guardrail that cannot decide is kept and raised by the run at its
input step, so the refusal is recorded on the run as before, with the text stored as far as
the guardrails before it had rewritten it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from riverbeam.agents._guardrails import Guardrail, GuardrailEvent, run_guardrails
from riverbeam.core.errors import RiverbeamError
from riverbeam.types import ContentPart

__all__ = ["GuardedInput", "guard_content"]


@dataclass(frozen=True, slots=True)
class GuardedInput:
    """The input stage's outcome, computed before the turn was stored.

    Attributes:
        content: The turn as stored and shown to the model (text rewritten, other parts kept).
        events: The guardrails that rewrote, blocked or failed, in order.
        error: The tripwire (BEM-205) or failure (BEM-208) the run ends with, if any.
    """

    content: list[ContentPart]
    events: tuple[GuardrailEvent, ...] = ()
    error: RiverbeamError | None = None


def _text(content: Sequence[ContentPart]) -> str:
    return "".join(p.text or "" for p in content if p.type == "text")


async def guard_content(
    guardrails: Sequence[Guardrail], content: Sequence[ContentPart]
) -> GuardedInput | None:
    """Run the input stage over the turn's text; None when no guardrail applies or no text."""
    applying = [g for g in guardrails if g.applies_to("input")]
    text = _text(content)
    if not applying or not text:
        return None
    events: list[GuardrailEvent] = []
    guarded = text
    error: RiverbeamError | None = None
    for guardrail in applying:  # one at a time: a later tripwire keeps the earlier rewrites
        try:
            guarded = await run_guardrails([guardrail], "input", guarded, events)
        except RiverbeamError as err:
            error = err
            break
    parts = list(content)
    if guarded != text:
        parts = [ContentPart.of_text(guarded), *(p for p in content if p.type != "text")]
    return GuardedInput(parts, tuple(events), error)
