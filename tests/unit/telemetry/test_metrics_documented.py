"""docs/observability.md lists exactly the metrics the code defines, with their labels and values."""

from __future__ import annotations

import re
from pathlib import Path

from prometheus_client import Counter, Histogram

from riverbeam.telemetry import _metrics

DOC = Path(__file__).resolve().parents[3] / "docs" / "observability.md"
_ROW = re.compile(r"^\| `(riverbeam_[a-z_]+)` \| (counter|histogram) \| ([^|]*) \|", re.M)


def defined() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Exposed metric name -> (type, label names), from the module's collectors."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for name in _metrics.__all__:
        value = getattr(_metrics, name)
        if isinstance(value, Counter):
            out[f"{value._name}_total"] = ("counter", tuple(value._labelnames))
        elif isinstance(value, Histogram):
            out[value._name] = ("histogram", tuple(value._labelnames))
    return out


def test_the_metrics_table_matches_the_code() -> None:
    documented = {
        name: (kind, tuple(re.findall(r"`([a-z_]+)`", labels)))
        for name, kind, labels in _ROW.findall(DOC.read_text())
    }
    assert documented == defined()


def test_token_kinds_are_the_documented_ones() -> None:
    row = next(
        line for line in DOC.read_text().splitlines() if "riverbeam_model_tokens_total" in line
    )
    assert _metrics.TOKEN_KINDS == ("input", "output")
    for kind in _metrics.TOKEN_KINDS:
        assert f"`{kind}`" in row
    assert "prompt" not in row and "completion" not in row


def test_model_calls_have_buckets_for_tens_of_seconds() -> None:
    buckets = _metrics.MODEL_LATENCY._upper_bounds
    assert (
        any(20 <= b <= 60 for b in buckets) and max(b for b in buckets if b != float("inf")) >= 120
    )
