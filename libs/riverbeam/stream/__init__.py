"""Frames over NATS JetStream: publish a request's frames, follow them, cancel a request.

Subjects: `riverbeam.stream.<request_id>` (frames, captured by one JetStream stream) and
`riverbeam.control.cancel.<request_id>` (core NATS). See docs/streams.md for the wire contract.
"""

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
from riverbeam.stream._subjects import cancel_subject_for, msg_id_for, request_id_token, subject_for

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
