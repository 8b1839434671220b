"""The error root of Riverbeam.

    RiverbeamError            every error a caller can see; .code is an ErrorCode (BEM-NNN)
      carries: message, details (str -> str), http_status, grpc_status

Errors from lower layers (asyncpg, pygit2, httpx, grpc) are translated to a RiverbeamError at
the boundary where they occur, never passed through.
"""

from __future__ import annotations

from collections.abc import Mapping

import grpc

from riverbeam.core._catalog import ErrorCode, ErrorSpec, by_code, catalog

__all__ = [
    "MAX_DETAIL_CHARS",
    "MAX_MESSAGE_CHARS",
    "ErrorCode",
    "ErrorSpec",
    "RiverbeamError",
    "bounded",
    "by_code",
    "catalog",
]

MAX_MESSAGE_CHARS = 1024
"""An error's message is cut to this many characters (with a marker): it may quote input."""
MAX_DETAIL_CHARS = 256
"""Each detail value is cut to this many characters (with a marker)."""


def bounded(text: str, limit: int) -> str:
    """`text`, or its first characters and a marker saying how many were cut.

    Errors quote what the caller sent (an agent name, a model name); an unbounded input must
    never come back unbounded in a message, a log line or an ErrorInfo.
    """
    if len(text) <= limit:
        return text
    marker = f"…[{len(text) - limit} more characters]"
    return text[:limit] + marker


class RiverbeamError(Exception):
    """An error with a stable catalog code and structured details.

    `transport` is True when the error was made on the client side from a gRPC status that
    carried no Riverbeam ErrorInfo (the service was not reached, or something in between
    answered); it is not sent on the wire.
    """

    transport: bool = False

    def __init__(
        self,
        code: ErrorCode,
        message: str | None = None,
        /,
        **details: object,
    ) -> None:
        self.code = code
        self.message = bounded(message or code.spec.title, MAX_MESSAGE_CHARS)
        self.details: dict[str, str] = {
            bounded(k, MAX_DETAIL_CHARS): bounded(str(v), MAX_DETAIL_CHARS)
            for k, v in details.items()
            if v is not None
        }
        super().__init__(f"{code.code}: {self.message}")

    @property
    def bem(self) -> str:
        """The "BEM-NNN" string."""
        return self.code.code

    @property
    def http_status(self) -> int:
        return self.code.spec.http_status

    @property
    def grpc_status(self) -> grpc.StatusCode:
        return self.code.spec.grpc_status

    @property
    def hint(self) -> str:
        return self.code.spec.hint

    def with_details(self, details: Mapping[str, object]) -> RiverbeamError:
        """A copy with more details."""
        merged: dict[str, object] = {**self.details, **details}
        return RiverbeamError(self.code, self.message, **merged)

    def to_dict(self) -> dict[str, object]:
        """JSON-friendly form, as error frames and the CLI show it."""
        out: dict[str, object] = {"code": self.bem, "message": self.message}
        if self.details:
            out["details"] = dict(self.details)
        return out

    def __reduce__(self) -> tuple[object, ...]:  # pickling across process pools
        return (_rebuild, (self.code.code, self.message, self.details))


def _rebuild(code: str, message: str, details: dict[str, str]) -> RiverbeamError:
    member = by_code(code) or ErrorCode.INTERNAL
    return RiverbeamError(member, message, **details)
