"""Creating (or bringing up to date) the one JetStream stream that keeps every request's frames."""

from __future__ import annotations

import logging

import nats.errors
import nats.js.errors
from nats.js import api
from nats.js.client import JetStreamContext

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.stream._config import StreamConfig

__all__ = ["ensure_stream"]

log = logging.getLogger("riverbeam.stream")

# JetStream: "stream name already in use with a different configuration".
_STREAM_NAME_IN_USE = 10058
# Durations come back from the server in nanoseconds, converted to float seconds.
_SECONDS_TOLERANCE = 1e-3


def _desired(config: StreamConfig) -> api.StreamConfig:
    return api.StreamConfig(
        name=config.name,
        description="Riverbeam request frames, one subject per request",
        subjects=config.subjects,
        retention=api.RetentionPolicy.LIMITS,
        storage=api.StorageType.FILE,
        discard=api.DiscardPolicy.OLD,
        max_age=config.max_age_s,
        duplicate_window=config.duplicate_window_s,
        max_bytes=config.max_bytes if config.max_bytes is not None else -1,
        num_replicas=config.replicas,
    )


def _differs(a: float | None, b: float) -> bool:
    return a is None or abs(a - b) > _SECONDS_TOLERANCE


async def ensure_stream(js: JetStreamContext, config: StreamConfig | None = None) -> None:
    """Create the frames stream when missing; bring its retention settings up to date otherwise.

    Safe when several replicas call it at once: creating a stream with the configuration it
    already has is a no-op on the server, and a concurrent update to the same values is too.
    Only max age, duplicate window, max bytes and the captured subjects are reconciled; other
    settings of an existing stream (storage, replicas) are left as the operator made them.

    Raises:
        RiverbeamError: STREAM_PUBLISH_FAILED when JetStream is unreachable or refuses the
            stream (e.g. its subjects overlap another stream's).
    """
    config = config or StreamConfig()
    desired = _desired(config)
    try:
        try:
            info = await js.stream_info(config.name)
        except nats.js.errors.NotFoundError:
            try:
                await js.add_stream(desired)
                log.info("created JetStream stream %s over %s", config.name, config.subjects)
                return
            except nats.js.errors.BadRequestError as exc:
                # Exists after all, with other settings: fall through to bring it up to date.
                if exc.err_code != _STREAM_NAME_IN_USE:
                    raise
                info = await js.stream_info(config.name)
        current = info.config
        subjects = list(current.subjects or [])
        missing = [s for s in config.subjects if s not in subjects]
        current_max_bytes = current.max_bytes if current.max_bytes is not None else -1
        if (
            not missing
            and not _differs(current.max_age, config.max_age_s)
            and not _differs(current.duplicate_window, config.duplicate_window_s)
            and current_max_bytes == desired.max_bytes
        ):
            return
        await js.update_stream(
            current.evolve(
                subjects=subjects + missing,
                max_age=desired.max_age,
                duplicate_window=desired.duplicate_window,
                max_bytes=desired.max_bytes,
            )
        )
        log.info(
            "updated JetStream stream %s: max_age=%ss duplicate_window=%ss max_bytes=%s",
            config.name,
            config.max_age_s,
            config.duplicate_window_s,
            desired.max_bytes,
        )
    except (nats.errors.Error, OSError) as exc:
        raise RiverbeamError(
            ErrorCode.STREAM_PUBLISH_FAILED,
            f"cannot create or update JetStream stream {config.name}: {exc!r}",
            stream=config.name,
        ) from exc
