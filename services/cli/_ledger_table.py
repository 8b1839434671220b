"""The tool-execution ledger of one run as a table (`riverbeam session`)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from riverbeam.types import ToolExecution
from services.cli._render import compact_json, preview

__all__ = ["ledger_table"]

_STYLE = {
    "succeeded": "green",
    "started": "cyan",
    "requested": "cyan",
    "held": "yellow",
    "unknown": "bold red",
    "failed": "red",
    "denied": "red",
    "cancelled": "red",
}


def _declared(e: ToolExecution) -> str:
    if e.read_only:
        return "read-only"
    return "idempotent" if e.idempotent else "side effect"


def _took(e: ToolExecution) -> str:
    if e.started_at is None or e.finished_at is None:
        return ""
    ms = (e.finished_at - e.started_at).total_seconds() * 1000
    return f"{ms:.0f} ms" if ms < 10_000 else f"{ms / 1000:.1f} s"


def _outcome(e: ToolExecution) -> Text:
    if e.error_code or e.error_message:
        return Text(
            preview(f"{e.error_code or ''} {e.error_message or ''}".strip(), 60), style="red"
        )
    if e.result_preview is not None:
        return Text(preview(e.result_preview, 60))
    if e.action_id:
        return Text(f"action {e.action_id}", style="dim")
    return Text("")


def ledger_table(entries: Sequence[ToolExecution]) -> Table:
    """One row per call: seq, tool, status, declaration, args, result or error, time taken."""
    table = Table(title=None, show_edge=False, pad_edge=False, title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("tool", style="bold", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("kind", style="dim", no_wrap=True)
    table.add_column("args", overflow="fold")
    table.add_column("result / error", overflow="fold")
    table.add_column("took", justify="right", no_wrap=True)
    for e in entries:
        table.add_row(
            str(e.seq),
            e.tool,
            Text(e.status, style=_STYLE.get(e.status, "")),
            _declared(e),
            compact_json(e.args, 50),
            _outcome(e),
            _took(e),
        )
    return table
