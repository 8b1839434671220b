"""RIVERBEAM_AGENT_LAYER: the deployment's agent-layer defaults from JSON text or a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from riverbeam.agents import AgentLayerConfig, load_agent_layer
from riverbeam.agents._guardrails import PiiDetector
from riverbeam.agents._policies import ApproveTools
from riverbeam.core.errors import ErrorCode, RiverbeamError

YAML = """
guardrails:
  - {kind: pii, stages: [input]}
tool_policies:
  - {kind: approve_tools, tools: [git_push]}
time_limit_s: 300
"""


def test_unset_is_none() -> None:
    assert load_agent_layer(None) is None
    assert load_agent_layer("  ") is None


def test_json_text_and_yaml_file(tmp_path: Path) -> None:
    layer = load_agent_layer('{"token_budget": 1000, "max_rounds": 3}')
    assert layer == AgentLayerConfig(token_budget=1000, max_rounds=3)
    path = tmp_path / "layer.yaml"
    path.write_text(YAML, encoding="utf-8")
    loaded = load_agent_layer(str(path))
    assert loaded is not None and loaded.time_limit_s == 300
    assert isinstance(loaded.guardrails[0], PiiDetector)
    assert isinstance(loaded.tool_policies[0], ApproveTools)


@pytest.mark.parametrize(
    "value",
    ['{"time_limit_s": -1}', '{"guardrails": [{"kind": "nope"}]}', '{"extra": 1}', "/no/such.json"],
)
def test_invalid_configs_are_refused(value: str) -> None:
    with pytest.raises(RiverbeamError) as info:
        load_agent_layer(value)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
