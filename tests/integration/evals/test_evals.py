"""Evals: assertions, repeats and thresholds in process; `riverbeam eval` as a user runs it,
against a scripted chat-completions server (a real HTTP server in another process)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from riverbeam.agents import PendingToolCall, ScriptedClient, Text, ToolCalls, parse_config
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.evals import EvalSuite, InProcessTarget, Judge, load_suite, run_suite
from riverbeam.types import TokenUsage

REPO_ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = REPO_ROOT / "examples" / "evals" / "builtin-skills.yaml"
GUARD_S = 120.0


def suite_of(data: dict[str, Any]) -> EvalSuite:
    return EvalSuite.model_validate(data)


CONFIG = parse_config(
    "builtin_agents: [assistant]\n"
    "agents:\n"
    "  - {name: helper, instructions: Help., tools: [read_file, list_tree], tool_errors: model}\n"
)


async def test_every_assertion_kind_passes_and_fails_where_it_should() -> None:
    usage = TokenUsage(prompt_tokens=30, completion_tokens=12, total_tokens=42)
    model = ScriptedClient(
        [
            ToolCalls([PendingToolCall("read_file", {"path": "README.md"})]),
            Text('{"answer": "Riverbeam", "n": 3}', usage=usage),
        ]
    )
    judge = ScriptedClient([Text("Yes, it does."), Text("maybe")])
    suite = suite_of(
        {
            "agent": "helper",
            "cases": [
                {
                    "name": "all kinds",
                    "input": "what is it?",
                    "assert": [
                        {"kind": "contains", "text": "riverbeam"},
                        {"kind": "not_contains", "text": "sorry"},
                        {"kind": "regex", "pattern": r'"n": \d'},
                        {"kind": "called_tool", "tool": "read_file", "args": {"path": "/READ/"}},
                        {"kind": "called_tool", "tool": "read_file", "times": 1},
                        {"kind": "not_called_tool", "tool": "write_file"},
                        {"kind": "json_schema", "schema": {"type": "object", "required": ["n"]}},
                        {"kind": "max_latency_ms", "value": 3600000},
                        {"kind": "max_tokens", "value": 42},
                        {"kind": "rubric", "rubric": "names the product"},
                        # These must fail:
                        {"kind": "called_tool", "tool": "read_file", "args": {"path": "x"}},
                        {"kind": "max_tokens", "value": 41},
                        {"kind": "json_schema", "schema": {"type": "object", "required": ["z"]}},
                        {"kind": "rubric", "rubric": "anything"},
                    ],
                }
            ],
        }
    )
    async with InProcessTarget.open(config=CONFIG, client=model, env={}) as target:
        result = await run_suite(suite, target, judge=Judge(judge))
    (case,) = result.cases
    (attempt,) = case.attempts
    outcome = [(c.kind, c.passed) for c in attempt.checks]
    assert outcome[:10] == [
        ("contains", True),
        ("not_contains", True),
        ("regex", True),
        ("called_tool", True),
        ("called_tool", True),
        ("not_called_tool", True),
        ("json_schema", True),
        ("max_latency_ms", True),
        ("max_tokens", True),
        ("rubric", True),
    ]
    assert [passed for _, passed in outcome[10:]] == [False] * 4
    assert "not yes or no" in attempt.checks[-1].message
    assert not case.passed and not result.passed
    # The judge saw the rubric, the question and the answer.
    asked = judge.calls[0].messages[1]["content"]
    assert "names the product" in asked and "what is it?" in asked and "Riverbeam" in asked


async def test_repeats_count_against_the_threshold() -> None:
    model = ScriptedClient([Text("good"), Text("bad"), Text("good"), Text("bad")])
    suite = suite_of(
        {
            "agent": "helper",
            "cases": [
                {
                    "name": "flaky",
                    "input": "x",
                    "repeat": 4,
                    "pass_threshold": 0.5,
                    "assert": [{"kind": "contains", "text": "good"}],
                },
            ],
        }
    )
    async with InProcessTarget.open(config=CONFIG, client=model, env={}) as target:
        result = await run_suite(suite, target)
    (case,) = result.cases
    assert [a.passed for a in case.attempts] == [True, False, True, False]
    assert case.pass_rate == 0.5 and case.passed and result.passed
    junit = ET.fromstring(result.junit_xml())
    assert junit.get("tests") == "1" and junit.get("failures") == "0"


async def test_a_run_that_fails_fails_its_checks_with_the_code() -> None:
    suite = suite_of(
        {
            "cases": [
                {
                    "name": "gone",
                    "agent": "nobody",
                    "input": "x",
                    "assert": [{"kind": "contains", "text": "x"}],
                }
            ]
        }
    )
    async with InProcessTarget.open(config=CONFIG, client=ScriptedClient([]), env={}) as target:
        result = await run_suite(suite, target)
    attempt = result.cases[0].attempts[0]
    assert not attempt.passed and "BEM-020" in attempt.checks[0].message
    failure = ET.fromstring(result.junit_xml()).find("testcase/failure")
    assert failure is not None and "BEM-020" in (failure.get("message") or "")


def test_an_invalid_suite_is_bem_250_with_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "suite.yaml"
    bad.write_text(
        "agent: a\ncases:\n  - name: x\n    input: y\n    assert:\n      - {kind: calls}\n"
    )
    with pytest.raises(RiverbeamError) as info:
        load_suite(bad)
    assert info.value.code is ErrorCode.EVAL_SUITE_INVALID
    assert info.value.details["line"] == "6"
    assert info.value.details["field"] == "cases[0].assert[0]"
    assert load_suite(EXAMPLE)[0].name == "builtin-skills"


# ---- the CLI, as a user runs it -----------------------------------------------------------------
@contextlib.asynccontextmanager
async def chat_process(script: Path) -> AsyncIterator[str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.support.chat_server", "--port", "0", "--script", str(script),
        stdout=asyncio.subprocess.PIPE, cwd=str(REPO_ROOT), start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(GUARD_S):
            url = (await proc.stdout.readline()).decode().strip()
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()


async def riverbeam(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.cli", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=str(REPO_ROOT), env=env,
    )  # fmt: skip
    async with asyncio.timeout(GUARD_S):
        out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def cli_env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RIVERBEAM_", "BEAM_"))}
    env.update(BEAM_API_KEY="test", BEAM_API_BASE_URL=url, COLUMNS="200", NO_COLOR="1")
    return env


async def test_the_example_suite_passes_against_a_scripted_model(tmp_path: Path) -> None:
    script = REPO_ROOT / "examples" / "evals" / "scripted-replies.json"
    junit = tmp_path / "junit.xml"
    async with chat_process(script) as url:
        code, out, err = await riverbeam(
            "eval", str(EXAMPLE), "--junit", str(junit), env=cli_env(url)
        )
    assert code == 0, out + err
    assert "5/5 cases passed" in out
    assert "summarize looks at the files first" in out
    suite = ET.parse(junit).getroot()
    assert suite.get("name") == "builtin-skills"
    assert suite.get("tests") == "5" and suite.get("failures") == "0"


async def test_a_failing_suite_exits_1_with_json(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: failing\nagent: assistant\ncases:\n"
        "  - {name: wrong, input: hi, assert: [{kind: contains, text: bye}]}\n"
        "  - {name: right, input: hi, assert: [{kind: contains, text: hi}]}\n"
    )
    script = tmp_path / "none.json"
    script.write_text("[]")
    async with chat_process(script) as url:
        code, out, err = await riverbeam("eval", str(suite), "--json", env=cli_env(url))
    assert code == 1, out + err
    report = json.loads(out)
    assert report["suite"] == "failing" and report["failed"] == 1 and report["total"] == 2
    assert [c["passed"] for c in report["cases"]] == [False, True]
    assert "does not contain 'bye'" in report["cases"][0]["attempts"][0]["checks"][0]["message"]
