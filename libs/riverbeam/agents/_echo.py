"""Echo: an agent that replies "Echo: <input>", and a completion client that echoes."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from riverbeam import __version__
from riverbeam.agents._completion import Completion, CompletionEvent, Text, TextDelta, collect
from riverbeam.agents._frames import FrameFactory
from riverbeam.agents._io import AgentContext, AgentInput
from riverbeam.agents._plain_result import text_result
from riverbeam.agents._tool import ToolSpec
from riverbeam.types import AgentMetadata, StreamChunk, TokenUsage
from riverbeam.types._copying import copy_maker

__all__ = ["EchoAgent", "EchoClient"]


class EchoAgent:
    """Replies "Echo: <input text>". Needs no model; useful to test the pipeline.

    Args:
        name: The name to register it under.
        description: Its description in the metadata.
    """

    def __init__(
        self,
        name: str = "echo",
        *,
        description: str = "Replies with the input, prefixed by 'Echo: '",
    ) -> None:
        self._name = name
        self._description = description
        # Validated once; every call gets its own copy (10.9k instructions, against 28.5k
        # for building and validating it again: callgrind).
        self._metadata = copy_maker(
            AgentMetadata(
                name=name,
                description=description,
                supported_modalities=["text"],
                output_modalities=["text"],
                tags=["echo"],
                version=__version__,
                default_model=EchoClient.default_model,
            )
        )

    def metadata(self) -> AgentMetadata:
        """Text in, text out. A new object on every call, as an agent's metadata is."""
        return self._metadata()

    async def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[StreamChunk]:
        """One chunk with the reply, then the done frame."""
        started = time.monotonic()
        frames = FrameFactory.for_input(self._name, input)
        reply = f"Echo: {input.text}"
        # Plain values: the result is built without validation passes, as the factory builds
        # its frames (~181k -> ~67k instructions per invoke with both, callgrind).
        yield frames.chunk(reply)
        yield frames.done(
            text_result(
                reply,
                agent_name=self._name,
                session_id=input.session_id or None,
                request_id=input.request_id,
                interaction_id=input.interaction_id,
                run_id=input.run_id or None,
                latency_ms=(time.monotonic() - started) * 1000,
            ),
        )

    async def health_check(self) -> bool:
        """Always healthy."""
        return True


def _last_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(
                str(part.get("text", ""))
                for part in content
                if isinstance(part, Mapping) and part.get("type") == "text"
            )
        return ""
    return ""


def _words(messages: Sequence[Mapping[str, Any]]) -> int:
    return sum(len(str(m.get("content") or "").split()) for m in messages)


class EchoClient:
    """A CompletionClient that answers with the last user message. No network.

    It reports the model it was asked for (or "echo") and counts words as tokens.
    """

    default_model = "echo"
    """The model it reports when asked for none."""
    provider_name = "riverbeam.echo"
    """gen_ai.provider.name of its spans."""

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
    ) -> Completion:
        """The last user message, as Text."""
        return await collect(self.stream(messages, tools, model=model))

    async def stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
    ) -> AsyncIterator[CompletionEvent]:
        """The last user message, as one delta and then Text."""
        text = _last_user_text(messages)
        if text:
            yield TextDelta(text)
        prompt = _words(messages)
        completion = len(text.split())
        yield Text(
            text=text,
            usage=TokenUsage(
                prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
            ),
            model=model or self.default_model,
        )
