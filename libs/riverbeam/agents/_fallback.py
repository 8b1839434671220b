"""FallbackClient: try several completion clients in order."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from riverbeam.agents._completion import (
    Completion,
    CompletionClient,
    CompletionEvent,
    StructuredOutputClient,
    StructuredStreaming,
    closing_events,
    collect,
)
from riverbeam.agents._tool import ToolSpec
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["FallbackClient", "falls_through"]

log = logging.getLogger(__name__)

_STOPS = frozenset(
    {ErrorCode.MODEL_AUTH, ErrorCode.MODEL_CONTEXT_LENGTH, ErrorCode.INVALID_ARGUMENT}
)


def falls_through(error: RiverbeamError) -> bool:
    """Whether another client is worth trying after `error`.

    No for a refused key (BEM-082), a conversation too long (BEM-084), and any error its
    client marked `retriable=false` (a bad request); yes for rate limits, unavailability,
    malformed responses and unrecognised errors.
    """
    if error.code in _STOPS:
        return False
    return error.details.get("retriable") != "false"


class FallbackClient(StructuredStreaming):
    """A CompletionClient that tries each of its clients in order.

    It moves to the next client after a failure that `should_fall_through` accepts, and
    raises at once on one it does not. When every client failed it raises BEM-095 with each
    failure's code in its details. A client that has already streamed text is not left: a
    failure after the first event is raised as it is, so text is never restarted.

    Args:
        clients: The clients, first choice first.
        should_fall_through: Decides whether to try the next client; `falls_through` by default.
        on_fallback: Called with the error and the index of the client that failed, before the
            next one is tried.
    """

    def __init__(
        self,
        clients: Sequence[CompletionClient],
        *,
        should_fall_through: Callable[[RiverbeamError], bool] = falls_through,
        on_fallback: Callable[[RiverbeamError, int], None] | None = None,
    ) -> None:
        if not clients:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, "FallbackClient needs at least one client"
            )
        self.clients: tuple[CompletionClient, ...] = tuple(clients)
        self._should_fall_through = should_fall_through
        self._on_fallback = on_fallback

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
    ) -> Completion:
        """The first Completion a client gives."""
        return await collect(self.stream(messages, tools, model=model))

    async def stream_structured(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
        response_format: Mapping[str, Any] | None,
    ) -> AsyncIterator[CompletionEvent]:
        """The events of the first client that does not fail before its first event, passing a
        native response format to the clients that can send one.

        A client that cannot is called without it; the agent validates the answer either way.
        """
        failures: list[RiverbeamError] = []
        for index, client in enumerate(self.clients):
            started = False
            if response_format is not None and isinstance(client, StructuredOutputClient):
                attempt = client.stream_structured(
                    messages, tools, model=model, response_format=response_format
                )
            else:
                attempt = client.stream(messages, tools, model=model)
            try:
                async with closing_events(attempt) as events:
                    async for event in events:
                        started = True
                        yield event
                return
            except RiverbeamError as error:
                if started or not self._should_fall_through(error):
                    raise
                failures.append(error)
                if index + 1 < len(self.clients):
                    log.warning(
                        "completion client %d failed (%s); trying the next", index, error.bem
                    )
                    if self._on_fallback is not None:
                        self._on_fallback(error, index)
        last = failures[-1]
        raise RiverbeamError(
            ErrorCode.ALL_MODELS_FAILED,
            f"all {len(failures)} completion clients failed; the last said: {last.message}",
            codes=",".join(f.bem for f in failures),
            last_code=last.bem,
        )
