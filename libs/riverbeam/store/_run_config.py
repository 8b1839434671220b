"""The agent layer's configuration records, the same in every store (docs/agents.md).

A begin-run step may replace the session's configuration (`Session.config`: None leaves it,
an empty TurnConfig clears it) and records the run's per-request options (`Run.options`;
empty options are not recorded).
"""

from __future__ import annotations

from riverbeam.types import RunOptions, Session, TurnConfig

__all__ = ["recorded_options", "with_session_config"]


def with_session_config(session: Session, config: TurnConfig | None) -> Session:
    """The session after a begin-run step that sent `config`."""
    if config is None:
        return session
    stored = None if config.is_empty else config.model_copy(deep=True)
    return session.model_copy(update={"config": stored})


def recorded_options(options: RunOptions | None) -> RunOptions | None:
    """What a run records of its options: None for none."""
    if options is None or options.is_empty:
        return None
    return options.model_copy(deep=True)
