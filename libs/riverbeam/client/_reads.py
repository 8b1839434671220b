"""The read RPCs of RiverbeamClient: agents, models, records, the approval inbox, usage."""

from __future__ import annotations

from datetime import datetime

from riverbeam.client._connection import _RouterConnection
from riverbeam.store import UsageRow, usage_row_from_proto
from riverbeam.types import (
    Action,
    AgentMetadata,
    Interaction,
    Message,
    ModelConfig,
    Run,
    Session,
    ToolExecution,
)
from riverbeam.v1 import ledger_pb2
from riverbeam.v1 import riverbeam_service_pb2 as pb

__all__: list[str] = []

_PAGE_SIZE = 100


class _ReadCalls(_RouterConnection):
    """The RPCs that only read: each one request, or every page of a listing."""

    # ---- agents and models --------------------------------------------------------------------
    async def list_agents(self) -> list[AgentMetadata]:
        """The agents the caller may run."""
        reply = await self._unary("ListAgents", pb.ListAgentsRequest())
        return [AgentMetadata.from_proto(a) for a in reply.agents]

    async def get_agent(self, name: str) -> AgentMetadata:
        """One agent (AGENT_NOT_REGISTERED when there is none of that name)."""
        reply = await self._unary("GetAgent", pb.GetAgentRequest(name=name))
        return AgentMetadata.from_proto(reply.agent)

    async def list_models(self) -> list[ModelConfig]:
        """The models the router may route to (never with API keys)."""
        reply = await self._unary("ListModels", pb.ListModelsRequest())
        return [ModelConfig.from_proto(m) for m in reply.models]

    # ---- records ------------------------------------------------------------------------------
    async def get_session(self, session_id: str) -> Session:
        """A session (SESSION_NOT_FOUND when unknown or not the caller's)."""
        reply = await self._unary("GetSession", pb.GetSessionRequest(session_id=session_id))
        return Session.from_proto(reply.session)

    async def list_messages(self, session_id: str, *, page_size: int = _PAGE_SIZE) -> list[Message]:
        """Every message of a session in `seq` order, following all pages."""

        async def fetch(token: str) -> tuple[list[Message], str]:
            return await self.list_messages_page(session_id, page_size=page_size, page_token=token)

        return await self._all_pages(fetch)

    async def list_messages_page(
        self, session_id: str, *, page_size: int = 0, page_token: str = ""
    ) -> tuple[list[Message], str]:
        """One page of a session's messages and the next page's token ("" after the last)."""
        request = pb.ListMessagesRequest(
            session_id=session_id, page_size=page_size, page_token=page_token
        )
        reply = await self._unary("ListMessages", request)
        return [Message.from_proto(m) for m in reply.messages], reply.next_page_token

    async def get_interaction(self, interaction_id: str) -> Interaction:
        """An interaction (INTERACTION_NOT_FOUND when unknown)."""
        request = pb.GetInteractionRequest(interaction_id=interaction_id)
        reply = await self._unary("GetInteraction", request)
        return Interaction.from_proto(reply.interaction)

    async def get_run(self, run_id: str) -> Run:
        """A run, with its result once finished (RUN_NOT_FOUND when unknown)."""
        reply = await self._unary("GetRun", pb.GetRunRequest(run_id=run_id))
        return Run.from_proto(reply.run)

    async def get_action(self, action_id: str) -> Action:
        """An action and what became of it (ACTION_NOT_FOUND when unknown)."""
        reply = await self._unary("GetAction", pb.GetActionRequest(action_id=action_id))
        return Action.from_proto(reply.action)

    async def list_pending_actions(
        self, *, session_id: str | None = None, page_size: int = _PAGE_SIZE
    ) -> list[Action]:
        """The approval inbox: every pending action the caller may answer, all pages."""

        async def fetch(token: str) -> tuple[list[Action], str]:
            return await self.list_pending_actions_page(
                session_id=session_id, page_size=page_size, page_token=token
            )

        return await self._all_pages(fetch)

    # ---- the tool-execution ledger ------------------------------------------------------------
    async def list_tool_executions(
        self,
        *,
        run_id: str | None = None,
        interaction_id: str | None = None,
        page_size: int = _PAGE_SIZE,
    ) -> list[ToolExecution]:
        """Every ledger entry of a run or of an interaction (name one), in call order."""

        async def fetch(token: str) -> tuple[list[ToolExecution], str]:
            return await self.list_tool_executions_page(
                run_id=run_id, interaction_id=interaction_id, page_size=page_size, page_token=token
            )

        return await self._all_pages(fetch)

    async def list_tool_executions_page(
        self,
        *,
        run_id: str | None = None,
        interaction_id: str | None = None,
        page_size: int = 0,
        page_token: str = "",
    ) -> tuple[list[ToolExecution], str]:
        """One page of a run's or an interaction's ledger and the next page's token."""
        request = ledger_pb2.ListToolExecutionsRequest(
            run_id=run_id or None,
            interaction_id=interaction_id or None,
            page_size=page_size,
            page_token=page_token,
        )
        reply = await self._unary("ListToolExecutions", request)
        return [ToolExecution.from_proto(e) for e in reply.entries], reply.next_page_token

    # ---- usage --------------------------------------------------------------------------------
    async def get_usage(
        self,
        *,
        group_by: str = "session",
        start: datetime | None = None,
        end: datetime | None = None,
        user_id: str | None = None,
        org_id: str | None = None,
        session_id: str | None = None,
    ) -> tuple[list[UsageRow], UsageRow]:
        """Token usage and cost per run, session, user or org (and model), with the total.

        The runs started in [start, end); the router limits the report to what the caller may
        see (its own, its organisation's for an approver, anyone's for an admin).
        """
        request = pb.GetUsageRequest(
            group_by=group_by, user_id=user_id, org_id=org_id, session_id=session_id
        )
        if start is not None:
            request.start_time.FromDatetime(start)
        if end is not None:
            request.end_time.FromDatetime(end)
        reply = await self._unary("GetUsage", request)
        return [usage_row_from_proto(r) for r in reply.rows], usage_row_from_proto(reply.total)

    async def list_pending_actions_page(
        self, *, session_id: str | None = None, page_size: int = 0, page_token: str = ""
    ) -> tuple[list[Action], str]:
        """One page of the approval inbox and the next page's token ("" after the last)."""
        request = pb.ListPendingActionsRequest(page_size=page_size, page_token=page_token)
        if session_id:
            request.session_id = session_id
        reply = await self._unary("ListPendingActions", request)
        return [Action.from_proto(a) for a in reply.actions], reply.next_page_token
