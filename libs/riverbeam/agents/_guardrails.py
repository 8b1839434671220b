"""Guardrails: checks on the user's turn, the final answer and (optionally) tool results.

A guardrail looks at text and returns a GuardrailResult: pass, block (a tripwire: the run
ends with BEM-205/206/207 naming the guardrail and its reason) or rewrite (the text goes on
redacted). Each built-in is plain data with a discriminated `kind`, so a deployment setting
or a riverbeam.yaml can declare it:

    {"kind": "max_length", "max_chars": 4000}
    {"kind": "deny_patterns", "patterns": ["(?i)drop table"], "keywords": ["password"]}
    {"kind": "pii", "detect": ["email", "phone", "card", "iban"], "on_match": "rewrite"}
    {"kind": "json_schema", "schema": {...}, "stages": ["output"]}
    {"kind": "model_judge", "question": "Does the text ask for malware?"}

A guardrail that cannot decide (the judge model fails or answers neither yes nor no) fails
closed with BEM-208.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from riverbeam.agents._completion import CompletionClient, Text
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.telemetry._metrics import GUARDRAIL_EVENTS

__all__ = [
    "DenyPatterns",
    "Guardrail",
    "GuardrailConfig",
    "GuardrailEvent",
    "GuardrailResult",
    "GuardrailStage",
    "JsonSchemaCheck",
    "MaxLength",
    "ModelJudge",
    "PiiDetector",
    "build_guardrails",
    "find_pii",
    "iban_valid",
    "luhn_valid",
    "parse_guardrails",
    "run_guardrails",
]

GuardrailStage = Literal["input", "output", "tool_result"]
OnMatch = Literal["block", "rewrite"]
PiiKind = Literal["email", "phone", "card", "iban"]


def _input_and_output() -> list[GuardrailStage]:
    return ["input", "output"]


def _output_only() -> list[GuardrailStage]:
    return ["output"]


def all_pii() -> list[PiiKind]:
    """Every kind of PII the detector knows."""
    return ["email", "phone", "card", "iban"]


_TRIPPED = {
    "input": ErrorCode.INPUT_GUARDRAIL_TRIPPED,
    "output": ErrorCode.OUTPUT_GUARDRAIL_TRIPPED,
    "tool_result": ErrorCode.TOOL_RESULT_GUARDRAIL_TRIPPED,
}


@dataclass(frozen=True, slots=True)
class GuardrailResult:
    """A guardrail's verdict.

    Attributes:
        action: "pass", "block" (tripwire) or "rewrite".
        reason: Why it blocked or rewrote.
        text: The rewritten text (rewrite only).
    """

    action: Literal["pass", "block", "rewrite"]
    reason: str = ""
    text: str | None = None

    @classmethod
    def passed(cls) -> GuardrailResult:
        return cls("pass")


@runtime_checkable
class Guardrail(Protocol):
    """Anything that checks text at one or more stages."""

    @property
    def name(self) -> str: ...

    def applies_to(self, stage: GuardrailStage) -> bool: ...

    async def check(self, text: str, *, stage: GuardrailStage) -> GuardrailResult: ...


@dataclass(frozen=True, slots=True)
class GuardrailEvent:
    """One guardrail that blocked or rewrote, as recorded on the run."""

    name: str
    stage: GuardrailStage
    action: str
    reason: str

    def as_json(self) -> dict[str, str]:
        return {
            "name": self.name,
            "stage": self.stage,
            "action": self.action,
            "reason": self.reason,
        }


class _Base(BaseModel):
    # Built on first use: a runner with no guardrails configured never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str | None = None
    stages: list[GuardrailStage] = Field(default_factory=_input_and_output)

    @property
    def label(self) -> str:
        return self.name or str(getattr(self, "kind", "guardrail"))

    def applies_to(self, stage: GuardrailStage) -> bool:
        return stage in self.stages


class MaxLength(_Base):
    """Blocks (or truncates, with on_match "rewrite") text longer than max_chars."""

    kind: Literal["max_length"] = "max_length"
    max_chars: int = Field(gt=0)
    on_match: OnMatch = "block"

    async def check(self, text: str, *, stage: GuardrailStage) -> GuardrailResult:
        if len(text) <= self.max_chars:
            return GuardrailResult.passed()
        reason = f"{len(text)} characters, more than {self.max_chars}"
        if self.on_match == "rewrite":
            return GuardrailResult("rewrite", reason, text[: self.max_chars])
        return GuardrailResult("block", reason)


class DenyPatterns(_Base):
    """Blocks (or redacts) text matching a regex or containing a keyword (case-insensitive)."""

    kind: Literal["deny_patterns"] = "deny_patterns"
    patterns: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    on_match: OnMatch = "block"
    replacement: str = "[redacted]"

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from None
        return patterns

    def _regexes(self) -> list[re.Pattern[str]]:
        compiled = [re.compile(p) for p in self.patterns]
        compiled.extend(re.compile(re.escape(k), re.IGNORECASE) for k in self.keywords if k)
        return compiled

    async def check(self, text: str, *, stage: GuardrailStage) -> GuardrailResult:
        hits = [r for r in self._regexes() if r.search(text)]
        if not hits:
            return GuardrailResult.passed()
        reason = f"matched {hits[0].pattern!r}"
        if self.on_match == "rewrite":
            for regex in hits:
                text = regex.sub(self.replacement, text)
            return GuardrailResult("rewrite", reason, text)
        return GuardrailResult("block", reason)


# ---- PII --------------------------------------------------------------------------------------

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d{1,4}\)?(?:[ .-]?\(?\d{2,4}\)?){2,5}(?![\w])")


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum of a card number (digits only)."""
    if not digits.isdigit() or not 13 <= len(digits) <= 19:
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def iban_valid(candidate: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters to numbers, mod 97 == 1."""
    iban = candidate.replace(" ", "").upper()
    if not 15 <= len(iban) <= 34 or not iban.isalnum():
        return False
    moved = iban[4:] + iban[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return int(number) % 97 == 1


def find_pii(text: str, kinds: Sequence[PiiKind]) -> list[tuple[PiiKind, int, int]]:
    """(kind, start, end) of each PII match, not overlapping, in text order.

    Card numbers count only with a valid Luhn checksum, IBANs only with a valid mod-97 check
    digit; a phone number needs 7 to 15 digits.
    """
    found: list[tuple[PiiKind, int, int]] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    checks: list[tuple[PiiKind, re.Pattern[str], Callable[[str], bool]]] = [
        ("iban", _IBAN, iban_valid),
        ("card", _CARD, lambda m: luhn_valid(re.sub(r"[ -]", "", m))),
        ("email", _EMAIL, lambda m: True),
        ("phone", _PHONE, lambda m: 7 <= sum(c.isdigit() for c in m) <= 15),
    ]
    for kind, regex, valid in checks:
        if kind not in kinds:
            continue
        for match in regex.finditer(text):
            if valid(match.group()) and free(match.start(), match.end()):
                found.append((kind, match.start(), match.end()))
                taken.append((match.start(), match.end()))
    return sorted(found, key=lambda f: f[1])


def redact_pii(text: str, kinds: Sequence[PiiKind]) -> tuple[str, list[PiiKind]]:
    """The text with each PII match replaced by [<kind>], and the kinds found."""
    matches = find_pii(text, kinds)
    out: list[str] = []
    last = 0
    for kind, start, end in matches:
        out.append(text[last:start])
        out.append(f"[{kind}]")
        last = end
    out.append(text[last:])
    return "".join(out), [kind for kind, _, _ in matches]


class PiiDetector(_Base):
    """Finds emails, phone numbers, card numbers (Luhn) and IBANs (mod 97)."""

    kind: Literal["pii"] = "pii"
    detect: list[PiiKind] = Field(default_factory=all_pii)
    on_match: OnMatch = "rewrite"

    async def check(self, text: str, *, stage: GuardrailStage) -> GuardrailResult:
        redacted, kinds = redact_pii(text, self.detect)
        if not kinds:
            return GuardrailResult.passed()
        reason = "found " + ", ".join(sorted(set(kinds)))
        if self.on_match == "rewrite":
            return GuardrailResult("rewrite", reason, redacted)
        return GuardrailResult("block", reason)


class JsonSchemaCheck(_Base):
    """Blocks text that is not JSON matching `schema` (usually on the output stage)."""

    kind: Literal["json_schema"] = "json_schema"
    json_schema: dict[str, Any] = Field(alias="schema")
    stages: list[GuardrailStage] = Field(default_factory=_output_only)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("json_schema")
    @classmethod
    def _valid(cls, schema: dict[str, Any]) -> dict[str, Any]:
        from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
        from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
        return schema

    async def check(self, text: str, *, stage: GuardrailStage) -> GuardrailResult:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return GuardrailResult("block", f"not JSON: {exc.msg}")
        from jsonschema import Draft202012Validator

        error = next(iter(Draft202012Validator(self.json_schema).iter_errors(value)), None)
        if error is None:
            return GuardrailResult.passed()
        path = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return GuardrailResult("block", f"{path}: {error.message}")


_JUDGE_SYSTEM = (
    "You are a guardrail. Read the question and the text, then answer on one line: "
    '"yes: <short reason>" or "no: <short reason>".'
)


class ModelJudge(_Base):
    """Asks a model a yes/no question about the text; `block_when` the answer is that.

    The client is given when the guardrail is built (build_guardrails(judge=...)); without
    one, the agent's own client judges.
    """

    kind: Literal["model_judge"] = "model_judge"
    question: str = Field(min_length=1)
    block_when: Literal["yes", "no"] = "yes"
    model: str | None = None

    async def check(self, text: str, *, stage: GuardrailStage) -> GuardrailResult:
        raise RiverbeamError(
            ErrorCode.GUARDRAIL_FAILED, f"guardrail {self.label!r} has no model to ask"
        )

    def bound(self, client: CompletionClient) -> _BoundJudge:
        return _BoundJudge(self, client)


@dataclass(frozen=True, slots=True)
class _BoundJudge:
    config: ModelJudge
    client: CompletionClient

    @property
    def name(self) -> str:
        return self.config.label

    def applies_to(self, stage: GuardrailStage) -> bool:
        return self.config.applies_to(stage)

    async def check(self, text: str, *, stage: GuardrailStage) -> GuardrailResult:
        messages = [
            {"role": "system", "content": _JUDGE_SYSTEM},
            {"role": "user", "content": f"Question: {self.config.question}\n\nText:\n{text}"},
        ]
        try:
            completion = await self.client.complete(messages, [], model=self.config.model)
        except RiverbeamError as err:
            raise RiverbeamError(
                ErrorCode.GUARDRAIL_FAILED,
                f"guardrail {self.name!r} could not ask its model: {err.bem} {err.message}",
                guardrail=self.name,
            ) from None
        answer = completion.text.strip() if isinstance(completion, Text) else ""
        verdict, _, reason = answer.partition(":")
        verdict = verdict.strip().strip('"').casefold()
        if verdict not in ("yes", "no"):
            raise RiverbeamError(
                ErrorCode.GUARDRAIL_FAILED,
                f"guardrail {self.name!r}: the model answered neither yes nor no",
                guardrail=self.name,
            )
        if verdict == self.config.block_when:
            return GuardrailResult("block", reason.strip() or f"the model answered {verdict}")
        return GuardrailResult.passed()


GuardrailConfig: TypeAlias = Annotated[
    MaxLength | DenyPatterns | PiiDetector | JsonSchemaCheck | ModelJudge,
    Field(discriminator="kind"),
]
"""One guardrail as plain data (the `kind` picks the built-in)."""


@functools.cache
def _configs() -> TypeAdapter[list[GuardrailConfig]]:
    # Built by the first config read, not at import (issue 16: idle RSS).
    return TypeAdapter(list[GuardrailConfig])


def parse_guardrails(data: Any, *, source: str = "guardrails") -> list[GuardrailConfig]:
    """Guardrail configs from plain data (a list of objects); BEM-209 when invalid."""
    try:
        return _configs().validate_python(data)
    except ValueError as exc:
        raise RiverbeamError(
            ErrorCode.GUARDRAIL_CONFIG_INVALID, f"{source}: {exc}", source=source
        ) from None


def build_guardrails(
    items: Sequence[Guardrail | GuardrailConfig], *, judge: CompletionClient | None
) -> list[Guardrail]:
    """Guardrails ready to run: configs of model_judge get the judge client bound."""
    out: list[Guardrail] = []
    for item in items:
        if isinstance(item, ModelJudge):
            out.append(item.bound(judge) if judge is not None else _Named(item))
        elif isinstance(item, _Base):
            out.append(_Named(item))
        else:
            out.append(item)
    return out


@dataclass(frozen=True, slots=True)
class _Named:
    """A config guardrail seen through the Guardrail protocol (its name is its label)."""

    config: MaxLength | DenyPatterns | PiiDetector | JsonSchemaCheck | ModelJudge

    @property
    def name(self) -> str:
        return self.config.label

    def applies_to(self, stage: GuardrailStage) -> bool:
        return self.config.applies_to(stage)

    async def check(self, text: str, *, stage: GuardrailStage) -> GuardrailResult:
        return await self.config.check(text, stage=stage)


async def run_guardrails(
    guardrails: Sequence[Guardrail],
    stage: GuardrailStage,
    text: str,
    events: list[GuardrailEvent],
) -> str:
    """Run the stage's guardrails in order; the (possibly rewritten) text.

    Each rewrite feeds the next guardrail. Events are appended to `events` (and counted in
    riverbeam_guardrail_events_total) for every guardrail that blocked or rewrote.

    Raises:
        RiverbeamError: The stage's tripwire code (BEM-205/206/207) when one blocks, with
            details guardrail, stage and reason; BEM-208 when one cannot decide.
    """
    for guardrail in guardrails:
        if not guardrail.applies_to(stage):
            continue
        try:
            verdict = await guardrail.check(text, stage=stage)
        except RiverbeamError as err:
            events.append(GuardrailEvent(guardrail.name, stage, "failed", err.message))
            GUARDRAIL_EVENTS.labels(guardrail.name, stage, "failed").inc()
            if err.code is ErrorCode.GUARDRAIL_FAILED:
                raise
            raise RiverbeamError(
                ErrorCode.GUARDRAIL_FAILED,
                f"guardrail {guardrail.name!r} failed: {err.message}",
                guardrail=guardrail.name,
            ) from None
        if verdict.action == "pass":
            continue
        events.append(GuardrailEvent(guardrail.name, stage, verdict.action, verdict.reason))
        GUARDRAIL_EVENTS.labels(guardrail.name, stage, verdict.action).inc()
        if verdict.action == "block":
            raise RiverbeamError(
                _TRIPPED[stage],
                f"guardrail {guardrail.name!r} blocked the {stage.replace('_', ' ')}: "
                f"{verdict.reason}",
                guardrail=guardrail.name,
                stage=stage,
                reason=verdict.reason,
            )
        text = verdict.text if verdict.text is not None else text
    return text


async def guard_json(
    guardrails: Sequence[Guardrail], value: Any, events: list[GuardrailEvent]
) -> Any:
    """Run the tool_result stage over a JSON value: every string leaf is checked (and rewritten)."""
    if not any(g.applies_to("tool_result") for g in guardrails):
        return value
    if isinstance(value, str):
        return await run_guardrails(guardrails, "tool_result", value, events)
    if isinstance(value, list):
        return [await guard_json(guardrails, item, events) for item in value]
    if isinstance(value, dict):
        return {k: await guard_json(guardrails, v, events) for k, v in value.items()}
    return value
