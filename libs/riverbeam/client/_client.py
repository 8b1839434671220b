"""RiverbeamClient: the public API (`riverbeam.v1.RiverbeamService`) as typed async methods."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Literal, Self, TypeVar, overload

import grpc

from riverbeam.client._approvals import action_response
from riverbeam.client._nats import follow_nats
from riverbeam.client._sequence import SequenceGuard
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import open_channel, translate_rpc_errors_sync
from riverbeam.store import UsageRow, usage_row_from_proto
from riverbeam.stream import DEFAULT_STREAM_NAME
from riverbeam.types import (
    Action,
    ActionResponseEnvelope,
    ActionResponseStatus,
    AgentMetadata,
    AgentResult,
    ContentPart,
    Interaction,
    InvokeAuthContext,
    InvokePayload,
    JsonObject,
    Message,
    ModelConfig,
    ResumePayload,
    Run,
    Session,
    StreamAck,
    StreamChunk,
    TurnConfig,
)
from riverbeam.v1 import riverbeam_service_pb2 as pb
from riverbeam.v1 import riverbeam_service_pb2_grpc as pb_grpc

__all__ = ["DEFAULT_TARGET", "RiverbeamClient"]

DEFAULT_TARGET = "127.0.0.1:50051"
"""Where `riverbeam up` serves the router."""

DEFAULT_TIMEOUT_S = 120.0
_PAGE_SIZE = 100
_INT32_MAX = 2**31 - 1
_T = TypeVar("_T")


class RiverbeamClient:
    """An async client of the Riverbeam router.

        async with RiverbeamClient("127.0.0.1:50051", token="...") as client:
            result = await client.invoke("assistant", "hello")
            print(result.text)

    Every method returns pydantic wire types and raises `RiverbeamError` (with the server's
    BEM code) instead of `grpc.RpcError`. A router that cannot be reached gives the
    UNAVAILABLE fallback code with `details["target"]` and `details["grpc_code"]`.

    Args:
        target: The router's `host:port` (any gRPC target).
        token: Bearer token, sent as `authorization: Bearer <token>` metadata.
        timeout_s: Deadline of each unary call (a non-streaming invoke runs the agent within
            it); None for no deadline.
        channel: Use this channel instead of opening one (it is not closed by `close()`).
    """

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        token: str | None = None,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        self._target = target
        self._timeout_s = timeout_s
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self._channel = channel
        self._own_channel = channel is None
        self._stub_obj: Any = None
        self._closed = False

    @property
    def target(self) -> str:
        """The router this client talks to."""
        return self._target

    # ---- lifecycle ----------------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        self._stub()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel (if this client opened it). Safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        channel, self._channel = self._channel, None
        self._stub_obj = None
        if channel is not None and self._own_channel:
            await channel.close(grace=None)

    def _stub(self) -> Any:
        if self._closed:
            raise RuntimeError("RiverbeamClient is closed")
        if self._stub_obj is None:
            if self._channel is None:
                self._channel = open_channel(self._target)
            self._stub_obj = pb_grpc.RiverbeamServiceStub(self._channel)  # type: ignore[no-untyped-call]
        return self._stub_obj

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        """grpc.RpcError -> RiverbeamError, naming the router when it could not be reached."""
        try:
            with translate_rpc_errors_sync(service="router"):
                yield
        except RiverbeamError as err:
            # Only a status the router did not send itself means the router was not reached;
            # an unavailable service behind it comes with the router's ErrorInfo.
            if err.transport and err.details.get("grpc_code") == grpc.StatusCode.UNAVAILABLE.name:
                details = {**err.details, "target": self._target}
                raise RiverbeamError(
                    err.code, f"cannot reach the router at {self._target}: {err.message}", **details
                ) from None
            raise

    async def _unary(self, method: str, request: Any, timeout_s: float | None = None) -> Any:
        call: Callable[..., Awaitable[Any]] = getattr(self._stub(), method)
        timeout = self._timeout_s if timeout_s is None else timeout_s
        with self._translated():
            return await call(request, metadata=self._metadata, timeout=timeout)

    async def _all_pages(
        self,
        fetch: Callable[[str], Awaitable[tuple[list[_T], str]]],
    ) -> list[_T]:
        items: list[_T] = []
        token = ""
        seen: set[str] = set()
        while True:
            page, token = await fetch(token)
            items.extend(page)
            if not token:
                return items
            if token in seen:  # a server that hands back a token twice would loop forever
                raise RiverbeamError(
                    ErrorCode.INVALID_PAGE_TOKEN,
                    "the server repeated a page token",
                    page_token=token,
                )
            seen.add(token)

    # ---- invoke / resume / cancel -------------------------------------------------------------
    @overload
    async def invoke(
        self,
        agent_name: str,
        content: str | Sequence[ContentPart],
        *,
        session_id: str | None = ...,
        stream: Literal[False] = ...,
        metadata: JsonObject | None = ...,
        model_override: str | None = ...,
        auth_context: InvokeAuthContext | None = ...,
        request_id: str | None = ...,
        timeout_s: float | None = ...,
        response_schema: JsonObject | None = ...,
        time_limit_s: float | None = ...,
        token_budget: int | None = ...,
        turn_config: TurnConfig | JsonObject | None = ...,
        session_config: TurnConfig | JsonObject | None = ...,
    ) -> AgentResult: ...

    @overload
    async def invoke(
        self,
        agent_name: str,
        content: str | Sequence[ContentPart],
        *,
        session_id: str | None = ...,
        stream: Literal[True],
        metadata: JsonObject | None = ...,
        model_override: str | None = ...,
        auth_context: InvokeAuthContext | None = ...,
        request_id: str | None = ...,
        timeout_s: float | None = ...,
        response_schema: JsonObject | None = ...,
        time_limit_s: float | None = ...,
        token_budget: int | None = ...,
        turn_config: TurnConfig | JsonObject | None = ...,
        session_config: TurnConfig | JsonObject | None = ...,
    ) -> StreamAck: ...

    @overload
    async def invoke(
        self,
        agent_name: str,
        content: str | Sequence[ContentPart],
        *,
        session_id: str | None = ...,
        stream: bool,
        metadata: JsonObject | None = ...,
        model_override: str | None = ...,
        auth_context: InvokeAuthContext | None = ...,
        request_id: str | None = ...,
        timeout_s: float | None = ...,
        response_schema: JsonObject | None = ...,
        time_limit_s: float | None = ...,
        token_budget: int | None = ...,
        turn_config: TurnConfig | JsonObject | None = ...,
        session_config: TurnConfig | JsonObject | None = ...,
    ) -> AgentResult | StreamAck: ...

    async def invoke(
        self,
        agent_name: str,
        content: str | Sequence[ContentPart],
        *,
        session_id: str | None = None,
        stream: bool = False,
        metadata: JsonObject | None = None,
        model_override: str | None = None,
        auth_context: InvokeAuthContext | None = None,
        request_id: str | None = None,
        timeout_s: float | None = None,
        response_schema: JsonObject | None = None,
        time_limit_s: float | None = None,
        token_budget: int | None = None,
        turn_config: TurnConfig | JsonObject | None = None,
        session_config: TurnConfig | JsonObject | None = None,
    ) -> AgentResult | StreamAck:
        """Run an agent on one turn.

        Args:
            agent_name: The agent to run.
            content: The turn: a string (one text part) or content parts.
            session_id: The conversation to continue; a new one (uuid4) when None. The id
                comes back in the result or ack.
            stream: False waits for the AgentResult; True returns a StreamAck at once and the
                frames go to `riverbeam.stream.<request_id>` (read them with `follow`).
            metadata: Free-form request metadata.
            model_override: A model name from `list_models()`.
            auth_context: Who the call is for (honoured for trusted backends only).
            request_id: Names the stream channel and makes the call idempotent.
            timeout_s: Deadline of this call; None uses the client's.
            response_schema: A JSON Schema the answer must match, in addition to the agent's
                own; the parsed value comes back in `AgentResult.output`.
            time_limit_s: Whole-run time limit; only shortens the agent's (BEM-215).
            token_budget: Tokens the run may use; only lowers the agent's (BEM-216).
            turn_config: This turn's tool narrowing and added instructions.
            session_config: The same, stored on the session for later turns too.
        """
        parts = [ContentPart.of_text(content)] if isinstance(content, str) else list(content)
        payload = InvokePayload.parse(
            {
                "agent_name": agent_name,
                "content": [p.to_json_dict() for p in parts],
                "session_id": session_id or str(uuid.uuid4()),
                "stream": stream,
                "metadata": metadata,
                "model_override": model_override,
                "auth_context": auth_context.to_json_dict() if auth_context else None,
                "request_id": request_id,
                "response_schema": response_schema,
                "time_limit_s": time_limit_s,
                "token_budget": token_budget,
                "turn_config": _config_json(turn_config),
                "session_config": _config_json(session_config),
            }
        )
        reply = await self._unary("Invoke", payload.to_proto(), timeout_s)
        if reply.WhichOneof("outcome") == "ack":
            return StreamAck.from_proto(reply.ack)
        return AgentResult.from_proto(reply.result)

    async def resume(
        self,
        agent_name: str | None,
        session_id: str,
        interaction_id: str,
        actions: Sequence[ActionResponseEnvelope],
        *,
        content: str | Sequence[ContentPart] | None = None,
        metadata: JsonObject | None = None,
        model_override: str | None = None,
        auth_context: InvokeAuthContext | None = None,
        request_id: str | None = None,
        timeout_s: float | None = None,
    ) -> StreamAck:
        """Answer pending actions of an interaction and let the agent continue (always streams).

        Args:
            agent_name: The interaction's agent; None lets the router use it.
            session_id: The interaction's session.
            interaction_id: The interrupted interaction (`AgentResult.interaction_id`).
            actions: One envelope per answered action (see `action_response`).
            content: An optional further turn.
            metadata, model_override, auth_context, request_id, timeout_s: As for `invoke`.
        """
        if content is None:
            parts: list[ContentPart] = []
        elif isinstance(content, str):
            parts = [ContentPart.of_text(content)]
        else:
            parts = list(content)
        payload = ResumePayload.parse(
            {
                "agent_name": agent_name,
                "session_id": session_id,
                "interaction_id": interaction_id,
                "content": [p.to_json_dict() for p in parts],
                "actions": [a.to_json_dict() for a in actions],
                "metadata": metadata,
                "model_override": model_override,
                "auth_context": auth_context.to_json_dict() if auth_context else None,
                "request_id": request_id,
            }
        )
        reply = await self._unary("Resume", payload.to_proto(), timeout_s)
        return StreamAck.from_proto(reply.ack)

    async def approve(
        self,
        session_id: str,
        interaction_id: str,
        *,
        action_id: str | None = None,
        actions: Sequence[Action] | None = None,
        agent_name: str | None = None,
        responder_id: str | None = None,
        reason: str | None = None,
        request_id: str | None = None,
    ) -> StreamAck:
        """Approve the pending actions of an interaction (or just `action_id`) and resume it.

        The agent name is taken from the pending actions (or the interaction) when not given.
        Pass `actions` (from `pending_for`) to answer exactly those without fetching them again.

        Raises:
            RiverbeamError: ACTION_NOT_FOUND (027) for an unknown action; ACTION_WRONG_INTERACTION
                (064) for an action of another interaction; ACTION_NOT_PENDING (066) when there
                is nothing left to answer; INTERACTION_NOT_RESUMABLE (065) for an interaction of
                another session.
        """
        return await self._respond(
            "submitted",
            session_id,
            interaction_id,
            action_id=action_id,
            actions=actions,
            agent_name=agent_name,
            responder_id=responder_id,
            reason=reason,
            request_id=request_id,
        )

    async def decline(
        self,
        session_id: str,
        interaction_id: str,
        *,
        action_id: str | None = None,
        actions: Sequence[Action] | None = None,
        agent_name: str | None = None,
        responder_id: str | None = None,
        reason: str | None = None,
        request_id: str | None = None,
    ) -> StreamAck:
        """Decline (status `cancelled`) the pending actions of an interaction and resume it.

        Nothing declined runs; the agent is told and continues. Raises as `approve` does.
        """
        return await self._respond(
            "cancelled",
            session_id,
            interaction_id,
            action_id=action_id,
            actions=actions,
            agent_name=agent_name,
            responder_id=responder_id,
            reason=reason,
            request_id=request_id,
        )

    async def pending_for(
        self, session_id: str, interaction_id: str, *, action_id: str | None = None
    ) -> list[Action]:
        """The pending actions `approve`/`decline` would answer (checked as they check them)."""
        session_id = _canonical(session_id, "session_id", ErrorCode.INVALID_UUID)
        interaction_id = _canonical(interaction_id, "interaction_id", ErrorCode.INVALID_UUID)
        if action_id is not None:
            action_id = _canonical(action_id, "action_id", ErrorCode.ACTION_ID_NOT_UUID)
            action = await self.get_action(action_id)
            if action.interaction_id != interaction_id:
                raise RiverbeamError(
                    ErrorCode.ACTION_WRONG_INTERACTION,
                    f"action {action_id} belongs to interaction {action.interaction_id}, "
                    f"not {interaction_id}",
                    action_id=action_id,
                    interaction_id=interaction_id,
                )
            if action.status != "pending":
                raise RiverbeamError(
                    ErrorCode.ACTION_NOT_PENDING,
                    f"action {action_id} is {action.status}",
                    action_id=action_id,
                )
            return [action]
        pending = [
            a
            for a in await self.list_pending_actions(session_id=session_id)
            if a.interaction_id == interaction_id
        ]
        if pending:
            return pending
        interaction = await self.get_interaction(interaction_id)
        if interaction.session_id != session_id:
            raise RiverbeamError(
                ErrorCode.INTERACTION_NOT_RESUMABLE,
                f"interaction {interaction_id} is not in session {session_id}",
                interaction_id=interaction_id,
                session_id=session_id,
            )
        raise RiverbeamError(
            ErrorCode.ACTION_NOT_PENDING,
            f"interaction {interaction_id} has no pending actions",
            interaction_id=interaction_id,
        )

    async def _respond(
        self,
        status: ActionResponseStatus,
        session_id: str,
        interaction_id: str,
        *,
        action_id: str | None,
        actions: Sequence[Action] | None,
        agent_name: str | None,
        responder_id: str | None,
        reason: str | None,
        request_id: str | None,
    ) -> StreamAck:
        session_id = _canonical(session_id, "session_id", ErrorCode.INVALID_UUID)
        interaction_id = _canonical(interaction_id, "interaction_id", ErrorCode.INVALID_UUID)
        if actions is None:
            actions = await self.pending_for(session_id, interaction_id, action_id=action_id)
        if agent_name is None:
            agent_name = next((a.agent_name for a in actions if a.agent_name), None)
        if agent_name is None:
            agent_name = (await self.get_interaction(interaction_id)).agent_name
        envelopes = [
            action_response(a, status=status, responder_id=responder_id, reason=reason)
            for a in actions
        ]
        return await self.resume(
            agent_name, session_id, interaction_id, envelopes, request_id=request_id
        )

    async def cancel(self, request_id: str, *, reason: str | None = None) -> bool:
        """Stop a running request; True when a live run was found and told to stop."""
        request = pb.CancelRequest(request_id=request_id)
        if reason:
            request.reason = reason
        reply = await self._unary("Cancel", request)
        return bool(reply.cancelled)

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

    # ---- frames -------------------------------------------------------------------------------
    async def follow(
        self, request_id: str, *, after_seq: int = 0, timeout_s: float | None = None
    ) -> AsyncGenerator[StreamChunk, None]:
        """The frames of a request, relayed by the router from JetStream.

        Replays the frames after `after_seq`, then follows live ones, and ends after the done
        or error frame. Duplicates are dropped; a missing frame raises STREAM_GAP.

        Args:
            request_id: The request (`StreamAck.request_id`).
            after_seq: Skip frames up to and including this sequence number.
            timeout_s: Deadline of the whole stream; None for none.

        Raises:
            RiverbeamError: the router's error (STREAM_NOT_FOUND, ...); STREAM_GAP; and
                STREAM_WITHOUT_DONE when the relay ends before the terminal frame.
        """
        if not 0 <= after_seq <= _INT32_MAX:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, "after_seq must be >= 0", field="after_seq"
            )
        guard = SequenceGuard(request_id, after_seq)
        request = pb.FollowStreamRequest(request_id=request_id, after_seq=after_seq)
        call = self._stub().FollowStream(request, metadata=self._metadata, timeout=timeout_s)
        try:
            with self._translated():
                async for reply in call:
                    frame = StreamChunk.from_proto(reply.chunk)
                    if not guard.accept(frame):
                        continue
                    yield frame
                    if frame.is_terminal:
                        return
        finally:
            call.cancel()
        raise RiverbeamError(
            ErrorCode.STREAM_WITHOUT_DONE,
            f"the frames of request {request_id} ended before the done or error frame",
            request_id=request_id,
            last_seq=guard.last_seq,
        )

    def follow_nats(
        self,
        nats_url: str,
        request_id: str,
        *,
        after_seq: int = 0,
        stream_name: str = DEFAULT_STREAM_NAME,
        timeout_s: float | None = None,
    ) -> AsyncGenerator[StreamChunk, None]:
        """The frames of a request, read straight from NATS JetStream (see `follow_nats`)."""
        return follow_nats(
            nats_url, request_id, after_seq=after_seq, stream_name=stream_name, timeout_s=timeout_s
        )


def _canonical(value: str, field: str, code: ErrorCode) -> str:
    """The canonical (lowercase, hyphenated) form of a UUID argument, or a BEM error."""
    try:
        parsed = uuid.UUID(value)
    except (ValueError, TypeError):
        parsed = None
    if parsed is None or len(value) != 36:
        raise RiverbeamError(code, f"{field} {value!r} is not a UUID", field=field)
    return str(parsed)


def _config_json(config: TurnConfig | JsonObject | None) -> JsonObject | None:
    if isinstance(config, TurnConfig):
        return config.to_json_dict()
    return config
