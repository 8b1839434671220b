"""Per-turn and per-session configuration: narrow the tools, add instructions.

The session's stored configuration applies first, then the request's: each can only remove
tools (include keeps a subset, exclude drops some), never add one the agent does not have
(BEM-220). Instructions are added around the skill's system prompt: the session's
prepend, the request's prepend, the prompt, the session's append, the request's append.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import TurnConfig

__all__ = ["EffectiveTurn", "effective_turn"]


@dataclass(frozen=True, slots=True)
class EffectiveTurn:
    """The tools and instructions one run uses."""

    tools: tuple[str, ...]
    prepend: tuple[str, ...] = field(default=())
    append: tuple[str, ...] = field(default=())
    narrowed: bool = False

    def system_prompt(self, prompt: str) -> str:
        parts = [*self.prepend, prompt, *self.append]
        return "\n\n".join(p for p in parts if p)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.narrowed:
            out["tools"] = list(self.tools)
        if self.prepend:
            out["prepend_instructions"] = list(self.prepend)
        if self.append:
            out["append_instructions"] = list(self.append)
        return out


def _check_names(names: Sequence[str], allowed: set[str], where: str) -> None:
    unknown = sorted(set(names) - allowed)
    if unknown:
        raise RiverbeamError(
            ErrorCode.TURN_CONFIG_INVALID,
            f"{where} names tools this agent does not have: {', '.join(unknown)}",
            field=where,
            tools=",".join(unknown),
        )


def effective_turn(
    allowlist: Sequence[str], *configs: tuple[str, TurnConfig | None]
) -> EffectiveTurn:
    """Apply (where, config) pairs in order to the agent's tool allowlist.

    Raises:
        RiverbeamError: BEM-220 when a config names a tool outside the allowlist.
    """
    allowed = set(allowlist)
    tools = list(allowlist)
    prepend: list[str] = []
    append: list[str] = []
    narrowed = False
    for where, config in configs:
        if config is None:
            continue
        _check_names(config.include_tools, allowed, f"{where}.include_tools")
        _check_names(config.exclude_tools, allowed, f"{where}.exclude_tools")
        if config.include_tools:
            tools = [t for t in tools if t in config.include_tools]
            narrowed = True
        if config.exclude_tools:
            tools = [t for t in tools if t not in config.exclude_tools]
            narrowed = True
        if config.prepend_instructions:
            prepend.append(config.prepend_instructions)
        if config.append_instructions:
            append.append(config.append_instructions)
    return EffectiveTurn(tuple(tools), tuple(prepend), tuple(append), narrowed)
