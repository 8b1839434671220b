"""`riverbeam session <id>`: the recorded hierarchy of a session, fetched and drawn as a tree.

session → interactions → runs (status, tokens, model) → messages (seq, role, text), actions
(status, outcome) and the run's tool-execution ledger (a table, one row per tool call). The public API has no "list interactions/runs" call, so the ids are found in
the session's messages, its pending actions, and the actions each run's result asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from rich.text import Text
from rich.tree import Tree

from riverbeam.client import RiverbeamClient
from riverbeam.types import Action, Interaction, JsonObject, Message, Run, Session, ToolExecution
from services.cli._ledger_table import ledger_table
from services.cli._render import compact_json, preview

__all__ = ["InteractionView", "RunView", "SessionView", "load_session", "session_tree"]

_T = TypeVar("_T")
_STATUS_STYLE = {
    "completed": "green",
    "resolved": "green",
    "running": "cyan",
    "in_progress": "cyan",
    "interrupted": "yellow",
    "pending": "yellow",
    "failed": "red",
    "cancelled": "red",
}


@dataclass(slots=True)
class RunView:
    run: Run
    messages: list[Message] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    tool_executions: list[ToolExecution] = field(default_factory=list)


@dataclass(slots=True)
class InteractionView:
    interaction: Interaction
    runs: list[RunView] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)  # messages of no known run


@dataclass(slots=True)
class SessionView:
    session: Session
    interactions: list[InteractionView] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)  # messages of no interaction

    def to_json_dict(self) -> JsonObject:
        """The hierarchy as JSON (`riverbeam session --json`)."""
        return {
            "session": self.session.to_json_dict(),
            "messages": [m.to_json_dict() for m in self.messages],
            "interactions": [
                {
                    "interaction": i.interaction.to_json_dict(),
                    "messages": [m.to_json_dict() for m in i.messages],
                    "runs": [
                        {
                            "run": r.run.to_json_dict(),
                            "messages": [m.to_json_dict() for m in r.messages],
                            "actions": [a.to_json_dict() for a in r.actions],
                            "tool_executions": [e.to_json_dict() for e in r.tool_executions],
                        }
                        for r in i.runs
                    ],
                }
                for i in self.interactions
            ],
        }


async def _fetch_all(ids: list[str], get: Callable[[str], Awaitable[_T]]) -> dict[str, _T]:
    tasks: dict[str, asyncio.Task[_T]] = {}
    async with asyncio.TaskGroup() as tg:
        for i in ids:
            tasks[i] = tg.create_task(_awaited(get(i)))
    return {i: t.result() for i, t in tasks.items()}


async def _awaited(value: Awaitable[_T]) -> _T:
    return await value


def _unique(values: list[str | None]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))


async def load_session(client: RiverbeamClient, session_id: str) -> SessionView:
    """Fetch a session with its interactions, runs, messages and actions."""
    session = await client.get_session(session_id)
    messages = await client.list_messages(session.session_id)
    pending = await client.list_pending_actions(session_id=session.session_id)

    run_ids = _unique([m.run_id for m in messages] + [a.run_id for a in pending])
    runs = await _fetch_all(run_ids, client.get_run)
    interaction_ids = _unique(
        [m.interaction_id for m in messages]
        + [a.interaction_id for a in pending]
        + [r.interaction_id for r in runs.values()]
    )
    interactions = await _fetch_all(interaction_ids, client.get_interaction)

    actions: dict[str, Action] = {a.action_id: a for a in pending}
    asked = _unique(
        [a.action_id for r in runs.values() if r.result for a in r.result.action_required]
    )
    actions.update(await _fetch_all([a for a in asked if a not in actions], client.get_action))
    ledgers = await _fetch_all(
        list(interactions), lambda i: client.list_tool_executions(interaction_id=i)
    )
    view = _assemble(session, messages, interactions, runs, list(actions.values()))
    by_run = {rv.run.run_id: rv for iv in view.interactions for rv in iv.runs}
    for entries in ledgers.values():
        for entry in entries:
            if entry.run_id in by_run:
                by_run[entry.run_id].tool_executions.append(entry)
    return view


def _assemble(
    session: Session,
    messages: list[Message],
    interactions: dict[str, Interaction],
    runs: dict[str, Run],
    actions: list[Action],
) -> SessionView:
    view = SessionView(session)
    by_interaction = {
        iid: InteractionView(i)
        for iid, i in sorted(interactions.items(), key=lambda kv: kv[1].created_at)
    }
    by_run: dict[str, RunView] = {}
    for rid, run in sorted(runs.items(), key=lambda kv: kv[1].started_at):
        rv = by_run[rid] = RunView(run)
        parent = by_interaction.get(run.interaction_id)
        if parent is not None:
            parent.runs.append(rv)
    for message in sorted(messages, key=lambda m: m.seq):
        if message.run_id and message.run_id in by_run:
            by_run[message.run_id].messages.append(message)
        elif message.interaction_id and message.interaction_id in by_interaction:
            by_interaction[message.interaction_id].messages.append(message)
        else:
            view.messages.append(message)
    for action in sorted(actions, key=lambda a: a.created_at):
        if action.run_id in by_run:
            by_run[action.run_id].actions.append(action)
    view.interactions = list(by_interaction.values())
    return view


def _status(value: str) -> Text:
    return Text(value, style=_STATUS_STYLE.get(value, ""))


def _message_label(m: Message) -> Text:
    label = Text(f"#{m.seq} ", style="bold")
    label.append(f"{m.role:<6}", style="magenta" if m.role == "ai" else "blue")
    label.append(" ")
    if m.text:
        label.append(preview(m.text))
    elif m.tool_name:
        label.append(f"{m.type} {m.tool_name} ", style="dim")
        label.append(compact_json(m.tool_result if m.tool_result is not None else m.tool_args, 60))
    else:
        label.append(m.type, style="dim")
    return label


def _action_label(a: Action) -> Text:
    label = Text("action ", style="bold")
    label.append(f"{a.action_id} ")
    label.append(a.tool, style="bold")
    label.append(f" {compact_json(a.args, 60)} ")
    label.append_text(_status(a.status))
    if a.outcome:
        label.append(f" · {a.outcome}", style="dim")
    if a.error:
        label.append(f" · {preview(a.error, 60)}", style="red")
    if a.preview is not None:
        label.append(f" · {preview(a.preview.summary, 80)}", style="magenta")
    return label


def _run_label(r: Run) -> Text:
    label = Text("run ", style="bold")
    label.append(f"{r.run_id} ")
    label.append_text(_status(r.status))
    details: list[str] = []
    if r.token_usage is not None:
        details.append(f"{r.token_usage.total_tokens} tokens")
    if r.model_used:
        details.append(r.model_used)
    if r.error_code:
        details.append(f"{r.error_code}: {r.error_message or ''}".strip())
    if r.takeovers:
        # Continued by another replica after its runner stopped (docs/durability.md).
        plural = "" if r.takeovers == 1 else "s"
        details.append(f"held by {' → '.join(r.holders)} ({r.takeovers} takeover{plural})")
    if details:
        label.append(" · " + " · ".join(details), style="dim")
    return label


def session_tree(view: SessionView) -> Tree:
    """The hierarchy as a rich Tree."""
    s = view.session
    head = Text("session ", style="bold")
    head.append(s.session_id)
    facts = [f"{s.last_seq} messages", f"last active {s.last_active_at:%Y-%m-%d %H:%M:%S}"]
    if s.user_id:
        facts.insert(0, f"user {s.user_id}")
    head.append(" · " + " · ".join(facts), style="dim")
    tree = Tree(head)
    for m in view.messages:
        tree.add(_message_label(m))
    for iv in view.interactions:
        i = iv.interaction
        label = Text("interaction ", style="bold")
        label.append(f"{i.interaction_id} ")
        label.append(i.agent_name, style="bold cyan")
        label.append(" ")
        label.append_text(_status(i.status))
        branch = tree.add(label)
        for m in iv.messages:
            branch.add(_message_label(m))
        for rv in iv.runs:
            run_branch = branch.add(_run_label(rv.run))
            for m in rv.messages:
                run_branch.add(_message_label(m))
            for a in rv.actions:
                run_branch.add(_action_label(a))
            if rv.tool_executions:
                run_branch.add(ledger_table(rv.tool_executions))
    return tree
