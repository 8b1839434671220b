"""OpenAiCompatible: a CompletionClient for any OpenAI-compatible chat-completions endpoint.

Failures are translated here, at the HTTP boundary, into catalog codes:

    401, 403                                BEM-082  (not retried)
    429, after retries                      BEM-083
    400/413/422 naming the context length   BEM-084  (not retried)
    5xx, 408, timeouts, connection errors   BEM-085  after retries
    a response that cannot be decoded       BEM-093
    anything else (404, other 4xx, ...)     BEM-080  (not retried)

Every error carries details: the HTTP status (when there is one), the model, the endpoint URL
(never the key), whether another endpoint is worth trying (`retriable`), and the endpoint's own
message.
"""

from __future__ import annotations

import asyncio
import copy
import email.utils
import json
import logging
import os
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Self

from riverbeam.agents._completion import (
    Completion,
    CompletionEvent,
    StructuredStreaming,
    TextDelta,
    closing_events,
    collect,
)
from riverbeam.agents._model_env import (
    API_KEY_VARS,
    BASE_URL_VARS,
    DEFAULT_BASE_URL,
    DEFAULT_MODEL,
    MODEL_VARS,
    first_set,
)
from riverbeam.agents._sse import DONE, StreamAssembler, completion_from_json, iter_sse_data
from riverbeam.agents._tool import ToolSpec
from riverbeam.core.errors import ErrorCode, RiverbeamError

if TYPE_CHECKING:  # httpx (with click, rich and pygments) is imported by the first request
    import httpx

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_EXTRA_BODY", "DEFAULT_MODEL", "OpenAiCompatible"]

log = logging.getLogger(__name__)

DEFAULT_EXTRA_BODY: Mapping[str, Any] = {"chat_template_kwargs": {"thinking": False}}

_CONTEXT_LENGTH_MARKERS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "maximum context",
    "too many tokens",
    "prompt is too long",
)
_MESSAGE_LIMIT = 500


def _default_extra_body() -> dict[str, Any]:
    return copy.deepcopy(dict(DEFAULT_EXTRA_BODY))


class _Retryable(Exception):
    """A failure worth another attempt; `error` is what the caller sees if none is left."""

    def __init__(self, error: RiverbeamError, retry_after: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after = retry_after


class _Pool:
    """The lazily opened HTTP connection pool of one client."""

    def __init__(self) -> None:
        self.client: httpx.AsyncClient | None = None

    def get(self, timeout_s: float) -> httpx.AsyncClient:
        if self.client is None or self.client.is_closed:
            import httpx

            self.client = httpx.AsyncClient(
                timeout=httpx.Timeout(timeout_s), follow_redirects=False
            )
        return self.client

    async def aclose(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            await client.aclose()


@dataclass(frozen=True, slots=True)
class OpenAiCompatible(StructuredStreaming):
    """POSTs to `{base_url}/chat/completions` with bearer auth; streams tokens over SSE.

    Use it as an async context manager, or call `aclose()` when done: it keeps a connection
    pool open between calls, bound to the event loop that first uses it. Copies made by
    `with_max_tokens` / `with_extra_body` have pools of their own.

    Args:
        base_url: The endpoint's base URL, such as "https://integrate.api.nvidia.com/v1".
        api_key: The bearer token. Never logged, never in repr or error details.
        model: The model to request when the caller names none (or always, with pin_model).
        temperature: Sampling temperature.
        top_p: Nucleus sampling.
        max_tokens: Completion token limit.
        timeout_s: Connect/read/write timeout, in seconds; a streamed response may take longer
            in total as long as tokens keep arriving.
        extra_body: Merged into the request body ({"chat_template_kwargs": {"thinking": false}}).
        max_retries: Further attempts after a 429, 408, 5xx, timeout or connection failure.
        backoff_base_s: First backoff; it doubles each attempt, with jitter.
        backoff_max_s: Longest backoff.
        retry_after_max_s: Longest wait a Retry-After header may impose.
        pin_model: Always request `model`, ignoring the model the router resolved.
        streaming: Request `stream: true` (SSE). With False the reply comes in one piece.
        sleep: How to wait between attempts (tests pass a recorder).
    """

    base_url: str
    api_key: str = field(repr=False)
    model: str = DEFAULT_MODEL
    temperature: float = field(default=1.0, kw_only=True)
    top_p: float = field(default=0.95, kw_only=True)
    max_tokens: int = field(default=4096, kw_only=True)
    timeout_s: float = field(default=60.0, kw_only=True)
    extra_body: dict[str, Any] = field(default_factory=_default_extra_body, kw_only=True)
    max_retries: int = field(default=2, kw_only=True)
    backoff_base_s: float = field(default=0.5, kw_only=True)
    backoff_max_s: float = field(default=8.0, kw_only=True)
    retry_after_max_s: float = field(default=60.0, kw_only=True)
    pin_model: bool = field(default=False, kw_only=True)
    streaming: bool = field(default=True, kw_only=True)
    sleep: Callable[[float], Awaitable[None]] = field(
        default=asyncio.sleep, kw_only=True, repr=False, compare=False
    )
    _pool: _Pool = field(default_factory=_Pool, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if self.max_tokens <= 0:
            raise ValueError("max_tokens must be > 0")

    # ---- construction ------------------------------------------------------------------------
    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, **options: Any
    ) -> OpenAiCompatible | None:
        """A client configured from environment variables, or None when no API key is set.

        Reads BEAM_API_KEY, then GFS_BEAM_API_KEY, then NVIDIA_API_KEY; BEAM_API_BASE_URL, then
        GFS_BEAM_BASE_URL (default https://integrate.api.nvidia.com/v1); BEAM_MODEL, then
        GFS_BEAM_MODEL (default deepseek-ai/deepseek-v4-pro-0813).

        Args:
            env: Where to read the variables; os.environ (read at call time) when None.
            **options: Further keyword arguments of the constructor.
        """
        source: Mapping[str, str] = os.environ if env is None else env
        api_key = first_set(source, API_KEY_VARS)
        if api_key is None:
            return None
        base_url = first_set(source, BASE_URL_VARS) or DEFAULT_BASE_URL
        model = first_set(source, MODEL_VARS) or DEFAULT_MODEL
        return cls(base_url, api_key, model, **options)

    def with_max_tokens(self, max_tokens: int) -> OpenAiCompatible:
        """A copy that asks for at most `max_tokens` completion tokens."""
        return replace(self, max_tokens=max_tokens)

    def with_extra_body(self, extra_body: Mapping[str, Any]) -> OpenAiCompatible:
        """A copy whose extra request body is `extra_body` (replacing the default)."""
        return replace(self, extra_body=copy.deepcopy(dict(extra_body)))

    provider_name: ClassVar[str] = "openai"
    """gen_ai.provider.name: the API it speaks (any OpenAI-compatible endpoint)."""

    @property
    def default_model(self) -> str:
        """The model requested when the caller names none (BEAM_MODEL)."""
        return self.model

    @property
    def endpoint(self) -> str:
        """The URL requests go to."""
        return f"{self.base_url}/chat/completions"

    # ---- lifecycle ---------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close the connection pool. Idempotent; the client reopens one if used again."""
        await self._pool.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ---- CompletionClient --------------------------------------------------------------------
    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
    ) -> Completion:
        """Call the model and return its Completion."""
        return await collect(self.stream(messages, tools, model=model))

    async def stream_structured(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
        response_format: Mapping[str, Any] | None,
    ) -> AsyncIterator[CompletionEvent]:
        """`stream` with the provider's native `response_format` in the body (when given).

        Yields text as it arrives and then the Completion. A failed attempt is retried only
        while nothing has been yielded: once text has reached the caller, a failure mid-stream
        is final.
        """
        chosen = self.model if self.pin_model or not model else model
        body = self.request_body(messages, tools, model=chosen)
        if response_format is not None:
            body["response_format"] = copy.deepcopy(dict(response_format))
        attempt = 0
        while True:
            yielded = False
            try:
                async with closing_events(self._attempt(body, chosen)) as events:
                    async for event in events:
                        yielded = True
                        yield event
                return
            except _Retryable as failure:
                if yielded or attempt >= self.max_retries:
                    raise failure.error.with_details({"attempts": attempt + 1}) from None
                delay = self._delay(attempt, failure.retry_after)
                log.info(
                    "model call to %s failed (%s); retry %d of %d in %.2fs",
                    self.endpoint,
                    failure.error.bem,
                    attempt + 1,
                    self.max_retries,
                    delay,
                )
                attempt += 1
                await self.sleep(delay)

    def request_body(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[ToolSpec], *, model: str
    ) -> dict[str, Any]:
        """The JSON body of one request."""
        body: dict[str, Any] = {
            "model": model,
            "messages": [dict(m) for m in messages],
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }
        if tools:
            body["tools"] = [spec.openai() for spec in tools]
        if self.streaming:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(copy.deepcopy(self.extra_body))
        return body

    # ---- one attempt -------------------------------------------------------------------------
    async def _attempt(self, body: dict[str, Any], model: str) -> AsyncIterator[CompletionEvent]:
        import httpx

        http = self._pool.get(self.timeout_s)
        headers = {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json"}
        if self.streaming:
            headers["Accept"] = "text/event-stream"
        try:
            async with http.stream("POST", self.endpoint, json=body, headers=headers) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise self._http_failure(response, model)
                kind = response.headers.get("content-type", "")
                if kind.startswith("text/event-stream"):
                    async with closing_events(self._read_sse(response, model)) as events:
                        async for event in events:
                            yield event
                else:
                    yield await self._read_json(response, model)
        except httpx.TimeoutException as exc:
            raise _Retryable(
                self._error(
                    ErrorCode.MODEL_UNAVAILABLE,
                    "the model endpoint timed out",
                    model,
                    retriable=True,
                    cause=type(exc).__name__,
                )
            ) from None
        except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError) as exc:
            raise _Retryable(
                self._error(
                    ErrorCode.MODEL_UNAVAILABLE,
                    "the connection to the model endpoint failed",
                    model,
                    retriable=True,
                    cause=type(exc).__name__,
                )
            ) from None
        except httpx.DecodingError as exc:
            raise self._error(
                ErrorCode.MODEL_BAD_RESPONSE,
                "the response body could not be decoded",
                model,
                retriable=True,
                cause=type(exc).__name__,
            ) from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise self._error(
                ErrorCode.MODEL_ERROR,
                f"the model request failed: {type(exc).__name__}",
                model,
                retriable=False,
            ) from None

    async def _read_sse(
        self, response: httpx.Response, model: str
    ) -> AsyncIterator[CompletionEvent]:
        assembler = StreamAssembler(requested_model=model)
        done = False
        async for data in iter_sse_data(response.aiter_lines()):
            if data.strip() == DONE:
                done = True
                break
            try:
                chunk = json.loads(data)
            except json.JSONDecodeError:
                raise self._error(
                    ErrorCode.MODEL_BAD_RESPONSE,
                    "a stream event is not JSON",
                    model,
                    retriable=True,
                ) from None
            try:
                text = assembler.feed(chunk)
            except RiverbeamError as err:
                raise err.with_details(self._details(model, retriable=True)) from None
            if text:
                yield TextDelta(text)
        if not done and not assembler.finished:
            raise self._error(
                ErrorCode.MODEL_BAD_RESPONSE,
                "the stream ended before the reply was complete",
                model,
                retriable=True,
            )
        try:
            yield assembler.finish()
        except RiverbeamError as err:
            raise err.with_details(self._details(model, retriable=True)) from None

    async def _read_json(self, response: httpx.Response, model: str) -> CompletionEvent:
        content = await response.aread()
        try:
            body = json.loads(content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise self._error(
                ErrorCode.MODEL_BAD_RESPONSE,
                "the response is not JSON",
                model,
                retriable=True,
                status=response.status_code,
            ) from None
        try:
            return completion_from_json(body, requested_model=model)
        except RiverbeamError as err:
            raise err.with_details(self._details(model, retriable=True)) from None

    # ---- errors and backoff ------------------------------------------------------------------
    def _details(self, model: str, **more: object) -> dict[str, object]:
        details: dict[str, object] = {"model": model, "endpoint": self.endpoint}
        for key, value in more.items():
            details[key] = str(value).lower() if isinstance(value, bool) else value
        return details

    def _error(
        self, code: ErrorCode, message: str, model: str, **details: object
    ) -> RiverbeamError:
        return RiverbeamError(code, message, **self._details(model, **details))

    def _http_failure(self, response: httpx.Response, model: str) -> RiverbeamError | _Retryable:
        status = response.status_code
        said = _endpoint_message(response)
        message = f"the model endpoint answered {status}" + (f": {said}" if said else "")
        if status in (401, 403):
            return self._error(ErrorCode.MODEL_AUTH, message, model, status=status, retriable=False)
        retry_after = _retry_after(response.headers.get("retry-after"), self.retry_after_max_s)
        if status == 429:
            return _Retryable(
                self._error(
                    ErrorCode.MODEL_RATE_LIMITED, message, model, status=status, retriable=True
                ),
                retry_after,
            )
        if status >= 500 or status == 408:
            return _Retryable(
                self._error(
                    ErrorCode.MODEL_UNAVAILABLE, message, model, status=status, retriable=True
                ),
                retry_after,
            )
        if status in (400, 413, 422) and any(m in said.lower() for m in _CONTEXT_LENGTH_MARKERS):
            return self._error(
                ErrorCode.MODEL_CONTEXT_LENGTH, message, model, status=status, retriable=False
            )
        return self._error(ErrorCode.MODEL_ERROR, message, model, status=status, retriable=False)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2.0**attempt)
        # Equal jitter: never less than half the backoff, so retries still spread out.
        return ceiling / 2 + random.uniform(0, ceiling / 2)


def _endpoint_message(response: httpx.Response) -> str:
    """The endpoint's own error text (error.code and error.message when JSON), shortened."""
    text = response.text
    try:
        body = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return text.strip()[:_MESSAGE_LIMIT]
    parts: list[str] = []
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        for key in ("code", "type", "message", "detail"):
            value = error.get(key)
            if isinstance(value, str | int) and str(value) and str(value) not in parts:
                parts.append(str(value))
    elif isinstance(error, str):
        parts.append(error)
    return (": ".join(parts) or text.strip())[:_MESSAGE_LIMIT]


def _retry_after(value: str | None, ceiling: float) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), capped."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), ceiling)
