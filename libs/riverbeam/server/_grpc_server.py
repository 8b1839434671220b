"""A gRPC server with health checking, reflection and the error interceptor, as a lifecycle object."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, cast

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server._interceptor import (
    MAX_REQUEST_BYTES,
    ErrorInterceptor,
    ErrorMappedHandlers,
)
from riverbeam.server._reflection import enable_reflection
from riverbeam.telemetry import tracing_client_interceptors, tracing_server_interceptors

__all__ = ["CHANNEL_OPTIONS", "GrpcServer", "ServiceBinding", "open_channel"]

log = logging.getLogger("riverbeam.server")

MAX_MESSAGE_BYTES = MAX_REQUEST_BYTES
MAX_METADATA_BYTES = 64 * 1024
CHANNEL_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 1),
]


# What a server's transport accepts is looser than what the services take, so the refusal of a
# too large message (BEM-019, checked by the error interceptor) or of an oversized
# authorization header (BEM-050, the authenticator) is ours and carries a code. Only beyond
# these does gRPC itself answer RESOURCE_EXHAUSTED. gRPC's metadata limit is soft below the
# absolute one (requests between the two are refused at random), so both are set alike.
SERVER_OPTIONS: list[tuple[str, Any]] = [
    *[(k, v) for k, v in CHANNEL_OPTIONS if k != "grpc.max_receive_message_length"],
    ("grpc.max_receive_message_length", 4 * MAX_REQUEST_BYTES),
    ("grpc.max_metadata_size", MAX_METADATA_BYTES),
    ("grpc.absolute_max_metadata_size", MAX_METADATA_BYTES),
]


@dataclass(frozen=True, slots=True)
class ServiceBinding:
    """One gRPC service to serve: its full name and the function that adds its servicer.

    `stopping`, if given, is called when the server starts to stop, before in-flight calls
    get their grace period: a service with long-lived streams ends them there (the store's
    RunSteps), so that stopping does not wait out the grace for them.
    """

    name: str
    register: Callable[[grpc.aio.Server], None]
    stopping: Callable[[], None] | None = None


def connection_age_options(age_s: float | None, grace_s: float | None) -> list[tuple[str, int]]:
    """gRPC's options for closing a connection `age_s` after it opened: it stops taking new
    calls then (the client opens another, re-resolving DNS), and what is still running on it
    is cut `grace_s` later. With no grace, nothing running is cut: gRPC waits for it (a
    runner's RunInvoke lasts as long as its run; a lane's stream until its runs end)."""
    if age_s is None:
        return []
    options = [("grpc.max_connection_age_ms", int(age_s * 1000))]
    if grace_s is not None:
        options.append(("grpc.max_connection_age_grace_ms", int(grace_s * 1000)))
    return options


def open_channel(
    target: str, *, round_robin: bool = False, interceptors: Sequence[Any] | None = None
) -> grpc.aio.Channel:
    """An insecure channel to an internal service (trusted network; see deploy/ for policy).

    Traces propagate over it when tracing is configured (riverbeam.telemetry).
    """
    options = list(CHANNEL_OPTIONS)
    if round_robin:
        options.append(("grpc.lb_policy_name", "round_robin"))
    chosen = tracing_client_interceptors() if interceptors is None else list(interceptors)
    return grpc.aio.insecure_channel(target, options=options, interceptors=chosen)


class _GenericHandlersOnly:
    """A server as the generated `add_*Servicer_to_server` functions see it: their generic
    handlers are added, their registered method handlers (the same handlers again) are not.

    grpc.aio waits for the next call of each registered method, and of any other method,
    with one future apiece: every call it takes runs `asyncio.wait` over all of them (the
    router: 18 registered methods + 1, ~19 done-callbacks added and removed and 19
    `iscoroutine` checks per call). With generic handlers only there is one future, and a
    method is found in the generic handlers' dicts as before (registered handlers only took
    precedence over generic ones for the same method: they are the same handlers).
    """

    def __init__(self, server: grpc.aio.Server, errors: ErrorInterceptor | None = None) -> None:
        self._server = server
        self._errors = errors

    def add_registered_method_handlers(self, service_name: str, method_handlers: Any) -> None:
        return None

    def add_generic_rpc_handlers(self, handlers: Sequence[Any]) -> None:
        """The handlers, with errors mapped by `errors` when the server has no interceptor."""
        if self._errors is not None:
            errors = self._errors
            handlers = [ErrorMappedHandlers(h, errors) for h in handlers]
        self._server.add_generic_rpc_handlers(handlers)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)


def _listen_failed(listen: str, why: str) -> RiverbeamError:
    return RiverbeamError(
        ErrorCode.LISTEN_FAILED, f"cannot listen on {listen}: {why}", listen=listen
    )


class GrpcServer:
    """An async gRPC server: `async with GrpcServer([...], listen="127.0.0.1:0") as s: s.port`.

    Serves health checking (overall "" and each service) and reflection (v1 and v1alpha). stop() is idempotent:
    it marks every service NOT_SERVING, then lets in-flight calls finish for `grace_s`.
    """

    def __init__(
        self,
        bindings: Sequence[ServiceBinding],
        *,
        listen: str = "127.0.0.1:0",
        grace_s: float = 5.0,
        interceptors: Sequence[Any] = (),
        max_connection_age_s: float | None = None,
        max_connection_age_grace_s: float | None = None,
    ) -> None:
        self._bindings = list(bindings)
        self._listen = listen
        self._grace_s = grace_s
        # Tracing sits inside the error interceptor so it sees the RiverbeamError itself. With
        # no other interceptor, the error mapping is in the handlers instead (built once, see
        # ErrorMappedHandlers) and gRPC runs no interceptor per call.
        self._errors = ErrorInterceptor()
        others = [*tracing_server_interceptors(), *interceptors]
        self._interceptors: list[Any] = [self._errors, *others] if others else []
        self._mapped_errors = None if others else self._errors
        # Closing connections after a while makes clients re-resolve DNS, so a router balancing
        # over a headless Service notices runners added by a scale-out.
        # No SO_REUSEPORT: a second process on a taken port must fail, not share it.
        self._options = [
            *SERVER_OPTIONS,
            ("grpc.so_reuseport", 0),
            *connection_age_options(max_connection_age_s, max_connection_age_grace_s),
        ]
        self._server: grpc.aio.Server | None = None
        self._health: Any = health.aio.HealthServicer()  # type: ignore[attr-defined]
        self._port = 0
        self._stopped = False
        self._stop_lock = asyncio.Lock()

    @property
    def port(self) -> int:
        return self._port

    @property
    def address(self) -> str:
        host = self._listen.rsplit(":", 1)[0] or "127.0.0.1"
        if host in ("0.0.0.0", "[::]", "::"):
            host = "127.0.0.1"
        return f"{host}:{self._port}"

    @property
    def health(self) -> Any:
        return self._health

    async def start(self) -> int:
        server = grpc.aio.server(interceptors=self._interceptors, options=self._options)
        generic_only = cast(grpc.aio.Server, _GenericHandlersOnly(server, self._mapped_errors))
        for binding in self._bindings:
            binding.register(generic_only)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, generic_only)
        names = [b.name for b in self._bindings]
        enable_reflection(
            [*names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name], generic_only
        )
        try:
            port = server.add_insecure_port(self._listen)
        except RuntimeError as exc:  # grpcio raises RuntimeError("Failed to bind to address")
            raise _listen_failed(self._listen, str(exc)) from None
        if port == 0:
            raise _listen_failed(self._listen, "the address is in use or not available")
        self._port = port
        await server.start()
        self._server = server
        serving = health_pb2.HealthCheckResponse.SERVING
        await self._health.set("", serving)
        for name in names:
            await self._health.set(name, serving)
        log.info("serving %s on %s", ", ".join(names), self.address)
        return port

    async def stop(self, grace_s: float | None = None) -> None:
        async with self._stop_lock:
            if self._stopped or self._server is None:
                self._stopped = True
                return
            self._stopped = True
            await self._health.enter_graceful_shutdown()
            for binding in self._bindings:
                if binding.stopping is not None:
                    binding.stopping()
            await self._server.stop(self._grace_s if grace_s is None else grace_s)

    async def wait_for_termination(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


def health_follows(server: GrpcServer, *names: str) -> Callable[[bool], Awaitable[None]]:
    """A callback that sets the overall health and the named services' to SERVING or
    NOT_SERVING (e.g. while a dependency such as the frames stream cannot be used)."""

    async def set_health(usable: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if usable
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ("", *names):
            await server.health.set(name, status)

    return set_health
