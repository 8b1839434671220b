"""The public API's logic: authenticate, sanitise, check ownership, route, dispatch, read.

The router's servicer converts protobuf to these calls and back; everything a caller can be
refused for is decided here, before anything is recorded.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from riverbeam.auth import (
    DEFAULT_LIMITS,
    Authenticator,
    Principal,
    RequestLimits,
    Role,
    SanitizedInvoke,
    SessionAccess,
    check_may_approve,
    check_session_owner,
    check_string,
    sanitize_invoke,
    sanitize_resume,
    validate_invoke_limits,
)
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.gateway._grants import StreamGrants
from riverbeam.gateway._invoke_stream import InvokeStreaming
from riverbeam.gateway._ledger import LedgerReads
from riverbeam.gateway._lost_runner import (
    await_lost_run,
    cancel_when_continued,
    cut_in_transport,
    lost_in_transport,
)
from riverbeam.gateway._ownership import not_found_error, owner_refused
from riverbeam.gateway._ports import (
    FramesPort,
    RelayingRunner,
    RunnerPort,
)
from riverbeam.gateway._usage import UsageReport, usage_report
from riverbeam.routing import ModelList, ModelRouter, check_agent_accepts, is_placeholder
from riverbeam.runtime import Grant, RunnerReply, active_agent
from riverbeam.store import BeamStore
from riverbeam.types import (
    Action,
    AgentMetadata,
    AgentResult,
    Interaction,
    InvokeRequest,
    Message,
    ModelConfig,
    ResumePayload,
    Run,
    Session,
    StreamAck,
)

__all__ = ["Gateway"]

log = logging.getLogger("riverbeam.gateway")

# An invoke's Grant by what it is made from: subject, roles, may_confirm, effective user and
# org. At most this many are held (then all are dropped).
_GrantKey = tuple[str, frozenset[Role], bool, str, str | None]
_INVOKE_GRANTS_HELD = 4096

# What a runner answers an invoke: a result, a stream's ack, or the relayed reply.
_Reply = AgentResult | StreamAck | RunnerReply


class Gateway(LedgerReads, InvokeStreaming):
    """The router's behaviour, free of gRPC."""

    def __init__(
        self,
        *,
        authenticator: Authenticator,
        runner: RunnerPort,
        store: BeamStore,
        models: ModelList,
        frames: FramesPort | None = None,
        limits: RequestLimits = DEFAULT_LIMITS,
        agents_ttl_s: float = 5.0,
        follow_recheck_s: float = 15.0,
        follow_settled_s: float = 1.0,
        recovery_wait_s: float = 120.0,
        stream_grants: StreamGrants | None = None,
    ) -> None:
        self._auth = authenticator
        self._runner = runner
        # A remote runner's invoke answer is relayed to a protobuf caller as it came.
        self._relaying: RelayingRunner | None = (
            runner if isinstance(runner, RelayingRunner) else None
        )
        self._store = store
        self._models = models
        self._router = ModelRouter(models)
        self._frames = frames
        self._limits = limits
        self._agents_ttl_s = agents_ttl_s
        # A follower re-reads the run after this long without a frame, and a finished run's
        # stored frames are read with this idle limit.
        self._recheck_s = follow_recheck_s
        self._settled_s = follow_settled_s
        # How long a unary invoke whose runner died waits for another replica to finish the
        # run (RIVERBEAM_ROUTER_RECOVERY_WAIT_S); 0: answer BEM-034 at once.
        self._recovery_wait_s = recovery_wait_s
        self._cancelling: set[asyncio.Task[None]] = set()
        # The requests whose StreamAck this router handed out, and to whom (_grants.py).
        self._grants = stream_grants if stream_grants is not None else StreamGrants()
        self._agents: dict[str, AgentMetadata] = {}
        self._invoke_grants: dict[_GrantKey, Grant] = {}
        self._agents_at = 0.0
        self._agents_lock = asyncio.Lock()

    async def close(self) -> None:
        """Stop watching for runs to cancel for callers that left (router shutdown)."""
        for task in list(self._cancelling):
            task.cancel()
        await asyncio.gather(*self._cancelling, return_exceptions=True)

    def authenticate(self, authorization: str | None) -> Principal:
        return self._auth.authenticate(authorization)

    # ---- agents and models ---------------------------------------------------------------------
    async def list_agents(self, principal: Principal) -> list[AgentMetadata]:
        return list((await self._agent_map(refresh=False)).values())

    async def get_agent(self, principal: Principal, name: str) -> AgentMetadata:
        agents = await self._agent_map(refresh=False)
        if name not in agents:
            agents = await self._agent_map(refresh=True)
        try:
            return agents[name]
        except KeyError:
            raise RiverbeamError(
                ErrorCode.AGENT_NOT_REGISTERED, f"agent {name!r} is not registered", agent=name
            ) from None

    def _fresh_agent(self, name: str) -> AgentMetadata | None:
        """The agent from a fresh list, without a coroutine; None: ask get_agent."""
        if not self._agents or self._agents_stale():
            return None
        return self._agents.get(name)

    async def _agent_map(self, *, refresh: bool) -> dict[str, AgentMetadata]:
        # A fresh list is read without the lock (nothing is awaited between the check and the
        # return); the lock only makes concurrent callers of a stale one refresh it once.
        if not refresh and self._agents and not self._agents_stale():
            return self._agents
        async with self._agents_lock:
            if refresh or not self._agents or self._agents_stale():
                self._agents = {a.name: a for a in await self._runner.list_agents()}
                self._agents_at = time.monotonic()
            return self._agents

    def _agents_stale(self) -> bool:
        return time.monotonic() - self._agents_at > self._agents_ttl_s

    async def usage(
        self,
        principal: Principal,
        *,
        group_by: str,
        start: datetime | None = None,
        end: datetime | None = None,
        user_id: str | None = None,
        org_id: str | None = None,
        session_id: str | None = None,
    ) -> UsageReport:
        """Token usage and cost per run, session, user or org (riverbeam.gateway._usage)."""
        return await usage_report(
            self._store,
            self._models,
            principal,
            group_by=group_by,
            start=start,
            end=end,
            user_id=user_id,
            org_id=org_id,
            session_id=session_id,
        )

    def list_models(self, principal: Principal) -> list[ModelConfig]:
        return [m.model_copy(update={"api_key": None}) for m in self._models.models]

    # ---- invoke / resume / cancel ---------------------------------------------------------------
    async def invoke(
        self, principal: Principal, request: InvokeRequest, *, timeout_s: float | None = None
    ) -> AgentResult | StreamAck:
        outcome = await self.invoke_relayed(principal, request, timeout_s=timeout_s)
        return outcome.outcome() if isinstance(outcome, RunnerReply) else outcome

    async def invoke_relayed(
        self,
        principal: Principal,
        request: InvokeRequest,
        *,
        timeout_s: float | None = None,
        wire: Any | None = None,
    ) -> _Reply:
        """As `invoke`; a remote runner's answer comes back as it came off the wire.

        For a caller that hands the answer on in protobuf (the router's servicer): the
        runner's AgentResult or StreamAck message is not converted to a wire type and back.
        An answer made here (a lost runner's run, answered from its record) is a wire type.
        `wire`: the InvokeRequest message `request` was read from (`from_proto(wire)`), so
        that a remote runner is sent it with what sanitising replaced, not `request` converted
        back to protobuf.
        """
        if request.actions:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, "actions belong in Resume, not Invoke", field="actions"
            )
        validate_invoke_limits(request, self._limits)
        # A schema that is not a JSON Schema is refused before anything is written (BEM-201).
        if request.response_schema:  # the agents package is loaded by the first that has one
            from riverbeam.agents import ResponseSchema

            ResponseSchema.combine(None, request.response_schema)
        # Always named, so a runner lost mid-call can be told from one never reached.
        clean = sanitize_invoke(
            request, principal, request_id=None if request.request_id else new_id()
        )
        req = clean.request
        assert req.request_id is not None
        if req.interaction_id is not None:
            # Refuse another's session before saying anything about the interaction. Without
            # an interaction id there is nothing to order: the begin-run step makes the same
            # owner check atomically (require_owner/require_org below; an admin, who may use
            # any session, is never refused), so a FetchSession would only cost a hop.
            session = await self._maybe_session(req.session_id)
            check_session_owner(
                session, clean.effective_user_id, principal, effective_org_id=clean.effective_org_id
            )
            # A caller-chosen interaction id may be new, but never one of another session's.
            await self._interaction_in(req.interaction_id, req.session_id, may_be_new=True)
        agent = self._fresh_agent(req.agent_name) or await self.get_agent(principal, req.agent_name)
        check_agent_accepts(agent, req.content)
        decision = self._router.resolve(
            content=req.content,
            metadata=req.metadata or {},
            agent=agent,
            model_override=req.model_override,
            # A remote runner is sent the model as protobuf: the configured one is only read.
            share_model=self._relaying is not None,
        )
        grant = self._invoke_grant(principal, clean)
        log.info(
            "invoke",
            extra={
                "request_id": req.request_id,
                "session_id": req.session_id,
                "agent": req.agent_name,
                # The built-in placeholder names no model: the runner's client picks its own
                # (BEAM_MODEL, or the echo client), and the runner logs the model that served.
                "model": None if is_placeholder(decision.model) else decision.model.name,
                "routing": decision.reason,
                "stripped": list(clean.stripped),
            },
        )
        deadline = None if timeout_s is None else asyncio.get_running_loop().time() + timeout_s

        async def send(left_s: float | None) -> _Reply:
            if self._relaying is not None:
                return await self._relaying.run_invoke_reply(
                    req,
                    model=decision.model,
                    grant=grant,
                    timeout_s=left_s,
                    wire=wire,
                    replaced=clean.replaced,
                )
            return await self._runner.run_invoke(
                req, model=decision.model, grant=grant, timeout_s=left_s
            )

        reply: _Reply
        try:
            reply = await send(timeout_s)
        except RiverbeamError as err:
            reply = await self._runner_lost(owner_refused(err), req, deadline=deadline, resend=send)
        # The begin-run step has checked the caller's use of the session (the Grant above),
        # which is all _may_reach would check of it: its FollowStream need not ask again.
        if isinstance(reply, RunnerReply):
            if reply.ack is not None:
                self._grants.record_ack(principal, req.request_id, reply.ack)
        elif isinstance(reply, StreamAck):
            self._grants.record_ack(principal, req.request_id, reply)
        return reply

    def _invoke_grant(self, principal: Principal, clean: SanitizedInvoke[Any]) -> Grant:
        """The Grant of an invoke, made once per caller identity: a Grant is immutable and
        made from these five values alone (the roles decide the three principal checks)."""
        key = None
        if type(principal) is Principal:  # a subclass may answer the checks otherwise
            key = (
                principal.subject,
                principal.roles,
                clean.may_confirm,
                clean.effective_user_id,
                clean.effective_org_id,
            )
            made = self._invoke_grants.get(key)
            if made is not None:
                return made
        grant = Grant(
            may_confirm=clean.may_confirm,
            subject=principal.subject,
            # The gateway's session check can race with another user creating the same new
            # session; the store repeats it atomically with the session's creation (BEM-025
            # for the loser).
            require_owner=(None if principal.may_read_any_session() else clean.effective_user_id),
            require_org=(None if principal.may_read_any_session() else clean.effective_org_id),
            # Only a backend or admin replaces (or clears) a session's configuration.
            session_config_narrows_only=not principal.may_act_for_users(),
        )
        if key is not None:
            if len(self._invoke_grants) >= _INVOKE_GRANTS_HELD:
                self._invoke_grants.clear()
            self._invoke_grants[key] = grant
        return grant

    async def resume(
        self, principal: Principal, payload: ResumePayload, *, timeout_s: float | None = None
    ) -> StreamAck:
        if not payload.actions:
            raise RiverbeamError(
                ErrorCode.RESUME_WITHOUT_ACTIONS, "resume needs at least one action"
            )
        validate_invoke_limits(payload, self._limits)
        clean = sanitize_resume(payload, principal)
        body = clean.request
        session = await self._maybe_session(body.session_id)
        if session is None:
            raise RiverbeamError(
                ErrorCode.INTERACTION_NOT_RESUMABLE, "interaction not found in this session"
            )
        try:
            check_session_owner(
                session,
                clean.effective_user_id,
                principal,
                effective_org_id=clean.effective_org_id,
                access=SessionAccess.RESUME,
            )
        except RiverbeamError:
            raise RiverbeamError(
                ErrorCode.INTERACTION_NOT_RESUMABLE, "interaction not found in this session"
            ) from None
        interaction = await self._interaction_in(body.interaction_id, body.session_id)
        assert interaction is not None
        check_may_approve(
            session.user_id, principal, clean.effective_user_id, owner_org_id=session.org_id
        )
        await self._actions_in(body)
        # A resume runs the interaction's own agent: named (an unknown name is 020) or left
        # out, never another (069). After a handoff it is the agent the conversation was
        # handed to, whichever agent the caller named (as for a new turn; runtime/_handoff.py):
        # an action the handing-off run stored names that run's agent.
        if body.agent_name is not None:
            await self.get_agent(principal, body.agent_name)
            if (
                body.agent_name != interaction.agent_name
                and await active_agent(self._store, interaction.interaction_id) is not None
            ):
                body = body.model_copy(update={"agent_name": None})
        body = body.with_agent_of(interaction.agent_name)
        assert body.agent_name is not None
        agent = await self.get_agent(principal, body.agent_name)
        check_agent_accepts(agent, body.content)
        decision = self._router.resolve(
            content=body.content,
            metadata=body.metadata or {},
            agent=agent,
            model_override=body.model_override,
        )
        if body.request_id is None:
            body = body.model_copy(update={"request_id": new_id()})
        grant = Grant(may_confirm=clean.may_confirm, subject=principal.subject)
        ack = await self._runner.run_resume(
            body, model=decision.model, grant=grant, timeout_s=timeout_s
        )
        # A caller that may read the session passes _may_reach for any of its runs; an
        # approver that may only resume it is checked there (the approval rule reads the store).
        if ack.session_id == session.session_id and self._may_read(session, principal):
            self._grants.record_ack(principal, body.request_id, ack)
        return ack

    async def cancel(self, principal: Principal, request_id: str, reason: str | None) -> bool:
        check_string("reason", reason, 4 * self._limits.max_name_chars)
        # The run's status is read in any case (a run no longer running is not cancelled; the
        # runner would answer true, having told its replicas). A caller holding this request's
        # grant may reach its run (as FollowStream trusts it): its session is not read.
        granted = self._grants.lookup(principal, request_id)
        if granted is not None:
            run = await self._request_run(request_id)
            if run.run_id != granted.run_id:
                run = await self._may_reach(principal, run)
        else:
            run, session = await self._request_run_with_session(request_id)
            run = await self._may_reach(principal, run, session)
        if run.status != "running":
            return False
        return await self._runner.cancel_run(request_id, reason=reason)

    # ---- reads --------------------------------------------------------------------------------
    async def get_session(self, principal: Principal, session_id: str) -> Session:
        session = await self._maybe_session(session_id)
        self._check_read(session, principal)
        assert session is not None
        return session

    async def list_messages(
        self, principal: Principal, session_id: str, *, page_size: int, page_token: str | None
    ) -> tuple[list[Message], str | None]:
        await self.get_session(principal, session_id)
        return await self._store.list_messages(
            session_id=session_id, page_size=_page_size(page_size), page_token=page_token or None
        )

    async def get_interaction(self, principal: Principal, interaction_id: str) -> Interaction:
        interaction: Interaction = await self._owned(
            principal,
            self._store.get_interaction(interaction_id=interaction_id),
            not_found_error(ErrorCode.INTERACTION_NOT_FOUND, interaction_id=interaction_id),
        )
        return interaction

    async def get_run(self, principal: Principal, run_id: str) -> Run:
        run: Run = await self._owned(
            principal,
            self._store.get_run(run_id=run_id),
            not_found_error(ErrorCode.RUN_NOT_FOUND, run_id=run_id),
        )
        return run

    async def get_action(self, principal: Principal, action_id: str) -> Action:
        # Whoever may answer an action may read it: an approver reads its organisation's.
        action: Action = await self._owned(
            principal,
            self._store.get_action(action_id=action_id),
            not_found_error(ErrorCode.ACTION_NOT_FOUND, action_id=action_id),
            access=SessionAccess.RESUME,
        )
        return action

    async def list_pending_actions(
        self,
        principal: Principal,
        *,
        session_id: str | None,
        page_size: int,
        page_token: str | None,
    ) -> tuple[list[Action], str | None]:
        """The approval inbox: the pending actions the caller may answer.

        With a session: that session's, for whoever may resume it (owner, approver of its
        organisation, admin). Without: an admin's holds everyone's, an approver's its
        organisation's, anyone else's its own (in its own organisation).
        """
        size = _page_size(page_size)
        if session_id:
            session = await self._maybe_session(session_id)
            self._check_read(session, principal, access=SessionAccess.RESUME)
            return await self._store.list_pending_actions(
                session_id=session_id, page_size=size, page_token=page_token or None
            )
        if Role.ADMIN in principal.roles:
            return await self._store.list_pending_actions(
                page_size=size, page_token=page_token or None
            )
        everyone_in_org = Role.APPROVER in principal.roles
        return await self._org_inbox(
            principal.org_id,
            user_id=None if everyone_in_org else principal.subject,
            page_size=size,
            page_token=page_token or None,
        )

    async def _runner_lost(
        self,
        err: RiverbeamError,
        req: InvokeRequest,
        *,
        deadline: float | None,
        resend: Callable[[float | None], Awaitable[_Reply]] | None = None,
    ) -> _Reply:
        """A runner that died mid-call leaves a run that another replica may continue.

        When the run was begun, the caller is answered from its record once it ends (within
        the caller's deadline and the router's recovery wait; see _lost_runner). A call gRPC
        cut before its run began (a stopping replica) goes once more with `resend`. Any other
        error, or a run never begun, is raised as it came. A streaming request (whose ack was
        lost right after the begin step) gets BEM-034 at once: its stream goes on.
        """
        request_id = req.request_id
        if not lost_in_transport(err) or not request_id:
            raise err
        try:
            run = await self._store.get_run_by_request(request_id=request_id)
        except RiverbeamError:
            raise err from None
        if run is None:
            if resend is None or not cut_in_transport(err):
                raise err
            # Once more, which round-robin takes to the next replica. A second begin of one
            # request_id is refused (BEM-031), so the run can't run twice.
            loop = asyncio.get_running_loop()
            try:
                return await resend(None if deadline is None else max(deadline - loop.time(), 0))
            except RiverbeamError as again:
                return await self._runner_lost(owner_refused(again), req, deadline=deadline)
        budget = self._recovery_wait_s
        if deadline is not None:
            # Answer a little before the caller gives up, so it hears why.
            budget = min(budget, deadline - asyncio.get_running_loop().time() - 0.5)
        if req.stream or (budget <= 0 and run.status == "running"):
            raise RiverbeamError(
                ErrorCode.RUN_LOST,
                "the runner holding this run stopped; the run will be continued or failed",
                run_id=run.run_id,
                request_id=request_id,
            ) from None
        try:
            return await await_lost_run(self._store, run, budget_s=budget)
        except asyncio.CancelledError:
            # The caller went away: its run is cancelled once a replica holds it again.
            task = asyncio.ensure_future(
                cancel_when_continued(
                    self._store, self._runner, run, budget_s=self._recovery_wait_s
                )
            )
            self._cancelling.add(task)
            task.add_done_callback(self._cancelling.discard)
            raise


def _page_size(requested: int) -> int:
    if requested <= 0:
        return 100
    return min(requested, 1000)
