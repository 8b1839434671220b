"""`riverbeam usage`: token usage and cost per run, session, user or organisation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from rich.table import Table

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import UsageRow

__all__ = ["parse_when", "usage_json", "usage_table"]

_RELATIVE = re.compile(r"^(\d+)([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_when(value: str | None, *, option: str, now: datetime | None = None) -> datetime | None:
    """`2026-11-30`, `2026-11-30T12:00:00+01:00` (no zone: UTC), or `24h` / `7d` / `30m` ago."""
    if value is None:
        return None
    match = _RELATIVE.match(value.strip())
    if match:
        amount, unit = int(match.group(1)), _UNITS[match.group(2)]
        return (now or datetime.now(UTC)) - timedelta(**{unit: amount})
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise RiverbeamError(
            ErrorCode.USAGE_RANGE_INVALID,
            f"{option} {value!r} is neither an ISO date/time nor a duration like 24h or 7d",
            field=option,
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _cost(value: float) -> str:
    return f"{value:.4f}" if value else "0"


def usage_table(rows: Sequence[UsageRow], total: UsageRow, *, group_by: str) -> Table:
    """One row per group and model, and the total."""
    table = Table(title=f"usage by {group_by}", title_justify="left", show_footer=True)
    table.add_column(group_by, style="bold", no_wrap=True, footer="total")
    table.add_column("model", footer="")
    table.add_column("runs", justify="right", footer=str(total.runs))
    table.add_column("input tokens", justify="right", footer=str(total.prompt_tokens))
    table.add_column("output tokens", justify="right", footer=str(total.completion_tokens))
    table.add_column("total tokens", justify="right", footer=str(total.total_tokens))
    table.add_column("cost", justify="right", footer=_cost(total.cost))
    for row in rows:
        table.add_row(
            row.key or "(none)",
            row.model or "(unknown)",
            str(row.runs),
            str(row.prompt_tokens),
            str(row.completion_tokens),
            str(row.total_tokens),
            _cost(row.cost),
        )
    return table


def _row_json(row: UsageRow) -> dict[str, object]:
    return {
        "key": row.key,
        "model": row.model,
        "runs": row.runs,
        "prompt_tokens": row.prompt_tokens,
        "completion_tokens": row.completion_tokens,
        "total_tokens": row.total_tokens,
        "cost": row.cost,
    }


def usage_json(rows: Sequence[UsageRow], total: UsageRow, *, group_by: str) -> dict[str, object]:
    return {
        "group_by": group_by,
        "rows": [_row_json(r) for r in rows],
        "total": {k: v for k, v in _row_json(total).items() if k not in ("key", "model")},
    }
