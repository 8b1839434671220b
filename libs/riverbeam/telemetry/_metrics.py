"""Prometheus metrics shared by every service (docs/observability.md lists them; a test checks)."""

from __future__ import annotations

import functools
from typing import Any

from prometheus_client import Counter, Histogram

__all__ = [
    "FRAMES_PUBLISHED",
    "GUARDRAIL_EVENTS",
    "MODEL_COST",
    "MODEL_LATENCY",
    "MODEL_TOKENS",
    "RPC_LATENCY",
    "RPC_STREAM_DURATION",
    "RPC_TOTAL",
    "RUNS_TOTAL",
    "RUN_LIMITS_HIT",
    "TOKEN_KINDS",
    "TOOL_CALLS",
    "TOOL_DECISIONS",
    "child_of",
]

# Unary calls: milliseconds to a few seconds (a non-streamed Invoke waits for its whole run).
_RPC_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
# Server-streaming calls (FollowStream, InvokeStream, ResumeStream) last as long as the caller
# follows: up to hours.
_STREAM_BUCKETS = (0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600)
# A model call takes from well under a second to a few minutes.
_MODEL_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 90, 120, 180, 300)

TOKEN_KINDS = ("input", "output")
"""The `kind` label values of riverbeam_model_tokens_total (the GenAI `gen_ai.token.type`)."""

RPC_TOTAL = Counter(
    "riverbeam_rpc_requests_total", "gRPC requests handled", ["service", "method", "code"]
)
RPC_LATENCY = Histogram(
    "riverbeam_rpc_latency_seconds",
    "Latency of unary gRPC requests",
    ["service", "method"],
    buckets=_RPC_BUCKETS,
)
RPC_STREAM_DURATION = Histogram(
    "riverbeam_rpc_stream_duration_seconds",
    "Duration of server-streaming gRPC calls (FollowStream, InvokeStream, ResumeStream),"
    " start to last message",
    ["service", "method"],
    buckets=_STREAM_BUCKETS,
)
RUNS_TOTAL = Counter("riverbeam_runs_total", "Agent runs finished, by status", ["agent", "status"])
FRAMES_PUBLISHED = Counter("riverbeam_frames_published_total", "Stream frames published", ["type"])
TOOL_CALLS = Counter("riverbeam_tool_calls_total", "Tool calls, by outcome", ["tool", "outcome"])
MODEL_LATENCY = Histogram(
    "riverbeam_model_latency_seconds", "Model call latency", ["model"], buckets=_MODEL_BUCKETS
)
MODEL_TOKENS = Counter(
    "riverbeam_model_tokens_total", "Model tokens, by kind (input, output)", ["model", "kind"]
)
MODEL_COST = Counter(
    "riverbeam_model_cost_total",
    "Estimated model cost (the model list's prices), in the list's currency unit",
    ["model"],
)
GUARDRAIL_EVENTS = Counter(
    "riverbeam_guardrail_events_total",
    "Guardrails that blocked, rewrote or failed, by stage",
    ["guardrail", "stage", "action"],
)
TOOL_DECISIONS = Counter(
    "riverbeam_tool_policy_decisions_total",
    "Tool-call policy decisions other than allow",
    ["policy", "action"],
)
RUN_LIMITS_HIT = Counter(
    "riverbeam_run_limits_hit_total", "Runs ended by a run limit", ["agent", "limit"]
)


@functools.lru_cache(maxsize=1024)
def child_of(metric: Counter | Histogram, *labels: str) -> Any:
    """`metric.labels(*labels)`, looked up once: `labels()` costs ~9k instructions (~1.2 us) a
    call more than the child's own `inc()` (callgrind). For label values from a small set
    (registered agents, statuses, frame types), used on a hot path."""
    return metric.labels(*labels)
