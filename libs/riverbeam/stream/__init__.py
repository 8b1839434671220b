"""Frames over NATS JetStream: publish a request's frames, follow them, cancel a request.

Subjects: `riverbeam.stream.<request_id>` (frames, captured by one JetStream stream) and
`riverbeam.control.cancel.<request_id>` (core NATS). See docs/streams.md for the wire contract.
"""

import typing as _typing

from riverbeam._lazy import lazy_exports as _lazy_exports

__all__ = [
    "CANCEL_SUBJECT_PREFIX",
    "DEFAULT_STREAM_NAME",
    "DEFAULT_SUBJECT_PREFIX",
    "EXPECTED_LAST_SUBJECT_SEQ_HEADER",
    "MSG_ID_HEADER",
    "CancelHandler",
    "FrameSink",
    "MemorySink",
    "NatsConnection",
    "RequestPublisher",
    "RequestSubscription",
    "SequencedSink",
    "StreamConfig",
    "StreamGuard",
    "cancel_subject_for",
    "ensure_stream",
    "find_nats_server",
    "follow",
    "last_frame",
    "last_seq",
    "msg_id_for",
    "publish_cancel",
    "request_id_token",
    "subject_for",
    "subscribe_cancel",
    "subscribe_request",
]

if _typing.TYPE_CHECKING:
    from riverbeam.stream._binary import find_nats_server
    from riverbeam.stream._config import (
        CANCEL_SUBJECT_PREFIX,
        DEFAULT_STREAM_NAME,
        DEFAULT_SUBJECT_PREFIX,
        StreamConfig,
    )
    from riverbeam.stream._connection import NatsConnection
    from riverbeam.stream._control import CancelHandler, publish_cancel, subscribe_cancel
    from riverbeam.stream._ensure import ensure_stream
    from riverbeam.stream._follow import (
        RequestSubscription,
        follow,
        last_frame,
        last_seq,
        subscribe_request,
    )
    from riverbeam.stream._guard import StreamGuard
    from riverbeam.stream._memory import MemorySink
    from riverbeam.stream._publisher import (
        EXPECTED_LAST_SUBJECT_SEQ_HEADER,
        MSG_ID_HEADER,
        RequestPublisher,
    )
    from riverbeam.stream._sink import FrameSink, SequencedSink
    from riverbeam.stream._subjects import (
        cancel_subject_for,
        msg_id_for,
        request_id_token,
        subject_for,
    )

# Each name's module, imported on first use (PEP 562): importing this package costs only
# what the caller then uses.
_LAZY: dict[str, str | tuple[str, str]] = {
    "find_nats_server": "riverbeam.stream._binary",
    "CANCEL_SUBJECT_PREFIX": "riverbeam.stream._config",
    "DEFAULT_STREAM_NAME": "riverbeam.stream._config",
    "DEFAULT_SUBJECT_PREFIX": "riverbeam.stream._config",
    "StreamConfig": "riverbeam.stream._config",
    "NatsConnection": "riverbeam.stream._connection",
    "CancelHandler": "riverbeam.stream._control",
    "publish_cancel": "riverbeam.stream._control",
    "subscribe_cancel": "riverbeam.stream._control",
    "ensure_stream": "riverbeam.stream._ensure",
    "RequestSubscription": "riverbeam.stream._follow",
    "follow": "riverbeam.stream._follow",
    "last_frame": "riverbeam.stream._follow",
    "last_seq": "riverbeam.stream._follow",
    "subscribe_request": "riverbeam.stream._follow",
    "StreamGuard": "riverbeam.stream._guard",
    "MemorySink": "riverbeam.stream._memory",
    "EXPECTED_LAST_SUBJECT_SEQ_HEADER": "riverbeam.stream._publisher",
    "MSG_ID_HEADER": "riverbeam.stream._publisher",
    "RequestPublisher": "riverbeam.stream._publisher",
    "FrameSink": "riverbeam.stream._sink",
    "SequencedSink": "riverbeam.stream._sink",
    "cancel_subject_for": "riverbeam.stream._subjects",
    "msg_id_for": "riverbeam.stream._subjects",
    "request_id_token": "riverbeam.stream._subjects",
    "subject_for": "riverbeam.stream._subjects",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
