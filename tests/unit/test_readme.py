"""The README documents every setting a service reads, and every doc it links exists."""

from __future__ import annotations

import re
from pathlib import Path

from riverbeam.core.settings import (
    ConsoleSettings,
    RouterSettings,
    RunnerSettings,
    SandboxSettings,
    StoreSettings,
)

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_in_the_configuration_table() -> None:
    for cls in (StoreSettings, SandboxSettings, RunnerSettings, RouterSettings, ConsoleSettings):
        for name in cls.model_fields:
            variable = f"RIVERBEAM_{name.upper()}"
            assert f"`{variable}`" in README, f"{variable} ({cls.__name__}) is not documented"


def test_linked_docs_exist() -> None:
    for target in re.findall(r"\]\(((?:docs|bench)/[^)#]+)\)", README):
        assert (ROOT / target).exists(), f"README links {target}, which does not exist"
