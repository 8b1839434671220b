"""Checking one answer against a case's assertions; the rubric judge."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from riverbeam.agents import CompletionClient, Text
from riverbeam.core.errors import RiverbeamError
from riverbeam.evals._suite import (
    Assertion,
    CalledTool,
    Contains,
    JsonSchemaAnswer,
    MaxLatency,
    MaxTokens,
    NotCalledTool,
    Regex,
    Rubric,
)

__all__ = ["Answer", "Check", "Judge", "check_answer"]


@dataclass(slots=True)
class Answer:
    """What a case's checked turns produced.

    Attributes:
        text: The last turn's answer text.
        tool_calls: (tool name, arguments) of every call in the checked turns, in order.
        total_tokens: Tokens spent by the checked turns.
        latency_ms: Wall time of the checked turns.
        structured: The structured answer, when the result carries one.
        error: The error that ended a turn, if one did.
        interrupted: The last turn is waiting for an approval.
    """

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    total_tokens: int = 0
    latency_ms: float = 0.0
    structured: Any = None
    error: RiverbeamError | None = None
    interrupted: bool = False


@dataclass(frozen=True, slots=True)
class Check:
    kind: str
    passed: bool
    message: str


class Judge:
    """Asks a model whether an answer meets a rubric; anything but a clear yes fails.

    Args:
        client: The model.
        model: The model name to request (None: the client's own).
    """

    PROMPT = (
        "You grade an AI assistant's answer against a rubric. Reply with one word: "
        "yes if the answer meets the rubric, no if it does not."
    )

    def __init__(self, client: CompletionClient, model: str | None = None) -> None:
        self._client = client
        self._model = model

    async def verdict(self, rubric: str, question: str, answer: str) -> tuple[bool, str]:
        messages = [
            {"role": "system", "content": self.PROMPT},
            {
                "role": "user",
                "content": f"Rubric: {rubric}\n\nQuestion: {question}\n\nAnswer:\n{answer}",
            },
        ]
        try:
            completion = await self._client.complete(messages, [], model=self._model)
        except RiverbeamError as err:
            return False, f"the judge failed: {err.bem} {err.message}"
        reply = completion.text if isinstance(completion, Text) else ""
        match = re.match(r"\W*(yes|no)\b", reply, re.IGNORECASE)
        if match is None:
            return False, f"the judge's verdict is not yes or no: {reply[:80]!r}"
        passed = match.group(1).lower() == "yes"
        return passed, "the judge says it meets the rubric" if passed else (
            f"the judge says it does not meet the rubric: {reply[:120]!r}"
        )


async def check_answer(
    answer: Answer, assertions: Sequence[Assertion], *, question: str, judge: Judge | None
) -> list[Check]:
    """One Check per assertion; a turn that ended in an error fails them all."""
    if answer.error is not None:
        message = f"the run failed: {answer.error.bem} {answer.error.message}"
        return [Check(a.kind, False, message) for a in assertions]
    checks: list[Check] = []
    for assertion in assertions:
        if isinstance(assertion, Rubric):
            if judge is None:
                checks.append(Check("rubric", False, "no judge model is configured"))
            else:
                passed, message = await judge.verdict(assertion.rubric, question, answer.text)
                checks.append(Check("rubric", passed, message))
        else:
            checks.append(_check(answer, assertion))
    return checks


def _check(answer: Answer, assertion: Assertion) -> Check:
    kind = assertion.kind
    if isinstance(assertion, Contains):
        haystack, needle = answer.text, assertion.text
        if not assertion.case_sensitive:
            haystack, needle = haystack.casefold(), needle.casefold()
        found = needle in haystack
        want = kind == "contains"
        verb = "contains" if found else "does not contain"
        return Check(kind, found == want, f"the answer {verb} {assertion.text!r}")
    if isinstance(assertion, Regex):
        found = re.search(assertion.pattern, answer.text) is not None
        return Check(
            kind, found, f"/{assertion.pattern}/ {'matches' if found else 'does not match'}"
        )
    if isinstance(assertion, CalledTool):
        calls = [args for name, args in answer.tool_calls if name == assertion.tool]
        matching = [a for a in calls if assertion.args is None or _args_match(assertion.args, a)]
        if assertion.times is not None:
            ok = len(matching) == assertion.times
            return Check(kind, ok, f"{assertion.tool}: {len(matching)} matching calls")
        if matching:
            return Check(kind, True, f"called {assertion.tool}")
        if calls:
            return Check(kind, False, f"{assertion.tool} called, but not with {assertion.args}")
        called = sorted({name for name, _ in answer.tool_calls}) or ["nothing"]
        return Check(kind, False, f"{assertion.tool} not called (called: {', '.join(called)})")
    if isinstance(assertion, NotCalledTool):
        count = sum(1 for name, _ in answer.tool_calls if name == assertion.tool)
        return Check(kind, count == 0, f"{assertion.tool} called {count} times")
    if isinstance(assertion, JsonSchemaAnswer):
        return _check_schema(answer, assertion.json_schema)
    if isinstance(assertion, MaxLatency):
        ok = answer.latency_ms <= assertion.value
        return Check(kind, ok, f"{answer.latency_ms:.0f} ms (limit {assertion.value:g})")
    assert isinstance(assertion, MaxTokens)
    ok = answer.total_tokens <= assertion.value
    return Check(kind, ok, f"{answer.total_tokens} tokens (limit {assertion.value})")


def _args_match(want: dict[str, Any], got: dict[str, Any]) -> bool:
    for key, expected in want.items():
        if key not in got:
            return False
        value = got[key]
        if (
            isinstance(expected, str)
            and len(expected) > 1
            and expected.startswith("/")
            and expected.endswith("/")
        ):
            if not isinstance(value, str) or re.search(expected[1:-1], value) is None:
                return False
        elif isinstance(expected, dict) and isinstance(value, dict):
            if not _args_match(expected, value):
                return False
        elif value != expected:
            return False
    return True


def _check_schema(answer: Answer, schema: dict[str, Any]) -> Check:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    value = answer.structured
    if value is None:
        try:
            value = json.loads(_strip_fence(answer.text))
        except ValueError:
            return Check("json_schema", False, "the answer is not JSON")
    errors = sorted(Draft202012Validator(schema).iter_errors(value), key=lambda e: e.path)
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(root)"
        return Check("json_schema", False, f"{where}: {first.message}")
    return Check("json_schema", True, "the answer matches the schema")


def _strip_fence(text: str) -> str:
    match = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", text, re.DOTALL)
    return match.group(1) if match else text
