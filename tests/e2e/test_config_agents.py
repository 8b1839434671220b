"""riverbeam.yaml across processes: the runner loads it, the router routes to the agent's model.

The four services as processes (LocalStack) on real NATS and Postgres; the runner gets a config
file (RIVERBEAM_CONFIG) declaring an agent with a Python tool, an MCP server (a real stdio
process the runner starts) and a model from the model list both router and runner read.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from e2e_kit import GUARD_S, REPO_ROOT, ChatProcess, pg_schema, run_cli, running_stack

from riverbeam.client import RiverbeamClient
from riverbeam.types import AgentResult, StreamAck
from tests.support.chat_server import call, text, tool_calls

pytestmark = [pytest.mark.e2e, pytest.mark.nats, pytest.mark.postgres]

MODELS = """\
models:
  - {name: cheap, provider: custom, cost_per_1k_tokens: 0.1}
  - {name: smart, provider: custom, cost_per_1k_tokens: 5.0}
"""


def write_files(root: Path) -> tuple[Path, Path]:
    root.mkdir(parents=True, exist_ok=True)
    models = root / "models.yaml"
    models.write_text(MODELS)
    config = root / "riverbeam.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            builtin_agents: [assistant]
            mcp_servers:
              calc:
                kind: stdio
                command: python
                args: [-m, tests.support.mcp_server]
                cwd: {REPO_ROOT}
                env: {{PYTHONPATH: "{REPO_ROOT / "libs"}:{REPO_ROOT}"}}
                include: [add]
            agents:
              - name: counter
                description: Counts words and adds numbers
                model: smart
                instructions: Count words with word_count and add with calc__add.
                tools:
                  - {{kind: python, entry: "word_tools:WordCount"}}
                  - {{kind: mcp, server: calc}}
            """
        )
    )
    # The Python tool lives beside the config file, as a project's would.
    (root / "word_tools.py").write_text((REPO_ROOT / "examples" / "word_tools.py").read_text())
    return config, models


async def test_a_configured_agent_through_the_router(
    tmp_path: Path, pg_url: str, nats_url: str
) -> None:
    config, models = write_files(tmp_path / "project")
    async with pg_schema(pg_url, "e2e_config") as schema, ChatProcess(tmp_path / "chat") as chat:
        overrides = {
            "store": {"RIVERBEAM_DB_SCHEMA": schema},
            "router": {"RIVERBEAM_MODELS_FILE": str(models)},
            "runner": {
                **chat.model_env(),
                "RIVERBEAM_CONFIG": str(config),
                "RIVERBEAM_MODELS_FILE": str(models),
            },
        }
        async with running_stack(
            database_url=pg_url,
            nats_url=nats_url,
            data_dir=tmp_path / "data",
            env_overrides=overrides,
        ) as stack:
            listed = await run_cli("agents", "--json", router=stack.router)
            assert listed.returncode == 0, listed
            agents = {a["name"]: a for a in json.loads(listed.stdout)}
            assert sorted(agents) == ["assistant", "counter"]
            assert agents["counter"]["model"] == "smart"

            await chat.push(
                tool_calls(
                    [
                        call("word_count", {"text": "one two three"}),
                        call("calc__add", {"a": 3, "b": 4}),
                    ]
                ),
                text("three words; 3 + 4 = 7"),
            )
            async with RiverbeamClient(stack.router, timeout_s=GUARD_S) as client:
                ack = await client.invoke("counter", "count and add", stream=True)
                assert isinstance(ack, StreamAck)
                frames = [f async for f in client.follow(ack.request_id, timeout_s=GUARD_S)]
                results = {
                    f.data.tool_name: f.data.tool_result
                    for f in frames
                    if f.data is not None and f.data.type == "tool_result"
                }
                assert results == {"word_count": {"words": 3}, "calc__add": {"result": 7}}
                assert frames[-1].type == "done" and frames[-1].result is not None
                assert frames[-1].result.text == "three words; 3 + 4 = 7"
                assert frames[-1].result.model_used == "smart"
                # A request's own override still wins over the agent's model.
                await chat.push(text("cheap answer"))
                result = await client.invoke("counter", "hi", model_override="cheap")
                assert isinstance(result, AgentResult) and result.text == "cheap answer"
            sent = await chat.completions()
            assert [r["body"]["model"] for r in sent] == ["smart", "smart", "cheap"]
            assert [t["function"]["name"] for t in sent[0]["body"]["tools"]] == [
                "word_count",
                "calc__add",
            ]

            # `riverbeam eval --router`: the same agent, judged through the public API.
            suite = tmp_path / "suite.yaml"
            suite.write_text(
                "name: through-the-router\nagent: counter\ncases:\n"
                "  - name: adds\n    input: add 1 and 2\n    assert:\n"
                "      - {kind: called_tool, tool: calc__add, args: {a: 1, b: 2}}\n"
                "      - {kind: contains, text: '3'}\n"
            )
            await chat.push(tool_calls([call("calc__add", {"a": 1, "b": 2})]), text("1 + 2 = 3"))
            report = await run_cli(
                "eval", str(suite), "--router", stack.router, "--json", router=stack.router
            )
            assert report.returncode == 0, report
            assert json.loads(report.stdout)["cases"][0]["passed"] is True


async def test_up_refuses_an_invalid_config_naming_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "riverbeam.yaml"
    bad.write_text("agents:\n  - name: broken\n    skil: consume\n")
    result = await run_cli("up", "--config", str(bad), "--base-port", "1", router="127.0.0.1:1")
    assert result.returncode != 0, result
    assert "BEM-230" in result.stderr
    assert f"{bad}:3" in result.stderr and "agents[0].skil" in result.stderr
