"""Checking a request's frames by their per-request sequence number."""

from __future__ import annotations

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import StreamChunk

__all__ = ["SequenceGuard"]


class SequenceGuard:
    """Accepts frames `after_seq + 1, after_seq + 2, ...` in order.

    A frame at or before the cursor (a replayed duplicate) is dropped; a frame past the next
    expected one means frames were lost, which is an error rather than a silent hole in the
    reply. Frames without a `seq` are passed through: only sequenced frames can be checked.

    Args:
        request_id: The request being followed (for error details).
        after_seq: The cursor: the last frame the caller has already seen.
    """

    def __init__(self, request_id: str, after_seq: int = 0) -> None:
        self._request_id = request_id
        self._expected = after_seq + 1

    @property
    def last_seq(self) -> int:
        """The sequence number of the last accepted frame (the cursor to resume from)."""
        return self._expected - 1

    def accept(self, frame: StreamChunk) -> bool:
        """True when the frame is the next one; False for a duplicate.

        Raises:
            RiverbeamError: STREAM_GAP when one or more frames are missing.
        """
        seq = frame.seq
        if seq is None:
            return True
        if seq < self._expected:
            return False
        if seq > self._expected:
            raise RiverbeamError(
                ErrorCode.STREAM_GAP,
                f"request {self._request_id}: expected frame {self._expected}, got {seq}",
                request_id=self._request_id,
                expected_seq=self._expected,
                got_seq=seq,
            )
        self._expected += 1
        return True
