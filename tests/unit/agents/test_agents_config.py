"""riverbeam.yaml: the schema, its published JSON Schema, and errors naming file, line, field."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from riverbeam.agents import (
    AgentConfig,
    HttpMcpServer,
    StdioMcpServer,
    config_json_schema,
    load_config,
    parse_config,
)
from riverbeam.agents._config import McpToolRef, PythonToolRef, SandboxToolRef
from riverbeam.core.errors import ErrorCode, RiverbeamError

ROOT = Path(__file__).resolve().parents[3]

GOOD = """\
version: 1
builtin_agents: [assistant, author]
workspace: {name: docs, origin: /srv/origin.git}
mcp_servers:
  files:
    kind: stdio
    command: python
    args: [-m, files_server]
    env: {TOKEN: "${FILES_TOKEN}"}
    confirm: [delete]
  search:
    kind: http
    url: https://mcp.example.com/mcp
    headers: {Authorization: "Bearer ${SEARCH_TOKEN}"}
agents:
  - name: docs-helper
    description: Answers from the docs
    version: "2.1"
    modalities: [text, image]
    tags: [docs]
    skill: consume
    instructions: Be brief.
    model: fast
    tools:
      - read_file
      - remember
      - {kind: sandbox, names: [git_log]}
      - {kind: mcp, server: search, tools: [query]}
      - {kind: python, entry: "my_tools:WordCount"}
    tool_errors: model
    policies:
      - {kind: confirm, tools: [search__query]}
    limits: {max_rounds: 4, tool_timeout_s: 10}
"""


def error_of(text: str) -> RiverbeamError:
    with pytest.raises(RiverbeamError) as info:
        parse_config(text, path=Path("/etc/riverbeam.yaml"))
    return info.value


def test_a_full_file_validates_into_typed_sections() -> None:
    config = parse_config(GOOD).config
    assert config.builtin_agents == ["assistant", "author"]
    assert config.workspace is not None and config.workspace.name == "docs"
    files, search = config.mcp_servers["files"], config.mcp_servers["search"]
    assert isinstance(files, StdioMcpServer) and files.confirm == ["delete"]
    assert isinstance(search, HttpMcpServer) and search.headers["Authorization"].startswith(
        "Bearer"
    )
    agent = config.agents[0]
    assert isinstance(agent, AgentConfig)
    assert agent.tools is not None
    assert agent.tools[:2] == ["read_file", "remember"]
    assert isinstance(agent.tools[2], SandboxToolRef)
    assert isinstance(agent.tools[3], McpToolRef) and agent.tools[3].server == "search"
    assert isinstance(agent.tools[4], PythonToolRef)
    assert agent.limits.max_rounds == 4
    assert agent.modalities == ["text", "image"]


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        ("agents:\n  - name: a\n    skil: consume\n", 3, "agents[0].skil", "unknown field"),
        (
            "agents:\n  - name: a\n    skill: consume\n    tools:\n      - read_file\n"
            "      - {kind: mcp}\n",
            6,
            "agents[0].tools[1].server",
            "required",
        ),
        (
            "agents:\n  - name: a\n    instructions: x\n    tools: [write_filez]\n",
            4,
            "agents[0].tools[0]",
            "read_file",
        ),
        (
            "mcp_servers:\n  files:\n    kind: stdio\n    command: x\n    args: 3\n",
            5,
            "mcp_servers.files.args",
            "list",
        ),
        (
            "mcp_servers:\n  files:\n    kind: ftp\n    command: x\n",
            3,
            "mcp_servers.files",
            "'ftp'",
        ),
        (
            "agents:\n  - name: a\n    instructions: x\n    output: {kind: json_schema, schema: {type: 7}}\n",
            4,
            "agents[0].output.schema",
            "JSON Schema",
        ),
        (
            "agents:\n  - name: a\n    description: no prompt\n",
            2,
            "agents[0]",
            "skill or instructions",
        ),
        ("agents:\n  - name: a\n    instructions: x\n    name: b\n", 4, "agents[0].name", "twice"),
        ("agents: [\n", 2, "", "invalid YAML"),
        ("- just\n- a list\n", 1, "", "mapping"),
        ("mcp_servers:\n  a__b: {kind: http, url: 'http://x'}\n", 2, "mcp_servers", "double"),
        ("version: 2\n", 1, "version", "1"),
    ],
)
def test_an_invalid_file_is_bem_230_with_file_line_and_field(
    text: str, line: int, field: str, words: str
) -> None:
    err = error_of(text)
    assert err.code is ErrorCode.CONFIG_INVALID
    assert err.details["file"] == "/etc/riverbeam.yaml"
    assert err.details["line"] == str(line), err.message
    assert err.details.get("field", "") == field, err.message
    assert words in err.message
    assert err.message.startswith(f"/etc/riverbeam.yaml:{line}: ")


def test_an_unreadable_file_is_bem_230(tmp_path: Path) -> None:
    with pytest.raises(RiverbeamError) as info:
        load_config(tmp_path / "missing.yaml")
    assert info.value.code is ErrorCode.CONFIG_INVALID
    assert "missing.yaml" in info.value.message


def test_an_empty_file_is_a_config_with_defaults(tmp_path: Path) -> None:
    path = tmp_path / "riverbeam.yaml"
    path.write_text("")
    loaded = load_config(path)
    assert loaded.config.agents == [] and loaded.config.builtin_agents is True
    assert loaded.base_dir == tmp_path


def _gen_config_schema():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "gen_config_schema", ROOT / "scripts" / "gen_config_schema.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_published_json_schema_is_the_models() -> None:
    published = ROOT / "schemas" / "config" / "riverbeam.schema.json"
    assert not _gen_config_schema().stale(published), (
        "schemas/config/riverbeam.schema.json is stale: run python scripts/gen_config_schema.py"
    )
    assert json.loads(published.read_text()) == config_json_schema()


def test_the_json_schema_accepts_good_files_and_refuses_bad_ones() -> None:
    import yaml

    validator = Draft202012Validator(config_json_schema())
    assert list(validator.iter_errors(yaml.safe_load(GOOD))) == []
    bad = yaml.safe_load("agents:\n  - name: a\n    skill: x\n    tools: [{kind: nope}]\n")
    assert list(validator.iter_errors(bad))


def test_the_example_config_validates() -> None:
    loaded = load_config(ROOT / "examples" / "riverbeam.yaml")
    assert [a.name for a in loaded.config.agents]
