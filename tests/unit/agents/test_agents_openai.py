"""OpenAiCompatible against a real local chat-completions server (tests/support/chat_server)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from riverbeam.agents import (
    DEFAULT_BASE_URL,
    DEFAULT_MODEL,
    OpenAiCompatible,
    Text,
    TextDelta,
    ToolCalls,
    ToolSpec,
    json_params,
)
from riverbeam.core.errors import RiverbeamError
from tests.support.chat_server import (
    ChatServer,
    call,
    cut,
    drop,
    http_error,
    raw,
    sse,
    stall,
    text,
    tool_calls,
)

KEY = "sk-test-secret"
MESSAGES = [{"role": "user", "content": "hello there"}]
REPO = Path(__file__).resolve().parents[3]


class Sleeps:
    """Records the waits between attempts instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@pytest.fixture
async def server() -> AsyncIterator[ChatServer]:
    async with ChatServer(api_key=KEY) as chat:
        yield chat


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def client(server: ChatServer, sleeps: Sleeps) -> AsyncIterator[OpenAiCompatible]:
    async with OpenAiCompatible(server.url, KEY, "test-model", sleep=sleeps) as c:
        yield c


async def _events(client: OpenAiCompatible, **kw: object) -> list[object]:
    return [e async for e in client.stream(MESSAGES, [], **kw)]  # type: ignore[arg-type]


# ---- requests --------------------------------------------------------------------------------
async def test_request_has_the_defaults_auth_and_tools(
    server: ChatServer, client: OpenAiCompatible
) -> None:
    spec = ToolSpec(
        "word_count", "Count words.", json_params({"text": {"type": "string"}}, ["text"])
    )
    server.push(text("ok"))
    await client.complete(MESSAGES, [spec])
    (request,) = server.completions
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.body
    assert body["model"] == "test-model"
    assert body["messages"] == MESSAGES
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (1.0, 0.95, 4096)
    assert body["chat_template_kwargs"] == {"thinking": False}
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["tools"] == [spec.openai()]


async def test_copies_change_max_tokens_and_extra_body(
    server: ChatServer, client: OpenAiCompatible
) -> None:
    tuned = client.with_max_tokens(128).with_extra_body({"top_k": 5})
    assert client.max_tokens == 4096 and client.extra_body == {
        "chat_template_kwargs": {"thinking": False}
    }
    server.push(text("ok"))
    async with tuned:
        await tuned.complete(MESSAGES, [])
    body = server.completions[0].body
    assert body["max_tokens"] == 128 and body["top_k"] == 5 and "chat_template_kwargs" not in body
    assert "tools" not in body


async def test_the_routed_model_is_used_unless_the_client_pins_its_own(
    server: ChatServer, sleeps: Sleeps
) -> None:
    server.push(text("a"), text("b"), text("c"))
    async with (
        OpenAiCompatible(server.url, KEY, "own", sleep=sleeps) as free,
        OpenAiCompatible(server.url, KEY, "own", pin_model=True, sleep=sleeps) as pinned,
    ):
        first = await free.complete(MESSAGES, [], model="routed")
        await free.complete(MESSAGES, [])
        third = await pinned.complete(MESSAGES, [], model="routed")
    assert [r.body["model"] for r in server.completions] == ["routed", "own", "own"]
    assert first.model == "routed" and third.model == "own"


def test_repr_hides_the_key() -> None:
    assert KEY not in repr(OpenAiCompatible("http://x/v1/", KEY, "m"))
    assert OpenAiCompatible("http://x/v1/", KEY, "m").endpoint == "http://x/v1/chat/completions"


# ---- from_env --------------------------------------------------------------------------------
def test_from_env_without_a_key_is_none() -> None:
    assert OpenAiCompatible.from_env({}) is None
    assert OpenAiCompatible.from_env({"BEAM_API_KEY": "  "}) is None


def test_from_env_defaults_and_precedence() -> None:
    client = OpenAiCompatible.from_env({"NVIDIA_API_KEY": "n"})
    assert client is not None
    assert (client.api_key, client.base_url, client.model) == ("n", DEFAULT_BASE_URL, DEFAULT_MODEL)
    env = {
        "BEAM_API_KEY": "b",
        "GFS_BEAM_API_KEY": "g",
        "NVIDIA_API_KEY": "n",
        "BEAM_API_BASE_URL": "http://beam/v1",
        "GFS_BEAM_BASE_URL": "http://gfs/v1",
        "BEAM_MODEL": "bm",
        "GFS_BEAM_MODEL": "gm",
    }
    client = OpenAiCompatible.from_env(env, max_retries=5)
    assert client is not None
    assert (client.api_key, client.base_url, client.model, client.max_retries) == (
        "b",
        "http://beam/v1",
        "bm",
        5,
    )
    del env["BEAM_API_KEY"], env["BEAM_API_BASE_URL"], env["BEAM_MODEL"]
    client = OpenAiCompatible.from_env(env)
    assert client is not None
    assert (client.api_key, client.base_url, client.model) == ("g", "http://gfs/v1", "gm")


def test_from_env_reads_os_environ_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BEAM_API_KEY", "GFS_BEAM_API_KEY", "NVIDIA_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert OpenAiCompatible.from_env() is None
    monkeypatch.setenv("GFS_BEAM_API_KEY", "from-env")
    client = OpenAiCompatible.from_env()
    assert client is not None and client.api_key == "from-env"


# ---- replies ---------------------------------------------------------------------------------
async def test_text_streams_as_deltas_with_usage_and_model(
    server: ChatServer, client: OpenAiCompatible
) -> None:
    usage = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
    server.push(text("one two three", usage=usage, model="served-model"))
    events = await _events(client)
    assert [e for e in events if isinstance(e, TextDelta)] == [
        TextDelta("one "),
        TextDelta("two "),
        TextDelta("three"),
    ]
    final = events[-1]
    assert isinstance(final, Text) and final.text == "one two three"
    assert final.model == "served-model"
    assert final.usage is not None and final.usage.model_dump() == usage


async def test_tool_calls_stream_with_arguments_split_across_chunks(
    server: ChatServer, client: OpenAiCompatible
) -> None:
    args = {"path": "docs/guide.md", "body": "a longer body that spans many chunks"}
    server.push(
        tool_calls(
            [call("write_file", args, id="call_a"), call("git_status", id="call_b")],
            text="Let me write it.",
            arg_chunk=3,
        )
    )
    events = await _events(client)
    final = events[-1]
    assert isinstance(final, ToolCalls)
    assert [(c.id, c.name, c.args) for c in final.calls] == [
        ("call_a", "write_file", args),
        ("call_b", "git_status", {}),
    ]
    assert final.text == "Let me write it."
    assert final.usage is not None and final.usage.completion_tokens > 0


async def test_non_streaming_mode(server: ChatServer, sleeps: Sleeps) -> None:
    server.push(text("whole"), tool_calls([call("f", {"x": 1}, id="c1")]))
    async with OpenAiCompatible(server.url, KEY, "m", streaming=False, sleep=sleeps) as plain:
        events = [e async for e in plain.stream(MESSAGES, [])]
        calls = await plain.complete(MESSAGES, [])
    assert events[0] == Text("whole", usage=events[0].usage, model="m")  # type: ignore[union-attr]
    assert isinstance(calls, ToolCalls) and calls.calls[0].args == {"x": 1}
    assert "stream" not in server.completions[0].body


async def test_malformed_arguments_are_kept_for_the_model(
    server: ChatServer, client: OpenAiCompatible
) -> None:
    server.push(tool_calls([call("f", '{"x": ', id="c1")]))
    final = (await _events(client))[-1]
    assert isinstance(final, ToolCalls) and final.calls[0].args_error is not None


# ---- errors and retries ----------------------------------------------------------------------
async def _failure(client: OpenAiCompatible) -> RiverbeamError:
    with pytest.raises(RiverbeamError) as caught:
        await client.complete(MESSAGES, [])
    return caught.value


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_failures_are_bem_082_without_retry(
    server: ChatServer, client: OpenAiCompatible, status: int
) -> None:
    server.push(http_error(status, "bad key"))
    error = await _failure(client)
    assert error.bem == "BEM-082" and error.details["status"] == str(status)
    assert error.details["retriable"] == "false"
    assert len(server.completions) == 1
    assert KEY not in str(error.details) and KEY not in error.message


async def test_wrong_key_is_refused_by_the_server(server: ChatServer, sleeps: Sleeps) -> None:
    async with OpenAiCompatible(server.url, "wrong", "m", sleep=sleeps) as wrong:
        assert (await _failure(wrong)).bem == "BEM-082"


async def test_429_is_retried_with_backoff_then_succeeds(
    server: ChatServer, client: OpenAiCompatible, sleeps: Sleeps
) -> None:
    server.push(http_error(429, "slow down"), http_error(429, "slow down"), text("finally"))
    completion = await client.complete(MESSAGES, [])
    assert isinstance(completion, Text) and completion.text == "finally"
    assert len(server.completions) == 3
    assert len(sleeps.delays) == 2
    assert (
        0.25 <= sleeps.delays[0] <= 0.5 and 0.5 <= sleeps.delays[1] <= 1.0
    )  # backoff bounds, not timing


async def test_retry_after_is_honoured(
    server: ChatServer, client: OpenAiCompatible, sleeps: Sleeps
) -> None:
    server.push(
        http_error(429, retry_after=7),
        http_error(503, retry_after="Wed, 21 Oct 2015 07:28:00 GMT"),
        text("ok"),
    )
    await client.complete(MESSAGES, [])
    assert sleeps.delays == [7.0, 0.0]


async def test_429_after_retries_is_bem_083(server: ChatServer, client: OpenAiCompatible) -> None:
    server.push(*[http_error(429, "rate limited")] * 3)
    error = await _failure(client)
    assert error.bem == "BEM-083" and error.details["attempts"] == "3"
    assert len(server.completions) == 3


@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_5xx_after_retries_is_bem_085(
    server: ChatServer, client: OpenAiCompatible, status: int
) -> None:
    server.push(*[http_error(status)] * 3)
    error = await _failure(client)
    assert error.bem == "BEM-085" and error.details["retriable"] == "true"
    assert len(server.completions) == 3


async def test_max_retries_bounds_attempts(server: ChatServer, sleeps: Sleeps) -> None:
    server.push(*[http_error(500)] * 5)
    async with OpenAiCompatible(server.url, KEY, "m", max_retries=0, sleep=sleeps) as once:
        assert (await _failure(once)).bem == "BEM-085"
    assert len(server.completions) == 1 and sleeps.delays == []


async def test_context_length_400_is_bem_084_without_retry(
    server: ChatServer, client: OpenAiCompatible
) -> None:
    server.push(
        http_error(
            400,
            "This model's maximum context length is 8192 tokens",
            code="context_length_exceeded",
        )
    )
    error = await _failure(client)
    assert error.bem == "BEM-084" and "maximum context length" in error.message
    assert len(server.completions) == 1


@pytest.mark.parametrize("status", [400, 404, 422])
async def test_other_client_errors_are_bem_080_without_retry(
    server: ChatServer, client: OpenAiCompatible, status: int
) -> None:
    server.push(http_error(status, "nope"))
    error = await _failure(client)
    assert error.bem == "BEM-080" and error.details["retriable"] == "false"
    assert len(server.completions) == 1


@pytest.mark.parametrize(
    "reply",
    [
        raw("not json at all"),
        raw('{"choices": []}'),
        sse(["{broken"]),
        sse([{"id": "no choices"}]),
        sse([{"choices": [{"index": 0, "delta": {"content": "cut"}, "finish_reason": None}]}]),
    ],
)
async def test_malformed_responses_are_bem_093(
    server: ChatServer, client: OpenAiCompatible, reply: dict
) -> None:
    server.push(reply)
    assert (await _failure(client)).bem == "BEM-093"


async def test_error_object_in_stream_is_bem_080(
    server: ChatServer, client: OpenAiCompatible
) -> None:
    server.push(sse([{"error": {"message": "overloaded"}}]))
    error = await _failure(client)
    assert error.bem == "BEM-080" and "overloaded" in error.message


async def test_dropped_connection_is_retried(server: ChatServer, client: OpenAiCompatible) -> None:
    server.push(drop(), text("second try"))
    completion = await client.complete(MESSAGES, [])
    assert isinstance(completion, Text) and completion.text == "second try"


async def test_timeouts_are_retried_then_bem_085(server: ChatServer, sleeps: Sleeps) -> None:
    server.push(stall(), stall(), text("late"))
    async with OpenAiCompatible(
        server.url, KEY, "m", timeout_s=0.2, max_retries=2, sleep=sleeps
    ) as quick:
        completion = await quick.complete(MESSAGES, [])
    assert isinstance(completion, Text) and completion.text == "late"
    server.push(stall(), stall())
    async with OpenAiCompatible(
        server.url, KEY, "m", timeout_s=0.2, max_retries=1, sleep=sleeps
    ) as quick:
        error = await _failure(quick)
    assert error.bem == "BEM-085" and error.details["cause"] == "ReadTimeout"


async def test_connection_refused_is_bem_085(sleeps: Sleeps) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with OpenAiCompatible(
        f"http://127.0.0.1:{port}/v1", KEY, "m", max_retries=1, sleep=sleeps
    ) as nowhere:
        error = await _failure(nowhere)
    assert error.bem == "BEM-085" and len(sleeps.delays) == 1


async def test_failure_after_text_is_not_retried(
    server: ChatServer, client: OpenAiCompatible
) -> None:
    server.push(cut(text("one two three four"), after=3), text("never"))
    seen: list[object] = []
    with pytest.raises(RiverbeamError) as caught:
        async for event in client.stream(MESSAGES, []):
            seen.append(event)
    assert caught.value.bem == "BEM-085"
    assert seen == [TextDelta("one "), TextDelta("two ")]
    assert len(server.completions) == 1 and server.remaining == 1


async def test_closing_the_stream_early_closes_the_response(
    server: ChatServer, client: OpenAiCompatible
) -> None:
    server.push(text("a b c d"), text("next"))
    stream = client.stream(MESSAGES, [])
    assert await anext(stream) == TextDelta("a ")
    await stream.aclose()  # type: ignore[attr-defined]
    assert isinstance(await client.complete(MESSAGES, []), Text)


async def test_cancellation_propagates(server: ChatServer, client: OpenAiCompatible) -> None:
    server.push(stall())
    task = asyncio.create_task(client.complete(MESSAGES, []))
    await server.wait_for_completions(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# ---- the server as a separate process ------------------------------------------------------
async def test_chat_server_runs_standalone(tmp_path: Path, sleeps: Sleeps) -> None:
    script = tmp_path / "replies.json"
    script.write_text(
        json.dumps([text("from the script"), tool_calls([call("f", {"a": 1}, id="c")])])
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.chat_server",
        "--port",
        "0",
        "--script",
        str(script),
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        url = (await proc.stdout.readline()).decode().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        async with OpenAiCompatible(url, "any", "m", sleep=sleeps) as remote:
            first = await remote.complete(MESSAGES, [])
            second = await remote.complete(MESSAGES, [])
            echoed = await remote.complete(MESSAGES, [])
            import httpx

            async with httpx.AsyncClient() as http:
                await http.post(url.removesuffix("/v1") + "/_script", json=[text("pushed")])
                pushed = await remote.complete(MESSAGES, [])
                recorded = (await http.get(url.removesuffix("/v1") + "/_requests")).json()
        assert isinstance(first, Text) and first.text == "from the script"
        assert isinstance(second, ToolCalls) and second.calls[0].args == {"a": 1}
        assert isinstance(echoed, Text) and echoed.text == "hello there"
        assert isinstance(pushed, Text) and pushed.text == "pushed"
        assert sum(1 for r in recorded if r["path"].endswith("/chat/completions")) == 4
    finally:
        proc.terminate()
        await proc.wait()
