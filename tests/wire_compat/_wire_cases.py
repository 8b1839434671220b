"""The wire fixtures of tests/wire_compat, loaded once for the tests of this folder.

fixtures/<Type>__<name>.json            a valid document of wire type <Type>
negative/<Type>__<name>__BEM-NNN.json   an invalid one; <Type>.parse() must raise BEM-NNN
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from riverbeam.types import WIRE_TYPES, WireModel

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
NEGATIVE = HERE / "negative"

_VALID_NAME = re.compile(r"^(?P<type>[A-Z][A-Za-z]+)__(?P<name>[a-z0-9_]+)\.json$")
_NEGATIVE_NAME = re.compile(
    r"^(?P<type>[A-Z][A-Za-z]+)__(?P<name>[a-z0-9_]+)__(?P<code>BEM-\d{3})\.json$"
)


@dataclass(frozen=True)
class Case:
    """One fixture file."""

    path: Path
    type_name: str
    name: str
    code: str | None  # the expected BEM code of a negative fixture

    @property
    def id(self) -> str:
        """<Type>__<name>, without the expected code."""
        return f"{self.type_name}__{self.name}"

    @property
    def model(self) -> type[WireModel]:
        return WIRE_TYPES[self.type_name]

    def document(self) -> Any:
        return json.loads(self.path.read_text(encoding="utf-8"))

    def text(self) -> bytes:
        return self.path.read_bytes()


def _load(folder: Path, pattern: re.Pattern[str]) -> list[Case]:
    cases = []
    for path in sorted(folder.glob("*.json")):
        match = pattern.match(path.name)
        if match is None:
            raise AssertionError(f"{path.name} does not follow the naming rule of {folder.name}/")
        groups = match.groupdict()
        cases.append(Case(path, groups["type"], groups["name"], groups.get("code")))
    return cases


VALID: list[Case] = _load(FIXTURES, _VALID_NAME)
INVALID: list[Case] = _load(NEGATIVE, _NEGATIVE_NAME)


def drop_paths(doc: Any, paths: frozenset[str]) -> Any:
    """A copy of doc without the dotted paths given ("actions.0.responded_at")."""
    if not paths:
        return doc
    if isinstance(doc, dict):
        here = {p for p in paths if "." not in p}
        out = {}
        for key, value in doc.items():
            if key in here:
                continue
            nested = frozenset(p.split(".", 1)[1] for p in paths if p.startswith(f"{key}."))
            out[key] = drop_paths(value, nested)
        return out
    if isinstance(doc, list):
        return [
            drop_paths(item, frozenset(p.split(".", 1)[1] for p in paths if p.startswith(f"{i}.")))
            for i, item in enumerate(doc)
        ]
    return doc


def has_path(doc: Any, path: str) -> bool:
    """Whether the dotted path exists in doc."""
    node = doc
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True
