"""The router connection under RiverbeamClient: channel, stub, deadlines and error translation."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from types import TracebackType
from typing import Any, Self, TypeVar

import grpc

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import open_channel, translate_rpc_errors_sync
from riverbeam.v1 import riverbeam_service_pb2_grpc as pb_grpc

__all__ = ["DEFAULT_TARGET", "DEFAULT_TIMEOUT_S"]

DEFAULT_TARGET = "127.0.0.1:50051"
"""Where `riverbeam up` serves the router."""

DEFAULT_TIMEOUT_S = 120.0
_T = TypeVar("_T")


class _RouterConnection:
    """The channel to the router and the unary-call plumbing every RPC method uses.

    The constructor's arguments are documented on `RiverbeamClient`.
    """

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        token: str | None = None,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        self._target = target
        self._timeout_s = timeout_s
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self._channel = channel
        self._own_channel = channel is None
        self._stub_obj: Any = None
        self._closed = False

    @property
    def target(self) -> str:
        """The router this client talks to."""
        return self._target

    # ---- lifecycle ----------------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        self._stub()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel (if this client opened it). Safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        channel, self._channel = self._channel, None
        self._stub_obj = None
        if channel is not None and self._own_channel:
            await channel.close(grace=None)

    def _stub(self) -> Any:
        if self._closed:
            raise RuntimeError("RiverbeamClient is closed")
        if self._stub_obj is None:
            if self._channel is None:
                self._channel = open_channel(self._target)
            self._stub_obj = pb_grpc.RiverbeamServiceStub(self._channel)  # type: ignore[no-untyped-call]
        return self._stub_obj

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        """grpc.RpcError -> RiverbeamError, naming the router when it could not be reached."""
        try:
            with translate_rpc_errors_sync(service="router"):
                yield
        except RiverbeamError as err:
            # Only a status the router did not send itself means the router was not reached;
            # an unavailable service behind it comes with the router's ErrorInfo.
            if err.transport and err.details.get("grpc_code") == grpc.StatusCode.UNAVAILABLE.name:
                details = {**err.details, "target": self._target}
                raise RiverbeamError(
                    err.code, f"cannot reach the router at {self._target}: {err.message}", **details
                ) from None
            raise

    async def _unary(self, method: str, request: Any, timeout_s: float | None = None) -> Any:
        call: Callable[..., Awaitable[Any]] = getattr(self._stub(), method)
        timeout = self._timeout_s if timeout_s is None else timeout_s
        with self._translated():
            return await call(request, metadata=self._metadata, timeout=timeout)

    async def _all_pages(
        self,
        fetch: Callable[[str], Awaitable[tuple[list[_T], str]]],
    ) -> list[_T]:
        items: list[_T] = []
        token = ""
        seen: set[str] = set()
        while True:
            page, token = await fetch(token)
            items.extend(page)
            if not token:
                return items
            if token in seen:  # a server that hands back a token twice would loop forever
                raise RiverbeamError(
                    ErrorCode.INVALID_PAGE_TOKEN,
                    "the server repeated a page token",
                    page_token=token,
                )
            seen.add(token)
