"""What invoke, approve/decline and follow do: call the router, then show the frames."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from riverbeam.client import RiverbeamClient, follow_nats
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.routing import is_placeholder
from riverbeam.stream import DEFAULT_STREAM_NAME
from riverbeam.types import AgentResult, JsonObject, ModelConfig, StreamAck, StreamChunk
from services.cli._errors import ExitCode, print_frame_error
from services.cli._render import (
    FrameRenderer,
    compact_json,
    render_interrupted,
    render_result,
)

__all__ = [
    "Consoles",
    "Progress",
    "finish",
    "follow_request",
    "invoke",
    "parse_metadata",
    "placeholder_served_by",
    "respond",
    "show_frames",
]


@dataclass(frozen=True, slots=True)
class Consoles:
    """Where results go (out) and where status and errors go (err)."""

    out: Console
    err: Console

    @classmethod
    def standard(cls) -> Consoles:
        return cls(Console(highlight=False), Console(stderr=True, highlight=False))


@dataclass(slots=True)
class Progress:
    """How far a follow got: what to tell the user when they stop it with Ctrl-C."""

    request_id: str | None = None
    last_seq: int = 0

    def resume_hint(self) -> str | None:
        if self.request_id is None:
            return None
        return f"riverbeam follow {self.request_id} --after {self.last_seq}"


def _emit_json(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _session_line(console: Console, result: AgentResult) -> None:
    if not result.session_id:
        return
    console.print(
        Text.assemble(
            ("session ", "dim"),
            (result.session_id, "bold"),
            (f'  (continue: riverbeam invoke {result.agent_name} "…" --session ', "dim"),
            (result.session_id, "dim"),
            (")", "dim"),
        ),
        soft_wrap=True,
    )


def finish(
    consoles: Consoles,
    result: AgentResult,
    *,
    json_mode: bool,
    streamed: bool,
    tools_shown: bool = False,
) -> ExitCode:
    """Show a final result; the exit status says whether it completed or awaits approval."""
    info = consoles.err if json_mode else consoles.out  # with --json, stdout holds only JSON
    if not json_mode:
        render_result(consoles.out, result, streamed=streamed, tools_shown=tools_shown)
    code = ExitCode.OK
    if result.interrupted:
        render_interrupted(info, result)
        code = ExitCode.INTERRUPTED
    _session_line(info, result)
    return code


async def show_frames(
    frames: AsyncGenerator[StreamChunk, None],
    consoles: Consoles,
    *,
    json_mode: bool,
    progress: Progress,
) -> ExitCode:
    """Show frames until the terminal one; the exit status follows how the run ended."""
    renderer = FrameRenderer(consoles.out)
    last: StreamChunk | None = None
    try:
        async with contextlib.aclosing(frames):
            async for frame in frames:
                last = frame
                if frame.seq is not None:
                    progress.last_seq = frame.seq
                if json_mode:
                    _emit_json(frame.to_json())
                else:
                    renderer.frame(frame)
    finally:
        renderer.end_line()  # an error message must not continue a line of streamed text
    if last is None:  # pragma: no cover - follow raises before this
        return ExitCode.ERROR
    if last.type == "error":
        print_frame_error(consoles.err, last.error_code, last.error)
        return ExitCode.RUN_FAILED
    assert last.result is not None
    return finish(
        consoles,
        last.result,
        json_mode=json_mode,
        streamed=renderer.streamed_text,
        tools_shown=renderer.shown_tools,
    )


async def invoke(
    client: RiverbeamClient,
    consoles: Consoles,
    progress: Progress,
    *,
    agent: str,
    text: str,
    session_id: str | None,
    stream: bool,
    json_mode: bool,
    metadata: JsonObject | None,
    model: str | None,
    layer: JsonObject | None = None,
) -> ExitCode:
    """`riverbeam invoke`: one turn, streamed (default) or waited for."""
    extra: dict[str, Any] = dict(layer or {})
    if not stream:
        result = await client.invoke(
            agent,
            text,
            session_id=session_id,
            stream=False,
            metadata=metadata,
            model_override=model,
            **extra,
        )
        if json_mode:
            _emit_json(result.to_json())
        return finish(consoles, result, json_mode=json_mode, streamed=False)
    # The ack and the frames in one call (InvokeStream): no second call to follow.
    events = client.invoke_stream(
        agent, text, session_id=session_id, metadata=metadata, model_override=model, **extra
    )
    return await _show_acked(events, consoles, progress, json_mode=json_mode)


async def _show_acked(
    events: AsyncGenerator[StreamAck | StreamChunk, None],
    consoles: Consoles,
    progress: Progress,
    *,
    json_mode: bool,
) -> ExitCode:
    """Show an InvokeStream's or a ResumeStream's events: the ack's ids, then the frames."""
    async with contextlib.aclosing(events):
        ack = await anext(events)
        assert isinstance(ack, StreamAck)
        progress.request_id = ack.request_id
        consoles.err.print(
            Text(f"session {ack.session_id} · request {ack.request_id}", style="dim"),
            soft_wrap=True,
        )
        return await show_frames(
            _frames_of(events), consoles, json_mode=json_mode, progress=progress
        )


async def _frames_of(
    events: AsyncIterator[StreamAck | StreamChunk],
) -> AsyncGenerator[StreamChunk, None]:
    """The frames after an InvokeStream's or a ResumeStream's ack."""
    async for event in events:
        if isinstance(event, StreamChunk):
            yield event


async def respond(
    client: RiverbeamClient,
    consoles: Consoles,
    progress: Progress,
    *,
    approve: bool,
    session_id: str,
    interaction_id: str,
    action_id: str | None,
    agent: str | None,
    reason: str | None,
    json_mode: bool,
) -> ExitCode:
    """`riverbeam approve|decline`: answer the pending actions, then show the resumed run."""
    actions = await client.pending_for(session_id, interaction_id, action_id=action_id)
    verb = "approve" if approve else "decline"
    for action in actions:
        consoles.err.print(
            Text.assemble(
                ("✓ " if approve else "✗ ", "green" if approve else "red"),
                (f"{verb} ", "bold"),
                (action.tool, "bold"),
                " ",
                compact_json(action.args),
                (f"  ({action.action_id})", "dim"),
            ),
            soft_wrap=True,
        )
    # The answers and the resumed run's frames in one call (ResumeStream).
    events = client.answer_stream(
        session_id,
        interaction_id,
        approve=approve,
        actions=actions,
        agent_name=agent,
        reason=reason,
    )
    return await _show_acked(events, consoles, progress, json_mode=json_mode)


async def follow_request(
    client: RiverbeamClient,
    consoles: Consoles,
    progress: Progress,
    *,
    request_id: str,
    after_seq: int,
    json_mode: bool,
    nats_url: str | None,
    stream_name: str | None = None,
) -> ExitCode:
    """`riverbeam follow`: a request's frames via the router, or straight from NATS."""
    progress.request_id = request_id
    progress.last_seq = after_seq
    frames: AsyncGenerator[StreamChunk, None]
    if nats_url:
        frames = follow_nats(
            nats_url,
            request_id,
            after_seq=after_seq,
            stream_name=stream_name or DEFAULT_STREAM_NAME,
        )
    else:
        frames = client.follow(request_id, after_seq=after_seq)
    return await show_frames(frames, consoles, json_mode=json_mode, progress=progress)


def agent_layer_options(
    *,
    schema: str | None,
    time_limit_s: float | None,
    token_budget: int | None,
    include_tools: list[str],
    exclude_tools: list[str],
    prepend: str | None,
    append: str | None,
    for_session: bool,
) -> JsonObject:
    """The invoke keyword arguments of the agent-layer options (only those given)."""
    out: JsonObject = {}
    if schema is not None:
        text = schema
        if schema.startswith("@"):
            try:
                text = Path(schema[1:]).read_text(encoding="utf-8")
            except OSError as exc:
                raise RiverbeamError(
                    ErrorCode.INVALID_ARGUMENT, f"--schema: {exc}", field="schema"
                ) from None
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise RiverbeamError(
                ErrorCode.INVALID_DOCUMENT, f"--schema is not JSON: {exc}", field="schema"
            ) from None
        if not isinstance(value, dict):
            raise RiverbeamError(
                ErrorCode.INVALID_DOCUMENT, "--schema must be a JSON object", field="schema"
            )
        out["response_schema"] = value
    if time_limit_s is not None:
        out["time_limit_s"] = time_limit_s
    if token_budget is not None:
        out["token_budget"] = token_budget
    config: JsonObject = {}
    if include_tools:
        config["include_tools"] = list(include_tools)
    if exclude_tools:
        config["exclude_tools"] = list(exclude_tools)
    if prepend:
        config["prepend_instructions"] = prepend
    if append:
        config["append_instructions"] = append
    if config:
        out["session_config" if for_session else "turn_config"] = config
    return out


async def placeholder_served_by(
    client: RiverbeamClient, models: Sequence[ModelConfig]
) -> dict[str, str]:
    """`{"riverbeam-default": "echo"}`: what the runner's agents call for the placeholder.

    The built-in placeholder names no model: the agents' client picks one (BEAM_MODEL), or
    echoes with no key. Empty when the list holds only real models.
    """
    names = [m.name for m in models if is_placeholder(m)]
    if not names:
        return {}
    agents = await client.list_agents()
    served = sorted(
        {a.default_model for a in agents if a.default_model and a.default_model != "echo"}
    )
    if not served:
        served = ["echo"] if any(a.default_model == "echo" for a in agents) else []
    return {name: ", ".join(served) for name in names if served}


def parse_metadata(raw: str | None) -> JsonObject | None:
    """`--metadata '{"k": "v"}'` as an object (BEM-016 when it is not a JSON object)."""
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise RiverbeamError(
            ErrorCode.INVALID_DOCUMENT, f"--metadata is not JSON: {exc}", field="metadata"
        ) from None
    if not isinstance(value, dict):
        raise RiverbeamError(
            ErrorCode.INVALID_DOCUMENT, "--metadata must be a JSON object", field="metadata"
        )
    return value
