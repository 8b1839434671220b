"""FollowStream: a request's frames, for a caller who may follow it, until its stream ends.

The access check reads the run and its session (one store call when the store can) while the
request's consumer is made; a caller this router just handed the request's StreamAck holds a
grant (_grants.py) and skips that read. Nothing is relayed before the check passes. A quiet
stream makes the run be read again: a run that ended without its terminal frame on the stream
is ended from its record.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator

from riverbeam.auth import Principal
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.gateway._early import discard_early, subscribe_early, subscribed_early
from riverbeam.gateway._grants import StreamGrants
from riverbeam.gateway._ownership import OwnershipChecks
from riverbeam.gateway._ports import FramesPort, FramesSubscription
from riverbeam.types import Run, StreamChunk

__all__ = ["StreamFollowing"]


class StreamFollowing(OwnershipChecks):
    """The follow half of the Gateway (a mixin: the Gateway sets `_store`, `_frames`,
    `_grants` and the two follow timings)."""

    _frames: FramesPort | None
    _grants: StreamGrants
    _recheck_s: float
    _settled_s: float

    async def follow(
        self, principal: Principal, request_id: str, *, after_seq: int
    ) -> AsyncIterator[StreamChunk]:
        if self._frames is None:
            raise RiverbeamError(ErrorCode.STREAM_NOT_FOUND, "this router has no stream access")
        # This router just handed this very principal the request's StreamAck: it may follow
        # it, and the run was running then (the relay re-reads it when the stream is quiet).
        granted = self._grants.lookup(principal, request_id)
        # The request's consumer is made while the store reads the run and its session (one
        # call when the store can); nothing is yielded before the access check passes, and a
        # refusal removes the consumer. With a grant there is no read to let go out first.
        early = subscribe_early(self._frames, request_id, after_a_turn=granted is None)
        try:
            if granted is not None:
                run_id, running = granted.run_id, True
            else:
                run, session = await self._request_run_with_session(request_id)
                run = await self._may_reach(principal, run, session)
                run_id, running = run.run_id, run.status == "running"
            subscribed = await subscribed_early(early)
        except BaseException:
            await discard_early(early)
            raise
        # The follow owns the subscription, but may be stopped before it ever reads it.
        try:
            async with contextlib.aclosing(
                self._relay(request_id, run_id, running, after_seq, subscribed)
            ) as relay:
                async for frame in relay:
                    yield frame
        finally:
            if subscribed is not None:
                await subscribed.aclose()

    async def _relay(
        self,
        request_id: str,
        run_id: str,
        running: bool,
        cursor: int,
        subscribed: FramesSubscription | None,
    ) -> AsyncGenerator[StreamChunk, None]:
        """The frames of a request the caller may follow, until its end.

        `running`: whether its run was running when last read; the run is read again by
        `run_id` whenever the stream goes quiet.
        """
        assert self._frames is not None
        first: tuple[AsyncIterator[StreamChunk], asyncio.Future[StreamChunk]] | None = None
        first = self._frames_after(request_id, running, cursor, subscribed)
        while True:
            finished = not running
            frames, head = first or self._frames_after(request_id, running, cursor)
            first = None
            try:
                try:
                    frame = await head
                except StopAsyncIteration:
                    return
                cursor = frame.seq or cursor
                yield frame
                if frame.is_terminal:
                    return
                async for frame in frames:
                    cursor = frame.seq or cursor
                    yield frame
                    if frame.is_terminal:
                        return
                return
            except RiverbeamError as err:
                if err.code not in (ErrorCode.STREAM_TIMEOUT, ErrorCode.STREAM_NOT_FOUND):
                    raise
                if err.code is ErrorCode.STREAM_NOT_FOUND and cursor == 0 and finished:
                    raise  # a request that never streamed (stream=false)
                run = await self._store.get_run(run_id=run_id)
                running = run.status == "running"
                if running:
                    continue  # quiet, not over: follow on from the cursor
                if not finished:
                    continue  # it just ended: read what it stored, briefly
                # Over. If its terminal frame is stored (at or before the caller's cursor, which
                # may point past the end), that is the real end: nothing more to send. If it
                # never reached the stream (the runner stopped between recording the run and
                # publishing it), end from the record, right after the last stored frame.
                last = await self._frames.last_frame(request_id)
                if last is not None and last.is_terminal:
                    return
                seq = (last.seq or 0) + 1 if last is not None else 1
                if seq > cursor:
                    yield _terminal_from_run(run, request_id=request_id, seq=seq)
                return

    def _frames_after(
        self,
        request_id: str,
        running: bool,
        cursor: int,
        subscribed: FramesSubscription | None = None,
    ) -> tuple[AsyncIterator[StreamChunk], asyncio.Future[StreamChunk]]:
        """The request's frames after `cursor` (on `subscribed` if given), the first one
        already being awaited."""
        assert self._frames is not None
        finished = not running
        # A finished run's frames are all stored: no need to wait for more.
        idle_timeout_s = self._settled_s if finished else self._recheck_s
        wait_for_start_s = self._settled_s if finished else None
        if subscribed is not None:
            frames = subscribed.frames(
                after_seq=cursor, idle_timeout_s=idle_timeout_s, wait_for_start_s=wait_for_start_s
            )
        else:
            frames = self._frames.follow(
                request_id,
                after_seq=cursor,
                idle_timeout_s=idle_timeout_s,
                wait_for_start_s=wait_for_start_s,
            )
        return frames, asyncio.ensure_future(anext(frames))


def _terminal_from_run(run: Run, *, request_id: str, seq: int) -> StreamChunk:
    """The done or error frame a finished run would have ended its stream with."""
    ids = {
        "agent_name": run.agent_name,
        "session_id": run.session_id,
        "interaction_id": run.interaction_id,
        "run_id": run.run_id,
        "request_id": request_id,
        "seq": seq,
    }
    if run.status in ("completed", "interrupted") and run.result is not None:
        return StreamChunk(type="done", result=run.result, **ids)
    return StreamChunk(
        type="error",
        error=run.error_message or f"run ended {run.status}",
        error_code=run.error_code or ErrorCode.INTERNAL.code,
        **ids,
    )
