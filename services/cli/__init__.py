"""The `riverbeam` command line.

`app` and `main` are imported on first use: `python -m services.cli serve <service>` (how
`riverbeam up` starts each service) then loads only what that service needs, not the whole
command line (typer, rich and every command's modules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["app", "main"]

if TYPE_CHECKING:
    from services.cli._app import app, main


def __getattr__(name: str) -> Any:
    if name in __all__:
        from services.cli import _app

        return getattr(_app, name)
    raise AttributeError(f"module 'services.cli' has no attribute {name!r}")
