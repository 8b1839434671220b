"""Issue 17 in the CLI: what a new user trips over (the echo model, flags, help, versions)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from riverbeam.routing import default_model
from riverbeam.types import AgentMetadata
from riverbeam.v1 import riverbeam_service_pb2 as pb
from services.cli._errors import ExitCode
from tests.unit.cli.cli_harness import Cli
from tests.unit.client.fake_router import FakeRiverbeam, FakeRouterThread


class _EchoingDeployment(FakeRiverbeam):
    """A router with the built-in model list, in front of runners without a model key."""

    async def ListModels(self, request: Any, context: Any) -> pb.ListModelsResponse:
        self._enter("ListModels", request, context)
        return pb.ListModelsResponse(models=[default_model().to_proto()])

    async def ListAgents(self, request: Any, context: Any) -> pb.ListAgentsResponse:
        self._enter("ListAgents", request, context)
        agents = [
            AgentMetadata(name="assistant", default_model="echo"),
            AgentMetadata(name="author", default_model="echo"),
        ]
        return pb.ListAgentsResponse(agents=[a.to_proto() for a in agents])


@pytest.fixture
def echoing(cli: Cli) -> Iterator[Cli]:
    with FakeRouterThread(_EchoingDeployment()) as server:
        yield Cli(server.fake, server.address, {**cli.env, "RIVERBEAM_ROUTER": server.address})


def test_models_marks_the_echo_client(echoing: Cli) -> None:
    result = echoing("models")
    assert result.exit_code == ExitCode.OK
    assert "echo (no model key)" in result.stdout
    assert "answered by the echo client" in result.stdout
    [entry] = json.loads(echoing("models", "--json").stdout)
    assert entry["name"] == "riverbeam-default" and entry["served_by"] == "echo"


def test_models_without_the_placeholder_has_no_served_by_column(cli: Cli) -> None:
    result = cli("models")
    assert "served by" not in result.stdout
    assert all("served_by" not in m for m in json.loads(cli("models", "--json").stdout))


def test_version_and_short_help(cli: Cli) -> None:
    from riverbeam import __version__

    version = cli("--version")
    assert version.exit_code == 0 and version.stdout.strip() == f"riverbeam {__version__}"
    assert cli("-V").stdout == version.stdout
    short = cli("-h")
    assert short.exit_code == 0 and short.stdout == cli("--help").stdout
    assert cli("invoke", "-h").exit_code == 0


def test_flags_are_flags_in_help_and_usage_has_no_braces(cli: Cli) -> None:
    for command in ("invoke", "pending", "agents", "models", "cancel", "follow", "session"):
        text = cli(command, "--help").stdout
        assert "<bool>" not in text, command
        assert "{" not in text.split("\n\n")[0] + text.splitlines()[1], command
    usage = next(line for line in cli("invoke", "--help").stdout.splitlines() if "Usage:" in line)
    assert "riverbeam invoke [OPTIONS] AGENT TEXT" in usage
    assert re.search(r"--json\s+--no-json\s+Print JSON", cli("agents", "--help").stdout)


def test_json_flags_parse_both_ways(cli: Cli) -> None:
    assert json.loads(cli("agents", "--json").stdout)
    assert "assistant" in cli("agents", "--no-json").stdout
    bad = cli("agents", "--json", "true")
    assert bad.exit_code == ExitCode.USAGE


def test_schema_without_a_type_lists_them(cli: Cli) -> None:
    from riverbeam.types import WIRE_TYPES

    result = cli("schema")
    assert result.exit_code == 0
    assert result.stdout.split() == sorted(WIRE_TYPES)


def test_cancel_json(cli: Cli) -> None:
    result = cli("cancel", "no-such-request", "--json")
    assert result.exit_code == ExitCode.OK
    assert json.loads(result.stdout) == {"request_id": "no-such-request", "cancelled": False}


def test_usage_table_and_json(cli: Cli) -> None:
    table = cli("usage", "--by", "user", "--since", "7d")
    assert table.exit_code == ExitCode.OK, table.stderr
    assert "usage by user" in table.stdout
    assert "alice" in table.stdout and "gpt-vision" in table.stdout and "1.0000" in table.stdout
    assert "total" in table.stdout and "2003" in table.stdout
    request = [c for c in cli.fake.calls if c[0] == "GetUsage"][-1][1]
    assert request.group_by == "user" and request.HasField("start_time")
    data = json.loads(cli("usage", "--by", "user", "--json").stdout)
    assert data["group_by"] == "user" and data["total"]["total_tokens"] == 2003
    assert data["rows"][0] == {
        "key": "alice",
        "model": "gpt-vision",
        "runs": 2,
        "prompt_tokens": 1500,
        "completion_tokens": 500,
        "total_tokens": 2000,
        "cost": 1.0,
    }


def test_usage_rejects_a_bad_time(cli: Cli) -> None:
    bad = cli("usage", "--since", "yesterday-ish")
    assert bad.exit_code == ExitCode.USAGE
    assert "error BEM-425" in bad.stderr


def test_parse_when() -> None:
    from datetime import UTC, datetime, timedelta

    from services.cli._usage import parse_when

    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    assert parse_when("24h", option="--since", now=now) == now - timedelta(hours=24)
    assert parse_when("2026-11-30", option="--since") == datetime(2026, 11, 30, tzinfo=UTC)
    assert parse_when(None, option="--since") is None
