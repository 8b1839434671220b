"""A begin-run step's reply as StoreClient hands it on: begin_run's records, converted from
the BeginRun reply (begin_reply), and the lent result whose interaction and human message
are converted only when read (RepliedBeginRun).

The pipeline reads the step's session, run, resolved actions and history, never the
interaction or the human message it wrote; converting those two costs about 16 us a turn
(measured in this round). A lent result (begin_run_lending, the pipeline's step) converts
them from the reply on first read instead; any other caller gets them converted, as before.

Of the run the pipeline reads only its lease epoch (a durable run's checkpoint, or an
abandoned run's close, reads the rest): a lent result converts its run when first read too
(5 us a turn), and `lease_epoch_of` reads the epoch from the reply while it is unread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from riverbeam.store._lent_history import LentBeginRun
from riverbeam.store._types import BeginRunResult
from riverbeam.types import Action, Interaction, Message, Run, Session
from riverbeam.v1 import store_service_pb2 as pb

__all__ = ["RepliedBeginRun", "begin_reply", "human_seq", "lease_epoch_of"]


class _Unread:
    """The value of a field not yet converted from the reply (RepliedBeginRun)."""

    __slots__ = ()


_UNREAD: Any = _Unread()


def _interaction(resp: pb.BeginRunResponse) -> Interaction:
    return Interaction.from_proto(resp.interaction)


def _run(resp: pb.BeginRunResponse) -> Run:
    return Run.from_proto(resp.run)


def _human(resp: pb.BeginRunResponse) -> Message | None:
    return Message.from_proto(resp.human_message) if resp.HasField("human_message") else None


def human_seq(resp: pb.BeginRunResponse) -> list[int]:
    """The seq of the human message the step saved, as a list (empty when it saved none)."""
    return [resp.human_message.seq] if resp.HasField("human_message") else []


def begin_reply(resp: pb.BeginRunResponse, *, lent: bool) -> dict[str, Any]:
    """BeginRunResult's fields but the history, from the reply: the interaction and the human
    message (and the run) left unread (converted when first read) when `lent`, for a
    RepliedBeginRun."""
    return {
        "session": Session.from_proto(resp.session),
        "interaction": _UNREAD if lent else _interaction(resp),
        "run": _UNREAD if lent else _run(resp),
        "human_message": _UNREAD if lent else _human(resp),
        "resolved_actions": [Action.from_proto(a) for a in resp.resolved_actions],
        "action_messages": [Message.from_proto(m) for m in resp.action_messages],
    }


class _FromReply:
    """A BeginRunResult field of a RepliedBeginRun: converted from the reply on first read,
    then kept in the field's own slot (read and written past this descriptor)."""

    def __init__(self, name: str, convert: Callable[[pb.BeginRunResponse], Any]) -> None:
        self._slot: Any = BeginRunResult.__dict__[name]
        self._convert = convert

    def __get__(self, obj: RepliedBeginRun | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = self._slot.__get__(obj, owner)
        if value is _UNREAD:
            value = self._convert(obj.reply)
            self._slot.__set__(obj, value)
        return value

    def __set__(self, obj: RepliedBeginRun, value: Any) -> None:
        self._slot.__set__(obj, value)

    def held(self, obj: RepliedBeginRun) -> Any:
        """The field's value as it is held: _UNREAD while not converted yet."""
        return self._slot.__get__(obj, type(obj))


@dataclass(frozen=True, slots=True)
class RepliedBeginRun(LentBeginRun):
    """A LentBeginRun whose `interaction` and `human_message` are converted from `reply` (the
    step's BeginRun reply) when first read, and so is its `run`: equal, once read, to
    begin_run's."""

    reply: pb.BeginRunResponse = field(kw_only=True, repr=False, compare=False)


# After the class is made: the dataclass's own __init__ then stores the three through them.
RepliedBeginRun.interaction = _FromReply("interaction", _interaction)  # type: ignore[assignment,misc]
RepliedBeginRun.human_message = _FromReply("human_message", _human)  # type: ignore[assignment,misc]
_RUN = _FromReply("run", _run)
RepliedBeginRun.run = _RUN  # type: ignore[assignment,misc]


def lease_epoch_of(begun: BeginRunResult) -> int | None:
    """`begun.run.lease_epoch`, read from the reply when the run is not converted yet (the
    pipeline reads nothing else of it on most turns)."""
    if type(begun) is RepliedBeginRun:
        run = _RUN.held(begun)
        if run is _UNREAD:
            message = begun.reply.run  # what Run.from_proto reads: an optional field
            return message.lease_epoch if message.HasField("lease_epoch") else None
        return run.lease_epoch  # type: ignore[no-any-return]
    return begun.run.lease_epoch
