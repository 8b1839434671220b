"""RIVERBEAM_AGENT_LAYER: the deployment's agent layer, as JSON text or a JSON or YAML file.

Apart from the model (agents/_layer_config.py) so that a runner without the setting loads
neither it nor the guardrail and policy models it holds (issue 16: idle RSS).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from riverbeam.core.errors import ErrorCode, RiverbeamError

if TYPE_CHECKING:
    from riverbeam.agents._layer_config import AgentLayerConfig

__all__ = ["load_agent_layer"]


def load_agent_layer(value: str | None) -> AgentLayerConfig | None:
    """RIVERBEAM_AGENT_LAYER: JSON text, or the path of a JSON or YAML file; None when unset.

    Raises:
        RiverbeamError: BEM-002 when the file cannot be read or the config is invalid.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    from riverbeam.agents._layer_config import AgentLayerConfig

    if text.startswith("{"):
        return AgentLayerConfig.parse(text, source="RIVERBEAM_AGENT_LAYER")
    import yaml  # here: a runner without an agent layer file does not load it

    path = Path(text)
    try:
        raw = path.read_text(encoding="utf-8")
        data = yaml.safe_load(raw) if path.suffix in (".yaml", ".yml") else json.loads(raw)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise RiverbeamError(
            ErrorCode.INVALID_ARGUMENT,
            f"RIVERBEAM_AGENT_LAYER: cannot read {path}: {exc}",
            source=str(path),
        ) from None
    return AgentLayerConfig.parse(data or {}, source=str(path))
