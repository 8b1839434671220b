"""The list of models the router may pick, loaded from a file or built in."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import ModelConfig

__all__ = ["DEFAULT_MODEL_NAME", "ModelList", "default_model"]

DEFAULT_MODEL_NAME = "riverbeam-default"


def default_model() -> ModelConfig:
    """The built-in model used when no model list is configured: text only, no cost."""
    return ModelConfig(name=DEFAULT_MODEL_NAME, provider="custom", modalities=["text"])


def is_placeholder(model: ModelConfig) -> bool:
    """The built-in ``riverbeam-default``: it names no model; the runner's client picks one."""
    return model.name == DEFAULT_MODEL_NAME and model.provider == "custom"


def _invalid(source: str, message: str, **details: object) -> RiverbeamError:
    return RiverbeamError(
        ErrorCode.MODEL_LIST_INVALID, f"model list {source}: {message}", source=source, **details
    )


def _secret(source: str, index: int, name: object, where: str) -> RiverbeamError:
    return RiverbeamError(
        ErrorCode.MODEL_LIST_SECRET,
        f"model list {source}: entry {index} ({name}) has {where}; API keys are never read "
        "from the model list: remove it and set BEAM_API_KEY in the environment",
        source=source,
        entry=index,
        field=where,
    )


def _is_key_name(key: object) -> bool:
    return isinstance(key, str) and key.replace("_", "").replace("-", "").casefold() == "apikey"


def _find_key(value: Any, path: str) -> str | None:
    """The path of the first non-empty api_key-like entry inside `value`, or None."""
    if isinstance(value, Mapping):
        for key, child in value.items():
            if _is_key_name(key) and child not in (None, ""):
                return f"{path}.{key}"
            found = _find_key(child, f"{path}.{key}")
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found = _find_key(child, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def _check_no_secret(source: str, index: int, raw: Mapping[str, Any]) -> None:
    name = raw.get("name", "?")
    if raw.get("api_key") not in (None, ""):
        raise _secret(source, index, name, "api_key")
    for field in ("provider_config", "extra"):
        where = _find_key(raw.get(field), field)
        if where is not None:
            raise _secret(source, index, name, where)


class ModelList:
    """An ordered, non-empty list of models with unique names, none carrying an API key.

    List order matters: it breaks ties between equally cheap models.

    Args:
        models: The models, in preference order.
        source: Where they came from, for error messages.

    Raises:
        RiverbeamError: BEM-045 when empty or two models share a name; BEM-044 when a model
            carries an API key.
    """

    def __init__(self, models: Iterable[ModelConfig], *, source: str = "<code>") -> None:
        items = tuple(models)
        if not items:
            raise _invalid(source, "no models")
        seen: dict[str, int] = {}
        for index, model in enumerate(items):
            _check_no_secret(source, index, model.model_dump())
            if model.name in seen:
                raise _invalid(
                    source,
                    f"entry {index} repeats the name {model.name!r} of entry {seen[model.name]}",
                    entry=index,
                    field="name",
                )
            seen[model.name] = index
        self._models = items
        self._by_name = {m.name: m for m in items}
        self.source = source

    def __repr__(self) -> str:
        return f"ModelList({list(self._by_name)!r}, source={self.source!r})"

    def __iter__(self) -> Iterator[ModelConfig]:
        return iter(self._models)

    def __len__(self) -> int:
        return len(self._models)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def models(self) -> tuple[ModelConfig, ...]:
        """The models, in list order."""
        return self._models

    def names(self) -> list[str]:
        """The model names, in list order."""
        return list(self._by_name)

    def get(self, name: str) -> ModelConfig | None:
        """The model called `name`, or None."""
        return self._by_name.get(name)

    @classmethod
    def default(cls) -> ModelList:
        """The built-in list: one text-only model, ``riverbeam-default``."""
        return cls([default_model()], source="<built-in>")

    @classmethod
    def from_data(cls, data: Any, *, source: str = "<data>") -> ModelList:
        """Build from a parsed document: a list of ModelConfig entries or ``{"models": [...]}``.

        Raises:
            RiverbeamError: BEM-044 for an entry with an API key; BEM-045 for anything else
                wrong, naming the entry index and field.
        """
        if isinstance(data, Mapping):
            unknown = sorted(str(k) for k in data if k != "models")
            if unknown:
                raise _invalid(source, f"unknown top-level keys {unknown}")
            data = data.get("models")
        if not isinstance(data, list):
            raise _invalid(source, 'expected a list of models or {"models": [...]}')
        models: list[ModelConfig] = []
        for index, raw in enumerate(data):
            if not isinstance(raw, Mapping):
                raise _invalid(source, f"entry {index} is not an object", entry=index)
            _check_no_secret(source, index, raw)
            try:
                models.append(ModelConfig.model_validate(raw))
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first.get("loc", ()))
                raise _invalid(
                    source,
                    f"entry {index} ({raw.get('name', '?')}): {loc}: {first['msg']}",
                    entry=index,
                    field=loc or None,
                ) from None
        return cls(models, source=source)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str] | None) -> ModelList:
        """Load a model list file (JSON when it ends in ``.json``, YAML otherwise).

        Args:
            path: The file, or None for the built-in default list.

        Raises:
            RiverbeamError: BEM-045 when the file cannot be read or parsed, and as
                `from_data`.
        """
        if path is None:
            return cls.default()
        import yaml  # here: without a model list file the router does not load it

        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise _invalid(source, f"cannot read it ({type(exc).__name__})") from None
        try:
            if source.lower().endswith(".json"):
                data = json.loads(text)
            else:
                data = yaml.safe_load(text)
        except json.JSONDecodeError as exc:
            # Position only: the parser's excerpt could show a key someone pasted in.
            raise _invalid(source, f"invalid JSON at line {exc.lineno}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise _invalid(source, f"invalid YAML{where}") from None
        return cls.from_data(data, source=source)
