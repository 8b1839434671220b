"""The caller's bearer token, forwarded to the router: the console authenticates nothing."""

from __future__ import annotations

from fastapi import Request

from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["bearer_token"]

_MAX_HEADER_CHARS = 8192


def bearer_token(request: Request) -> str | None:
    """The token of `Authorization: Bearer <token>`; None when there is no header.

    Raises:
        RiverbeamError: BEM-406 for any other Authorization header (never echoed back).
    """
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(header) > _MAX_HEADER_CHARS or " " in token:
        raise RiverbeamError(
            ErrorCode.HTTP_BAD_AUTHORIZATION, "expected `Authorization: Bearer <token>`"
        )
    return token
