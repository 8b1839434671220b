"""`riverbeam eval SUITE.yaml`: run an eval suite, show progress and a table, exit 1 on failure."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from riverbeam.core.errors import ErrorCode, RiverbeamError
from services.cli._errors import ExitCode
from services.cli._flows import Consoles

__all__ = ["eval_cmd"]


def eval_cmd(
    suite_file: Annotated[Path, typer.Argument(help="The suite (YAML).", show_default=False)],
    router: Annotated[
        str | None,
        typer.Option(
            "--router",
            help="Run against this router (HOST:PORT) instead of in process.",
            show_default=False,
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token", envvar="RIVERBEAM_TOKEN", help="Bearer token (--router).", show_default=False
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="In process: riverbeam.yaml with the agents (default: the suite's `config`).",
            show_default=False,
        ),
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option(
            "--repeat", min=1, help="Attempts per case (overrides the suite).", show_default=False
        ),
    ] = None,
    json_mode: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    junit: Annotated[
        Path | None,
        typer.Option("--junit", help="Also write JUnit XML to this file.", show_default=False),
    ] = None,
) -> None:
    """Run an eval suite against agents; exit 1 when a case fails."""
    from services.cli._command_kit import finish

    consoles = Consoles.standard()

    async def main() -> ExitCode:
        return await _run(consoles, suite_file, router, token, config, repeat, json_mode, junit)

    finish(consoles, main)


async def _run(
    consoles: Consoles,
    suite_file: Path,
    router: str | None,
    token: str | None,
    config: Path | None,
    repeat: int | None,
    json_mode: bool,
    junit: Path | None,
) -> ExitCode:
    from riverbeam.agents import load_config
    from riverbeam.evals import InProcessTarget, Judge, RouterTarget, load_suite, run_suite
    from riverbeam.runtime import default_client

    suite, path = load_suite(suite_file)
    name = suite.name or path.stem
    total = sum((repeat or c.repeat or suite.repeat) for c in suite.cases)
    judge_client = default_client(os.environ)
    judge = Judge(judge_client, suite.judge_model)
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[last]}"),
        console=consoles.err,
        transient=True,
    )
    task = progress.add_task(name, total=total, last="")

    def on_attempt(case: Any, index: int, attempt: Any) -> None:
        mark = "✓" if attempt.passed else "✗"
        progress.update(task, advance=1, last=f"{mark} {case.name}")

    try:
        with progress:
            if router is not None:
                from riverbeam.client import RiverbeamClient

                async with RiverbeamClient(router, token=token) as client:
                    result = await run_suite(
                        suite,
                        RouterTarget(client),
                        judge=judge,
                        repeat=repeat,
                        name=name,
                        on_attempt=on_attempt,
                    )
            else:
                chosen = config or (path.parent / suite.config if suite.config else None)
                loaded = load_config(chosen) if chosen is not None else None
                async with InProcessTarget.open(config=loaded) as target:
                    result = await run_suite(
                        suite,
                        target,
                        judge=judge,
                        repeat=repeat,
                        name=name,
                        on_attempt=on_attempt,
                    )
    finally:
        aclose = getattr(judge_client, "aclose", None)
        if aclose is not None:
            await aclose()
    if junit is not None:
        try:
            await asyncio.to_thread(junit.write_text, result.junit_xml(), encoding="utf-8")
        except OSError as exc:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT, f"cannot write {junit}: {exc}", field="--junit"
            ) from None
    if json_mode:
        sys.stdout.write(json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        consoles.out.print(_table(result))
        summary = f"{len(result.cases) - result.failed}/{len(result.cases)} cases passed"
        style = "bold green" if result.passed else "bold red"
        consoles.out.print(Text(summary, style=style))
    return ExitCode.OK if result.passed else ExitCode.ERROR


def _table(result: Any) -> Table:
    table = Table(title=f"eval {result.name}", title_justify="left")
    table.add_column("case", style="bold")
    table.add_column("agent")
    table.add_column("result")
    table.add_column("passed", justify="right")
    table.add_column("first failure", overflow="fold")
    for case in result.cases:
        verdict = Text("pass", style="green") if case.passed else Text("FAIL", style="bold red")
        passed = sum(a.passed for a in case.attempts)
        table.add_row(
            case.name,
            case.agent,
            verdict,
            f"{passed}/{len(case.attempts)}",
            case.first_failure() if not case.passed else "",
        )
    return table
