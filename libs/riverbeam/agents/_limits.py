"""Run limits: a whole-run time limit, a token budget, and the number of tool rounds.

Each limit comes from up to three places: the agent's options, the deployment's defaults
(AgentLayerConfig) and the request. The smallest wins: a request can only shorten a limit,
never lengthen it. A run that hits one ends with its own code (BEM-215 time, BEM-216 tokens,
BEM-088 rounds), its partial answer and its usage recorded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import TokenUsage

__all__ = ["Deadline", "RunLimits", "smallest"]

_T = TypeVar("_T")


def smallest(*values: float | int | None) -> Any:
    """The smallest of the values that are set, or None."""
    present = [v for v in values if v is not None]
    return min(present) if present else None


@dataclass(frozen=True, slots=True)
class RunLimits:
    """The limits one run works under.

    Attributes:
        time_limit_s: Seconds the whole run may take (model calls, tools, guardrails).
        token_budget: Prompt plus completion tokens of all the run's model calls.
        max_rounds: Tool rounds; the model asking for one more is BEM-088.
    """

    time_limit_s: float | None
    token_budget: int | None
    max_rounds: int

    def __post_init__(self) -> None:
        if self.time_limit_s is not None and self.time_limit_s <= 0:
            raise RiverbeamError(
                ErrorCode.RUN_LIMIT_INVALID, "time_limit_s must be > 0", field="time_limit_s"
            )
        if self.token_budget is not None and self.token_budget <= 0:
            raise RiverbeamError(
                ErrorCode.RUN_LIMIT_INVALID, "token_budget must be > 0", field="token_budget"
            )

    def as_json(self) -> dict[str, Any]:
        return {
            "time_limit_s": self.time_limit_s,
            "token_budget": self.token_budget,
            "max_rounds": self.max_rounds,
        }

    def check_tokens(self, usage: TokenUsage) -> None:
        """BEM-216 when the run's usage is past its budget."""
        if self.token_budget is None:
            return
        used = usage.total_tokens or usage.prompt_tokens + usage.completion_tokens
        if used > self.token_budget:
            raise RiverbeamError(
                ErrorCode.TOKEN_BUDGET_EXCEEDED,
                f"the run used {used} tokens, more than its budget of {self.token_budget}",
                token_budget=self.token_budget,
                tokens_used=used,
            )


class Deadline:
    """The end of a run's time; `run` awaits something within it (BEM-215 past it).

    The limit is applied to each awaited step, never across a `yield`, so a slow consumer of
    the frames is not what gets cancelled.
    """

    def __init__(self, limit_s: float | None, *, elapsed_before_s: float = 0.0) -> None:
        """`elapsed_before_s`: what the run already used (a run continued from a checkpoint,
        whose time limit goes on from there instead of starting again)."""
        self.limit_s = limit_s
        self.elapsed_before_s = max(elapsed_before_s, 0.0)
        now = asyncio.get_running_loop().time()
        self.when = None if limit_s is None else now + limit_s - self.elapsed_before_s
        self.started = time.monotonic()

    def elapsed_s(self) -> float:
        """The run's time so far, the time used before a continuation included."""
        return self.elapsed_before_s + (time.monotonic() - self.started)

    def expired_error(self) -> RiverbeamError:
        return RiverbeamError(
            ErrorCode.RUN_TIME_LIMIT,
            f"the run did not finish within {self.limit_s:g}s",
            time_limit_s=self.limit_s,
        )

    def check(self) -> None:
        """BEM-215 when the time is up."""
        if self.when is not None and asyncio.get_running_loop().time() >= self.when:
            raise self.expired_error()

    async def run(self, step: Awaitable[_T]) -> _T:
        """Await `step` within the deadline (none is started once it passed)."""
        if self.when is None:
            return await step
        if asyncio.get_running_loop().time() >= self.when:
            close = getattr(step, "close", None)
            if callable(close):
                close()  # never started (no "never awaited" warning)
            raise self.expired_error()
        try:
            async with asyncio.timeout_at(self.when):
                return await step
        except TimeoutError:
            raise self.expired_error() from None
