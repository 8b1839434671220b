"""W3C trace context (traceparent, tracestate) in and out of gRPC metadata."""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import Getter, Setter
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

__all__ = ["extract_context", "inject_context"]

MetadataPairs = Iterable[tuple[str, str | bytes]]

# W3C Trace Context only: the router takes calls from outside, and baggage from there is not
# something to carry through every internal hop.
_PROPAGATOR = TraceContextTextMapPropagator()


class _PairsGetter(Getter[MetadataPairs]):
    def get(self, carrier: MetadataPairs, key: str) -> list[str] | None:
        values = [
            value if isinstance(value, str) else value.decode("latin-1")
            for name, value in carrier
            if name == key
        ]
        return values or None

    def keys(self, carrier: MetadataPairs) -> list[str]:
        return [name for name, _ in carrier]


class _MetadataSetter(Setter[grpc.aio.Metadata]):
    def set(self, carrier: grpc.aio.Metadata, key: str, value: str) -> None:
        carrier[key] = value


_GETTER = _PairsGetter()
_SETTER = _MetadataSetter()


def extract_context(metadata: MetadataPairs | None) -> Context:
    """The remote parent carried by incoming metadata; an empty context when there is none.

    Starts from an empty context, never the current one: a server span's parent is only
    what came over the wire.
    """
    # The getter is read more than once, so a one-shot iterator would lose pairs.
    pairs = tuple(metadata or ())
    return _PROPAGATOR.extract(pairs, context=Context(), getter=_GETTER)


def inject_context(metadata: MetadataPairs | None, context: Context) -> grpc.aio.Metadata:
    """A copy of outgoing metadata with the context's traceparent (replacing any present)."""
    out = grpc.aio.Metadata()
    for key, value in metadata or ():
        out.add(key, value)
    _PROPAGATOR.inject(out, context=context, setter=_SETTER)
    return out
