"""The `riverbeam` command line.

`app` is imported on first use, and `main` (the console script) looks at its arguments
first: `riverbeam serve <service>`, as the container image and `riverbeam up` start each
service, then loads only what that service needs, not the whole command line (typer, rich
and every command's modules). See services/cli/_entry.py.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

__all__ = ["app", "main"]

if TYPE_CHECKING:
    from services.cli._app import app


def main() -> None:
    """The `riverbeam` console script."""
    from services.cli._entry import run

    run(sys.argv[1:])


def __getattr__(name: str) -> Any:
    if name == "app":
        from services.cli import _app

        return _app.app
    raise AttributeError(f"module 'services.cli' has no attribute {name!r}")
