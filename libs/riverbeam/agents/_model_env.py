"""Which environment variables configure the OpenAI-compatible model client.

Apart from the client (agents/_openai.py) so that a runner can tell whether a model is
configured without importing the client: with no API key it answers with EchoClient and never
loads it (issue 16: idle RSS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = [
    "API_KEY_VARS",
    "BASE_URL_VARS",
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "MODEL_VARS",
    "first_set",
]

DEFAULT_BASE_URL = "https://integrate.api.nvidia.com/v1"
DEFAULT_MODEL = "deepseek-ai/deepseek-v4-pro-0813"

API_KEY_VARS = ("BEAM_API_KEY", "GFS_BEAM_API_KEY", "NVIDIA_API_KEY")
BASE_URL_VARS = ("BEAM_API_BASE_URL", "GFS_BEAM_BASE_URL")
MODEL_VARS = ("BEAM_MODEL", "GFS_BEAM_MODEL")


def first_set(env: Mapping[str, str], names: Sequence[str]) -> str | None:
    """The first of `names` that `env` sets to more than blanks, stripped; else None."""
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return None
