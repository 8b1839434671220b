"""The execution records and memory: the BeamStore protocol and its implementations.

    BeamStore       the protocol the pipeline uses (keyword-only methods)
    InMemoryStore   in process memory: tests and single-process development
    PgBeamStore     PostgreSQL (asyncpg); migrations applied by PgBeamStore.connect
    StoreClient     gRPC client of the store service

Every error is a RiverbeamError with a catalog code.
"""

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
