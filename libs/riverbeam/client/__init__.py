"""The Python SDK of Riverbeam's public API.

    from riverbeam.client import RiverbeamClient

    async with RiverbeamClient("127.0.0.1:50051", token=token) as client:
        ack = await client.invoke("assistant", "hello", stream=True)
        async for frame in client.follow(ack.request_id):
            ...

Every error is a `riverbeam.core.errors.RiverbeamError` carrying the server's BEM code.
"""

from riverbeam.client._approvals import action_response
from riverbeam.client._client import DEFAULT_TARGET, RiverbeamClient
from riverbeam.client._nats import follow_nats
from riverbeam.client._sequence import SequenceGuard

__all__ = [
    "DEFAULT_TARGET",
    "RiverbeamClient",
    "SequenceGuard",
    "action_response",
    "follow_nats",
]
