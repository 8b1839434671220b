"""Running a suite: each case N times through a target (in process, or a router), then reports.

async with InProcessTarget.open(config=path) as target:
    result = await run_suite(suite, target, judge=Judge(client))
result.passed, result.to_json(), result.junit_xml()
"""

from __future__ import annotations

import contextlib
import tempfile
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from riverbeam.agents import CompletionClient, LoadedConfig
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.evals._assertions import Answer, Check, Judge, check_answer
from riverbeam.evals._suite import EvalCase, EvalSuite
from riverbeam.types import AgentResult, ModelConfig

__all__ = [
    "AttemptResult",
    "CaseResult",
    "InProcessTarget",
    "RouterTarget",
    "SuiteResult",
    "Target",
    "run_suite",
]


class Target(Protocol):
    """Where cases run."""

    async def run_turns(
        self,
        *,
        agent: str,
        setup: Sequence[str],
        turns: Sequence[str],
        model: str | None,
        metadata: Mapping[str, Any] | None,
    ) -> Answer: ...


def _answer_of(results: Sequence[AgentResult], elapsed_ms: float) -> Answer:
    last = results[-1]
    calls = [(c.tool_name, dict(c.args or {})) for r in results for c in r.tool_calls]
    tokens = sum(r.token_usage.total_tokens for r in results if r.token_usage is not None)
    return Answer(
        text=last.text,
        tool_calls=calls,
        total_tokens=tokens,
        latency_ms=elapsed_ms,
        structured=getattr(last, "structured", None),
        interrupted=bool(last.interrupted),
    )


async def _run_session(
    invoke: Callable[[str, str], Awaitable[AgentResult]],
    setup: Sequence[str],
    turns: Sequence[str],
) -> Answer:
    """Setup turns, then the checked turns, in one session; errors become the answer's."""
    session_id = str(uuid.uuid4())
    try:
        for turn in setup:
            await invoke(turn, session_id)
        results: list[AgentResult] = []
        started = time.perf_counter()
        for turn in turns:
            results.append(await invoke(turn, session_id))
        return _answer_of(results, (time.perf_counter() - started) * 1000)
    except RiverbeamError as err:
        return Answer(error=err)


class InProcessTarget:
    """The whole runtime in this process (riverbeam.RiverBeam): agents from a config file and
    the built-in ones, sandbox tools on a fresh local workspace, the model from BEAM_* vars."""

    def __init__(self, beam: Any) -> None:
        self.beam = beam

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        *,
        config: LoadedConfig | None = None,
        client: CompletionClient | None = None,
        env: Mapping[str, str] | None = None,
    ) -> AsyncIterator[InProcessTarget]:
        from riverbeam.core.settings import RunnerSettings
        from riverbeam.runtime import RiverBeam, wire_agents
        from riverbeam.sandbox import WorkspaceConfig, WorkspaceManager, sandbox_tools

        with tempfile.TemporaryDirectory(prefix="riverbeam-eval-") as tmp:
            manager = WorkspaceManager(WorkspaceConfig(base_dir=Path(tmp)))
            beam = RiverBeam()
            closers: list[Any] = []
            try:
                name = (
                    config.config.workspace.name if config and config.config.workspace else "eval"
                )
                await manager.create(name)
                tools = sandbox_tools(await manager.get(name))
                settings = RunnerSettings(sandbox_url=None, store_url=None, agents=None)
                closers = await wire_agents(
                    beam, settings, env=env, config=config, client=client, sandbox=tools
                )
                yield cls(beam)
            finally:
                await beam.aclose(grace_s=1.0)
                for close in closers:
                    await close()
                await manager.aclose()

    async def run_turns(
        self,
        *,
        agent: str,
        setup: Sequence[str],
        turns: Sequence[str],
        model: str | None,
        metadata: Mapping[str, Any] | None,
    ) -> Answer:
        chosen = model
        if chosen is None and agent in self.beam.registry():
            chosen = self.beam.registry().get_metadata(agent).model
        resolved = ModelConfig(name=chosen, provider="custom") if chosen else None

        async def invoke(text: str, session_id: str) -> AgentResult:
            request = {
                "agent_name": agent,
                "content": [{"type": "text", "text": text}],
                "session_id": session_id,
                "metadata": dict(metadata) if metadata else None,
            }
            result = await self.beam.invoke(request, model=resolved)
            assert isinstance(result, AgentResult)
            return result

        return await _run_session(invoke, setup, turns)


class RouterTarget:
    """A running Riverbeam, through its router (the public API)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def run_turns(
        self,
        *,
        agent: str,
        setup: Sequence[str],
        turns: Sequence[str],
        model: str | None,
        metadata: Mapping[str, Any] | None,
    ) -> Answer:
        async def invoke(text: str, session_id: str) -> AgentResult:
            result = await self.client.invoke(
                agent,
                text,
                session_id=session_id,
                model_override=model,
                metadata=dict(metadata) if metadata else None,
            )
            assert isinstance(result, AgentResult)
            return result

        return await _run_session(invoke, setup, turns)


# ---- results --------------------------------------------------------------------------------------
@dataclass(slots=True)
class AttemptResult:
    passed: bool
    checks: list[Check]
    answer: Answer

    def to_json(self) -> dict[str, Any]:
        answer = self.answer
        return {
            "passed": self.passed,
            "checks": [
                {"kind": c.kind, "passed": c.passed, "message": c.message} for c in self.checks
            ],
            "text": answer.text,
            "tool_calls": [{"tool": n, "args": a} for n, a in answer.tool_calls],
            "total_tokens": answer.total_tokens,
            "latency_ms": round(answer.latency_ms, 1),
            "error": answer.error.to_dict() if answer.error is not None else None,
        }


@dataclass(slots=True)
class CaseResult:
    name: str
    agent: str
    threshold: float
    attempts: list[AttemptResult] = field(default_factory=list)

    @property
    def pass_rate(self) -> float:
        return sum(a.passed for a in self.attempts) / len(self.attempts) if self.attempts else 0.0

    @property
    def passed(self) -> bool:
        return bool(self.attempts) and self.pass_rate >= self.threshold

    @property
    def seconds(self) -> float:
        return sum(a.answer.latency_ms for a in self.attempts) / 1000

    def first_failure(self) -> str:
        for attempt in self.attempts:
            for check in attempt.checks:
                if not check.passed:
                    return f"{check.kind}: {check.message}"
        return ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "agent": self.agent,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "pass_threshold": self.threshold,
            "attempts": [a.to_json() for a in self.attempts],
        }


@dataclass(slots=True)
class SuiteResult:
    name: str
    cases: list[CaseResult]

    @property
    def passed(self) -> bool:
        return all(case.passed for case in self.cases)

    @property
    def failed(self) -> int:
        return sum(not case.passed for case in self.cases)

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.name,
            "passed": self.passed,
            "total": len(self.cases),
            "failed": self.failed,
            "cases": [case.to_json() for case in self.cases],
        }

    def junit_xml(self) -> str:
        """JUnit XML: one testsuite, one testcase per case, a failure element when it failed."""
        suite = ET.Element(
            "testsuite",
            name=self.name,
            tests=str(len(self.cases)),
            failures=str(self.failed),
            errors="0",
            time=f"{sum(c.seconds for c in self.cases):.3f}",
        )
        for case in self.cases:
            element = ET.SubElement(
                suite,
                "testcase",
                name=case.name,
                classname=f"{self.name}.{case.agent}",
                time=f"{case.seconds:.3f}",
            )
            if not case.passed:
                failure = ET.SubElement(
                    element,
                    "failure",
                    message=f"passed {case.pass_rate:.0%} of {len(case.attempts)} attempts "
                    f"(needs {case.threshold:.0%}): {case.first_failure()}",
                )
                failure.text = "\n".join(
                    f"attempt {i + 1}: {c.kind}: {'ok' if c.passed else 'FAILED'}: {c.message}"
                    for i, attempt in enumerate(case.attempts)
                    for c in attempt.checks
                )
        ET.indent(suite)
        return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


Progress = Callable[[EvalCase, int, AttemptResult], None]


async def run_suite(
    suite: EvalSuite,
    target: Target,
    *,
    judge: Judge | None = None,
    repeat: int | None = None,
    name: str = "suite",
    on_attempt: Progress | None = None,
) -> SuiteResult:
    """Run every case `repeat` times (the case's, else the suite's) and check each answer."""
    cases: list[CaseResult] = []
    for case in suite.cases:
        agent = case.agent or suite.agent
        if agent is None:  # the suite model refuses this; kept for type narrowing
            raise RiverbeamError(ErrorCode.EVAL_SUITE_INVALID, f"case {case.name!r} has no agent")
        result = CaseResult(
            case.name,
            agent,
            case.pass_threshold if case.pass_threshold is not None else suite.pass_threshold,
        )
        attempts = repeat or case.repeat or suite.repeat
        for index in range(attempts):
            answer = await target.run_turns(
                agent=agent,
                setup=case.setup,
                turns=case.all_turns,
                model=case.model or suite.model,
                metadata=case.metadata,
            )
            checks = await check_answer(
                answer, case.assertions, question=case.all_turns[-1], judge=judge
            )
            attempt = AttemptResult(all(c.passed for c in checks), checks, answer)
            result.attempts.append(attempt)
            if on_attempt is not None:
                on_attempt(case, index, attempt)
        cases.append(result)
    return SuiteResult(suite.name or name, cases)
