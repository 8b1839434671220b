"""Errors as RFC 9457 problem details, carrying the BEM code, the catalog title and hint.

    HTTP/1.1 404 Not Found
    Content-Type: application/problem+json

    {"type": "urn:riverbeam:error:BEM-020", "title": "agent not registered", "status": 404,
     "detail": "agent 'nope' is not registered", "code": "BEM-020",
     "hint": "list agents with `riverbeam agents`", "details": {"agent": "nope"}}

The status is the catalog's HTTP column. Nothing the caller sent is echoed back (a body may
hold a token), and a router that could not be reached is not named: its address is internal.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = [
    "PROBLEM_MEDIA_TYPE",
    "PROBLEM_RESPONSES",
    "Problem",
    "error_from_http",
    "error_from_validation",
    "problem_of",
    "problem_response",
]

log = logging.getLogger("riverbeam.console")

PROBLEM_MEDIA_TYPE = "application/problem+json"
_TYPE_PREFIX = "urn:riverbeam:error:"
# Details that name internal addresses: kept in the log, not sent to HTTP callers.
_INTERNAL_DETAILS = frozenset({"target"})


class Problem(BaseModel):
    """An RFC 9457 problem document with Riverbeam's extension members."""

    type: str = Field(
        description="`urn:riverbeam:error:<code>`", examples=["urn:riverbeam:error:BEM-020"]
    )
    title: str = Field(description="The catalog title of the code.")
    status: int = Field(description="The HTTP status (the catalog's HTTP column).")
    detail: str = Field(description="What went wrong with this request.")
    code: str = Field(description="The stable BEM code.", pattern=r"^BEM-\d{3}$")
    hint: str | None = Field(
        default=None, description="What to do about it, when the catalog says."
    )
    instance: str | None = Field(default=None, description="The request path.")
    details: dict[str, str] | None = Field(default=None, description="Structured details.")


def problem_of(err: RiverbeamError, *, instance: str | None = None) -> Problem:
    """The problem document of a RiverbeamError."""
    spec = err.code.spec
    details = {k: v for k, v in err.details.items() if k not in _INTERNAL_DETAILS}
    detail = err.message
    if err.transport or "target" in err.details:
        # The router (or what stands in front of it) did not answer: say so without its address.
        detail = f"the router is unavailable ({details.get('grpc_code', 'no answer')})"
    return Problem(
        type=_TYPE_PREFIX + spec.code,
        title=spec.title,
        status=spec.http_status,
        detail=detail,
        code=spec.code,
        hint=spec.hint or None,
        instance=instance,
        details=details or None,
    )


def problem_response(err: RiverbeamError, *, instance: str | None = None) -> JSONResponse:
    """A problem+json response for a RiverbeamError (401s carry `WWW-Authenticate: Bearer`)."""
    problem = problem_of(err, instance=instance)
    headers = {"WWW-Authenticate": "Bearer"} if problem.status == 401 else None
    return JSONResponse(
        problem.model_dump(exclude_none=True),
        status_code=problem.status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def error_from_validation(errors: Sequence[Mapping[str, Any]]) -> RiverbeamError:
    """The catalog error for FastAPI's request validation errors (the first one decides)."""
    first = errors[0] if errors else {}
    kind = str(first.get("type", ""))
    loc = [str(p) for p in first.get("loc", ())]
    where = loc[0] if loc else ""
    field = ".".join(loc[1:]) if len(loc) > 1 else None
    # Never the input itself (a body may hold a secret): pydantic's own messages name none, but
    # the UUID check's message quotes the value.
    message = str(first.get("msg", "invalid request"))
    if kind == "uuid_format":
        message = "not a UUID (8-4-4-4-12 hex digits)"
    if kind == "json_invalid":
        return RiverbeamError(ErrorCode.HTTP_INVALID_JSON, "the request body is not valid JSON")
    code = {
        "missing": ErrorCode.MISSING_FIELD,
        "literal_error": ErrorCode.INVALID_ENUM,
        "enum": ErrorCode.INVALID_ENUM,
        "uuid_format": ErrorCode.ACTION_ID_NOT_UUID
        if loc and loc[-1] == "action_id"
        else ErrorCode.INVALID_UUID,
    }.get(kind, ErrorCode.INVALID_ARGUMENT)
    text = f"{where} {field}: {message}" if field else f"{where}: {message}"
    return RiverbeamError(code, text, field=field, location=where or None)


def error_from_http(status: int, detail: str) -> RiverbeamError:
    """The catalog error for an HTTP error Starlette raised itself (no route, wrong method)."""
    if status == 404:
        return RiverbeamError(ErrorCode.HTTP_NOT_FOUND, "no such HTTP endpoint")
    if status == 405:
        return RiverbeamError(ErrorCode.HTTP_METHOD_NOT_ALLOWED)
    if status == 413:
        return RiverbeamError(ErrorCode.HTTP_BODY_TOO_LARGE)
    if status == 415:
        return RiverbeamError(ErrorCode.HTTP_UNSUPPORTED_MEDIA_TYPE)
    if status == 401:
        return RiverbeamError(ErrorCode.HTTP_BAD_AUTHORIZATION)
    return RiverbeamError(ErrorCode.INVALID_ARGUMENT, detail or "bad request")


async def handle_riverbeam_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RiverbeamError)
    if exc.http_status >= 500:
        log.warning("%s %s -> %s: %s", request.method, request.url.path, exc.bem, exc.message)
    return problem_response(exc, instance=request.url.path)


async def handle_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return problem_response(error_from_validation(exc.errors()), instance=request.url.path)


async def handle_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    err = error_from_http(exc.status_code, str(exc.detail or ""))
    response = problem_response(err, instance=request.url.path)
    if exc.status_code == 405 and exc.headers and "Allow" in exc.headers:
        response.headers["Allow"] = exc.headers["Allow"]
    return response


async def handle_unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("%s %s failed", request.method, request.url.path)
    err = RiverbeamError(ErrorCode.INTERNAL, "the console failed to handle the request")
    return problem_response(err, instance=request.url.path)


_PROBLEM_CONTENT = {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}

PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"description": description, "content": _PROBLEM_CONTENT}
    for status, description in (
        (400, "Invalid request (BEM-002, BEM-010, BEM-011, BEM-402, BEM-403, ...)"),
        (401, "Not authenticated (BEM-050, BEM-406)"),
        (403, "Permission denied (BEM-051, BEM-052, BEM-053)"),
        (404, "Not found, or not the caller's (BEM-020, BEM-025, BEM-026, BEM-027, BEM-028)"),
        (409, "Conflict (BEM-030, BEM-031)"),
        (413, "Request body too large (BEM-401)"),
        (415, "Request body not JSON (BEM-405)"),
        (500, "Internal error (BEM-001)"),
        (503, "A service is unavailable (BEM-003, BEM-114, BEM-120)"),
    )
}
"""Every error response an endpoint may give, documented as problem+json."""
