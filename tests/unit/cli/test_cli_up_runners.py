"""`riverbeam up --runners N`: the stack gets N runner replicas, and a bad count is refused.

LocalStack itself (ports, the router's target and invoke lanes per replica) is tested in
test_cli_up.py; here only what the command hands it.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

import services.cli._up as up_module
import services.cli._up_command as up_command
from services.cli import app
from services.cli._errors import ExitCode


class _RecordedStack:
    made: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        type(self).made.append(kwargs)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    _RecordedStack.made = []

    async def run_up(stack: Any, consoles: Any, **kwargs: Any) -> ExitCode:
        assert isinstance(stack, _RecordedStack)
        return ExitCode.OK

    monkeypatch.setattr(up_module, "LocalStack", _RecordedStack)
    monkeypatch.setattr(up_command, "run_up", run_up)
    return _RecordedStack.made


@pytest.mark.parametrize(("args", "replicas"), [([], 1), (["--runners", "3"], 3)])
def test_up_hands_the_stack_its_runner_replicas(
    recorded: list[dict[str, Any]], args: list[str], replicas: int
) -> None:
    result = CliRunner().invoke(app, ["up", "--console-port", "0", *args])
    assert result.exit_code == 0, result.output
    assert [made["runners"] for made in recorded] == [replicas]


@pytest.mark.parametrize("count", ["0", "17", "two"])
def test_up_refuses_a_runner_count_out_of_range(recorded: list[dict[str, Any]], count: str) -> None:
    result = CliRunner().invoke(app, ["up", "--runners", count])
    assert result.exit_code == ExitCode.USAGE
    assert "--runners" in result.output
    assert recorded == []


def test_each_ready_line_keeps_a_space_after_a_replica_name(
    recorded: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def run_up(stack: Any, consoles: Any, **kwargs: Any) -> ExitCode:
        for name in ("store", "runner-1", "runner-12"):
            stack.made[-1]["on_ready"](name, "127.0.0.1:50052")
        return ExitCode.OK

    monkeypatch.setattr(up_command, "run_up", run_up)
    result = CliRunner().invoke(app, ["up", "--runners", "12", "--console-port", "0"])
    assert result.exit_code == 0, result.output
    for name in ("store", "runner-1", "runner-12"):
        assert re.search(rf"✓ {name} +127\.0\.0\.1:50052", result.output), result.output
