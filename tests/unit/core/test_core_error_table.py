"""docs/errors.md is generated from the catalog by scripts/gen_error_table.py and kept current."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from riverbeam.core import ErrorCode

ROOT = Path(__file__).resolve().parents[3]


def _script() -> ModuleType:
    path = ROOT / "scripts" / "gen_error_table.py"
    spec = importlib.util.spec_from_file_location("gen_error_table", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checked_in_table_is_current() -> None:
    expected = _script().render()
    current = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert current == expected, "docs/errors.md is stale: run python scripts/gen_error_table.py"


def test_readme_table_is_current() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert _script().render_readme(readme) == readme, (
        "the README error table is stale: run python scripts/gen_error_table.py"
    )


def test_table_has_one_row_per_code() -> None:
    text = _script().render()
    rows = [line for line in text.splitlines() if line.startswith("| BEM-")]
    assert [row.split("|")[1].strip() for row in rows] == sorted(m.code for m in ErrorCode)
    for member in ErrorCode:
        (row,) = [r for r in rows if r.startswith(f"| {member.code} |")]
        assert f"| {member.spec.http_status} |" in row
        assert f"`{member.spec.grpc_status.name}`" in row


def test_check_mode(tmp_path: Path) -> None:
    script = _script()
    target = tmp_path / "errors.md"
    assert script.main(["--check", str(target)]) == 1
    assert script.main([str(target)]) == 0
    assert script.main(["--check", str(target)]) == 0
    target.write_text(target.read_text(encoding="utf-8") + "edited\n", encoding="utf-8")
    assert script.main(["--check", str(target)]) == 1
