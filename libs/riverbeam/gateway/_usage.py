"""Usage reports for the router: who may see whose usage, and what it cost.

The store sums tokens per group and model; the router prices each row from its model list
(riverbeam.routing.token_cost: `cost_per_1k_tokens`, or input and output prices; a model not in
the list costs 0) and scopes the report
to the caller: an admin sees anyone's, an approver its organisation's, anyone else its own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from riverbeam.auth import Principal, Role
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.routing import ModelList, token_cost
from riverbeam.store import UsageRow

__all__ = ["UsageReport", "price", "scope_usage", "usage_report"]


class _UsageStore(Protocol):
    async def summarize_usage(
        self,
        *,
        group_by: str,
        start: datetime | None = None,
        end: datetime | None = None,
        user_id: str | None = None,
        org_id: str | None = None,
        session_id: str | None = None,
    ) -> list[UsageRow]: ...


UsageReport = tuple[list[UsageRow], UsageRow]


def scope_usage(
    principal: Principal, user_id: str | None, org_id: str | None
) -> tuple[str | None, str | None]:
    """The (user, org) filters the caller gets; BEM-051 when it asks for someone else's."""
    if Role.ADMIN in principal.roles:
        return user_id, org_id
    if org_id is not None and org_id != principal.org_id:
        raise RiverbeamError(
            ErrorCode.PERMISSION_DENIED, "usage of another organisation", org_id=org_id
        )
    if Role.APPROVER in principal.roles:
        return user_id, principal.org_id
    if user_id is not None and user_id != principal.subject:
        raise RiverbeamError(ErrorCode.PERMISSION_DENIED, "usage of another user", user_id=user_id)
    return principal.subject, principal.org_id


def price(row: UsageRow, models: ModelList) -> UsageRow:
    """The row with its cost from the model list."""
    model = models.get(row.model) if row.model else None
    if model is None:
        return row
    cost = token_cost(
        model, prompt_tokens=row.prompt_tokens, completion_tokens=row.completion_tokens
    )
    return UsageRow(
        key=row.key,
        model=row.model,
        runs=row.runs,
        prompt_tokens=row.prompt_tokens,
        completion_tokens=row.completion_tokens,
        total_tokens=row.total_tokens,
        cost=cost,
    )


async def usage_report(
    store: _UsageStore,
    models: ModelList,
    principal: Principal,
    *,
    group_by: str,
    start: datetime | None,
    end: datetime | None,
    user_id: str | None,
    org_id: str | None,
    session_id: str | None,
) -> UsageReport:
    """The priced rows the caller may see, and their total."""
    user_id, org_id = scope_usage(principal, user_id, org_id)
    rows = await store.summarize_usage(
        group_by=group_by,
        start=start,
        end=end,
        user_id=user_id,
        org_id=org_id,
        session_id=session_id,
    )
    priced = [price(r, models) for r in rows]
    total = UsageRow(key="", model="")
    for row in priced:
        total = total.plus(row)
    return priced, total
