"""What tokens cost: a model list entry's prices.

`cost_per_1k_tokens` prices every token alike. A list entry may instead price input and output
apart, in its free-form `extra`: `{"input_cost_per_1k_tokens": 0.15, "output_cost_per_1k_tokens":
0.6}`; when either is there, both are used (a missing one counts as 0).
"""

from __future__ import annotations

from riverbeam.types import ModelConfig

__all__ = ["INPUT_PRICE_KEY", "OUTPUT_PRICE_KEY", "token_cost"]

INPUT_PRICE_KEY = "input_cost_per_1k_tokens"
OUTPUT_PRICE_KEY = "output_cost_per_1k_tokens"


def _price(extra: object, key: str) -> float | None:
    if not isinstance(extra, dict):
        return None
    value = extra.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def token_cost(model: ModelConfig, *, prompt_tokens: int, completion_tokens: int) -> float:
    """The cost of a call (or a sum of calls) with this many input and output tokens."""
    input_price = _price(model.extra, INPUT_PRICE_KEY)
    output_price = _price(model.extra, OUTPUT_PRICE_KEY)
    if input_price is not None or output_price is not None:
        return (
            prompt_tokens * (input_price or 0.0) + completion_tokens * (output_price or 0.0)
        ) / 1000
    return (prompt_tokens + completion_tokens) * model.cost_per_1k_tokens / 1000
