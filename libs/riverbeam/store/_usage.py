"""Usage reports: the token usage of runs, summed per group (run, session, user, org) and model.

Every store answers `summarize_usage` the same way: runs started in [start, end), optionally of
one user, organisation or session, grouped by the key and the model that served them. Cost is
not the store's business (prices live in the router's model list): rows come back with cost 0.
Child runs (an agent called by another agent) are left out: their tokens are already in the
top-level run that called them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, get_args

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import Run, Session
from riverbeam.v1 import types_pb2

__all__ = [
    "GROUPS",
    "UsageGroup",
    "UsageRow",
    "check_usage_query",
    "summarize",
    "usage_row_from_proto",
    "usage_row_to_proto",
    "usage_sql",
]

UsageGroup = Literal["run", "session", "user", "org"]
GROUPS: tuple[str, ...] = get_args(UsageGroup)

# The grouping key of each group, as SQL over runs r JOIN sessions s: from this list only.
_KEY_SQL: Mapping[str, str] = {
    "run": "r.run_id",
    "session": "r.session_id",
    "user": "COALESCE(s.user_id, '')",
    "org": "COALESCE(s.org_id, '')",
}


@dataclass(frozen=True, slots=True)
class UsageRow:
    """The runs of one group and model, and their token usage (and cost, once priced)."""

    key: str
    model: str
    runs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float = 0.0

    def plus(self, other: UsageRow) -> UsageRow:
        return replace(
            self,
            runs=self.runs + other.runs,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cost=self.cost + other.cost,
        )


def check_usage_query(group_by: str, start: datetime | None, end: datetime | None) -> UsageGroup:
    """The group, or BEM-425 for an unknown group or a range that ends before it starts."""
    if group_by not in GROUPS:
        raise RiverbeamError(
            ErrorCode.USAGE_RANGE_INVALID,
            f"group_by must be one of {', '.join(GROUPS)}, not {group_by!r}",
            field="group_by",
        )
    if start is not None and end is not None and end <= start:
        raise RiverbeamError(
            ErrorCode.USAGE_RANGE_INVALID, "end_time must be after start_time", field="end_time"
        )
    group: UsageGroup = group_by  # type: ignore[assignment]
    return group


def _key(group: UsageGroup, run: Run, session: Session | None) -> str:
    if group == "run":
        return run.run_id
    if group == "session":
        return run.session_id
    if session is None:
        return ""
    return (session.user_id if group == "user" else session.org_id) or ""


def summarize(
    runs: Iterable[tuple[Run, Session | None]],
    *,
    group: UsageGroup,
    start: datetime | None,
    end: datetime | None,
    user_id: str | None,
    org_id: str | None,
    session_id: str | None,
) -> list[UsageRow]:
    """What the SQL of `usage_sql` computes, over runs in memory (with their sessions)."""
    rows: dict[tuple[str, str], UsageRow] = {}
    for run, session in runs:
        if run.parent_run_id is not None:  # counted in its top-level run
            continue
        if start is not None and run.started_at < start:
            continue
        if end is not None and run.started_at >= end:
            continue
        if session_id is not None and run.session_id != session_id:
            continue
        if user_id is not None and (session is None or session.user_id != user_id):
            continue
        if org_id is not None and (session is None or session.org_id != org_id):
            continue
        usage = run.token_usage
        one = UsageRow(
            key=_key(group, run, session),
            model=run.model_used or "",
            runs=1,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            total_tokens=usage.total_tokens if usage else 0,
        )
        at = (one.key, one.model)
        rows[at] = rows[at].plus(one) if at in rows else one
    return [rows[k] for k in sorted(rows)]


def usage_sql(schema: str, group: UsageGroup) -> str:
    """The one query: $1 start, $2 end, $3 user, $4 org, $5 session (each may be NULL)."""
    key = _KEY_SQL[group]

    def tokens(name: str) -> str:
        return f"COALESCE(SUM((r.token_usage->>'{name}')::bigint), 0)"

    return (
        f"SELECT {key} AS key, COALESCE(r.model_used, '') AS model, count(*) AS runs,"
        f" {tokens('prompt_tokens')} AS prompt_tokens,"
        f" {tokens('completion_tokens')} AS completion_tokens,"
        f" {tokens('total_tokens')} AS total_tokens"
        f" FROM {schema}.runs r LEFT JOIN {schema}.sessions s ON s.session_id = r.session_id"
        " WHERE r.parent_run_id IS NULL"
        " AND ($1::timestamptz IS NULL OR r.started_at >= $1)"
        " AND ($2::timestamptz IS NULL OR r.started_at < $2)"
        " AND ($3::text IS NULL OR s.user_id = $3)"
        " AND ($4::text IS NULL OR s.org_id = $4)"
        " AND ($5::text IS NULL OR r.session_id = $5)"
        " GROUP BY 1, 2 ORDER BY 1, 2"
    )


def row_of(record: Any) -> UsageRow:
    """A row of `usage_sql` (an asyncpg Record)."""
    return UsageRow(
        key=str(record["key"]),
        model=str(record["model"]),
        runs=int(record["runs"]),
        prompt_tokens=int(record["prompt_tokens"]),
        completion_tokens=int(record["completion_tokens"]),
        total_tokens=int(record["total_tokens"]),
    )


def usage_row_to_proto(row: UsageRow) -> types_pb2.UsageRow:
    return types_pb2.UsageRow(
        key=row.key,
        model=row.model,
        runs=row.runs,
        prompt_tokens=row.prompt_tokens,
        completion_tokens=row.completion_tokens,
        total_tokens=row.total_tokens,
        cost=row.cost,
    )


def usage_row_from_proto(row: types_pb2.UsageRow) -> UsageRow:
    return UsageRow(
        key=row.key,
        model=row.model,
        runs=row.runs,
        prompt_tokens=row.prompt_tokens,
        completion_tokens=row.completion_tokens,
        total_tokens=row.total_tokens,
        cost=row.cost,
    )
