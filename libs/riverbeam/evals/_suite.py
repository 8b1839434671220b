"""The eval suite file (`riverbeam eval SUITE.yaml`): cases and their assertions.

name: built-in skills
agent: summarize            # default agent of the cases
repeat: 1                   # attempts per case ...
pass_threshold: 1.0         # ... and the share of them that must pass
cases:
  - name: summarizes the README
    setup: ["We are looking at the README."]   # earlier turns of the session (not checked)
    input: Summarize README.md                 # or `turns: [...]`: checked after the last
    assert:
      - {kind: contains, text: README}
      - {kind: called_tool, tool: read_file, args: {path: README.md}}
      - {kind: not_called_tool, tool: git_push}
      - {kind: max_latency_ms, value: 30000}
      - {kind: rubric, rubric: The answer is a summary, not a refusal.}
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from riverbeam.agents._config_file import parse_yaml_model
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["Assertion", "EvalCase", "EvalSuite", "load_suite"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Contains(_Strict):
    """The answer contains the text (case-insensitive unless `case_sensitive`)."""

    kind: Literal["contains", "not_contains"]
    text: str = Field(min_length=1)
    case_sensitive: bool = False


class Regex(_Strict):
    kind: Literal["regex"]
    pattern: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


class CalledTool(_Strict):
    """The agent called the tool; with `args`, at least once with these arguments (a subset
    match: each named argument equal, or matching `/regex/` for a string)."""

    kind: Literal["called_tool"]
    tool: str
    args: dict[str, Any] | None = None
    times: int | None = Field(default=None, ge=0, description="exactly this many calls")


class NotCalledTool(_Strict):
    kind: Literal["not_called_tool"]
    tool: str


class JsonSchemaAnswer(_Strict):
    """The answer (its structured part, else the final text parsed as JSON) validates."""

    kind: Literal["json_schema"]
    json_schema: dict[str, Any] = Field(alias="schema")


class MaxLatency(_Strict):
    kind: Literal["max_latency_ms"]
    value: float = Field(gt=0)


class MaxTokens(_Strict):
    kind: Literal["max_tokens"]
    value: int = Field(gt=0)


class Rubric(_Strict):
    """A model (the judge) is asked whether the answer meets the rubric; it must say yes."""

    kind: Literal["rubric"]
    rubric: str = Field(min_length=1)


Assertion = Annotated[
    Contains
    | Regex
    | CalledTool
    | NotCalledTool
    | JsonSchemaAnswer
    | MaxLatency
    | MaxTokens
    | Rubric,
    Field(discriminator="kind"),
]


class EvalCase(_Strict):
    name: str = Field(min_length=1)
    agent: str | None = None
    model: str | None = None
    setup: list[str] = Field(default_factory=list, description="earlier turns, not checked")
    input: str | None = None
    turns: list[str] | None = None
    metadata: dict[str, Any] | None = None
    assertions: list[Assertion] = Field(alias="assert", min_length=1)
    repeat: int | None = Field(default=None, ge=1, le=100)
    pass_threshold: float | None = Field(default=None, ge=0, le=1)

    @model_validator(mode="after")
    def _one_input(self) -> EvalCase:
        if (self.input is None) == (self.turns is None):
            raise ValueError("a case needs `input` or `turns` (one of them)")
        if self.turns is not None and not self.turns:
            raise ValueError("`turns` needs at least one turn")
        return self

    @property
    def all_turns(self) -> list[str]:
        """The turns run in order; the assertions look at the last one's answer."""
        return list(self.turns) if self.turns is not None else [self.input or ""]


class EvalSuite(_Strict):
    name: str | None = None
    agent: str | None = None
    model: str | None = None
    config: str | None = Field(
        default=None, description="riverbeam.yaml for the in-process runtime (relative path)"
    )
    repeat: int = Field(default=1, ge=1, le=100)
    pass_threshold: float = Field(default=1.0, ge=0, le=1)
    judge_model: str | None = Field(default=None, description="the model the rubric judge asks")
    cases: list[EvalCase] = Field(min_length=1)

    @model_validator(mode="after")
    def _agents(self) -> EvalSuite:
        for case in self.cases:
            if (case.agent or self.agent) is None:
                raise ValueError(f"case {case.name!r} names no agent, and the suite has none")
        return self


def load_suite(path: str | Path) -> tuple[EvalSuite, Path]:
    """Read and validate a suite file; the suite and its (resolved) path.

    Raises:
        RiverbeamError: BEM-250 naming the file, line and field.
    """
    file = Path(path).resolve()
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RiverbeamError(
            ErrorCode.EVAL_SUITE_INVALID, f"{file}: cannot read it ({exc})", file=str(file)
        ) from None
    suite, _ = parse_yaml_model(text, EvalSuite, path=file, code=ErrorCode.EVAL_SUITE_INVALID)
    return suite, file
