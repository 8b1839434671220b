"""The model list: loading, the built-in default, and what is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.routing import DEFAULT_MODEL_NAME, ModelList, default_model
from riverbeam.types import ModelConfig

KEY = "sk-live-0123456789abcdefSECRET"


def entry(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "provider": "openai", **extra}


def test_default_list_when_no_file() -> None:
    models = ModelList.from_file(None)
    assert models.names() == [DEFAULT_MODEL_NAME] == ["riverbeam-default"]
    only = models.models[0]
    assert only == default_model()
    assert (only.provider, only.modalities, only.capabilities) == ("custom", ["text"], [])
    assert only.cost_per_1k_tokens == 0.0
    assert models.source == "<built-in>"
    assert ModelList.default().names() == models.names()


def test_yaml_file_with_models_key(tmp_path: Path) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(
        "models:\n"
        "  - name: small\n"
        "    provider: openai\n"
        "    cost_per_1k_tokens: 0.1\n"
        "  - name: eyes\n"
        "    provider: anthropic\n"
        "    modalities: [text, image]\n"
        "    capabilities: [vision]\n"
        "    max_tokens: 200000\n"
    )
    models = ModelList.from_file(path)
    assert models.names() == ["small", "eyes"]
    eyes = models.get("eyes")
    assert eyes is not None and eyes.modalities == ["text", "image"]
    assert eyes.max_tokens == 200000
    assert models.get("nope") is None
    assert "small" in models and "nope" not in models
    assert len(models) == 2
    assert [m.name for m in models] == ["small", "eyes"]
    assert models.source == str(path)


def test_json_file_with_a_top_level_list(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text(json.dumps([entry("a"), entry("b", provider="ollama")]))
    assert ModelList.from_file(str(path)).names() == ["a", "b"]


def test_docs_example_loads(tmp_path: Path) -> None:
    doc = Path(__file__).parents[3] / "docs" / "routing.md"
    example = doc.read_text().split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "models.yaml"
    path.write_text(example)
    assert len(ModelList.from_file(path)) >= 4


def invalid(data: Any) -> RiverbeamError:
    with pytest.raises(RiverbeamError) as info:
        ModelList.from_data(data, source="m.yaml")
    return info.value


@pytest.mark.parametrize(
    ("data", "fragment", "index"),
    [
        (None, "expected a list", None),
        ("models", "expected a list", None),
        ({"models": [entry("a")], "routes": []}, "unknown top-level keys ['routes']", None),
        ([], "no models", None),
        ({"models": []}, "no models", None),
        (["a"], "entry 0 is not an object", "0"),
        ([entry("a"), {"provider": "openai"}], "entry 1 (?): name: Field required", "1"),
        ([entry("a", provider="acme")], "entry 0 (a): provider: Input should be", "0"),
        ([entry("a", modalities=["smell"])], "entry 0 (a): modalities.0", "0"),
        ([entry("a", cost_per_1k_tokens=-1)], "entry 0 (a): cost_per_1k_tokens", "0"),
        ([entry("a", max_tokens=0)], "entry 0 (a): max_tokens", "0"),
        ([entry("a", colour="red")], "entry 0 (a): colour: Extra inputs", "0"),
        ([entry("a"), entry("b"), entry("a")], "entry 2 repeats the name 'a' of entry 0", "2"),
    ],
)
def test_invalid_lists_are_bem_045_with_the_entry(
    data: Any, fragment: str, index: str | None
) -> None:
    err = invalid(data)
    assert err.code is ErrorCode.MODEL_LIST_INVALID
    assert err.bem == "BEM-045"
    assert fragment in err.message
    assert err.details.get("entry") == index


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (entry("a", api_key=KEY), "api_key"),
        (entry("a", provider_config={"api_key": KEY}), "provider_config.api_key"),
        (entry("a", provider_config={"auth": {"apiKey": KEY}}), "provider_config.auth.apiKey"),
        (entry("a", extra={"headers": [{"API-KEY": KEY}]}), "extra.headers[0].API-KEY"),
    ],
)
def test_an_api_key_is_refused_with_bem_044_and_not_shown(raw: dict[str, Any], where: str) -> None:
    err = invalid([entry("ok"), raw])
    assert err.code is ErrorCode.MODEL_LIST_SECRET
    assert err.bem == "BEM-044"
    assert "BEAM_API_KEY" in err.message
    assert err.details["entry"] == "1"
    assert err.details["field"] == where
    assert KEY not in str(err) and KEY not in json.dumps(err.to_dict())


@pytest.mark.parametrize("value", [None, ""])
def test_an_empty_api_key_is_harmless(value: str | None) -> None:
    models = ModelList.from_data([entry("a", api_key=value, provider_config={"api_key": None})])
    only = models.get("a")
    assert only is not None and only.api_key in (None, "")


def test_code_built_lists_are_checked_the_same_way() -> None:
    with pytest.raises(RiverbeamError) as info:
        ModelList([ModelConfig(name="a", provider="openai", api_key=KEY)])
    assert info.value.code is ErrorCode.MODEL_LIST_SECRET
    with pytest.raises(RiverbeamError) as info:
        ModelList([default_model(), default_model()])
    assert info.value.code is ErrorCode.MODEL_LIST_INVALID
    with pytest.raises(RiverbeamError) as info:
        ModelList([])
    assert info.value.code is ErrorCode.MODEL_LIST_INVALID


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(RiverbeamError) as info:
        ModelList.from_file(tmp_path / "missing.yaml")
    assert info.value.code is ErrorCode.MODEL_LIST_INVALID
    assert "cannot read it" in info.value.message


def test_parse_errors_give_the_line_not_the_text(tmp_path: Path) -> None:
    bad_yaml = tmp_path / "models.yaml"
    bad_yaml.write_text(f"- name: a\n  api_key: {KEY}\n  provider: [openai\n")
    with pytest.raises(RiverbeamError) as info:
        ModelList.from_file(bad_yaml)
    assert info.value.code is ErrorCode.MODEL_LIST_INVALID
    assert "invalid YAML at line" in info.value.message
    assert KEY not in str(info.value)

    bad_json = tmp_path / "models.json"
    bad_json.write_text(f'[{{"name": "a", "api_key": "{KEY}",}}]')
    with pytest.raises(RiverbeamError) as info:
        ModelList.from_file(bad_json)
    assert "invalid JSON at line 1" in info.value.message
    assert KEY not in str(info.value)


def test_repr_lists_names() -> None:
    assert repr(ModelList.default()) == "ModelList(['riverbeam-default'], source='<built-in>')"
