"""A configured agent's agent-layer sections (riverbeam.yaml) as RigOptions fields.

    guardrails: [{kind: pii}, {kind: max_input_chars, limit: 4000},
                 {kind: regex, pattern: "(?i)drop table", stages: [input, output]}]
    policies:   [{kind: approve_tools, tools: [git_push]}, {kind: max_tool_calls, limit: 20}]
    output:     {kind: json_schema, schema: {...}, repair_attempts: 2}
    limits:     {max_rounds: 4, max_tokens: 20000, max_seconds: 120}

The file's shorthands (max_input_chars, regex, python) become the agent layer's guardrails;
the agent layer's own kinds go through as they are. Policies other than confirm and deny
(which shape the tool list) join the agent's call chain in the order given. Values are
checked by the schema when the file is read (BEM-230 with file, line and field); a Python
entry point that cannot be loaded or is not a Guardrail / ToolPolicy is BEM-232.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from riverbeam.agents._config import (
    AgentConfig,
    ConfirmPolicy,
    DenyPolicy,
    JsonSchemaOutput,
    MaxInputCharsGuardrail,
    PythonGuardrail,
    PythonPolicy,
    RegexGuardrail,
)
from riverbeam.agents._config_file import LoadedConfig
from riverbeam.agents._guardrails import (
    DenyPatterns,
    Guardrail,
    GuardrailConfig,
    GuardrailResult,
    GuardrailStage,
    MaxLength,
)
from riverbeam.agents._output import OutputSpec
from riverbeam.agents._policies import ToolPolicy
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["layer_options"]

Loc = tuple[str | int, ...]


def layer_options(loaded: LoadedConfig, at: Loc, cfg: AgentConfig) -> dict[str, Any]:
    """The RigOptions fields (output, guardrails, policies, time and token limits) of an agent.

    Raises:
        RiverbeamError: BEM-232 for a Python guardrail or policy that cannot be loaded or
            does not implement its protocol, naming file, line and field.
    """
    guardrails: list[Guardrail | GuardrailConfig] = []
    for index, item in enumerate(cfg.guardrails):
        where = (*at, "guardrails", index)
        if isinstance(item, MaxInputCharsGuardrail):
            guardrails.append(
                MaxLength(name="max_input_chars", max_chars=item.limit, stages=["input"])
            )
        elif isinstance(item, RegexGuardrail):
            regex = DenyPatterns(name="regex", patterns=[item.pattern], stages=list(item.stages))
            guardrails.append(_Reworded(regex, item.message) if item.message else regex)
        elif isinstance(item, PythonGuardrail):
            found = _load(loaded, (*where, "entry"), item.entry, Guardrail, "a Guardrail")
            guardrails.append(_Staged(found, tuple(item.stages)))
        else:
            guardrails.append(item)
    policies: list[ToolPolicy] = []
    for index, policy in enumerate(cfg.policies):
        if isinstance(policy, ConfirmPolicy | DenyPolicy):
            continue  # applied to the tool list
        if isinstance(policy, PythonPolicy):
            where = (*at, "policies", index, "entry")
            policies.append(_load(loaded, where, policy.entry, ToolPolicy, "a ToolPolicy"))
        else:
            policies.append(policy)
    output: OutputSpec | None = None
    if isinstance(cfg.output, JsonSchemaOutput):
        output = OutputSpec.model_validate(
            {
                "schema": cfg.output.json_schema,
                "name": cfg.output.name or "answer",
                "repair_attempts": cfg.output.repair_attempts,
            }
        )
    return {
        "output": output,
        "guardrails": tuple(guardrails),
        "policies": tuple(policies),
        "time_limit_s": cfg.limits.max_seconds,
        "token_budget": cfg.limits.max_tokens,
    }


def _load(loaded: LoadedConfig, where: Loc, entry: str, protocol: type, what: str) -> Any:
    from riverbeam.runtime._config_agents import import_entry_point

    try:
        target = import_entry_point(entry)
        if isinstance(target, type) or (callable(target) and not isinstance(target, protocol)):
            target = target()
    except RiverbeamError as err:
        raise loaded.error(err.code, where, err.message) from None
    except Exception as exc:
        raise loaded.error(
            ErrorCode.CONFIG_ENTRY_POINT, where, f"{entry!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(target, protocol):
        raise loaded.error(
            ErrorCode.CONFIG_ENTRY_POINT,
            where,
            f"{entry!r} gave {type(target).__name__}, not {what}",
        )
    return target


@dataclass(frozen=True, slots=True)
class _Staged:
    """A Python guardrail limited to the stages the file's `on` names."""

    inner: Guardrail
    stages: Sequence[GuardrailStage]

    @property
    def name(self) -> str:
        return self.inner.name

    def applies_to(self, stage: GuardrailStage) -> bool:
        return stage in self.stages and self.inner.applies_to(stage)

    async def check(self, text: str, *, stage: GuardrailStage) -> GuardrailResult:
        return await self.inner.check(text, stage=stage)


@dataclass(frozen=True, slots=True)
class _Reworded:
    """A regex guardrail whose block reason is the file's `message`."""

    inner: DenyPatterns
    message: str

    @property
    def name(self) -> str:
        return self.inner.label

    def applies_to(self, stage: GuardrailStage) -> bool:
        return self.inner.applies_to(stage)

    async def check(self, text: str, *, stage: GuardrailStage) -> GuardrailResult:
        verdict = await self.inner.check(text, stage=stage)
        if verdict.action == "block":
            return GuardrailResult("block", self.message)
        return verdict
