"""What the client commands share: the router, token and JSON options, and how one runs."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NoReturn

import typer
from rich.text import Text

from riverbeam.client import RiverbeamClient
from services.cli._errors import ExitCode, cli_errors
from services.cli._flows import Consoles, Progress

__all__ = [
    "JsonOpt",
    "RouterOpt",
    "SessionOpt",
    "TokenOpt",
    "finish",
    "print_json",
    "router_client",
]

RouterOpt = Annotated[
    str,
    typer.Option(
        "--router", envvar="RIVERBEAM_ROUTER", help="The router's HOST:PORT.", show_default=True
    ),
]
TokenOpt = Annotated[
    str | None,
    typer.Option("--token", envvar="RIVERBEAM_TOKEN", help="Bearer token.", show_default=False),
]
JsonOpt = Annotated[
    bool, typer.Option("--json/--no-json", help="Print JSON instead of tables and text.")
]
SessionOpt = Annotated[str, typer.Option("--session", help="The session id.")]


def finish(
    consoles: Consoles,
    main: Callable[[], Awaitable[ExitCode]],
    progress: Progress | None = None,
) -> NoReturn:
    """Run a command's coroutine and exit with its status; errors become messages."""

    async def runner() -> ExitCode:
        return await main()

    with cli_errors(consoles.err):
        try:
            code = asyncio.run(runner())
        except KeyboardInterrupt:
            hint = progress.resume_hint() if progress is not None else None
            if hint:
                consoles.err.print(
                    Text(f"stopped following; the run goes on. Pick it up with: {hint}"),
                    soft_wrap=True,
                )
            raise typer.Exit(ExitCode.INTERRUPTED_BY_USER) from None
    raise typer.Exit(code)


def router_client(router: str, token: str | None) -> RiverbeamClient:
    return RiverbeamClient(router, token=token)


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
