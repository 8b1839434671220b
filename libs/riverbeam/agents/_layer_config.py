"""A deployment's defaults for the agent layer, as plain data (a setting or riverbeam.yaml).

    {"guardrails": [{"kind": "pii"}],
     "tool_policies": [{"kind": "approve_tools", "tools": ["git_push"]}],
     "time_limit_s": 300, "token_budget": 200000, "max_rounds": 8}

Deployment guardrails run before the agent's own; deployment policies come before the
agent's in the chain; limits combine with the agent's and the request's (the smallest wins).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from riverbeam.agents._guardrails import GuardrailConfig
from riverbeam.agents._policies import ToolPolicyConfig
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["AgentLayerConfig"]


class AgentLayerConfig(BaseModel):
    """Deployment-wide guardrails, tool policies and run limits."""

    # Built on first use, with the guardrail and policy models it holds: a runner without
    # RIVERBEAM_AGENT_LAYER builds it with its first agent run (issue 16: idle RSS).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    guardrails: list[GuardrailConfig] = Field(default_factory=list)
    tool_policies: list[ToolPolicyConfig] = Field(default_factory=list)
    time_limit_s: float | None = Field(default=None, gt=0)
    token_budget: int | None = Field(default=None, gt=0)
    max_rounds: int | None = Field(default=None, ge=0)

    @classmethod
    def parse(cls, data: Any, *, source: str = "agent layer config") -> AgentLayerConfig:
        """From a dict or its JSON text; BEM-002 when invalid."""
        try:
            if isinstance(data, str | bytes):
                return cls.model_validate_json(data)
            return cls.model_validate(data)
        except (ValidationError, json.JSONDecodeError) as exc:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, f"{source}: {exc}", source=source
            ) from None
