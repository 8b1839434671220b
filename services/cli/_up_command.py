"""`riverbeam up`: run a LocalStack in the foreground until Ctrl-C or SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Sequence

from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from riverbeam.client import DEFAULT_TARGET
from services.cli._errors import ExitCode
from services.cli._flows import Consoles
from services.cli._up import SERVICES, LocalStack, StackError, log_tail

__all__ = ["run_up"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _endpoints_table(stack: LocalStack, own_nats: bool) -> Table:
    table = Table(title="riverbeam is up", title_justify="left", title_style="bold green")
    table.add_column("service", style="bold")
    table.add_column("address", no_wrap=True)
    metrics = stack.metrics
    if metrics:
        table.add_column("metrics", no_wrap=True)
    table.add_column("log", overflow="fold")
    endpoints = stack.endpoints
    for name in [*SERVICES[:1], *stack.runner_names, *SERVICES[2:]]:
        if name in endpoints:
            extra = [metrics.get(name, "")] if metrics else []
            table.add_row(name, endpoints[name], *extra, str(stack.log_path(name)))
    nats_log = str(stack.log_path("nats")) if own_nats else "external"
    table.add_row("nats", endpoints["nats"], *([""] if metrics else []), nats_log)
    if stack.console_url:
        table.add_row(
            "console", stack.console_url, *([""] if metrics else []), str(stack.log_path("console"))
        )
    return table


def model_line(stack: LocalStack) -> Text:
    """What the built-in skills answer with: the configured model, or the echo client."""
    client = stack.model_client()
    if client is not None:
        return Text(f"skills call {client}", style="dim")
    return Text(
        "no model key (BEAM_API_KEY): the skills answer with the echo client, which repeats "
        "your text; export BEAM_API_KEY, or try `riverbeam up --demo` for a scripted model",
        style="bold yellow",
    )


def _try_line(router: str) -> str:
    flag = "" if router == DEFAULT_TARGET else f" --router {router}"
    return f'riverbeam invoke assistant "hello"{flag}'


def _print_failure(consoles: Consoles, err: StackError) -> None:
    consoles.err.print(Text.assemble(("error: ", "bold red"), err.message), soft_wrap=True)
    if err.log_tail:
        title = f"last lines of the {err.service} log" if err.service else "log"
        consoles.err.print(Panel(Text(err.log_tail), title=title, title_align="left"))


async def run_up(
    stack: LocalStack,
    consoles: Consoles,
    *,
    own_nats: bool,
    stop: asyncio.Event | None = None,
    try_lines: Sequence[str] = (),
) -> ExitCode:
    """Start the stack, show where everything is, and stop it all on Ctrl-C or SIGTERM.

    `stop` is set by SIGINT/SIGTERM; a caller may pass its own to stop the stack itself.
    """
    loop = asyncio.get_running_loop()
    stop = stop or asyncio.Event()
    for sig in _SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    stopper = asyncio.ensure_future(stop.wait())
    starting = asyncio.ensure_future(stack.start())
    exited: asyncio.Future[tuple[str, int]] | None = None
    failed = False
    try:
        await asyncio.wait({starting, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():  # Ctrl-C while starting
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError, StackError):
                await starting
            return ExitCode.OK
        try:
            starting.result()
        except StackError as err:
            failed = True
            _print_failure(consoles, err)
            return ExitCode.ERROR
        _show_ready(stack, consoles, own_nats=own_nats, try_lines=try_lines)
        exited = asyncio.ensure_future(stack.wait_exit())
        await asyncio.wait({exited, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if exited.done() and not stop.is_set():
            name, status = exited.result()
            failed = True
            _print_failure(
                consoles,
                StackError(
                    f"{name} exited unexpectedly with status {status}; stopping everything",
                    service=name,
                    log_tail=log_tail(stack.log_path(name)),
                ),
            )
            return ExitCode.ERROR
        return ExitCode.OK
    finally:
        for task in (stopper, exited):
            if task is not None:
                task.cancel()
        consoles.err.print(Text("stopping…", style="dim"))
        await stack.stop(keep_data=failed and not stack.owns_data_dir)
        if failed and not stack.owns_data_dir:
            consoles.err.print(Text(f"logs kept in {stack.log_dir}", style="dim"))
        consoles.err.print(Text("stopped", style="dim"))
        for sig in _SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)


def _show_ready(
    stack: LocalStack, consoles: Consoles, *, own_nats: bool, try_lines: Sequence[str] = ()
) -> None:
    out = consoles.out
    out.print(_endpoints_table(stack, own_nats))
    out.print(
        Text(
            "authentication is OFF (development mode): keep these ports to yourself",
            style="bold yellow",
        )
    )
    if "runner" in stack.endpoints or any(n.startswith("runner") for n in stack.endpoints):
        out.print(model_line(stack), soft_wrap=True)
    out.print(Text(f"data: {stack.data_dir}", style="dim"))
    if "router" in stack.endpoints:
        out.print(Text("try:", style="bold"))
        flag = "" if stack.router == DEFAULT_TARGET else f" --router {stack.router}"
        lines = [f"{t}{flag}" if t.startswith("riverbeam ") else t for t in try_lines]
        for line in lines or [_try_line(stack.router)]:
            out.print(Text(f"  {line}"), soft_wrap=True)
    if stack.console_url:
        out.print(Text.assemble(("console: ", "bold"), f"{stack.console_url}/"), soft_wrap=True)
    out.print(Text("Ctrl-C stops everything.", style="dim"))
