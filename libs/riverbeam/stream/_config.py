"""The JetStream stream that captures every request's frames, as plain settings."""

from __future__ import annotations

import re
from dataclasses import dataclass

from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = [
    "CANCEL_SUBJECT_PREFIX",
    "DEFAULT_STREAM_NAME",
    "DEFAULT_SUBJECT_PREFIX",
    "StreamConfig",
]

DEFAULT_STREAM_NAME = "RIVERBEAM_STREAM"
DEFAULT_SUBJECT_PREFIX = "riverbeam.stream"
CANCEL_SUBJECT_PREFIX = "riverbeam.control.cancel"

# JetStream stream names may not contain whitespace, `.`, `*`, `>`, path separators or control
# characters; we keep to a conservative set so the name is also a safe file name on the server.
_STREAM_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
# Subject prefix: literal tokens only (no wildcards), each token a safe identifier.
_SUBJECT_TOKEN = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class StreamConfig:
    """Where frames live in JetStream and how long they are kept.

    Attributes:
        name: The JetStream stream name.
        subject_prefix: Frames of request R go to `<subject_prefix>.<R>`; the stream captures
            `<subject_prefix>.>`.
        max_age_s: How long a frame is kept, so a late or reconnecting follower can replay it.
        duplicate_window_s: How long the server remembers a `Nats-Msg-Id` to drop a retried
            publish. Must not exceed `max_age_s`.
        max_bytes: Optional cap on the stream's size; the oldest frames go first.
        replicas: JetStream replicas (1 for a single server, 3 for a cluster).
    """

    name: str = DEFAULT_STREAM_NAME
    subject_prefix: str = DEFAULT_SUBJECT_PREFIX
    max_age_s: float = 24 * 3600.0
    duplicate_window_s: float = 120.0
    max_bytes: int | None = None
    replicas: int = 1

    def __post_init__(self) -> None:
        if not _STREAM_NAME.fullmatch(self.name):
            raise _invalid("name", f"stream name {self.name!r} must match [A-Za-z0-9_-]{{1,64}}")
        tokens = self.subject_prefix.split(".")
        if not all(_SUBJECT_TOKEN.fullmatch(t) for t in tokens):
            raise _invalid(
                "subject_prefix",
                f"subject prefix {self.subject_prefix!r} must be dot-separated [A-Za-z0-9_-] tokens",
            )
        if not self.max_age_s > 0:
            raise _invalid("max_age_s", "max_age_s must be positive")
        if not 0 < self.duplicate_window_s <= self.max_age_s:
            raise _invalid("duplicate_window_s", "duplicate_window_s must be in (0, max_age_s]")
        if self.max_bytes is not None and self.max_bytes <= 0:
            raise _invalid("max_bytes", "max_bytes must be positive when set")
        if self.replicas < 1:
            raise _invalid("replicas", "replicas must be at least 1")

    @property
    def subjects(self) -> list[str]:
        """The subjects the stream captures."""
        return [f"{self.subject_prefix}.>"]


def _invalid(field: str, message: str) -> RiverbeamError:
    return RiverbeamError(ErrorCode.INVALID_ARGUMENT, message, field=field)
