"""ScriptedClient: a CompletionClient that plays back given completions, for tests."""

from __future__ import annotations

import copy
import re
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from riverbeam.agents._completion import (
    ChatMessage,
    Completion,
    CompletionEvent,
    StructuredStreaming,
    Text,
    TextDelta,
    ToolCalls,
    collect,
)
from riverbeam.agents._tool import ToolSpec
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["ScriptStep", "ScriptedCall", "ScriptedClient"]

ScriptStep: TypeAlias = Text | ToolCalls | RiverbeamError
"""One scripted reply: a completion to return, or an error to raise."""

_PIECES = re.compile(r"\s*\S+\s*|\s+")


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """What the client was called with (a deep copy of the messages)."""

    messages: list[ChatMessage]
    tools: list[ToolSpec]
    model: str | None
    response_format: dict[str, Any] | None = None

    @property
    def tool_names(self) -> list[str]:
        return [spec.name for spec in self.tools]


class ScriptedClient(StructuredStreaming):
    """Returns the given steps in order, one per call; BEM-081 when it runs out.

    Text is streamed word by word as TextDelta events before the Completion. A step without a
    model reports the model it was asked for (or `model`).

    Args:
        steps: The replies, in order. A RiverbeamError step is raised by its call.
        model: The model reported when neither the step nor the caller names one.
    """

    def __init__(self, steps: Iterable[ScriptStep], *, model: str = "scripted") -> None:
        self._steps: deque[ScriptStep] = deque(steps)
        self._model = model
        self.calls: list[ScriptedCall] = []

    provider_name = "riverbeam.scripted"
    """gen_ai.provider.name of its spans."""

    @property
    def default_model(self) -> str:
        """The model reported when neither the step nor the caller names one."""
        return self._model

    @property
    def remaining(self) -> int:
        """Steps not played yet."""
        return len(self._steps)

    def push(self, *steps: ScriptStep) -> None:
        """Append steps to the script."""
        self._steps.extend(steps)

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
    ) -> Completion:
        """The next step's Completion."""
        return await collect(self.stream(messages, tools, model=model))

    async def stream_structured(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
        response_format: Mapping[str, Any] | None,
    ) -> AsyncIterator[CompletionEvent]:
        """`stream`, recording the native response format it was asked for."""
        self.calls.append(
            ScriptedCall(
                messages=[copy.deepcopy(dict(m)) for m in messages],
                tools=list(tools),
                model=model,
                response_format=copy.deepcopy(dict(response_format)) if response_format else None,
            )
        )
        if not self._steps:
            raise RiverbeamError(
                ErrorCode.SCRIPT_EXHAUSTED,
                f"scripted client ran out after {len(self.calls) - 1} steps",
            )
        step = self._steps.popleft()
        if isinstance(step, RiverbeamError):
            raise step.with_details({})
        for piece in _PIECES.findall(step.text):
            yield TextDelta(piece)
        yield step if step.model else replace(step, model=model or self._model)
