"""The execution records and memory: the BeamStore protocol and its implementations.

    BeamStore       the protocol the pipeline uses (keyword-only methods)
    InMemoryStore   in process memory: tests and single-process development
    PgBeamStore     PostgreSQL (asyncpg); migrations applied by PgBeamStore.connect
    StoreClient     gRPC client of the store service

Every error is a RiverbeamError with a catalog code.
"""

import typing as _typing

from riverbeam._lazy import lazy_exports as _lazy_exports

__all__ = [
    "DEFAULT_SCHEMA",
    "USAGE_GROUPS",
    "BeamStore",
    "BeginRunResult",
    "FinishStatus",
    "InMemoryStore",
    "MessageKind",
    "NewAction",
    "NewMessage",
    "PgBeamStore",
    "RecordedOutcome",
    "RunCheckpoint",
    "StepHook",
    "StoreClient",
    "TakenOverRun",
    "UsageRow",
    "checkpoint_from_proto",
    "checkpoint_state",
    "checkpoint_to_proto",
    "load_migrations",
    "prune_idle_sessions",
    "run_retention",
    "usage_row_from_proto",
    "usage_row_to_proto",
]

if _typing.TYPE_CHECKING:
    from riverbeam.store._base import BeamStore
    from riverbeam.store._checkpoints import (
        RunCheckpoint,
        checkpoint_from_proto,
        checkpoint_state,
        checkpoint_to_proto,
    )
    from riverbeam.store._client import StoreClient
    from riverbeam.store._memory import InMemoryStore
    from riverbeam.store._migrations import load_migrations
    from riverbeam.store._postgres import DEFAULT_SCHEMA, PgBeamStore, StepHook
    from riverbeam.store._retention import prune_idle_sessions, run_retention
    from riverbeam.store._types import (
        BeginRunResult,
        FinishStatus,
        MessageKind,
        NewAction,
        NewMessage,
        RecordedOutcome,
        TakenOverRun,
    )
    from riverbeam.store._usage import GROUPS as USAGE_GROUPS
    from riverbeam.store._usage import UsageRow, usage_row_from_proto, usage_row_to_proto

# Each name's module, imported on first use (PEP 562): importing this package costs only
# what the caller then uses.
_LAZY: dict[str, str | tuple[str, str]] = {
    "BeamStore": ("riverbeam.store._base", "BeamStore"),
    "RunCheckpoint": ("riverbeam.store._checkpoints", "RunCheckpoint"),
    "checkpoint_from_proto": ("riverbeam.store._checkpoints", "checkpoint_from_proto"),
    "checkpoint_state": ("riverbeam.store._checkpoints", "checkpoint_state"),
    "checkpoint_to_proto": ("riverbeam.store._checkpoints", "checkpoint_to_proto"),
    "StoreClient": ("riverbeam.store._client", "StoreClient"),
    "InMemoryStore": ("riverbeam.store._memory", "InMemoryStore"),
    "load_migrations": ("riverbeam.store._migrations", "load_migrations"),
    "DEFAULT_SCHEMA": ("riverbeam.store._postgres", "DEFAULT_SCHEMA"),
    "PgBeamStore": ("riverbeam.store._postgres", "PgBeamStore"),
    "StepHook": ("riverbeam.store._postgres", "StepHook"),
    "prune_idle_sessions": ("riverbeam.store._retention", "prune_idle_sessions"),
    "run_retention": ("riverbeam.store._retention", "run_retention"),
    "BeginRunResult": ("riverbeam.store._types", "BeginRunResult"),
    "FinishStatus": ("riverbeam.store._types", "FinishStatus"),
    "MessageKind": ("riverbeam.store._types", "MessageKind"),
    "NewAction": ("riverbeam.store._types", "NewAction"),
    "NewMessage": ("riverbeam.store._types", "NewMessage"),
    "RecordedOutcome": ("riverbeam.store._types", "RecordedOutcome"),
    "TakenOverRun": ("riverbeam.store._types", "TakenOverRun"),
    "USAGE_GROUPS": ("riverbeam.store._usage", "GROUPS"),
    "UsageRow": ("riverbeam.store._usage", "UsageRow"),
    "usage_row_from_proto": ("riverbeam.store._usage", "usage_row_from_proto"),
    "usage_row_to_proto": ("riverbeam.store._usage", "usage_row_to_proto"),
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
