"""What one catalog code means and how it travels (riverbeam.core._catalog)."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

__all__ = ["ErrorSpec"]


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    """What a code means and how it travels."""

    code: str
    title: str
    http_status: int
    grpc_status: grpc.StatusCode
    hint: str = ""
