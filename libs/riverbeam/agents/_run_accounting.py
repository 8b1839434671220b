"""What a run's model calls cost and which model served them (a mixin of RigRun), and the
Prometheus figures of each call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from riverbeam.agents._completion import Text, ToolCalls
from riverbeam.agents._io import AgentContext
from riverbeam.routing import token_cost
from riverbeam.telemetry._metrics import MODEL_COST, MODEL_LATENCY, MODEL_TOKENS
from riverbeam.types import TokenUsage

if TYPE_CHECKING:
    from riverbeam.agents._rig import RigAgentRunner

__all__ = ["ModelAccounting", "observe_model"]


class ModelAccounting:
    """Usage, cost and the served model of a run's calls; `self` is the RigRun."""

    runner: RigAgentRunner
    context: AgentContext
    resolved: str | None
    model_used: str | None
    usage: TokenUsage

    def _cost(self, completion: Text | ToolCalls | None) -> float:
        """What the call cost at the routed model's list price (0 for the placeholder)."""
        resolved = self.context.model_config_resolved
        if resolved is None or completion is None or completion.usage is None:
            return 0.0
        return token_cost(
            resolved,
            prompt_tokens=completion.usage.prompt_tokens,
            completion_tokens=completion.usage.completion_tokens,
        )

    def _requested_model(self) -> str:
        """The model this call asks for: the router's choice, else the client's own default."""
        pinned = getattr(self.runner.client, "pin_model", False)
        default = getattr(self.runner.client, "default_model", None)
        if pinned and isinstance(default, str):
            return default
        return (
            self.resolved
            or self.model_used
            or (default if isinstance(default, str) else None)
            or "unknown"
        )

    def _provider(self) -> str | None:
        resolved = self.context.model_config_resolved
        if resolved is not None:
            return resolved.provider
        name = getattr(self.runner.client, "provider_name", None)
        return name if isinstance(name, str) else None

    def _account(self, completion: Text | ToolCalls) -> None:
        if completion.usage is not None:
            self.usage = self.usage + completion.usage
            self.context.usage.add(completion.usage)
        self.model_used = completion.model or self._requested_model()
        self.context.usage.model = self.model_used


def observe_model(
    model: str, seconds: float, completion: Text | ToolCalls | None, cost: float = 0.0
) -> None:
    """Model latency, tokens and cost, for Prometheus."""
    MODEL_LATENCY.labels(model).observe(seconds)
    if cost:
        MODEL_COST.labels(model).inc(cost)
    if completion is not None and completion.usage is not None:
        MODEL_TOKENS.labels(model, "input").inc(completion.usage.prompt_tokens)
        MODEL_TOKENS.labels(model, "output").inc(completion.usage.completion_tokens)
