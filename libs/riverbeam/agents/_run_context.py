"""The context half of a RigRun: the messages rebuilt from the (compacted) history, fitted.

Before each model call the run's messages must fit its token budget: the history is
summarised once (when enabled), then its oldest turns are trimmed, then the tool loop's own
results are elided (see _compaction.py for each step); every step is noted in the run's
metadata under "agent_layer" → "compaction".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from riverbeam.agents._chat import build_messages
from riverbeam.agents._compaction import (
    CompactionOptions,
    Summary,
    elide_tool_results,
    summarize,
    trim_oldest_turn,
)
from riverbeam.agents._completion import ChatMessage
from riverbeam.agents._io import AgentContext
from riverbeam.agents._limits import RunLimits
from riverbeam.agents._tool import ToolSpec
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import Message, TokenUsage

if TYPE_CHECKING:
    from riverbeam.agents._rig import RigAgentRunner

__all__ = ["ContextFit"]


class ContextFit:
    """The context-compaction half of a RigRun (a mixin: RigRun sets these attributes)."""

    runner: RigAgentRunner
    context: AgentContext
    messages: list[ChatMessage]
    history: list[Message]
    summary: Summary | None
    compaction: CompactionOptions
    budget: int
    resolved: str | None
    usage: TokenUsage
    limits: RunLimits
    layer: dict[str, Any]
    loop_start: int
    _build: dict[str, Any]

    async def _within(self, step: Any) -> Any:
        raise NotImplementedError

    def _rebuild(self) -> None:
        """The messages from the (compacted) history, with the tool loop's own kept after."""
        base = build_messages(history=self.history, **self._build)
        self.messages = base + self.messages[self.loop_start :]
        self.loop_start = len(base)

    def _compaction_note(self) -> dict[str, Any]:
        note: dict[str, Any] = self.layer.setdefault("compaction", {"budget": self.budget})
        return note

    async def _fit(self, specs: list[ToolSpec], *, halve: bool = False) -> bool:
        """Summarise, trim, elide until the call fits the budget; whether anything changed.

        With `halve` (after a provider's context-length error) the target is half of what
        is sent now, and falling short of it is not an error.

        Raises:
            RiverbeamError: BEM-225 when the call cannot be made to fit its budget.
        """
        counter = self.runner.counter
        tokens = counter.count(self.messages, specs)
        budget = max(1, min(self.budget, tokens) // 2) if halve else self.budget
        if tokens <= budget:
            return False
        start = tokens
        note = self._compaction_note()
        note["tokens_before"] = max(note.get("tokens_before", 0), tokens)
        if self.compaction.summarize and self.summary is None:
            try:
                made = await self._within(
                    summarize(
                        self.runner.client,
                        self.history,
                        keep_turns=self.compaction.keep_turns,
                        model=self.compaction.summary_model or self.resolved,
                    )
                )
            except RiverbeamError as err:
                if err.code is ErrorCode.RUN_TIME_LIMIT:
                    raise
                note["summary_error"] = err.bem  # trimming still works
                made = None
            if made is not None:
                self.summary, self.history, usage = made
                if usage is not None:
                    self.usage = self.usage + usage
                    self.context.usage.add(usage)
                    self.limits.check_tokens(self.usage)
                note["summarized_messages"] = self.summary.messages
                self._rebuild()
                tokens = counter.count(self.messages, specs)
        while tokens > budget and self.history:
            self.history = trim_oldest_turn(self.history) or []
            note["trimmed_turns"] = note.get("trimmed_turns", 0) + 1
            self._rebuild()
            tokens = counter.count(self.messages, specs)
        while tokens > budget and elide_tool_results(self.messages[self.loop_start :]):
            note["elided_results"] = note.get("elided_results", 0) + 1
            tokens = counter.count(self.messages, specs)
        note["tokens_after"] = tokens
        if tokens > budget and not halve:
            raise RiverbeamError(
                ErrorCode.CONTEXT_OVER_BUDGET,
                f"the call needs about {tokens} tokens after compaction; the budget is {budget}",
                tokens=tokens,
                budget=budget,
            )
        return tokens < start
