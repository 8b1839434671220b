"""Store servers for the store-floor benchmark, each its own process, answering BeginRun/FinishRun.

    python -m bench._store_floor bare --ready-file F     # grpc.aio, bytes in and out, replayed
    python -m bench._store_floor canned --ready-file F   # GrpcServer + the generated servicer

Both answer every call with the reply the real store gave to the first call of that method
(an in-process InMemoryStore behind the real StoreServicer answers the first BeginRun and the
first FinishRun, which the client sends as a real pair). So they cost what the transport does
for the store's own messages, without the store's logic:

- `bare`: a plain grpc.aio server with generic handlers and no (de)serializer: the floor.
- `canned`: our GrpcServer (its interceptor, metrics, health service) serving the generated
  StoreService servicer, which parses each request and serializes its reply: the floor plus
  what our server machinery and protobuf add.

The real store (`riverbeam serve store`, in memory or on PostgreSQL) is the third kind; the
benchmark (bench/test_bench_store_floor.py) starts it as `riverbeam up` does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from bench._procs import _write_ready, serve_bare, stop_on_signal

__all__ = ["FIRST_REPLIES", "main"]

SERVICE = "riverbeam.v1.StoreService"
FIRST_REPLIES = ("BeginRun", "FinishRun")


def _real_servicer() -> Any:
    from riverbeam.store import InMemoryStore
    from services.store.servicer import StoreServicer

    return StoreServicer(InMemoryStore())


def _replayed(real: Callable[[Any, Any], Awaitable[Any]]) -> Callable[[Any, Any], Awaitable[Any]]:
    """A handler that asks `real` once and gives its reply to every later call."""
    held: list[Any] = []

    async def handler(request: Any, context: Any) -> Any:
        if not held:
            held.append(await real(request, context))
        return held[0]

    return handler


def _bare_handlers() -> grpc.GenericRpcHandler[Any, Any]:
    from riverbeam.v1 import store_service_pb2 as pb

    real = _real_servicer()
    methods = {}
    for name in FIRST_REPLIES:
        parse = getattr(pb, f"{name}Request").FromString
        call = getattr(real, name)

        async def first(raw: bytes, context: Any, parse: Any = parse, call: Any = call) -> bytes:
            reply = await call(parse(raw), context)
            data: bytes = reply.SerializeToString()
            return data

        methods[name] = grpc.unary_unary_rpc_method_handler(_replayed(first))
    return grpc.method_handlers_generic_handler(SERVICE, methods)


async def _serve(kind: str, ready_file: str) -> None:
    if kind == "bare":
        await serve_bare(_bare_handlers(), ready_file)
        return
    from riverbeam.server import GrpcServer, ServiceBinding
    from riverbeam.v1 import store_service_pb2_grpc as pb_grpc

    stop = stop_on_signal()
    real = _real_servicer()

    class Canned(pb_grpc.StoreServiceServicer):
        BeginRun = staticmethod(_replayed(real.BeginRun))
        FinishRun = staticmethod(_replayed(real.FinishRun))

    binding = ServiceBinding(
        SERVICE,
        lambda s: pb_grpc.add_StoreServiceServicer_to_server(Canned(), s),  # type: ignore[no-untyped-call]
    )
    async with GrpcServer([binding], grace_s=0.5) as served:
        _write_ready(ready_file, served.address)
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench._store_floor")
    parser.add_argument("kind", choices=("bare", "canned"))
    parser.add_argument("--ready-file", required=True)
    args = parser.parse_args(argv)
    import uvloop

    uvloop.run(_serve(args.kind, args.ready_file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
