"""Catalog entries: Memory, streams and the store (1xx).

Each is an ErrorSpec; riverbeam.core._catalog.ErrorCode names them all.
"""

from __future__ import annotations

import grpc

from riverbeam.core._error_spec import ErrorSpec

_S = grpc.StatusCode

INVALID_MEMORY_SCOPE = ErrorSpec("BEM-100", "invalid memory scope", 400, _S.INVALID_ARGUMENT)
MEMORY_NOT_CONFIGURED = ErrorSpec(
    "BEM-109", "remember needs a memory store, and this runner has none", 501, _S.UNIMPLEMENTED
)
STREAM_PUBLISH_FAILED = ErrorSpec("BEM-110", "frame publish failed", 503, _S.UNAVAILABLE)
STREAM_NOT_FOUND = ErrorSpec("BEM-111", "no frames for this request", 404, _S.NOT_FOUND)
STREAM_GAP = ErrorSpec("BEM-112", "frame sequence has a gap", 500, _S.DATA_LOSS)
STREAM_TIMEOUT = ErrorSpec("BEM-113", "no frame arrived in time", 504, _S.DEADLINE_EXCEEDED)
STREAM_UNAVAILABLE = ErrorSpec(
    "BEM-114", "NATS unavailable", 503, _S.UNAVAILABLE, "check RIVERBEAM_NATS_URL"
)
STREAM_FENCED = ErrorSpec(
    "BEM-115",
    "frame refused: another writer already published on this request",
    409,
    _S.ABORTED,
)
STORE_UNAVAILABLE = ErrorSpec("BEM-120", "store unavailable", 503, _S.UNAVAILABLE)
STORE_CONFLICT = ErrorSpec("BEM-121", "store write conflict", 409, _S.ABORTED)
STORE_MIGRATION = ErrorSpec("BEM-122", "store migration failed", 500, _S.FAILED_PRECONDITION)
