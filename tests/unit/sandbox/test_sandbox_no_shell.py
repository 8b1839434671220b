"""Nothing in the sandbox shells out: libgit2 does the git work, and runs no hooks."""

from __future__ import annotations

import re
from pathlib import Path

import riverbeam.sandbox

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = Path(riverbeam.sandbox.__file__).parent
SERVICE = ROOT / "services" / "sandbox"

FORBIDDEN = re.compile(
    r"\b(subprocess|os\.system|os\.popen|os\.exec\w*|os\.spawn\w*|os\.fork|pty\.|commands\.|"
    r"asyncio\.create_subprocess\w*|shell\s*=\s*True|ctypes|cffi)\b"
)


def _sources() -> list[Path]:
    files = sorted(PACKAGE.glob("*.py")) + sorted(SERVICE.glob("*.py"))
    assert len(files) >= 10
    return files


def test_no_process_spawning_in_the_sandbox() -> None:
    offenders = [
        f"{path.name}:{number}: {line.strip()}"
        for path in _sources()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if FORBIDDEN.search(line)
    ]
    assert offenders == []


def test_no_executable_lookup() -> None:
    for path in _sources():
        assert "shutil.which" not in path.read_text(), path.name
