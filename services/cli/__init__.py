"""The `riverbeam` command line."""

from services.cli._app import app, main

__all__ = ["app", "main"]
