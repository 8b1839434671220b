"""Showing frames, results and records on a terminal with rich."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from riverbeam.types import (
    Action,
    ActionRequired,
    AgentMessage,
    AgentMetadata,
    AgentResult,
    ModelConfig,
    StreamChunk,
    TokenUsage,
)
from services.cli._previews import preview_block

__all__ = [
    "FrameRenderer",
    "agents_table",
    "approve_command",
    "compact_json",
    "models_table",
    "pending_view",
    "render_interrupted",
    "render_result",
    "usage_line",
]

_PREVIEW = 160


def compact_json(value: Any, limit: int = _PREVIEW) -> str:
    """One-line JSON of a value, cut to `limit` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def preview(text: str, limit: int = 80) -> str:
    """Text on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def approve_command(interaction_id: str, session_id: str, *, verb: str = "approve") -> str:
    """The command that answers an interrupted interaction."""
    return f"riverbeam {verb} {interaction_id} --session {session_id}"


def usage_line(usage: TokenUsage | None, model: str | None, latency_ms: float | None) -> Text:
    """`tokens 12 in · 5 out · 17 total · model m · 1.2s`, dim."""
    parts: list[str] = []
    if usage is not None:
        parts.append(
            f"tokens {usage.prompt_tokens} in · {usage.completion_tokens} out · "
            f"{usage.total_tokens} total"
        )
    if model:
        parts.append(f"model {model}")
    if latency_ms is not None:
        parts.append(f"{latency_ms / 1000:.1f}s")
    return Text(" · ".join(parts), style="dim")


class FrameRenderer:
    """Prints a request's frames as they arrive.

    Text chunks are appended on one line as they stream; thinking is dim; a tool call shows
    as `→ tool name {args}` and its result as `← name result`. Frames of a child run (an agent
    called by the agent, a handoff target: parent_run_id is set) are indented under
    `↳ <agent>`, dim. The done frame's result is left to `render_result` so a non-streamed
    invoke looks the same.
    """

    def __init__(self, console: Console) -> None:
        self._console = console
        self._mid_line = False
        self._thinking_shown = False
        self.streamed_text = False
        self.shown_tools = False  # a tool frame of the run itself was shown
        self.frames = 0
        self.last_seq = 0
        self._speaker: str | None = None  # the child agent whose text line is open

    def frame(self, frame: StreamChunk) -> None:
        """Show one frame."""
        self.frames += 1
        if frame.seq is not None:
            self.last_seq = frame.seq
        data = frame.data
        if frame.parent_run_id:
            self._child(frame.agent_name or "agent", frame)
            return
        if self._speaker is not None:
            self.end_line()
        if frame.type == "chunk" and data is not None:
            self._chunk(data)
        elif frame.type == "thinking":
            self._thinking(data)
        elif frame.type == "tool" and data is not None:
            self._tool(data)
        elif frame.type in ("done", "error"):
            self.end_line()

    def end_line(self) -> None:
        """Finish a line of streamed text, if one is open."""
        if self._mid_line:
            self._console.print()
            self._mid_line = False
        self._speaker = None

    def _child(self, agent: str, frame: StreamChunk) -> None:
        data = frame.data
        if data is None or frame.type not in ("chunk", "tool"):
            return  # a child's placeholder and thinking frames say nothing new
        if frame.type == "tool":
            line = Text(f"  ↳ {agent} ", style="magenta")
            if data.type == "tool_result" or data.role == "tool":
                line.append(f"← {data.tool_name or '?'} ", style="dim")
                line.append(compact_json(data.tool_result), style="dim")
            else:
                line.append(f"→ tool {data.tool_name or '?'} ", style="dim")
                line.append(compact_json(data.tool_args or {}), style="dim")
            self._line(line)
            return
        text = data.text
        if not text or data.phase == "thinking":
            return
        if self._speaker != agent:
            self.end_line()
            self._console.print(Text(f"  ↳ {agent}: ", style="magenta"), end="")
            self._speaker = agent
        self._console.print(Text(text, style="dim"), end="", soft_wrap=True, highlight=False)
        self._mid_line = not text.endswith("\n")
        if not self._mid_line:
            self._speaker = None

    def _line(self, text: Text) -> None:
        self.end_line()
        self._console.print(text, soft_wrap=True)

    def _chunk(self, data: AgentMessage) -> None:
        text = data.text
        if not text:
            return
        thinking = data.phase == "thinking" or all(p.type == "reasoning" for p in data.content)
        if not thinking:
            self.streamed_text = True
            self._thinking_shown = False
        self._console.print(
            Text(text, style="dim" if thinking else ""), end="", soft_wrap=True, highlight=False
        )
        self._mid_line = not text.endswith("\n")

    def _thinking(self, data: AgentMessage | None) -> None:
        text = data.text if data is not None else ""
        if text:
            self._line(Text(text, style="dim italic"))
        elif not self._thinking_shown:
            self._line(Text("thinking…", style="dim italic"))
        self._thinking_shown = True

    def _tool(self, data: AgentMessage) -> None:
        name = data.tool_name or "?"
        if data.type == "tool_result" or data.role == "tool":
            line = Text("← ", style="green")
            line.append(name, style="bold")
            line.append(" ")
            line.append(compact_json(data.tool_result), style="dim")
        else:
            line = Text("→ tool ", style="cyan")
            line.append(name, style="bold")
            line.append(" ")
            line.append(compact_json(data.tool_args or {}))
        self._thinking_shown = False
        self.shown_tools = True
        self._line(line)


def render_result(
    console: Console, result: AgentResult, *, streamed: bool = False, tools_shown: bool = False
) -> None:
    """The final result: its tool calls (unless their frames were shown), its text (unless it
    was streamed), and token usage."""
    if not tools_shown:
        for call in result.tool_calls:
            line = Text("→ tool ", style="cyan")
            line.append(call.tool_name, style="bold")
            line.append(" ")
            line.append(compact_json(call.args))
            console.print(line, soft_wrap=True)
            if call.result is not None:
                back = Text("← ", style="green")
                back.append(call.tool_name, style="bold")
                back.append(" ")
                back.append(compact_json(call.result), style="dim")
                console.print(back, soft_wrap=True)
    if not streamed and result.text:
        console.print(Text(result.text), soft_wrap=True)
    if result.handoff_to:
        line = Text(f"⇢ handed off to {result.handoff_to}", style="magenta")
        if result.session_id and result.interaction_id:
            line.append(
                f"  (its turns: --session {result.session_id} "
                f"--interaction {result.interaction_id})",
                style="dim",
            )
        console.print(line, soft_wrap=True)
    console.print(usage_line(result.token_usage, result.model_used, result.latency_ms))


def _actions_required_table(actions: Sequence[ActionRequired]) -> Table:
    table = Table(title=None, show_edge=False, pad_edge=False)
    table.add_column("action", no_wrap=True)
    table.add_column("tool", style="bold")
    table.add_column("args", overflow="fold")
    for action in actions:
        table.add_row(action.action_id, action.tool, compact_json(action.args))
    return table


def render_interrupted(console: Console, result: AgentResult) -> None:
    """The approvals an interrupted run waits for (with what each would do), and the commands
    that answer them."""
    console.print(Text("⏸ waiting for approval", style="bold yellow"))
    if result.action_required:
        console.print(_actions_required_table(result.action_required))
        for action in result.action_required:
            if action.preview is not None:
                console.print(Text(f"  {action.action_id} {action.tool}", style="bold"))
                console.print(preview_block(action.preview, diff=False), soft_wrap=True)
    if result.interaction_id and result.session_id:
        console.print(Text("approve: ", style="yellow"), end="")
        console.print(
            Text(approve_command(result.interaction_id, result.session_id)), soft_wrap=True
        )
        console.print(Text("decline: ", style="yellow"), end="")
        console.print(
            Text(approve_command(result.interaction_id, result.session_id, verb="decline")),
            soft_wrap=True,
        )


def time_left(expires_at: datetime | None, now: datetime) -> str:
    """How long an action stays answerable: `never`, `expired`, or `1h 5m` / `4m 10s` / `9s`."""
    if expires_at is None:
        return "never"
    left = int((expires_at - now).total_seconds())
    if left <= 0:
        return "expired"
    hours, rest = divmod(left, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes}m left"
    if minutes:
        return f"{minutes}m {seconds}s left"
    return f"{seconds}s left"


def pending_view(
    actions: Sequence[Action], now: datetime | None = None, *, diff: bool = False
) -> RenderableType:
    """The approval inbox, one block per interaction with the command that answers it, the
    time each action has left before it expires, and what each would do (its preview: the
    summary and commits, and with `diff` the whole diff)."""
    now = now or datetime.now(UTC)
    groups: dict[tuple[str, str], list[Action]] = {}
    for action in actions:
        groups.setdefault((action.session_id, action.interaction_id), []).append(action)
    blocks: list[RenderableType] = [Text(f"{len(actions)} pending action(s)", style="bold")]
    for (session_id, interaction_id), members in groups.items():
        head = Text("interaction ", style="bold")
        head.append(interaction_id)
        agent = next((a.agent_name for a in members if a.agent_name), None)
        if agent:
            head.append(f" ({agent})", style="cyan")
        head.append(f" · session {session_id}", style="dim")
        table = Table(show_edge=False, pad_edge=True, box=None, padding=(0, 2, 0, 2))
        table.add_column("action", no_wrap=True)
        table.add_column("tool", style="bold", no_wrap=True)
        table.add_column("args", overflow="fold")
        table.add_column("since", no_wrap=True, style="dim")
        table.add_column("expires", no_wrap=True)
        for a in members:
            table.add_row(
                a.action_id,
                _tool_label(a),
                compact_json(a.args, 80),
                f"{a.created_at:%Y-%m-%d %H:%M}",
                time_left(a.expires_at, now),
            )
        command = Text("  approve: ", style="yellow")
        command.append(approve_command(interaction_id, session_id))
        blocks += [Text(""), head, table]
        for a in members:
            if a.preview is not None:
                blocks.append(Text(f"  {a.action_id} {a.tool}", style="bold"))
                blocks.append(preview_block(a.preview, diff=diff, indent="  "))
        blocks.append(command)
    return Group(*blocks)


def _tool_label(action: Action) -> str:
    """The action's tool, and the called agent whose call it is (`git_push (in helper)`)."""
    agent = (action.child or {}).get("agent")
    return f"{action.tool} (in {agent})" if isinstance(agent, str) and agent else action.tool


def agents_table(agents: Sequence[AgentMetadata]) -> Table:
    """The agents the caller may run."""
    table = Table(title="agents", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("description")
    table.add_column("input")
    table.add_column("output")
    table.add_column("tags")
    table.add_column("version")
    for a in agents:
        table.add_row(
            a.name,
            a.description or "",
            ", ".join(a.supported_modalities),
            ", ".join(a.output_modalities),
            ", ".join(a.tags),
            a.version or "",
        )
    return table


def models_table(models: Sequence[ModelConfig], served_by: dict[str, str] | None = None) -> Table:
    """The models the router may pick; `served_by` names what answers for a placeholder."""
    served_by = served_by or {}
    table = Table(title="models", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("provider")
    table.add_column("modalities")
    table.add_column("capabilities")
    table.add_column("$/1k tokens", justify="right")
    table.add_column("max tokens", justify="right")
    if served_by:
        table.add_column("served by")
    for m in models:
        by = served_by.get(m.name, "")
        extra = [f"{by} (no model key)" if by == "echo" else by] if served_by else []
        table.add_row(
            m.name,
            m.provider,
            ", ".join(m.modalities),
            ", ".join(m.capabilities),
            f"{m.cost_per_1k_tokens:g}",
            str(m.max_tokens),
            *extra,
        )
    return table
