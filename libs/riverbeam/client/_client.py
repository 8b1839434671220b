"""RiverbeamClient: the public API (`riverbeam.v1.RiverbeamService`) as typed async methods."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncGenerator, Sequence
from typing import Any, Literal, overload

from riverbeam.client._approvals import action_response
from riverbeam.client._connection import DEFAULT_TARGET, DEFAULT_TIMEOUT_S
from riverbeam.client._nats import follow_nats
from riverbeam.client._reads import _ReadCalls
from riverbeam.client._requests import invoke_message, resume_message
from riverbeam.client._sequence import SequenceGuard
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream import DEFAULT_STREAM_NAME
from riverbeam.types import (
    Action,
    ActionResponseEnvelope,
    ActionResponseStatus,
    AgentResult,
    ContentPart,
    InvokeAuthContext,
    JsonObject,
    StreamAck,
    StreamChunk,
    TurnConfig,
)
from riverbeam.v1 import riverbeam_service_pb2 as pb

__all__ = ["DEFAULT_TARGET", "DEFAULT_TIMEOUT_S", "RiverbeamClient"]

_INT32_MAX = 2**31 - 1


class RiverbeamClient(_ReadCalls):
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
        interaction_id: str | None = ...,
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
        interaction_id: str | None = ...,
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
        interaction_id: str | None = ...,
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
        interaction_id: str | None = None,
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
            interaction_id: Continue this interaction of the session (a new one when None);
                after a handoff its turns go to the agent it was handed to.
        """
        message = invoke_message(
            agent_name,
            content,
            session_id=session_id,
            stream=stream,
            metadata=metadata,
            model_override=model_override,
            auth_context=auth_context,
            request_id=request_id,
            response_schema=response_schema,
            time_limit_s=time_limit_s,
            token_budget=token_budget,
            turn_config=turn_config,
            session_config=session_config,
            interaction_id=interaction_id,
        )
        reply = await self._unary("Invoke", message, timeout_s)
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
        message = resume_message(
            agent_name,
            session_id,
            interaction_id,
            actions,
            content=content,
            metadata=metadata,
            model_override=model_override,
            auth_context=auth_context,
            request_id=request_id,
        )
        reply = await self._unary("Resume", message, timeout_s)
        return StreamAck.from_proto(reply.ack)

    async def resume_stream(
        self,
        agent_name: str | None,
        session_id: str,
        interaction_id: str,
        actions: Sequence[ActionResponseEnvelope],
        *,
        timeout_s: float | None = None,
        **options: Any,
    ) -> AsyncGenerator[StreamAck | StreamChunk, None]:
        """Answer pending actions and read the resumed run's frames in one call (ResumeStream).

        Takes `resume`'s arguments; yields its StreamAck, then the frames `follow` would
        relay, as `invoke_stream` does (a router older than ResumeStream gets Resume and
        FollowStream). `timeout_s` covers the whole call.
        """
        message = resume_message(agent_name, session_id, interaction_id, actions, **options)
        request = pb.ResumeStreamRequest(request=message)
        async with contextlib.aclosing(
            self._acked_frames("ResumeStream", request, "Resume", message, timeout_s)
        ) as events:
            async for event in events:
                yield event

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

    async def answer_stream(
        self,
        session_id: str,
        interaction_id: str,
        *,
        approve: bool,
        action_id: str | None = None,
        actions: Sequence[Action] | None = None,
        agent_name: str | None = None,
        responder_id: str | None = None,
        reason: str | None = None,
        request_id: str | None = None,
        timeout_s: float | None = None,
    ) -> AsyncGenerator[StreamAck | StreamChunk, None]:
        """`approve` (True) or `decline` (False), then the resumed run's frames, in one call
        (`resume_stream`): the StreamAck, then the frames. Raises as `approve` does."""
        status: ActionResponseStatus = "submitted" if approve else "cancelled"
        answered = await self._answers(
            status, session_id, interaction_id, action_id, actions, agent_name, responder_id, reason
        )
        async with contextlib.aclosing(
            self.resume_stream(*answered, request_id=request_id, timeout_s=timeout_s)
        ) as events:
            async for event in events:
                yield event

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
        answered = await self._answers(
            status, session_id, interaction_id, action_id, actions, agent_name, responder_id, reason
        )
        return await self.resume(*answered, request_id=request_id)

    async def _answers(
        self,
        status: ActionResponseStatus,
        session_id: str,
        interaction_id: str,
        action_id: str | None,
        actions: Sequence[Action] | None,
        agent_name: str | None,
        responder_id: str | None,
        reason: str | None,
    ) -> tuple[str | None, str, str, list[ActionResponseEnvelope]]:
        """resume's (agent, session, interaction, envelopes) answering the pending actions."""
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
        return agent_name, session_id, interaction_id, envelopes

    async def cancel(self, request_id: str, *, reason: str | None = None) -> bool:
        """Stop a running request; True when a live run was found and told to stop."""
        request = pb.CancelRequest(request_id=request_id)
        if reason:
            request.reason = reason
        reply = await self._unary("Cancel", request)
        return bool(reply.cancelled)

    # ---- frames -------------------------------------------------------------------------------
    async def invoke_stream(
        self,
        agent_name: str,
        content: str | Sequence[ContentPart],
        *,
        timeout_s: float | None = None,
        **options: Any,
    ) -> AsyncGenerator[StreamAck | StreamChunk, None]:
        """Run an agent and read its frames in one call (InvokeStream).

        Yields the StreamAck first (its `request_id` resumes a broken read with `follow`),
        then the request's frames, ending after the done or error frame. The request runs as
        `invoke(..., stream=True)` runs it; the frames are those `follow` relays, without its
        second call. Stopping early stops the reading, not the run (`cancel` stops it).

        Args:
            agent_name: The agent to run.
            content: The turn: a string (one text part) or content parts.
            timeout_s: Deadline of the whole call, frames included; None for none.
            **options: `invoke`'s other keyword arguments (session_id, metadata,
                request_id, ...), but not `stream`.

        A router older than InvokeStream answers UNIMPLEMENTED before anything runs: the
        request then goes as Invoke and FollowStream, with the same ack and frames.

        Raises:
            RiverbeamError: what `invoke` and `follow` raise.
        """
        message = invoke_message(agent_name, content, stream=True, **options)
        request = pb.InvokeStreamRequest(request=message)
        async with contextlib.aclosing(
            self._acked_frames("InvokeStream", request, "Invoke", message, timeout_s)
        ) as events:
            async for event in events:
                yield event

    async def _acked_frames(
        self, method: str, request: Any, unary: str, message: Any, timeout_s: float | None
    ) -> AsyncGenerator[StreamAck | StreamChunk, None]:
        """A call answering `ack`, then `chunk`s (InvokeStream, ResumeStream): the ack, then
        the frames up to the terminal one. A router without `method` answers UNIMPLEMENTED
        before anything runs: `message` then goes as the `unary` call, and its ack is followed.
        """
        call = getattr(self._stub(), method)(request, metadata=self._metadata, timeout=timeout_s)
        guard: SequenceGuard | None = None
        request_id: str | None = None
        older_router = False
        try:
            with self._translated():
                async for reply in call:
                    if reply.WhichOneof("event") == "ack":
                        ack = StreamAck.from_proto(reply.ack)
                        request_id = ack.request_id
                        guard = SequenceGuard(request_id, 0)
                        yield ack
                        continue
                    frame = StreamChunk.from_proto(reply.chunk)
                    if guard is None or not guard.accept(frame):
                        continue
                    yield frame
                    if frame.is_terminal:
                        return
        except RiverbeamError as err:
            if guard is not None or not _unimplemented(err):
                raise
            older_router = True
        finally:
            call.cancel()
        if older_router:
            reply = await self._unary(unary, message, timeout_s)
            ack = StreamAck.from_proto(reply.ack)
            yield ack
            async for frame in self.follow(ack.request_id, timeout_s=timeout_s):
                yield frame
            return
        raise RiverbeamError(
            ErrorCode.STREAM_WITHOUT_DONE,
            "the frames of the request ended before the done or error frame",
            request_id=request_id,
            last_seq=guard.last_seq if guard is not None else 0,
        )

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


def _unimplemented(err: RiverbeamError) -> bool:
    """A status the router did not send itself (no ErrorInfo) saying the method is unknown."""
    return err.transport and err.details.get("grpc_code") == "UNIMPLEMENTED"
