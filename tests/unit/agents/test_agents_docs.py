"""The agent layer's examples in docs/agents.md run as they are."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
SECTION = DOC[DOC.index("## The agent layer") :]
EXAMPLES = re.findall(r"```python\n(.*?)```", SECTION, flags=re.DOTALL)


def test_every_feature_has_an_example() -> None:
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_example_runs(index: int, tmp_path: Path) -> None:
    script = tmp_path / f"example_{index}.py"
    script.write_text(EXAMPLES[index], encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": f"{ROOT / 'libs'}:{ROOT}", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
