"""Re-export of riverbeam.telemetry's metrics, for the server package's own imports."""

from riverbeam.telemetry._metrics import (
    FRAMES_PUBLISHED,
    MODEL_LATENCY,
    MODEL_TOKENS,
    RPC_LATENCY,
    RPC_TOTAL,
    RUNS_TOTAL,
    TOOL_CALLS,
)

__all__ = [
    "FRAMES_PUBLISHED",
    "MODEL_LATENCY",
    "MODEL_TOKENS",
    "RPC_LATENCY",
    "RPC_TOTAL",
    "RUNS_TOTAL",
    "TOOL_CALLS",
]
