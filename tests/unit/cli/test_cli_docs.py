"""docs/cli.md is checked against the CLI itself: commands, options, exit codes, the errors shown."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from services.cli import app
from services.cli._errors import ExitCode
from tests.unit.cli.cli_harness import Cli

DOC = Path(__file__).resolve().parents[3] / "docs" / "cli.md"
COMMON = {"--router", "--token", "--json", "--no-json", "--help", "-h"}


def _sections() -> dict[str, str]:
    """Command name -> the text of the docs section(s) whose heading names it."""
    text = DOC.read_text()
    out: dict[str, str] = {}
    for block in re.split(r"^### ", text, flags=re.M)[1:]:
        heading = block.splitlines()[0]
        for name in re.findall(r"`riverbeam ([a-z]+)", heading):
            out[name] = out.get(name, "") + block
    return out


def _commands() -> dict[str, list[str]]:
    group = typer.main.get_command(app)
    out = {}
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        opts = [
            o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")
        ]
        out[name] = opts
    return out


def test_every_command_has_a_section_naming_each_of_its_options() -> None:
    sections = _sections()
    for name, opts in _commands().items():
        assert name in sections, f"docs/cli.md has no section for `riverbeam {name}`"
        for opt in opts:
            if opt in COMMON:
                continue
            assert f"`{opt}" in sections[name] or f"{opt} " in sections[name], (name, opt)


def test_every_option_the_docs_name_exists() -> None:
    sections = _sections()
    commands = _commands()
    for name, text in sections.items():
        assert name in commands, f"docs/cli.md documents `riverbeam {name}`, which does not exist"
        named = set(re.findall(r"`(--[a-z][a-z-]*)", text))
        unknown = named - set(commands[name]) - COMMON
        assert not unknown, (name, sorted(unknown))


def test_the_exit_code_table_is_the_enum() -> None:
    rows = re.findall(r"^\| (\d+) \| ", DOC.read_text(), flags=re.M)
    assert sorted(int(r) for r in rows) == sorted(int(c) for c in ExitCode)


def test_the_unreachable_router_example_is_what_the_cli_prints(cli: Cli) -> None:
    example = re.search(
        r"\$ riverbeam agents --router 127\.0\.0\.1:1\n(error BEM-\d+): ([^:]+)", DOC.read_text()
    )
    assert example is not None
    result = cli("agents", "--router", "127.0.0.1:1")
    assert result.exit_code == ExitCode.UNAVAILABLE
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{example.group(1)}: {example.group(2)}"), first
    code = re.search(r"\| 5 \| ([^\n]*)", DOC.read_text())
    assert code is not None and example.group(1).removeprefix("error ") in code.group(1)


def test_usage_lines_show_arguments_without_braces(cli: Cli) -> None:
    for name in _commands():
        usage = next(line for line in cli(name, "--help").stdout.splitlines() if "Usage:" in line)
        assert "{" not in usage and "<bool>" not in cli(name, "--help").stdout, name
