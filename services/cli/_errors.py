"""Exit codes, and errors shown as `error BEM-NNN: message` plus a hint, never a traceback."""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator

import typer
from rich.console import Console
from rich.text import Text

from riverbeam.core.errors import ErrorCode, RiverbeamError, by_code

__all__ = [
    "ExitCode",
    "cli_errors",
    "exit_code_for",
    "print_error",
    "print_frame_error",
]


class ExitCode(enum.IntEnum):
    """The exit status of every command (docs/cli.md lists them)."""

    OK = 0
    """Success; for invoke, approve, decline and follow: the run completed."""
    ERROR = 1
    """An unexpected error: an internal error of a service, or of the CLI."""
    USAGE = 2
    """A bad flag or argument, or the request was refused (a 4xx-class BEM code)."""
    INTERRUPTED = 3
    """The run paused: an action awaits approval (`riverbeam approve`)."""
    RUN_FAILED = 4
    """The run failed or was cancelled (an error frame, or an agent/model/tool BEM code)."""
    UNAVAILABLE = 5
    """A service could not be reached or timed out (a 503/504-class BEM code)."""
    INTERRUPTED_BY_USER = 130
    """Ctrl-C."""


# Codes that mean "the run itself failed" (agent, model and tool errors), and cancellation.
_RUN_FAILURE_RANGE = range(80, 100)


def _number(code: ErrorCode) -> int:
    return int(code.code.removeprefix("BEM-"))


def exit_code_for(err: RiverbeamError) -> ExitCode:
    """The exit status a command ends with when `err` stops it."""
    if err.code is ErrorCode.RUN_CANCELLED or _number(err.code) in _RUN_FAILURE_RANGE:
        return ExitCode.RUN_FAILED
    if err.http_status in (503, 504):
        return ExitCode.UNAVAILABLE
    if 400 <= err.http_status < 500:
        return ExitCode.USAGE
    return ExitCode.ERROR


def _cli_hint(err: RiverbeamError) -> str:
    """What to do next on the command line, when the catalog's hint does not say it."""
    if "target" in err.details and err.details.get("grpc_code") == "UNAVAILABLE":
        return (
            "is the router running? start a local stack with `riverbeam up`, "
            "or point --router / RIVERBEAM_ROUTER at one"
        )
    if err.code is ErrorCode.UNAUTHENTICATED:
        return "pass --token or set RIVERBEAM_TOKEN"
    return ""


def print_error(console: Console, err: RiverbeamError) -> None:
    """`error BEM-NNN: message`, then the code's one-line hint (and a CLI hint) if any."""
    line = Text("error ", style="bold red")
    line.append(f"{err.bem}: ", style="bold red")
    line.append(err.message)
    console.print(line, soft_wrap=True)
    for hint in (err.hint, _cli_hint(err)):
        if hint:
            console.print(Text(f"hint: {hint}", style="yellow"), soft_wrap=True)


def print_frame_error(console: Console, code: str | None, message: str | None) -> None:
    """The error frame that ended a run, shown like any other error."""
    member = by_code(code or "") or ErrorCode.AGENT_ERROR_FRAME
    print_error(console, RiverbeamError(member, message or member.spec.title))


@contextlib.contextmanager
def cli_errors(console: Console) -> Iterator[None]:
    """Turn every failure inside a command into a message and an exit status."""
    try:
        yield
    except typer.Exit:
        raise
    except RiverbeamError as err:
        print_error(console, err)
        raise typer.Exit(exit_code_for(err)) from None
    except KeyboardInterrupt:
        console.print(Text("interrupted", style="yellow"))
        raise typer.Exit(ExitCode.INTERRUPTED_BY_USER) from None
    except Exception as exc:  # never a traceback: say what broke and where to look
        console.print(
            Text.assemble(("error: ", "bold red"), f"unexpected {type(exc).__name__}: {exc}"),
            soft_wrap=True,
        )
        raise typer.Exit(ExitCode.ERROR) from None
