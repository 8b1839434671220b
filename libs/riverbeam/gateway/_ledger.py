"""Reading the tool-execution ledger through the public API, with the read RPCs' rules.

Whoever may read a session (its owner, a backend of its organisation, an admin) reads the
ledger of its runs and interactions. An approver of the organisation reads it only for an
interaction that asked for an approval (as it follows such runs, docs/auth.md); anything
else answers as if the run or interaction did not exist (BEM-028 / BEM-026).
"""

from __future__ import annotations

from riverbeam.auth import Principal, SessionAccess
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.gateway._ownership import OwnershipChecks, not_found_error
from riverbeam.types import Interaction, Run, ToolExecution

__all__ = ["LedgerReads"]


class LedgerReads(OwnershipChecks):
    """The ledger reads of the Gateway (a mixin: the Gateway sets `_store`)."""

    async def list_tool_executions(
        self,
        principal: Principal,
        *,
        run_id: str | None,
        interaction_id: str | None,
        page_size: int,
        page_token: str | None,
    ) -> tuple[list[ToolExecution], str | None]:
        """One page of a run's or an interaction's ledger (exactly one of them, BEM-265)."""
        if bool(run_id) == bool(interaction_id):
            raise RiverbeamError(ErrorCode.LEDGER_QUERY)
        record: Run | Interaction
        if run_id:
            not_found = not_found_error(ErrorCode.RUN_NOT_FOUND, run_id=run_id)
            try:
                record = await self._store.get_run(run_id=run_id)
            except RiverbeamError as err:
                raise (not_found if err.code is ErrorCode.RUN_NOT_FOUND else err) from None
        else:
            assert interaction_id
            not_found = not_found_error(
                ErrorCode.INTERACTION_NOT_FOUND, interaction_id=interaction_id
            )
            try:
                record = await self._store.get_interaction(interaction_id=interaction_id)
            except RiverbeamError as err:
                raise (not_found if err.code is ErrorCode.INTERACTION_NOT_FOUND else err) from None
        session = await self._maybe_session(record.session_id)
        try:
            self._check_read(session, principal)
        except RiverbeamError:
            # An approver: only the ledger of an interaction that asked for an approval.
            try:
                self._check_read(session, principal, access=SessionAccess.RESUME)
            except RiverbeamError:
                raise not_found from None
            if not await self._asked_for_approval(record.interaction_id):
                raise not_found from None
        return await self._store.list_tool_executions(
            run_id=run_id or None,
            interaction_id=interaction_id or None,
            page_size=_page_size(page_size),
            page_token=page_token or None,
        )


def _page_size(requested: int) -> int:
    return 100 if requested <= 0 else min(requested, 1000)
