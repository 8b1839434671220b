"""ASGI middleware of the console: request size and media type limits, security headers."""

from __future__ import annotations

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from riverbeam.console._problem import problem_response
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["BodyLimits", "SecurityHeaders"]

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
# The web console's page: scripts and styles from this origin only, nothing from elsewhere.
CONSOLE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


class BodyLimits:
    """Refuses bodies over `max_bytes` (413, BEM-401) and non-JSON bodies (415, BEM-405).

    A declared Content-Length over the limit is refused before anything is read; a body sent
    without one is counted as it arrives and refused when it passes the limit.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self._app = app
        self._max = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
            await self._app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        path = scope.get("path")
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                await problem_response(
                    RiverbeamError(ErrorCode.INVALID_ARGUMENT, "invalid Content-Length"),
                    instance=path,
                )(scope, receive, send)
                return
            if int(length) > self._max:
                await self._too_large(scope, receive, send)
                return
        has_body = (length is not None and int(length) > 0) or "transfer-encoding" in headers
        if has_body and not _is_json(headers.get("content-type", "")):
            err = RiverbeamError(ErrorCode.HTTP_UNSUPPORTED_MEDIA_TYPE)
            await problem_response(err, instance=path)(scope, receive, send)
            return
        received = 0
        max_bytes = self._max

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > max_bytes:
                    # An HTTPException, not a RiverbeamError: FastAPI passes only those through
                    # its body parsing unchanged (the handler maps 413 to BEM-401).
                    raise HTTPException(status_code=413)
            return message

        await self._app(scope, limited, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        err = RiverbeamError(
            ErrorCode.HTTP_BODY_TOO_LARGE,
            f"the request body is larger than {self._max} bytes",
            max_bytes=self._max,
        )
        response = problem_response(err, instance=scope.get("path"))
        response.headers["Connection"] = "close"
        await response(scope, receive, send)


class SecurityHeaders:
    """nosniff, no referrer and no framing on every response; a strict CSP on the console page."""

    def __init__(self, app: ASGIApp, *, console_paths: frozenset[str]) -> None:
        self._app = app
        self._console_paths = console_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        console_page = scope.get("path") in self._console_paths

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                ]
                if console_page:
                    headers.append((b"content-security-policy", CONSOLE_CSP.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self._app(scope, receive, with_headers)
