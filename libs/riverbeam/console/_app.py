"""The console's ASGI app: the HTTP API, /chat, OpenAPI with a local /docs, the web console."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from grpc_health.v1 import health_pb2, health_pb2_grpc
from starlette.exceptions import HTTPException as StarletteHTTPException

from riverbeam import __version__
from riverbeam.console._bodies import Health
from riverbeam.console._middleware import BodyLimits, SecurityHeaders
from riverbeam.console._problem import (
    PROBLEM_RESPONSES,
    Problem,
    handle_http_error,
    handle_riverbeam_error,
    handle_unexpected,
    handle_validation_error,
    problem_response,
)
from riverbeam.console._routes import api_router, chat_router
from riverbeam.console._tracing import TRACE_ID_HEADER, TraceSpans
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import ConsoleSettings
from riverbeam.server import open_channel

__all__ = ["STATIC_DIR", "create_app", "swagger_assets"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""The web console's files, shipped in the package: nothing is fetched from elsewhere."""

_ROUTER_SERVICE = "riverbeam.v1.RiverbeamService"
_READY_TIMEOUT_S = 2.0

_DESCRIPTION = """\
The HTTP/JSON face of Riverbeam's public API (`riverbeam.v1.RiverbeamService`): every RPC as
REST/JSON, a request's frames as Server-Sent Events, and `POST /chat` for the Vercel AI SDK's
`useChat`. Send the same bearer token as to the router (`Authorization: Bearer <token>`); the
console forwards it and holds no logic of its own. Errors are RFC 9457 problem documents
(`application/problem+json`) carrying the BEM code, title and hint."""


def swagger_assets() -> Path | None:
    """Where the swagger-ui-bundle package keeps Swagger UI's files (None when not installed)."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        return None
    return Path(str(swagger_ui_path))


def _openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title,
        version=app.version,
        description=app.description,
        routes=app.routes,
        separate_input_output_schemas=False,
    )
    components = schema.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    schemas["Problem"] = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    # Validation errors are 400 problem documents here, not FastAPI's 422.
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            operation.get("responses", {}).pop("422", None)
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    components["securitySchemes"] = {
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "The router's bearer token (none when the router runs in dev mode).",
        }
    }
    schema["security"] = [{"bearer": []}, {}]
    app.openapi_schema = schema
    return schema


def create_app(settings: ConsoleSettings, *, channel: grpc.aio.Channel | None = None) -> FastAPI:
    """The console app for `settings` (a channel to the router is opened at start-up if none).

    Args:
        settings: Where the router is, CORS, limits, whether to serve the web console.
        channel: Use this channel to the router (not closed by the app).
    """

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = channel is None
        app.state.channel = channel if channel is not None else open_channel(settings.router_url)
        try:
            yield
        finally:
            if own:
                await app.state.channel.close(grace=None)

    app = FastAPI(
        title="Riverbeam HTTP API",
        version=__version__,
        description=_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
        separate_input_output_schemas=False,
    )
    app.state.settings = settings
    app.state.router_target = settings.router_url
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]

    app.add_exception_handler(RiverbeamError, handle_riverbeam_error)
    app.add_exception_handler(RequestValidationError, handle_validation_error)
    app.add_exception_handler(StarletteHTTPException, handle_http_error)
    app.add_exception_handler(Exception, handle_unexpected)

    app.include_router(api_router)
    app.include_router(chat_router)
    _add_health(app)
    _add_docs(app)
    if settings.web_console:
        _add_web_console(app)

    # Outermost last: security headers wrap everything, CORS answers preflights first.
    app.add_middleware(BodyLimits, max_bytes=settings.max_request_bytes)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["authorization", "content-type", "last-event-id"],
            expose_headers=["x-vercel-ai-ui-message-stream", TRACE_ID_HEADER],
            allow_credentials=False,
            max_age=600,
        )
    app.add_middleware(SecurityHeaders, console_paths=frozenset({"/"}))
    app.add_middleware(TraceSpans)
    return app


def _add_health(app: FastAPI) -> None:
    @app.get("/healthz", tags=["health"], summary="Liveness", include_in_schema=True)
    async def healthz() -> Health:
        """The process is up."""
        return Health(status="ok")

    @app.get(
        "/readyz",
        tags=["health"],
        summary="Readiness",
        responses={503: PROBLEM_RESPONSES[503]},
    )
    async def readyz(request: Request) -> Health:
        """Ready when the router reports its API as serving."""
        stub = health_pb2_grpc.HealthStub(request.app.state.channel)
        try:
            reply = await stub.Check(
                health_pb2.HealthCheckRequest(service=_ROUTER_SERVICE), timeout=_READY_TIMEOUT_S
            )
        except grpc.RpcError as exc:
            code = exc.code() if isinstance(exc, grpc.aio.AioRpcError) else None
            raise RiverbeamError(
                ErrorCode.SERVICE_UNAVAILABLE,
                "the router does not answer",
                grpc_code=code.name if code else None,
            ) from None
        if reply.status != health_pb2.HealthCheckResponse.SERVING:
            raise RiverbeamError(ErrorCode.SERVICE_UNAVAILABLE, "the router is not serving")
        return Health(status="ok")


def _add_docs(app: FastAPI) -> None:
    assets = swagger_assets()
    if assets is not None:
        app.mount("/docs/assets", StaticFiles(directory=assets), name="swagger-assets")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> Response:
        if assets is None:
            return problem_response(
                RiverbeamError(
                    ErrorCode.HTTP_NOT_FOUND,
                    "the interactive docs need the swagger-ui-bundle package",
                ),
                instance="/docs",
            )
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="Riverbeam HTTP API",
            swagger_js_url="/docs/assets/swagger-ui-bundle.js",
            swagger_css_url="/docs/assets/swagger-ui.css",
            swagger_favicon_url="/docs/assets/favicon-32x32.png",
            swagger_ui_parameters={"persistAuthorization": False, "tryItOutEnabled": True},
        )


def _add_web_console(app: FastAPI) -> None:
    app.mount("/console", StaticFiles(directory=STATIC_DIR), name="console")
    index = STATIC_DIR / "index.html"

    @app.get("/", include_in_schema=False)
    async def home() -> FileResponse:
        return FileResponse(index, media_type="text/html", headers={"cache-control": "no-cache"})
