"""Catalog entries: The HTTP gateway and console (40x-41x); operations: starting services, ports,
usage reports (42x-43x).

Each is an ErrorSpec; riverbeam.core._catalog.ErrorCode names them all.
"""

from __future__ import annotations

import grpc

from riverbeam.core._error_spec import ErrorSpec

_S = grpc.StatusCode

LISTEN_FAILED = ErrorSpec(
    "BEM-420",
    "cannot listen on the gRPC address",
    503,
    _S.UNAVAILABLE,
    "another process holds the port: stop it, or choose another (--base-port, RIVERBEAM_LISTEN)",
)
METRICS_LISTEN_FAILED = ErrorSpec(
    "BEM-421",
    "cannot listen on the metrics port",
    503,
    _S.UNAVAILABLE,
    "another process holds the port: choose another RIVERBEAM_METRICS_PORT "
    "(under `riverbeam up`, --metrics-port is a base: one port per service)",
)
PORT_IN_USE = ErrorSpec(
    "BEM-422",
    "a port `riverbeam up` needs is in use",
    409,
    _S.FAILED_PRECONDITION,
    "is another `riverbeam up` running? choose other ports with --base-port / --metrics-port",
)
USAGE_RANGE_INVALID = ErrorSpec(
    "BEM-425",
    "invalid usage report range or grouping",
    400,
    _S.INVALID_ARGUMENT,
    "give start before end, and group by run, session, user or org",
)
RUNNER_STOPPING = ErrorSpec(
    "BEM-426",
    "the runner is stopping: the request was not begun",
    503,
    _S.UNAVAILABLE,
    "the router sends it once more, to another replica; deploy with two runners or more to "
    "replace one without refusals",
)
HTTP_NOT_FOUND = ErrorSpec(
    "BEM-400", "no such HTTP endpoint", 404, _S.NOT_FOUND, "see /docs for the HTTP API"
)
HTTP_BODY_TOO_LARGE = ErrorSpec(
    "BEM-401",
    "request body too large",
    413,
    _S.INVALID_ARGUMENT,
    "the console's limit is RIVERBEAM_MAX_REQUEST_BYTES",
)
HTTP_BAD_CURSOR = ErrorSpec(
    "BEM-402",
    "invalid Last-Event-ID or after_seq",
    400,
    _S.INVALID_ARGUMENT,
    "send the id of the last frame received (a non-negative integer)",
)
HTTP_INVALID_JSON = ErrorSpec("BEM-403", "request body is not valid JSON", 400, _S.INVALID_ARGUMENT)
HTTP_METHOD_NOT_ALLOWED = ErrorSpec(
    "BEM-404", "HTTP method not allowed here", 405, _S.INVALID_ARGUMENT, "see /docs"
)
HTTP_UNSUPPORTED_MEDIA_TYPE = ErrorSpec(
    "BEM-405",
    "request body must be application/json",
    415,
    _S.INVALID_ARGUMENT,
    "send Content-Type: application/json",
)
HTTP_BAD_AUTHORIZATION = ErrorSpec(
    "BEM-406",
    "malformed Authorization header",
    401,
    _S.UNAUTHENTICATED,
    "send Authorization: Bearer <token>",
)
CHAT_NO_USER_MESSAGE = ErrorSpec(
    "BEM-407",
    "chat request has no user message with text",
    400,
    _S.INVALID_ARGUMENT,
    "the last message must have role user and a text part",
)
