"""JSON Schema export: every wire type, well-formed, and the checked-in schemas/ is current."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest
from jsonschema import Draft202012Validator

import riverbeam.types as types_pkg
from riverbeam.types import WIRE_TYPES, WireModel, json_schema

ROOT = Path(__file__).resolve().parents[3]


def _script() -> ModuleType:
    path = ROOT / "scripts" / "gen_schemas.py"
    spec = importlib.util.spec_from_file_location("gen_schemas", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_public_surface() -> None:
    assert len(set(types_pkg.__all__)) == len(types_pkg.__all__)
    for name in types_pkg.__all__:
        assert hasattr(types_pkg, name), name


def test_wire_types_lists_every_exported_wire_model() -> None:
    exported = {
        name
        for name in types_pkg.__all__
        if isinstance(obj := getattr(types_pkg, name), type)
        and issubclass(obj, WireModel)
        and obj is not WireModel
    }
    assert set(WIRE_TYPES) == exported
    for name, model in WIRE_TYPES.items():
        assert model.__name__ == name
        model.proto_type()  # every wire type has its protobuf message


@pytest.mark.parametrize("name", sorted(WIRE_TYPES))
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = json_schema(name)
    Draft202012Validator.check_schema(schema)
    assert list(schema)[:3] == ["$schema", "$id", "title"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://riverbeam.dev/schemas/v1/{name}.json"
    assert schema["title"] == name
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert json.loads(json.dumps(schema)) == schema  # plain JSON
    assert json_schema(name) is not json_schema(name)  # callers may change their copy


def test_schema_is_the_validation_schema() -> None:
    schema = json_schema("ActionResponseEnvelope")
    # Input rules: responded_at and status have defaults, so they are not required.
    assert schema["required"] == ["action_id", "kind", "request_id"]
    assert schema["properties"]["action_id"]["format"] == "uuid"
    assert schema["properties"]["status"]["enum"] == [
        "submitted",
        "cancelled",
        "expired",
        "invalid",
    ]
    auth = json_schema("InvokeAuthContext")
    assert "organization_id" in auth["properties"]
    assert auth["not"] == {"required": ["org_id", "organization_id"]}


def test_unknown_type() -> None:
    with pytest.raises(KeyError, match="not a wire type"):
        json_schema("Nope")


def test_checked_in_schemas_are_current() -> None:
    problems = _script().differences(ROOT / "schemas")
    assert problems == [], "schemas/ is stale: run python scripts/gen_schemas.py"


def test_schema_files_are_the_exported_schemas() -> None:
    for name in WIRE_TYPES:
        path = ROOT / "schemas" / f"{name}.json"
        assert json.loads(path.read_text(encoding="utf-8")) == json_schema(name)


def test_script_writes_and_checks(tmp_path: Path) -> None:
    script = _script()
    assert script.main(["--check", str(tmp_path)]) == 1
    (tmp_path / "Gone.json").write_text("{}", encoding="utf-8")
    assert script.main([str(tmp_path)]) == 0
    assert not (tmp_path / "Gone.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{n}.json" for n in WIRE_TYPES)
    assert script.main(["--check", str(tmp_path)]) == 0
    (tmp_path / "ContentPart.json").write_text("{}", encoding="utf-8")
    assert script.differences(tmp_path) == [f"stale: {tmp_path / 'ContentPart.json'}"]
