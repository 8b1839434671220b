"""The model a request runs with, from its protobuf message: validated once per distinct model.

The router sends the model it picked with every RunInvoke, nearly always one of a handful of
configured models. Converting and validating it costs more than the rest of the request's
small fields; a model already seen is copied from the one validated before instead (each run
still gets its own object, sharing nothing mutable with another run's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from riverbeam.types import ModelConfig
from riverbeam.types._copying import copy_maker

__all__ = ["ModelConfigs"]


class ModelConfigs:
    """ModelConfig.from_proto, remembering the last `size` distinct messages it validated.

    A message is known by its deterministic serialisation: equal messages convert to equal
    models, so the copy is the value from_proto would have built. A message that fails
    validation raises as from_proto does and is not remembered.
    """

    def __init__(self, size: int = 64) -> None:
        self._size = size
        # Each validated model is held here only, behind its copy maker (which needs exactly
        # that: a value nothing else reaches or changes).
        self._known: dict[bytes, Callable[[], ModelConfig]] = {}

    def from_proto(self, message: Any) -> ModelConfig:
        key: bytes = message.SerializeToString(deterministic=True)
        make = self._known.get(key)
        if make is None:
            make = copy_maker(ModelConfig.from_proto(message))
            if len(self._known) >= self._size:
                self._known.pop(next(iter(self._known)))
            self._known[key] = make
        return make()
