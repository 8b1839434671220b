"""token_cost: one price for every token, or input and output priced apart (in `extra`)."""

from __future__ import annotations

import pytest

from riverbeam.routing import token_cost
from riverbeam.types import ModelConfig


def test_one_price_for_every_token() -> None:
    model = ModelConfig(name="m", provider="openai", cost_per_1k_tokens=2.0)
    assert token_cost(model, prompt_tokens=1500, completion_tokens=500) == pytest.approx(4.0)


def test_input_and_output_prices_win_when_given() -> None:
    model = ModelConfig(
        name="m",
        provider="openai",
        cost_per_1k_tokens=2.0,
        extra={"input_cost_per_1k_tokens": 0.5, "output_cost_per_1k_tokens": 4},
    )
    assert token_cost(model, prompt_tokens=2000, completion_tokens=500) == pytest.approx(3.0)
    only_output = model.model_copy(update={"extra": {"output_cost_per_1k_tokens": 1.0}})
    assert token_cost(only_output, prompt_tokens=2000, completion_tokens=1000) == pytest.approx(1.0)


def test_no_price_is_free() -> None:
    model = ModelConfig(name="m", provider="custom", extra={"input_cost_per_1k_tokens": "lots"})
    assert token_cost(model, prompt_tokens=10, completion_tokens=10) == 0.0
