"""Prometheus metrics shared by every service."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

__all__ = [
    "FRAMES_PUBLISHED",
    "GUARDRAIL_EVENTS",
    "MODEL_LATENCY",
    "MODEL_TOKENS",
    "RPC_LATENCY",
    "RPC_TOTAL",
    "RUNS_TOTAL",
    "RUN_LIMITS_HIT",
    "TOOL_CALLS",
    "TOOL_DECISIONS",
]

RPC_TOTAL = Counter(
    "riverbeam_rpc_requests_total", "gRPC requests handled", ["service", "method", "code"]
)
RPC_LATENCY = Histogram(
    "riverbeam_rpc_latency_seconds", "gRPC request latency", ["service", "method"]
)
RUNS_TOTAL = Counter("riverbeam_runs_total", "Agent runs finished, by status", ["agent", "status"])
FRAMES_PUBLISHED = Counter("riverbeam_frames_published_total", "Stream frames published", ["type"])
TOOL_CALLS = Counter("riverbeam_tool_calls_total", "Tool calls, by outcome", ["tool", "outcome"])
MODEL_LATENCY = Histogram("riverbeam_model_latency_seconds", "Model call latency", ["model"])
MODEL_TOKENS = Counter("riverbeam_model_tokens_total", "Model tokens", ["model", "kind"])
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
