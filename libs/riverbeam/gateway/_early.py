"""FollowStream's early subscription: the consumer is made while the access check reads the store.

Nothing is read from it before the check passes; a refused follow removes it.
"""

from __future__ import annotations

import asyncio
import contextlib

from riverbeam.core.errors import RiverbeamError
from riverbeam.gateway._ports import FramesPort, FramesSubscription, SubscribingFrames

__all__ = ["discard_early", "subscribe_early", "subscribed_early"]

# How long a refused follow waits for its early consumer to be made, to remove it.
_DISCARD_WAIT_S = 2.0


def subscribe_early(
    frames: FramesPort, request_id: str, *, after_a_turn: bool = True
) -> asyncio.Future[FramesSubscription] | None:
    """The request's subscription, being made; None when the port cannot subscribe first.

    With `after_a_turn` it starts a turn of the loop later, so that the store read the caller
    makes next goes out first: that read is the longer wait of the two (a hop to the store,
    which is often still busy with the request's own finish step), and a gRPC call is sent
    from a task of its own, which would otherwise wait while the consumer's creation request
    is built (~0.3 ms). A caller that reads nothing first (a granted follow) does not wait.
    """
    if not isinstance(frames, SubscribingFrames):
        return None
    if not after_a_turn:
        return asyncio.ensure_future(frames.subscribe(request_id))
    return asyncio.ensure_future(_subscribe_after_a_turn(frames, request_id))


async def _subscribe_after_a_turn(frames: SubscribingFrames, request_id: str) -> FramesSubscription:
    await asyncio.sleep(0)
    return await frames.subscribe(request_id)


async def subscribed_early(
    early: asyncio.Future[FramesSubscription] | None,
) -> FramesSubscription | None:
    """The early subscription, or None when there is none or it failed: the follow then
    subscribes itself, and meets (and handles) the same error there."""
    if early is None:
        return None
    try:
        return await early
    except RiverbeamError:
        return None


async def discard_early(early: asyncio.Future[FramesSubscription] | None) -> None:
    """Remove an early subscription no follow took over.

    One being made is let finish first (briefly): cancelled midway, its consumer could be made
    on the server all the same and linger until the server reaps it.
    """
    if early is None:
        return
    with contextlib.suppress(BaseException):
        async with asyncio.timeout(_DISCARD_WAIT_S):
            subscription = await early
        await subscription.aclose()
