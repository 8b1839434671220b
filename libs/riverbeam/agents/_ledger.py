"""The run's tool-execution ledger as the agent keeps it while it calls tools.

Every tool call gets an entry (docs/durability.md, "Tool-execution ledger"). Writing each
transition to the store would cost a round trip per call on the run's hot path, so entries
are kept here and written in batches, with one exception that crash safety needs:

- before a tool that is neither read-only nor idempotent runs, its `started` entry (with
  every entry not yet written) is written to the store and the call waits for it; if that
  write fails, the tool does not run. A side-effecting call is on record before it acts, so
  a takeover finds it and marks it `unknown`.
- everything else (requested, denied, held, cancelled, a rerun-safe call's start, every
  final status) waits for the next write: the next such `started` write, or the run's
  finish step, which carries the batch in its own transaction.

A runner that dies loses only unwritten entries, and those are of calls that either never
started or may be made again (rerun-safe), or had already finished.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from riverbeam.agents._io import AgentInput
from riverbeam.agents._tool import ToolSpec
from riverbeam.core.errors import RiverbeamError
from riverbeam.core.ids import new_id
from riverbeam.types import (
    RESULT_PREVIEW_CHARS,
    ToolExecution,
    ToolExecutionStatus,
    canonical_json,
)

__all__ = ["LedgerWriter", "ToolLedger"]


class LedgerWriter(Protocol):
    """Where ledger entries go (every BeamStore)."""

    async def record_tool_executions(
        self,
        *,
        run_id: str,
        entries: Sequence[ToolExecution],
        lease_epoch: int | None = None,
    ) -> list[ToolExecution]: ...


def _utcnow() -> datetime:
    return datetime.now(UTC)


class ToolLedger:
    """The entries of one run's tool calls, and which of them the store has not seen yet.

    Args:
        writer: Where `started` entries of side-effecting calls are written before the call
            runs; None keeps everything here (an agent run outside the pipeline).
        lease_epoch: The epoch the run is held at; every write is fenced by it.
        first_seq: The `seq` of the run's first call here (a run continued by another
            runner goes on after the calls already on record).
    """

    def __init__(
        self,
        *,
        run_id: str,
        interaction_id: str,
        session_id: str,
        writer: LedgerWriter | None = None,
        runner_id: str | None = None,
        lease_epoch: int | None = None,
        clock: Callable[[], datetime] = _utcnow,
        first_seq: int = 1,
    ) -> None:
        self.run_id = run_id
        self.interaction_id = interaction_id
        self.session_id = session_id
        self._writer = writer
        self._runner_id = runner_id
        self._epoch = lease_epoch
        self._clock = clock
        self._seq = itertools.count(first_seq)
        self._entries: dict[str, ToolExecution] = {}
        self._by_call: dict[str, str] = {}
        self._unwritten: set[str] = set()
        self._rerun_safe: dict[str, bool] = {}
        self.synchronous_writes = 0

    @classmethod
    def of_input(cls, input: AgentInput) -> ToolLedger:
        """A ledger that only keeps entries here, for an agent run outside the pipeline."""
        return cls(
            run_id=input.run_id or "local",
            interaction_id=input.interaction_id or "local",
            session_id=input.session_id or "local",
        )

    @property
    def entries(self) -> list[ToolExecution]:
        """Every entry of the run, in call order."""
        return sorted(self._entries.values(), key=lambda e: e.seq)

    def entry(self, execution_id: str) -> ToolExecution:
        return self._entries[execution_id]

    # ---- transitions -----------------------------------------------------------------------
    def request(
        self,
        *,
        tool: str,
        args: dict[str, Any],
        tool_call_id: str | None,
        spec: ToolSpec | None,
        action_id: str | None = None,
    ) -> str:
        """A new `requested` entry for a call; returns its execution id."""
        execution_id = new_id()
        self._entries[execution_id] = ToolExecution(
            execution_id=execution_id,
            tool_call_id=tool_call_id,
            run_id=self.run_id,
            interaction_id=self.interaction_id,
            session_id=self.session_id,
            seq=next(self._seq),
            tool=tool,
            args=dict(args),
            read_only=spec.read_only if spec is not None else False,
            idempotent=spec.idempotent if spec is not None else False,
            action_id=action_id,
            runner_id=self._runner_id,
            lease_epoch=self._epoch,
            requested_at=self._clock(),
        )
        self._rerun_safe[execution_id] = spec.rerun_safe if spec is not None else False
        if tool_call_id:
            self._by_call[tool_call_id] = execution_id
        self._unwritten.add(execution_id)
        return execution_id

    async def start(self, execution_id: str) -> None:
        """The call is about to run. A side-effecting call waits until that is on record.

        Raises:
            RiverbeamError: the store refused or could not take the write (BEM-035 once the
                run was taken over, BEM-120 ...). The entry is then `failed` and the tool
                must not run.
        """
        self._set(execution_id, status="started", started_at=self._clock())
        if self._writer is None or self._rerun_safe[execution_id]:
            return
        try:
            await self.flush()
        except RiverbeamError as err:
            self.finish(execution_id, "failed", error=err)
            raise

    def finish(
        self,
        execution_id: str,
        status: ToolExecutionStatus,
        *,
        result: Any = None,
        error: RiverbeamError | None = None,
        message: str | None = None,
    ) -> None:
        """A final status; a succeeded call's result is kept as its digest and preview."""
        fields: dict[str, Any] = {"status": status, "finished_at": self._clock()}
        if status == "succeeded":
            text = canonical_json(result)  # once: a result may be a whole file
            fields["result_digest"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
            fields["result_preview"] = text[:RESULT_PREVIEW_CHARS]
        if error is not None:
            fields["error_code"] = error.bem
            fields["error_message"] = error.message
        elif message is not None:
            fields["error_message"] = message
        self._set(execution_id, **fields)

    def hold(self, tool_call_id: str, action_id: str) -> None:
        """The call waits for a person's answer to `action_id` (it ends this run's entry)."""
        execution_id = self._by_call.get(tool_call_id)
        if execution_id is not None and not self._entries[execution_id].final:
            self._set(execution_id, status="held", action_id=action_id, finished_at=self._clock())

    def settle_open(self, message: str) -> None:
        """At the run's end: calls still open were cut short (`cancelled`, with `message`)."""
        for execution_id, entry in self._entries.items():
            if not entry.final:
                self.finish(execution_id, "cancelled", message=message)

    # ---- writing ---------------------------------------------------------------------------
    def unwritten(self) -> list[ToolExecution]:
        """The entries (as they are now) the store has not seen, in call order."""
        if not self._unwritten:
            return []
        return sorted((self._entries[i] for i in self._unwritten), key=lambda e: e.seq)

    def written(self, entries: Sequence[ToolExecution]) -> None:
        """The store took these entries (as given): they need no writing until they change."""
        for entry in entries:
            if self._entries.get(entry.execution_id) == entry:
                self._unwritten.discard(entry.execution_id)

    async def flush(self) -> None:
        """Write every unwritten entry now, in one store call fenced by the run's epoch."""
        batch = self.unwritten()
        if not batch or self._writer is None:
            return
        self.synchronous_writes += 1
        await self._writer.record_tool_executions(
            run_id=self.run_id, entries=batch, lease_epoch=self._epoch
        )
        self.written(batch)

    def _set(self, execution_id: str, **fields: Any) -> None:
        self._entries[execution_id] = self._entries[execution_id].model_copy(update=fields)
        self._unwritten.add(execution_id)
