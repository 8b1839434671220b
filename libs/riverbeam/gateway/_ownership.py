"""Who may see what: the gateway's ownership checks, answered as "not found" when refused.

A record that does not exist and one of a session that is not the caller's get the same
answer, so a caller cannot learn which ids exist (docs/auth.md).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from riverbeam.auth import Principal, SessionAccess, check_session_owner, session_not_found
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.gateway._ports import RunWithSessionReads
from riverbeam.store import BeamStore
from riverbeam.types import Action, Interaction, ResumePayload, Run, Session

__all__ = ["OwnershipChecks", "not_found_error", "owner_refused", "same_org"]

# Store pages one inbox page may read before it comes back short.
_INBOX_FETCHES = 10


def same_org(a: str | None, b: str | None) -> bool:
    # An unscoped side (None) does not constrain, as in riverbeam.auth.
    return a is None or b is None or a == b


def owner_refused(err: RiverbeamError) -> RiverbeamError:
    """The runner's BEM-025 (the store's owner check) as the one answer for a missing session.

    A run that began and then failed carries its run_id: that error passes unchanged. (A
    function, not a context manager: the invoke path takes it on every call.)
    """
    if err.code is ErrorCode.SESSION_NOT_FOUND and "run_id" not in err.details:
        refusal = session_not_found()
        refusal.__cause__ = None
        refusal.__suppress_context__ = True
        return refusal
    return err


def not_found_error(code: ErrorCode, **details: str) -> RiverbeamError:
    """The one answer for a record that does not exist *or* is not the caller's."""
    return RiverbeamError(code, code.spec.title, **details)


def _no_run(request_id: str | None) -> RiverbeamError:
    """BEM-032: the request has no run, or none the caller may reach (one answer for both)."""
    return RiverbeamError(
        ErrorCode.REQUEST_NOT_FOUND, "no run for this request", request_id=request_id
    )


class OwnershipChecks:
    """The ownership half of the Gateway (a mixin: the Gateway sets `_store`)."""

    _store: BeamStore

    async def _maybe_session(self, session_id: str) -> Session | None:
        try:
            return await self._store.get_session(session_id=session_id)
        except RiverbeamError as err:
            if err.code is ErrorCode.SESSION_NOT_FOUND:
                return None
            raise

    def _check_read(
        self,
        session: Session | None,
        principal: Principal,
        *,
        access: SessionAccess = SessionAccess.READ,
    ) -> None:
        """Refuse, as not found, a session the caller may not read (or, RESUME, answer in)."""
        if session is None:
            raise session_not_found()
        # A backend reads the sessions of the users it acts for: any session of its org.
        if principal.may_act_for_users() and same_org(session.org_id, principal.org_id):
            return
        # User ids are per organisation: the caller's org must be the session's.
        check_session_owner(
            session,
            principal.subject,
            principal,
            effective_org_id=principal.org_id,
            access=access,
        )

    def _may_read(self, session: Session, principal: Principal) -> bool:
        """Whether `_check_read` passes (READ access)."""
        try:
            self._check_read(session, principal)
        except RiverbeamError:
            return False
        return True

    async def _owned(
        self,
        principal: Principal,
        fetch: Awaitable[Any],
        not_found: RiverbeamError,
        *,
        access: SessionAccess = SessionAccess.READ,
    ) -> Any:
        """Fetch a record; a missing one and one of a session not the caller's get one answer."""
        try:
            record = await fetch
        except RiverbeamError as err:
            if err.code is not_found.code:
                raise not_found from None
            raise
        session = await self._maybe_session(record.session_id)
        try:
            self._check_read(session, principal, access=access)
        except RiverbeamError:
            raise not_found from None
        return record

    async def _org_inbox(
        self, org_id: str | None, *, user_id: str | None, page_size: int, page_token: str | None
    ) -> tuple[list[Action], str | None]:
        """Pending actions (of `user_id`, or anyone's) in sessions of organisation `org_id`.

        The store filters by user only, so the sessions' organisations are checked here. Each
        store page asks for no more than the page still lacks, so the page token the store
        returns is exactly where this page stops; a page may come back short (with a token)
        after `_INBOX_FETCHES` store pages, as AIP-158 allows.
        """
        if org_id is None:
            return await self._store.list_pending_actions(
                user_id=user_id, page_size=page_size, page_token=page_token
            )
        orgs: dict[str, bool] = {}
        kept: list[Action] = []
        token = page_token
        for _ in range(_INBOX_FETCHES):
            page, token = await self._store.list_pending_actions(
                user_id=user_id, page_size=page_size - len(kept), page_token=token
            )
            for action in page:
                if action.session_id not in orgs:
                    session = await self._maybe_session(action.session_id)
                    orgs[action.session_id] = session is not None and same_org(
                        session.org_id, org_id
                    )
                if orgs[action.session_id]:
                    kept.append(action)
            if not token or len(kept) >= page_size:
                break
        return kept, token

    async def _interaction_in(
        self, interaction_id: str, session_id: str, *, may_be_new: bool = False
    ) -> Interaction | None:
        try:
            interaction = await self._store.get_interaction(interaction_id=interaction_id)
        except RiverbeamError as err:
            if err.code is ErrorCode.INTERACTION_NOT_FOUND:
                if may_be_new:
                    return None
                raise RiverbeamError(
                    ErrorCode.INTERACTION_NOT_RESUMABLE, "interaction not found in this session"
                ) from None
            raise
        if interaction.session_id != session_id:
            raise RiverbeamError(
                ErrorCode.INTERACTION_NOT_RESUMABLE, "interaction not found in this session"
            )
        return interaction

    async def _actions_in(self, body: ResumePayload) -> None:
        """Refuse an answered action of another session exactly as a missing one (BEM-027).

        The runner tells an action of another interaction (064) from a missing one (027); that
        is only said of actions in the session being resumed, which the caller may answer in.
        """
        for response in body.actions:
            not_found = not_found_error(ErrorCode.ACTION_NOT_FOUND, action_id=response.action_id)
            try:
                action = await self._store.get_action(action_id=response.action_id)
            except RiverbeamError as err:
                if err.code is ErrorCode.ACTION_NOT_FOUND:
                    raise not_found from None
                raise
            if action.session_id != body.session_id:
                raise not_found

    async def _request_run(self, request_id: str) -> Run:
        """The run of a request, whoever asks (BEM-032 when none): check it with _may_reach."""
        run = await self._store.get_run_by_request(request_id=request_id)
        if run is None:
            raise _no_run(request_id)
        return run

    async def _request_run_with_session(self, request_id: str) -> tuple[Run, Session | None]:
        """As _request_run, with the run's session when the store reads both in one call."""
        store: object = self._store
        if not isinstance(store, RunWithSessionReads):
            return await self._request_run(request_id), None
        run, session = await store.get_run_with_session(request_id=request_id)
        if run is None:
            raise _no_run(request_id)
        return run, session

    async def _may_reach(
        self, principal: Principal, run: Run, session: Session | None = None
    ) -> Run:
        """`run` when the principal may follow and cancel it; else BEM-032, as for no run.

        `session` is the run's session when the caller read it with the run (None: read it).
        """
        not_found = _no_run(run.request_id)
        if session is None or session.session_id != run.session_id:
            session = await self._maybe_session(run.session_id)
        try:
            # Whoever may read a session follows and cancels its requests.
            self._check_read(session, principal)
            return run
        except RiverbeamError:
            pass
        # An approver (of the session's organisation) follows and cancels the runs of
        # interactions that asked for an approval: the run that paused for the actions it
        # answers, and the runs its answers (or others') resumed. Not every run of its org:
        # a plain conversation stays its owner's, as GetSession does.
        try:
            self._check_read(session, principal, access=SessionAccess.RESUME)
        except RiverbeamError:
            raise not_found from None
        if not await self._asked_for_approval(run.interaction_id):
            raise not_found
        return run

    async def _asked_for_approval(self, interaction_id: str) -> bool:
        """Whether a run of the interaction paused for approval (it has actions)."""
        runs = await self._store.list_runs(interaction_id=interaction_id)
        return any(r.result is not None and r.result.action_required for r in runs)
