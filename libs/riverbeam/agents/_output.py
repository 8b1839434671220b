"""Structured output: the final answer as JSON that matches a schema, with repair.

An agent may own a response schema; a request may add one. "Narrowing" is checkable by
construction: the request's schema is applied IN ADDITION to the agent's, so an answer must
validate against both, and no request can accept an answer the agent's schema refuses.

Where the resolved model lists the `structured_output` capability (the model list) and the
client can send a provider response format, the schema goes as the OpenAI
`response_format: {"type": "json_schema", ...}` (the agent's schema; a request schema is
combined with it by `allOf`). Otherwise the model is told by a system instruction. Either
way the answer is parsed and validated (jsonschema, draft 2020-12); an invalid answer is
sent back with the errors for another try, up to `repair_attempts` times, then the run fails
with BEM-200 carrying the last errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from riverbeam.agents._completion import ChatMessage
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = [
    "STRUCTURED_OUTPUT_CAPABILITY",
    "OutputCheck",
    "OutputSpec",
    "ResponseSchema",
    "parse_json_answer",
]

STRUCTURED_OUTPUT_CAPABILITY = "structured_output"
"""The model-list capability that says the model honours a native JSON-schema response format."""

_MAX_ERRORS = 5


class OutputSpec(BaseModel):
    """An agent's response schema, as plain data (riverbeam.yaml's `output:`).

    Attributes:
        schema_: The JSON Schema of the answer (key `schema`).
        name: The schema's name in a native response format.
        repair_attempts: How many times an invalid answer is sent back for repair.
    """

    # Built on first use: only agents with a response schema make one.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    schema_: dict[str, Any] = Field(alias="schema")
    name: str = Field(default="answer", pattern=r"^[A-Za-z0-9_-]{1,64}$")
    repair_attempts: int = Field(default=2, ge=0, le=10)


def _compile(schema: Mapping[str, Any], where: str) -> Any:
    # Imported here: jsonschema (with attrs and referencing) is loaded by the first run that
    # has a response schema, not by every router and runner.
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
    from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

    try:
        Draft202012Validator.check_schema(dict(schema))
    except SchemaError as exc:
        raise RiverbeamError(
            ErrorCode.RESPONSE_SCHEMA_INVALID,
            f"{where} response schema is not a valid JSON Schema: {exc.message}",
            field=f"{where}.response_schema",
        ) from None
    return Draft202012Validator(dict(schema))


@dataclass(frozen=True, slots=True)
class ResponseSchema:
    """The schemas one run's answer must match (the agent's and the request's), compiled.

    Raises:
        RiverbeamError: BEM-201 when either schema is not a valid JSON Schema.
    """

    schemas: tuple[dict[str, Any], ...]
    name: str
    repair_attempts: int
    validators: tuple[Any, ...]

    @classmethod
    def combine(
        cls,
        agent: OutputSpec | None,
        request_schema: Mapping[str, Any] | None,
    ) -> ResponseSchema | None:
        """The schema of a run: the agent's, plus the request's (both apply); None for none."""
        schemas: list[dict[str, Any]] = []
        validators: list[Any] = []
        if agent is not None:
            validators.append(_compile(agent.schema_, "agent"))
            schemas.append(dict(agent.schema_))
        if request_schema:
            validators.append(_compile(request_schema, "request"))
            schemas.append(dict(request_schema))
        if not schemas:
            return None
        return cls(
            schemas=tuple(schemas),
            name=agent.name if agent else "answer",
            repair_attempts=agent.repair_attempts if agent else 2,
            validators=tuple(validators),
        )

    @property
    def schema(self) -> dict[str, Any]:
        """One schema for the model: the only one, or allOf of both."""
        if len(self.schemas) == 1:
            return self.schemas[0]
        return {"allOf": list(self.schemas)}

    def response_format(self) -> dict[str, Any]:
        """The OpenAI chat-completions `response_format` for this schema."""
        return {
            "type": "json_schema",
            "json_schema": {"name": self.name, "schema": self.schema, "strict": False},
        }

    def instruction(self) -> ChatMessage:
        """The system message that asks for JSON when no native format is sent."""
        return {
            "role": "system",
            "content": "Answer with one JSON value only (no prose, no code fence) that matches "
            f"this JSON Schema:\n{json.dumps(self.schema, ensure_ascii=False)}",
        }

    def check(self, text: str) -> OutputCheck:
        """Parse and validate an answer."""
        try:
            value = parse_json_answer(text)
        except ValueError as exc:
            return OutputCheck(None, (f"the answer is not JSON: {exc}",))
        problems: list[str] = []
        for validator in self.validators:
            for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
                path = "/".join(str(p) for p in error.absolute_path) or "(root)"
                problems.append(f"{path}: {error.message}")
        return OutputCheck(value, tuple(problems[:_MAX_ERRORS]))

    def repair_message(self, check: OutputCheck) -> ChatMessage:
        """The user message that sends the errors back to the model."""
        listed = "\n".join(f"- {p}" for p in check.errors)
        return {
            "role": "user",
            "content": "Your answer does not match the required JSON Schema:\n"
            f"{listed}\nReply again with only the corrected JSON.",
        }

    def failure(self, check: OutputCheck, attempts: int) -> RiverbeamError:
        """BEM-200 with the last errors."""
        return RiverbeamError(
            ErrorCode.OUTPUT_INVALID,
            f"the answer still did not match the response schema after {attempts} repair "
            f"attempt(s): {'; '.join(check.errors)}",
            errors=list(check.errors),
            repair_attempts=attempts,
        )


@dataclass(frozen=True, slots=True)
class OutputCheck:
    """A parsed answer and what is wrong with it (nothing: valid)."""

    value: Any
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


def parse_json_answer(text: str) -> Any:
    """The JSON value of an answer; a single ```json fence around it is tolerated.

    Raises:
        ValueError: The text is not one JSON value.
    """
    body = text.strip()
    if body.startswith("```"):
        first, _, rest = body.partition("\n")
        if rest.rstrip().endswith("```") and first.strip("`").strip() in ("", "json"):
            body = rest.rstrip()[:-3].strip()
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None


def capability_native(capabilities: Sequence[str]) -> bool:
    """Whether a model's capabilities promise a native JSON-schema response format."""
    return STRUCTURED_OUTPUT_CAPABILITY in {c.casefold() for c in capabilities}
