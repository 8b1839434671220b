"""REST/JSON for every RPC of RiverbeamService, plus the frames as Server-Sent Events.

Each endpoint is one SDK call (`RiverbeamClient`) with the caller's bearer token: the router
authenticates, sanitises and checks ownership; the console only translates.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import AsyncGenerator, AsyncIterator
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Header, Path, Query, Request
from fastapi.responses import Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from riverbeam.client import RiverbeamClient
from riverbeam.console._auth import bearer_token
from riverbeam.console._bodies import (
    ActionsPage,
    AgentList,
    AnswerBody,
    CancelBody,
    CancelResult,
    ChatRequest,
    InvokeBody,
    MessagesPage,
    ModelList,
    ToolExecutionsPage,
    UsageReport,
    UsageRowBody,
)
from riverbeam.console._chat import UI_STREAM_HEADERS, ChatTranslator, chat_session_id
from riverbeam.console._problem import PROBLEM_RESPONSES, problem_of
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import ConsoleSettings
from riverbeam.types import (
    Action,
    AgentMetadata,
    AgentResult,
    Interaction,
    ResumePayload,
    Run,
    Session,
    StreamAck,
    StreamChunk,
)

__all__ = ["api_router", "chat_router"]

_INT32_MAX = 2**31 - 1
_UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
_SSE_HEADERS = {"x-accel-buffering": "no", "cache-control": "no-cache"}


def riverbeam_client(request: Request) -> RiverbeamClient:
    """An SDK client on the console's shared channel to the router, with the caller's token.

    Not closed after the request: it owns nothing (the channel is the app's), and a streamed
    response still uses it after the endpoint returned.
    """
    return RiverbeamClient(
        request.app.state.router_target,
        token=bearer_token(request),
        channel=request.app.state.channel,
    )


Client = Annotated[RiverbeamClient, Depends(riverbeam_client)]
PageSize = Annotated[int, Query(ge=0, le=1000, description="0: the server's default.")]
PageToken = Annotated[str, Query(max_length=4096, description="From the previous page.")]


# Record ids are UUIDs. Documented, not validated here: the router answers a malformed one with
# its catalog code (BEM-010, or BEM-063 for an action id).
_UUID_SCHEMA = {"format": "uuid", "pattern": _UUID_PATTERN}
Id = Annotated[str, Path(max_length=64, json_schema_extra=_UUID_SCHEMA)]


def _settings(request: Request) -> ConsoleSettings:
    settings: ConsoleSettings = request.app.state.settings
    return settings


api_router = APIRouter(prefix="/v1", responses=PROBLEM_RESPONSES)


# ---- invoke / resume / cancel ---------------------------------------------------------------------
@api_router.post(
    "/invoke",
    tags=["invoke"],
    summary="Invoke",
    response_model=AgentResult | StreamAck,
    description="Run an agent on one turn. With `stream: false` the AgentResult comes back when "
    "the run ends; with `stream: true` a StreamAck comes back at once and the frames are at "
    "`GET /v1/requests/{request_id}/frames`.",
)
async def invoke(body: InvokeBody, client: Client) -> AgentResult | StreamAck:
    return await client.invoke(
        body.agent_name,
        body.content,
        session_id=body.session_id,
        stream=body.stream,
        metadata=body.metadata,
        model_override=body.model_override,
        auth_context=body.auth_context,
        request_id=body.request_id,
    )


@api_router.post("/resume", tags=["invoke"], summary="Resume")
async def resume(body: ResumePayload, client: Client) -> StreamAck:
    """Answer pending actions of an interaction (the ResumeRequest); always streams."""
    return await client.resume(
        body.agent_name,
        body.session_id,
        body.interaction_id,
        body.actions,
        content=body.content,
        metadata=body.metadata,
        model_override=body.model_override,
        auth_context=body.auth_context,
        request_id=body.request_id,
    )


@api_router.post("/requests/{request_id}/cancel", tags=["invoke"], summary="Cancel")
async def cancel(
    client: Client,
    request_id: Id,
    body: Annotated[CancelBody | None, Body()] = None,
) -> CancelResult:
    """Cancel a running request."""
    cancelled = await client.cancel(request_id, reason=body.reason if body else None)
    return CancelResult(cancelled=cancelled)


async def _answer(
    client: RiverbeamClient, action_id: str, body: AnswerBody | None, *, approve: bool
) -> StreamAck:
    action = await client.get_action(action_id)
    answer = client.approve if approve else client.decline
    return await answer(
        action.session_id,
        action.interaction_id,
        action_id=action.action_id,
        agent_name=action.agent_name,
        reason=body.reason if body else None,
        responder_id=body.responder_id if body else None,
        request_id=body.request_id if body else None,
    )


@api_router.post("/actions/{action_id}/approve", tags=["approvals"], summary="Approve an action")
async def approve(
    client: Client,
    action_id: Id,
    body: Annotated[AnswerBody | None, Body()] = None,
) -> StreamAck:
    """Approve one pending action and resume its interaction (a Resume with status submitted)."""
    return await _answer(client, action_id, body, approve=True)


@api_router.post("/actions/{action_id}/decline", tags=["approvals"], summary="Decline an action")
async def decline(
    client: Client,
    action_id: Id,
    body: Annotated[AnswerBody | None, Body()] = None,
) -> StreamAck:
    """Decline one pending action (nothing runs; the agent is told) and resume."""
    return await _answer(client, action_id, body, approve=False)


# ---- agents and models ----------------------------------------------------------------------------
@api_router.get("/agents", tags=["agents"], summary="List agents")
async def list_agents(client: Client) -> AgentList:
    return AgentList(agents=await client.list_agents())


@api_router.get("/agents/{name}", tags=["agents"], summary="Get an agent")
async def get_agent(client: Client, name: Annotated[str, Path(max_length=256)]) -> AgentMetadata:
    return await client.get_agent(name)


@api_router.get("/models", tags=["agents"], summary="List models")
async def list_models(client: Client) -> ModelList:
    """The models the router may route to (never with API keys)."""
    return ModelList(models=await client.list_models())


@api_router.get("/sessions/{session_id}", tags=["records"], summary="Get a session")
async def get_session(client: Client, session_id: Id) -> Session:
    return await client.get_session(session_id)


@api_router.get("/sessions/{session_id}/messages", tags=["records"], summary="List messages")
async def list_messages(
    client: Client, session_id: Id, page_size: PageSize = 0, page_token: PageToken = ""
) -> MessagesPage:
    """One page of a session's messages in `seq` order."""
    messages, token = await client.list_messages_page(
        session_id, page_size=page_size, page_token=page_token
    )
    return MessagesPage(messages=messages, next_page_token=token)


@api_router.get("/interactions/{interaction_id}", tags=["records"], summary="Get an interaction")
async def get_interaction(client: Client, interaction_id: Id) -> Interaction:
    return await client.get_interaction(interaction_id)


@api_router.get("/runs/{run_id}", tags=["records"], summary="Get a run")
async def get_run(client: Client, run_id: Id) -> Run:
    return await client.get_run(run_id)


@api_router.get(
    "/runs/{run_id}/tool-executions", tags=["records"], summary="A run's tool-execution ledger"
)
async def list_run_tool_executions(
    client: Client, run_id: Id, page_size: PageSize = 0, page_token: PageToken = ""
) -> ToolExecutionsPage:
    """One page of the run's tool calls in call order (ListToolExecutions)."""
    entries, token = await client.list_tool_executions_page(
        run_id=run_id, page_size=page_size, page_token=page_token
    )
    return ToolExecutionsPage(entries=entries, next_page_token=token)


@api_router.get(
    "/interactions/{interaction_id}/tool-executions",
    tags=["records"],
    summary="An interaction's tool-execution ledger",
)
async def list_interaction_tool_executions(
    client: Client, interaction_id: Id, page_size: PageSize = 0, page_token: PageToken = ""
) -> ToolExecutionsPage:
    """One page of the tool calls of every run of the interaction, in call order."""
    entries, token = await client.list_tool_executions_page(
        interaction_id=interaction_id, page_size=page_size, page_token=page_token
    )
    return ToolExecutionsPage(entries=entries, next_page_token=token)


@api_router.get("/actions/{action_id}", tags=["approvals"], summary="Get an action")
async def get_action(client: Client, action_id: Id) -> Action:
    return await client.get_action(action_id)


@api_router.get("/usage", tags=["records"], summary="Token usage and cost")
async def get_usage(
    client: Client,
    group_by: Literal["run", "session", "user", "org"] = "session",
    start: datetime | None = None,
    end: datetime | None = None,
    user_id: Annotated[str | None, Query(max_length=256)] = None,
    org_id: Annotated[str | None, Query(max_length=256)] = None,
    session_id: Annotated[str | None, Query(max_length=64, json_schema_extra=_UUID_SCHEMA)] = None,
) -> UsageReport:
    """Usage of the runs started in [start, end), per group and model (GetUsage).

    The router limits the report to what the caller may see: its own runs, its
    organisation's for an approver, anyone's for an admin.
    """
    rows, total = await client.get_usage(
        group_by=group_by,
        start=start,
        end=end,
        user_id=user_id,
        org_id=org_id,
        session_id=session_id,
    )
    return UsageReport(
        group_by=group_by,
        rows=[UsageRowBody(**dataclasses.asdict(row)) for row in rows],
        total=UsageRowBody(**dataclasses.asdict(total)),
    )


@api_router.get("/inbox", tags=["approvals"], summary="The approval inbox")
async def list_pending_actions(
    client: Client,
    session_id: Annotated[str | None, Query(max_length=64, json_schema_extra=_UUID_SCHEMA)] = None,
    page_size: PageSize = 0,
    page_token: PageToken = "",
) -> ActionsPage:
    """Pending actions the caller may answer (ListPendingActions), optionally of one session."""
    actions, token = await client.list_pending_actions_page(
        session_id=session_id, page_size=page_size, page_token=page_token
    )
    return ActionsPage(actions=actions, next_page_token=token)


# ---- frames ---------------------------------------------------------------------------------------
def _cursor(last_event_id: str | None, after_seq: int | None) -> int:
    """Where a frame stream starts: after Last-Event-ID (a reconnect), else after `after_seq`."""
    if last_event_id is not None and last_event_id.strip():
        text = last_event_id.strip()
        if not text.isdigit() or int(text) > _INT32_MAX:
            raise RiverbeamError(
                ErrorCode.HTTP_BAD_CURSOR,
                "Last-Event-ID must be a frame's seq",
                field="Last-Event-ID",
            )
        return int(text)
    return after_seq or 0


def _event_stream(description: str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` of an endpoint answering with Server-Sent Events."""
    content = {"text/event-stream": {"schema": {"type": "string"}}}
    return {200: {"description": description, "content": content}}


def _sse_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


_FRAMES_DESCRIPTION = """\
The request's frames as Server-Sent Events: each event's `data` is the frame's JSON exactly
as on NATS (`riverbeam.stream.<request_id>`) and its `id` is the frame's `seq`. Frames after
`Last-Event-ID` (a reconnecting EventSource sends it) or `after_seq` are sent: stored ones
first, then live ones; the stream ends after the `done` or `error` frame. A follow that fails
once streaming has begun ends with an `event: problem` carrying a problem document. A resume
after the terminal frame gets 204 (an EventSource then stops reconnecting)."""


@api_router.get(
    "/requests/{request_id}/frames",
    tags=["frames"],
    summary="Follow a request's frames (SSE)",
    description=_FRAMES_DESCRIPTION,
    response_class=Response,
    responses={
        **_event_stream("text/event-stream of frames"),
        204: {"description": "Nothing after the cursor: the terminal frame was already sent."},
    },
)
async def follow_frames(
    request: Request,
    client: Client,
    request_id: Id,
    after_seq: Annotated[int | None, Query(ge=0, le=_INT32_MAX)] = None,
    last_event_id: Annotated[str | None, Header(max_length=32)] = None,
) -> Response:
    cursor = _cursor(last_event_id, after_seq)
    # A resume reads from the frame the client has (seq == cursor): when that one was the
    # terminal frame there is nothing more, and 204 stops an EventSource from reconnecting for
    # ever (the router would otherwise answer with a terminal frame rebuilt from the run).
    frames = client.follow(request_id, after_seq=max(cursor - 1, 0))
    try:
        first: StreamChunk | None = await anext(frames)
        if cursor > 0 and first is not None and first.seq == cursor:
            if first.is_terminal:
                await frames.aclose()
                return Response(status_code=204)
            first = await anext(frames)
    except StopAsyncIteration:
        first = None
    except RiverbeamError:
        await frames.aclose()
        raise
    settings = _settings(request)

    async def events() -> AsyncGenerator[ServerSentEvent, None]:
        async with contextlib.aclosing(frames):
            if first is None:
                return
            yield _frame_event(first)
            if first.is_terminal:
                return
            async for event in _frame_events(frames, request):
                yield event

    return EventSourceResponse(events(), ping=int(settings.sse_ping_s), headers=_SSE_HEADERS)


def _frame_event(frame: StreamChunk) -> ServerSentEvent:
    return ServerSentEvent(data=frame.to_json(), id=str(frame.seq))


async def _frame_events(
    frames: AsyncIterator[StreamAck | StreamChunk], request: Request
) -> AsyncGenerator[ServerSentEvent, None]:
    """Each frame as an event (`id` its seq); a failure while following as `event: problem`."""
    try:
        async for frame in frames:
            if isinstance(frame, StreamChunk):  # an InvokeStream's ack came before
                yield _frame_event(frame)
    except RiverbeamError as err:
        problem = problem_of(err, instance=request.url.path)
        yield ServerSentEvent(event="problem", data=problem.model_dump_json(exclude_none=True))


_INVOKE_STREAM_DESCRIPTION = """\
Run an agent and read its frames in one call (the InvokeStream RPC): Server-Sent Events, first
an `event: ack` whose `data` is the StreamAck, then the request's frames as
`GET /v1/requests/{request_id}/frames` sends them (`data` the frame's JSON as on NATS, `id`
its `seq`), ending after the `done` or `error` frame. The body is Invoke's; `stream` is
ignored (always streamed). A refused invoke is a problem+json response (nothing ran); a
failure once streaming has begun ends with an `event: problem`. Closing the connection stops
the reading, not the run; a reconnect reads on with `GET /v1/requests/{request_id}/frames`
and `Last-Event-ID`."""


@api_router.post(
    "/invoke/stream",
    tags=["invoke"],
    summary="Invoke and stream its frames (SSE)",
    description=_INVOKE_STREAM_DESCRIPTION,
    response_class=Response,
    responses=_event_stream("text/event-stream: the ack, then the frames"),
)
async def invoke_stream(body: InvokeBody, request: Request, client: Client) -> Response:
    events = client.invoke_stream(
        body.agent_name,
        body.content,
        session_id=body.session_id,
        metadata=body.metadata,
        model_override=body.model_override,
        auth_context=body.auth_context,
        request_id=body.request_id,
    )
    return await _acked_event_stream(events, request)


_RESUME_STREAM_DESCRIPTION = """\
Answer pending actions and read the resumed run's frames in one call (the ResumeStream RPC):
the body is `POST /v1/resume`'s, the response what `POST /v1/invoke/stream` sends (`event:
ack`, then the frames, ending after the `done` or `error` frame). A refused resume is a
problem+json response (nothing was answered); closing the connection stops the reading, not
the run."""


@api_router.post(
    "/resume/stream",
    tags=["invoke"],
    summary="Resume and stream its frames (SSE)",
    description=_RESUME_STREAM_DESCRIPTION,
    response_class=Response,
    responses=_event_stream("text/event-stream: the ack, then the frames"),
)
async def resume_stream(body: ResumePayload, request: Request, client: Client) -> Response:
    events = client.resume_stream(
        body.agent_name,
        body.session_id,
        body.interaction_id,
        body.actions,
        content=body.content,
        metadata=body.metadata,
        model_override=body.model_override,
        auth_context=body.auth_context,
        request_id=body.request_id,
    )
    return await _acked_event_stream(events, request)


async def _acked_event_stream(
    events: AsyncGenerator[StreamAck | StreamChunk, None], request: Request
) -> Response:
    """SSE of an ack-then-frames call: `event: ack`, then the frames' events."""
    # A refused call raises here (the generator ends with it): a problem+json response.
    ack = await anext(events)
    settings = _settings(request)

    async def sent() -> AsyncGenerator[ServerSentEvent, None]:
        async with contextlib.aclosing(events):
            yield ServerSentEvent(event="ack", data=ack.to_json())
            async for event in _frame_events(events, request):
                yield event

    return EventSourceResponse(sent(), ping=int(settings.sse_ping_s), headers=_SSE_HEADERS)


_ANSWER_STREAM_DESCRIPTION = """\
`POST /v1/actions/{action_id}/approve` (or `/decline`) and the resumed run's frames in one call
(the ResumeStream RPC): the same Server-Sent Events as `POST /v1/resume/stream` (`event: ack`,
then the frames). A refused answer is a problem+json response (nothing was answered)."""


@api_router.post(
    "/actions/{action_id}/{verb}/stream",
    tags=["approvals"],
    summary="Approve or decline an action and stream the resumed run (SSE)",
    description=_ANSWER_STREAM_DESCRIPTION,
    response_class=Response,
    responses=_event_stream("text/event-stream: the ack, then the frames"),
)
async def answer_stream(
    request: Request,
    client: Client,
    action_id: Id,
    verb: Literal["approve", "decline"],
    body: Annotated[AnswerBody | None, Body()] = None,
) -> Response:
    action = await client.get_action(action_id)
    events = client.answer_stream(
        action.session_id,
        action.interaction_id,
        approve=verb == "approve",
        action_id=action.action_id,
        agent_name=action.agent_name,
        reason=body.reason if body else None,
        responder_id=body.responder_id if body else None,
        request_id=body.request_id if body else None,
    )
    return await _acked_event_stream(events, request)


# ---- /chat: the AI SDK UI message stream ----------------------------------------------------------
chat_router = APIRouter(responses=PROBLEM_RESPONSES)

_CHAT_DESCRIPTION = """\
Speaks the Vercel AI SDK UI message stream protocol (v1): point `useChat` (DefaultChatTransport)
at this URL. The last user message is sent to the agent (`agent` in the body, else the
console's default); the chat id names the session. The response is SSE with one JSON part per
`data:` line (start, text-start/delta/end, tool-input-available, tool-output-available,
data-approval, error, finish) and a final `data: [DONE]`. Errors before the run starts are
problem+json responses."""


@chat_router.post(
    "/chat",
    tags=["chat"],
    summary="Chat (AI SDK UI message stream)",
    description=_CHAT_DESCRIPTION,
    response_class=Response,
    responses=_event_stream("UI message stream (x-vercel-ai-ui-message-stream: v1)"),
)
async def chat(body: ChatRequest, request: Request, client: Client) -> Response:
    user = next((m for m in reversed(body.messages) if m.role == "user"), None)
    text = user.text if user is not None else ""
    if not text.strip():
        raise RiverbeamError(ErrorCode.CHAT_NO_USER_MESSAGE)
    settings = _settings(request)
    # The ack and the frames on one call (InvokeStream); a refused turn raises at the ack.
    events = client.invoke_stream(
        body.agent or settings.chat_agent,
        text,
        session_id=body.session_id or chat_session_id(body.id),
        model_override=body.model_override,
    )
    ack = await anext(events)  # a refusal ends the generator with it
    assert isinstance(ack, StreamAck)
    translator = ChatTranslator()

    async def parts() -> AsyncGenerator[str, None]:
        for part in translator.start(ack):
            yield _sse_json(part)
        async with contextlib.aclosing(events):
            try:
                async for frame in events:
                    if not isinstance(frame, StreamChunk):
                        continue
                    for part in translator.frame(frame):
                        yield _sse_json(part)
                    if translator.finished:
                        break
            except RiverbeamError as err:
                for part in translator.error(f"{err.bem}: {problem_of(err).detail}"):
                    yield _sse_json(part)
        for part in translator.error("BEM-086: the stream ended before the done frame"):
            yield _sse_json(part)  # nothing when the finish part was sent
        yield "[DONE]"

    return EventSourceResponse(parts(), ping=int(settings.sse_ping_s), headers=UI_STREAM_HEADERS)
