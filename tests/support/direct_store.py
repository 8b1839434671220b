"""A StoreClient wired straight to a StoreServicer, the messages serialised and parsed on the
way as on the wire: the client's and the service's conversions run, with no gRPC between."""

from __future__ import annotations

from typing import Any

from riverbeam.store import InMemoryStore, StoreClient
from services.store.servicer import StoreServicer

__all__ = ["DirectStub", "direct_store_client"]


class DirectStub:
    """A stub whose every call is the servicer's method; `requests` holds each request as the
    servicer parsed it."""

    def __init__(self, servicer: StoreServicer) -> None:
        self._servicer = servicer
        self.requests: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._servicer, name)

        async def call(request: Any, **_: Any) -> Any:
            parsed = type(request).FromString(request.SerializeToString())
            self.requests.append(parsed)
            reply = await method(parsed, None)
            return type(reply).FromString(reply.SerializeToString())

        return call


def direct_store_client(store: InMemoryStore | None = None) -> StoreClient:
    """A StoreClient whose calls go to a StoreServicer over `store` (a new InMemoryStore)."""
    client = StoreClient("127.0.0.1:1")
    client._stub = DirectStub(StoreServicer(store if store is not None else InMemoryStore()))
    return client
