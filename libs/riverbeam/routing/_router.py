"""Model routing: which configured model serves a request.

Strategies, in order (docs/routing.md):

1. ``model_override``: the named model, if it exists (042), accepts the content (041) and has
   the required capabilities (043). Without one, the agent's own ``model`` (from its
   configuration) is taken the same way (reason ``agent_model``).
2. Modalities: keep the models whose modalities cover the content's (none: 041).
3. Capabilities: keep the models having every name in ``metadata.capabilities`` (none: 043).
4. Agent tags: prefer the models having a capability named like one of the agent's tags
   (a preference: when none has one, all stay).
5. Cost: the lowest ``cost_per_1k_tokens``; ties go to the earlier model in the list.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.routing._model_list import ModelList
from riverbeam.types import (
    AgentMetadata,
    ContentPart,
    Modality,
    ModelConfig,
    deep_copy,
    modalities_of,
)

__all__ = ["ModelRouter", "RoutingDecision", "RoutingReason"]

_log = logging.getLogger("riverbeam.routing")


class RoutingReason(enum.StrEnum):
    """The strategy that settled the choice."""

    OVERRIDE = "model_override"
    """The request named the model."""
    AGENT_MODEL = "agent_model"
    """The agent's configuration names the model."""
    ONLY_MODEL = "only_model"
    """The list has a single model (and it fits)."""
    MODALITIES = "modalities"
    """One model left after the content's modalities."""
    CAPABILITIES = "capabilities"
    """One model left after ``metadata.capabilities``."""
    AGENT_TAGS = "agent_tags"
    """One model left after preferring the agent's tags."""
    COST = "cost"
    """The single cheapest of the remaining models."""
    LIST_ORDER = "list_order"
    """Equally cheap models; the first in the list won."""


@dataclass(frozen=True, slots=True)
class RoutingDecision:
    """The model a request runs with, and why.

    Attributes:
        model: A copy of the chosen model's configuration (with `share_model`, the
            configured model itself).
        reason: The strategy that settled the choice.
        candidates: The names still in the running when it was settled, in list order.
    """

    model: ModelConfig
    reason: RoutingReason
    candidates: tuple[str, ...]


# Routed decisions a router keeps (one per distinct modalities, capabilities and agent tags).
_ROUTED_HELD = 256


def _same(model: ModelConfig) -> ModelConfig:
    return model


def _norm(names: Iterable[str]) -> set[str]:
    return {n.strip().casefold() for n in names if n.strip()}


def _required_capabilities(metadata: Mapping[str, Any] | None) -> set[str]:
    value = (metadata or {}).get("capabilities")
    if value is None:
        return set()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT,
            "metadata.capabilities must be a list of strings",
            field="metadata.capabilities",
        )
    return _norm(value)


def _describe(modalities: Iterable[str]) -> str:
    return ", ".join(sorted(modalities))


class ModelRouter:
    """Picks a model for each request from a ModelList.

    Args:
        models: The configured models (a ModelList, or models to build one from).
    """

    def __init__(self, models: ModelList | Iterable[ModelConfig]) -> None:
        self._models = models if isinstance(models, ModelList) else ModelList(models)
        self._capabilities = {m.name: _norm(m.capabilities) for m in self._models}
        # The decisions of routed requests (no override, no agent model) that share the
        # configured model, by what they were routed on: the models, like their capabilities
        # above, are read once, and a decision (frozen, holding the configured model itself)
        # is the same for the same modalities, capabilities and tags.
        self._routed: dict[tuple[frozenset[str], frozenset[str], tuple[str, ...]], RoutingDecision]
        self._routed = {}

    def __repr__(self) -> str:
        return f"ModelRouter({self._models!r})"

    @property
    def models(self) -> ModelList:
        """The models routed between."""
        return self._models

    def resolve(
        self,
        *,
        content: Sequence[ContentPart],
        metadata: Mapping[str, Any] | None,
        agent: AgentMetadata,
        model_override: str | None = None,
        share_model: bool = False,
    ) -> RoutingDecision:
        """Choose the model for one request.

        Args:
            content: The request's content parts (their modalities are derived).
            metadata: The request's metadata; ``capabilities`` is read.
            agent: The agent that will run; its tags are a preference.
            model_override: A model name the caller asked for; None or "" routes.
            share_model: The decision holds the configured model itself, not a copy: for a
                caller that only reads it (the router's relay to a remote runner converts it
                to protobuf). A model is ~20,000 instructions to copy.

        Returns:
            The chosen model and the strategy that chose it.

        Raises:
            RiverbeamError: BEM-042 for an unknown override; BEM-041 when no model (or not the
                override) accepts the content's modalities; BEM-043 when none has the
                required capabilities; BEM-002 when ``metadata.capabilities`` is not a list
                of strings.
        """
        needed: set[Modality] = modalities_of(list(content))
        required = _required_capabilities(metadata)
        copy = _same if share_model else deep_copy
        if model_override:
            decision = self._override(model_override, needed, required, copy=copy)
        elif agent.model:
            decision = self._override(
                agent.model,
                needed,
                required,
                reason=RoutingReason.AGENT_MODEL,
                agent=agent.name,
                copy=copy,
            )
        elif share_model:
            key = (frozenset(needed), frozenset(required), tuple(agent.tags))
            routed = self._routed.get(key)
            if routed is None:
                routed = self._route(needed, required, _norm(agent.tags), copy=_same)
                if len(self._routed) >= _ROUTED_HELD:
                    self._routed.clear()
                self._routed[key] = routed
            decision = routed
        else:
            decision = self._route(needed, required, _norm(agent.tags), copy=copy)
        if _log.isEnabledFor(logging.DEBUG):  # its arguments cost more than the check
            _log.debug(
                "routed agent %s to model %s (%s; candidates %s)",
                agent.name,
                decision.model.name,
                decision.reason,
                list(decision.candidates),
            )
        return decision

    def _override(
        self,
        name: str,
        needed: set[Modality],
        required: set[str],
        *,
        reason: RoutingReason = RoutingReason.OVERRIDE,
        agent: str | None = None,
        copy: Callable[[ModelConfig], ModelConfig] = deep_copy,
    ) -> RoutingDecision:
        model = self._models.get(name)
        if model is None:
            asked = f"agent {agent!r} asks for model" if agent else "model_override"
            raise RiverbeamError(
                ErrorCode.UNKNOWN_MODEL,
                f"{asked} {name!r}, which is not a configured model; "
                f"configured: {self._models.names()}",
                field="agent.model" if agent else "model_override",
            )
        missing_modalities = needed - set(model.modalities)
        if missing_modalities:
            raise RiverbeamError(
                ErrorCode.MODALITY_NOT_ROUTABLE,
                f"model {name!r} does not accept {_describe(missing_modalities)} content",
                field="agent.model" if agent else "model_override",
            )
        missing_capabilities = required - self._capabilities[name]
        if missing_capabilities:
            raise RiverbeamError(
                ErrorCode.NO_MODEL_FOR_CAPABILITIES,
                f"model {name!r} lacks the capabilities {sorted(missing_capabilities)}",
                field="metadata.capabilities",
            )
        return RoutingDecision(copy(model), reason, (name,))

    def _route(
        self,
        needed: set[Modality],
        required: set[str],
        tags: set[str],
        *,
        copy: Callable[[ModelConfig], ModelConfig] = deep_copy,
    ) -> RoutingDecision:
        candidates = list(self._models)
        # The first strategy after which one model is left settles the choice; every filter
        # still runs after that, so a request no model can serve is refused all the same.
        settled: tuple[RoutingReason, tuple[str, ...]] | None = None

        def narrow(reason: RoutingReason) -> None:
            nonlocal settled
            if settled is None and len(candidates) == 1:
                settled = (reason, (candidates[0].name,))

        narrow(RoutingReason.ONLY_MODEL)

        candidates = [m for m in candidates if needed <= set(m.modalities)]
        if not candidates:
            raise self._no_modalities(needed)
        narrow(RoutingReason.MODALITIES)

        if required:
            candidates = [m for m in candidates if required <= self._capabilities[m.name]]
            if not candidates:
                raise RiverbeamError(
                    ErrorCode.NO_MODEL_FOR_CAPABILITIES,
                    f"no model accepting this content has all of the capabilities "
                    f"{sorted(required)}",
                    field="metadata.capabilities",
                )
            narrow(RoutingReason.CAPABILITIES)

        preferred = [m for m in candidates if self._capabilities[m.name] & tags]
        if preferred:
            candidates = preferred
            narrow(RoutingReason.AGENT_TAGS)

        # min() returns the first of equal minima: ties go to the earlier model in the list.
        chosen = min(candidates, key=lambda m: m.cost_per_1k_tokens)
        if settled is None:
            tied = sum(1 for m in candidates if m.cost_per_1k_tokens == chosen.cost_per_1k_tokens)
            reason = RoutingReason.COST if tied == 1 else RoutingReason.LIST_ORDER
            settled = (reason, tuple(m.name for m in candidates))
        return RoutingDecision(copy(chosen), *settled)

    def _no_modalities(self, needed: set[Modality]) -> RiverbeamError:
        non_text = needed - {"text"}
        if non_text and all(set(m.modalities) <= {"text"} for m in self._models):
            message = (
                f"the content has {_describe(non_text)} parts, but only text models are configured"
            )
        else:
            together = " together" if len(needed) > 1 else ""
            message = f"no configured model accepts {_describe(needed)} content{together}"
        return RiverbeamError(ErrorCode.MODALITY_NOT_ROUTABLE, message, field="content")
