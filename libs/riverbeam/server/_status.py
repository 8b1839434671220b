"""RiverbeamError <-> gRPC status with google.rpc.ErrorInfo, both directions."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2

from riverbeam.core.errors import ErrorCode, RiverbeamError, by_code

__all__ = [
    "DOMAIN",
    "STATUS_DETAILS_KEY",
    "error_from_rpc",
    "error_from_status",
    "help_url",
    "rich_status",
    "translate_rpc_errors",
    "translate_rpc_errors_sync",
]

DOMAIN = "riverbeam"
STATUS_DETAILS_KEY = "grpc-status-details-bin"


HELP_LOCALE = "en-US"
ERRORS_DOC = "docs/errors.md"


def help_url(code: str) -> str:
    """Where the catalog documents a code (the table in docs/errors.md of the repository)."""
    return f"{ERRORS_DOC}#{code.lower()}"


def rich_status(err: RiverbeamError) -> status_pb2.Status:
    """The google.rpc.Status for an error: code, message and three details.

    - ErrorInfo: reason = the BEM code, domain = "riverbeam", metadata = the error's details.
    - LocalizedMessage (en-US): the code's catalog title, safe to show to a person.
    - Help: one link to the code's entry in docs/errors.md, described by the catalog hint
      (or the title when the code has no hint).

    A client in any language reads them from the `grpc-status-details-bin` trailer.
    """
    spec = err.code.spec
    info = error_details_pb2.ErrorInfo(reason=err.bem, domain=DOMAIN, metadata=err.details)
    title = error_details_pb2.LocalizedMessage(locale=HELP_LOCALE, message=spec.title)
    link = error_details_pb2.Help.Link(description=spec.hint or spec.title, url=help_url(err.bem))
    details = []
    for message in (info, title, error_details_pb2.Help(links=[link])):
        detail = any_pb2.Any()
        detail.Pack(message)
        details.append(detail)
    return status_pb2.Status(code=err.grpc_status.value[0], message=err.message, details=details)


def _remote_help(status: status_pb2.Status) -> dict[str, str]:
    """The title and hint a server sent (LocalizedMessage, Help), as error details."""
    out: dict[str, str] = {}
    for detail in status.details:
        localized = error_details_pb2.LocalizedMessage()
        help_ = error_details_pb2.Help()
        if detail.Is(localized.DESCRIPTOR) and detail.Unpack(localized):
            out["remote_title"] = localized.message
        elif detail.Is(help_.DESCRIPTOR) and detail.Unpack(help_) and help_.links:
            out["remote_hint"] = help_.links[0].description
    return out


def _details_from_metadata(metadata: Any) -> status_pb2.Status | None:
    for key, value in metadata or ():
        if key == STATUS_DETAILS_KEY:
            status = status_pb2.Status()
            status.ParseFromString(value)
            return status
    return None


_FALLBACK: dict[grpc.StatusCode, ErrorCode] = {
    grpc.StatusCode.UNAVAILABLE: ErrorCode.SERVICE_UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED: ErrorCode.STREAM_TIMEOUT,
    grpc.StatusCode.UNAUTHENTICATED: ErrorCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED: ErrorCode.PERMISSION_DENIED,
    grpc.StatusCode.INVALID_ARGUMENT: ErrorCode.INVALID_ARGUMENT,
    grpc.StatusCode.CANCELLED: ErrorCode.RUN_CANCELLED,
}


def error_from_rpc(exc: grpc.RpcError, *, service: str | None = None) -> RiverbeamError:
    """Turn a gRPC error back into the RiverbeamError the server raised.

    A status without Riverbeam ErrorInfo (a proxy's, or a transport failure) becomes the
    closest catalog code, with the gRPC code in the details.
    """
    code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
    message = exc.details() if hasattr(exc, "details") else str(exc)
    trailing = exc.trailing_metadata() if hasattr(exc, "trailing_metadata") else None
    return error_from_status(code, message, _details_from_metadata(trailing), service=service)


def error_from_status(
    code: grpc.StatusCode | Any,
    message: str | None,
    status: status_pb2.Status | None,
    *,
    service: str | None = None,
) -> RiverbeamError:
    """The RiverbeamError for a status code, its message and its rich status (if any): what
    `error_from_rpc` gives for a call that ended with them (RunSteps' step errors too)."""
    if status is not None:
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Is(info.DESCRIPTOR) and detail.Unpack(info) and info.domain == DOMAIN:
                member = by_code(info.reason)
                if member is None:
                    # A code this client's catalog does not know (a newer server): keep what
                    # the server said about it.
                    return RiverbeamError(
                        ErrorCode.INTERNAL,
                        status.message or message,
                        **dict(info.metadata),
                        remote_code=info.reason,
                        **_remote_help(status),
                    )
                return RiverbeamError(member, status.message or message, **dict(info.metadata))
    member = (
        _FALLBACK.get(code, ErrorCode.INTERNAL)
        if isinstance(code, grpc.StatusCode)
        else ErrorCode.INTERNAL
    )
    name = code.name if isinstance(code, grpc.StatusCode) else str(code)
    prefix = f"{service} {name}" if service else name
    err = RiverbeamError(
        member, f"{prefix}: {message or 'no details'}", grpc_code=name, service=service
    )
    err.transport = True
    return err


@contextlib.asynccontextmanager
async def translate_rpc_errors(*, service: str | None = None) -> AsyncIterator[None]:
    """Client side: raise RiverbeamError instead of grpc.RpcError inside the block.

    `service` names the callee in errors made from a bare gRPC status (e.g. "runner").
    """
    try:
        yield
    except grpc.RpcError as exc:
        raise error_from_rpc(exc, service=service) from None


@contextlib.contextmanager
def translate_rpc_errors_sync(*, service: str | None = None) -> Iterator[None]:
    """The same, for synchronous code and async generators that cannot use `async with`."""
    try:
        yield
    except grpc.RpcError as exc:
        raise error_from_rpc(exc, service=service) from None


assert code_pb2.OK == 0  # google.rpc.Code and grpc.StatusCode share numbering
