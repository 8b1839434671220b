"""Dependency direction, read from the AST of every module under libs/riverbeam.

- libs never import services (nor tests, bench or scripts);
- riverbeam.core imports nothing of ours but riverbeam.core and riverbeam.v1;
- riverbeam.types imports nothing of ours but riverbeam.types, riverbeam.core and riverbeam.v1;
- riverbeam.v1 (generated) imports only riverbeam.v1.

Every import counts: at module level, inside functions, under `if TYPE_CHECKING:`, and
importlib.import_module("...") / __import__("...") with a literal name.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBS = ROOT / "libs"
PACKAGE = LIBS / "riverbeam"

OURS = "riverbeam"
NEVER_FROM_LIBS = ("services", "tests", "bench", "scripts")
ALLOWED: dict[str, tuple[str, ...]] = {
    "riverbeam.core": ("riverbeam.core", "riverbeam.v1"),
    "riverbeam.types": ("riverbeam.types", "riverbeam.core", "riverbeam.v1"),
    "riverbeam.v1": ("riverbeam.v1",),
}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the absolute name imported
    line: int


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(LIBS).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _imports_of(path: Path) -> list[Import]:
    source = path.read_text(encoding="utf-8")
    return _imports_in(source, _module_name(path), is_package=_is_package(path))


def _imports_in(source: str, module: str, *, is_package: bool) -> list[Import]:
    tree = ast.parse(source)
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(module, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module)
            found.append(Import(module, base, node.lineno))
            # `from riverbeam import services_thing` names a submodule too.
            found += [
                Import(module, f"{base}.{alias.name}", node.lineno)
                for alias in node.names
                if alias.name != "*"
            ]
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func):
            if node.args and isinstance(node.args[0], ast.Constant):
                if isinstance(node.args[0].value, str):
                    found.append(Import(module, node.args[0].value, node.lineno))
    return found


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in ("__import__", "import_module")
    return isinstance(func, ast.Attribute) and func.attr == "import_module"


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


MODULES = sorted(PACKAGE.rglob("*.py"))
IMPORTS = [imp for path in MODULES for imp in _imports_of(path)]


def _where(imp: Import) -> str:
    return f"{imp.module}:{imp.line} imports {imp.target}"


def test_the_walk_sees_the_imports() -> None:
    # Guard against a vacuous pass: known edges must be found.
    assert len(MODULES) > 10
    edges = {(i.module, i.target) for i in IMPORTS}
    assert ("riverbeam.types._base", "riverbeam.core.errors") in edges
    assert ("riverbeam.core.errors", "riverbeam.core._catalog") in edges


def test_relative_imports_are_resolved() -> None:
    assert _resolve("riverbeam.types._base", False, 1, "_content") == "riverbeam.types._content"
    assert _resolve("riverbeam.types", True, 1, "_base") == "riverbeam.types._base"
    assert _resolve("riverbeam.types._base", False, 2, "core") == "riverbeam.core"
    assert _resolve("riverbeam.types._base", False, 1, None) == "riverbeam.types"


def test_libs_never_import_services() -> None:
    bad = [
        _where(i)
        for i in IMPORTS
        if any(_within(i.target, forbidden) for forbidden in NEVER_FROM_LIBS)
    ]
    assert bad == []


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_lower_layers_import_only_what_they_may(layer: str) -> None:
    allowed = ALLOWED[layer]
    bad = [
        _where(i)
        for i in IMPORTS
        if _within(i.module, layer)
        and _within(i.target, OURS)
        and not any(_within(i.target, ok) for ok in allowed)
    ]
    assert bad == []


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_exists(layer: str) -> None:
    assert any(_within(_module_name(p), layer) for p in MODULES)


def test_every_kind_of_import_is_seen() -> None:
    source = """
from __future__ import annotations
import importlib
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from services.router import app
def later():
    import riverbeam.store
    from .. import agents
    importlib.import_module("riverbeam.stream")
    __import__("services.runner")
"""
    targets = {i.target for i in _imports_in(source, "riverbeam.core.x", is_package=False)}
    assert {
        "services.router",
        "riverbeam.store",
        "riverbeam.agents",
        "riverbeam.stream",
        "services.runner",
    } <= targets
