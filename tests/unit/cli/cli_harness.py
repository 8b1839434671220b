"""Running `riverbeam ...` in-process (typer's CliRunner) against the fake router."""

from __future__ import annotations

from dataclasses import dataclass

from typer.testing import CliRunner, Result

from services.cli import app
from tests.unit.client.fake_router import FakeRiverbeam

__all__ = ["Cli"]


@dataclass
class Cli:
    """Runs the CLI with `env`; fails the test on any traceback or unexpected exception."""

    fake: FakeRiverbeam
    address: str
    env: dict[str, str | None]

    def __call__(self, *args: str, input: str | None = None) -> Result:
        runner = CliRunner(env=self.env)
        result = runner.invoke(app, list(args), input=input)
        assert "Traceback" not in result.output
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result
