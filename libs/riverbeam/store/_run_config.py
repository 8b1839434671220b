"""The agent layer's configuration records, the same in every store (docs/agents.md).

A begin-run step may replace the session's configuration (`Session.config`: None leaves it,
an empty TurnConfig clears it), or narrow it (`narrows`: the stored one, then the new one;
an empty one changes nothing), and records the run's per-request options (`Run.options`;
empty options are not recorded).
"""

from __future__ import annotations

from riverbeam.types import RunOptions, Session, TurnConfig

__all__ = ["UNCHANGED", "new_session_config", "recorded_options", "with_session_config"]

UNCHANGED = object()
"""new_session_config's answer when nothing is to be written."""


def new_session_config(
    stored: TurnConfig | None, config: TurnConfig | None, *, narrows: bool
) -> TurnConfig | object | None:
    """The session's configuration after a step that sent `config` (None: no config), or
    UNCHANGED."""
    if config is None or (narrows and config.is_empty):
        return UNCHANGED
    if narrows and stored is not None:
        config = stored.then(config)
    return None if config.is_empty else config.model_copy(deep=True)


def with_session_config(
    session: Session, config: TurnConfig | None, *, narrows: bool = False
) -> Session:
    """The session after a begin-run step that sent `config`."""
    new = new_session_config(session.config, config, narrows=narrows)
    if new is UNCHANGED:
        return session
    return session.model_copy(update={"config": new})


def recorded_options(options: RunOptions | None) -> RunOptions | None:
    """What a run records of its options: None for none."""
    if options is None or options.is_empty:
        return None
    return options.model_copy(deep=True)
