"""`riverbeam up --config / --agents / --reload`: the runner's agents, and restarts on change.

The services run with the data directory as their working directory, so `up` hands the runner
absolute paths and puts the directory it was started from (and the config file's) on the
runner's PYTHONPATH: `RIVERBEAM_AGENTS=mymodule:register riverbeam up` finds `mymodule.py`.

`--reload` polls the modification times of the config file and of the Python files under
those directories, and restarts the runner when one changes (no watcher dependency needed).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from rich.text import Text

from riverbeam.agents import load_config
from services.cli._entry import runner_overrides
from services.cli._errors import ExitCode
from services.cli._flows import Consoles
from services.cli._up import LocalStack, StackError, log_tail

__all__ = [
    "Watch",
    "run_up_reloading",
    "runner_env",
    "serve_overrides",
    "up_runner_env",
    "watch_and_restart",
]

_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
_MAX_FILES = 5000


def runner_env(
    *,
    config: Path | None,
    agents: str | None,
    cwd: Path,
    environ: Mapping[str, str],
) -> dict[str, str]:
    """The runner's extra environment for `up`: RIVERBEAM_CONFIG, RIVERBEAM_AGENTS, PYTHONPATH.

    The config file is validated first, so a bad one fails here with its BEM-230 message.
    """
    env: dict[str, str] = {}
    dirs = [cwd.resolve()]
    if config is not None:
        loaded = load_config(config)  # raises BEM-230 naming file, line and field
        assert loaded.path is not None
        env["RIVERBEAM_CONFIG"] = str(loaded.path)
        dirs.append(loaded.path.parent)
    if agents:
        env["RIVERBEAM_AGENTS"] = agents
    existing = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    paths = list(dict.fromkeys([*(str(d) for d in dirs), *existing]))
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


class Watch:
    """Modification times of the files whose change restarts the runner.

    Args:
        files: Watched as they are (the config file).
        trees: Directories whose `*.py` files are watched (hidden, cache and virtualenv
            directories left out; at most 5000 files).
    """

    def __init__(self, files: Iterable[Path], trees: Iterable[Path]) -> None:
        self._files = [f.resolve() for f in files]
        self._trees = list(dict.fromkeys(t.resolve() for t in trees))
        self._seen = self.snapshot()

    def snapshot(self) -> dict[Path, float]:
        found: dict[Path, float] = {}
        for path in [*self._files, *self._python_files()]:
            with contextlib.suppress(OSError):
                found[path] = path.stat().st_mtime_ns
        return found

    def _python_files(self) -> list[Path]:
        out: list[Path] = []
        for tree in self._trees:
            for root, dirs, files in os.walk(tree):
                dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
                out.extend(Path(root) / f for f in files if f.endswith(".py"))
                if len(out) >= _MAX_FILES:
                    return out
        return out

    def changed(self) -> list[Path]:
        """The files added, removed or modified since the last call."""
        now = self.snapshot()
        before, self._seen = self._seen, now
        return sorted(p for p in now.keys() | before.keys() if now.get(p) != before.get(p))


async def watch_and_restart(
    stack: LocalStack,
    watch: Watch,
    consoles: Consoles,
    *,
    interval_s: float = 0.5,
    ready: Callable[[], bool] | None = None,
) -> None:
    """Restart the runner(s) whenever a watched file changes; runs until cancelled.

    A runner that fails to come back (say the new config is invalid) is reported with its log
    tail and retried at the next change; the rest of the stack keeps running.
    """
    is_ready = ready or (lambda: "router" in stack.endpoints)
    while True:
        await asyncio.sleep(interval_s)
        changed = await asyncio.to_thread(watch.changed)
        if not changed or not is_ready():
            continue
        names = ", ".join(p.name for p in changed[:3]) + ("…" if len(changed) > 3 else "")
        consoles.err.print(Text(f"changed: {names}; restarting the runner", style="yellow"))
        for runner in stack.runner_names:
            try:
                await stack.restart(runner)
            except StackError as err:
                consoles.err.print(Text.assemble(("error: ", "bold red"), err.message))
                tail = err.log_tail or log_tail(stack.log_path(runner))
                if tail:
                    consoles.err.print(Text(tail))
                continue
            consoles.err.print(Text.assemble(("✓ ", "green"), f"{runner} restarted"))


def serve_overrides(service: str, *, agents: str | None, config: Path | None) -> dict[str, object]:
    """`riverbeam serve runner --agents/--config` as settings; other services take neither."""
    overrides = runner_overrides(agents=agents, config=config)
    if overrides and service != "runner":
        import typer

        raise typer.BadParameter(f"--agents and --config are for the runner, not the {service}")
    return overrides


def up_runner_env(config: Path | None, agents: str | None) -> dict[str, str]:
    """The runner's environment for `riverbeam up` from this process's directory and flags."""
    return runner_env(config=config, agents=agents, cwd=Path.cwd(), environ=os.environ)


async def run_up_reloading(
    stack: LocalStack, consoles: Consoles, *, own_nats: bool, config: Path | None
) -> ExitCode:
    """`run_up` with a watcher that restarts the runner on changes (`up --reload`)."""
    from services.cli._up_command import run_up

    here = Path.cwd()
    trees = [here] + ([(here / config).parent] if config is not None else [])
    files = [config] if config is not None else []
    watch = await asyncio.to_thread(Watch, files, trees)
    watcher = asyncio.create_task(watch_and_restart(stack, watch, consoles))
    consoles.err.print(Text(f"watching {', '.join(str(t) for t in trees)} (--reload)", style="dim"))
    try:
        return await run_up(stack, consoles, own_nats=own_nats)
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
