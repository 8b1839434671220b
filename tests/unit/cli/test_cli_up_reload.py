"""`riverbeam up --config/--agents/--reload`: the runner's environment, the watcher, restarts."""

from __future__ import annotations

import asyncio
import io
import os
import stat
import time
from pathlib import Path

import pytest
from rich.console import Console

from riverbeam.core.errors import ErrorCode, RiverbeamError
from services.cli._flows import Consoles
from services.cli._up import LocalStack, StackError
from services.cli._up_config import Watch, runner_env, serve_overrides, watch_and_restart
from tests.unit.cli.test_cli_up import FAKE_SERVICE, pytestmark  # noqa: F401  (nats marks)


@pytest.fixture
def fake_python(tmp_path: Path) -> str:
    path = tmp_path / "fake-python"
    path.write_text(FAKE_SERVICE)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def consoles() -> tuple[Consoles, io.StringIO]:
    err = io.StringIO()
    return Consoles(out=Console(file=io.StringIO()), err=Console(file=err, width=200)), err


def test_runner_env_gives_absolute_paths_and_an_importable_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "conf").mkdir(parents=True)
    config = project / "conf" / "riverbeam.yaml"
    config.write_text("agents: []\n")
    env = runner_env(
        config=Path(os.path.relpath(config)),
        agents="mymodule:register",
        cwd=project,
        environ={"PYTHONPATH": "/opt/lib"},
    )
    assert env["RIVERBEAM_CONFIG"] == str(config.resolve())
    assert env["RIVERBEAM_AGENTS"] == "mymodule:register"
    assert env["PYTHONPATH"].split(os.pathsep) == [
        str(project.resolve()),
        str((project / "conf").resolve()),
        "/opt/lib",
    ]


def test_runner_env_refuses_an_invalid_config_before_anything_starts(tmp_path: Path) -> None:
    config = tmp_path / "riverbeam.yaml"
    config.write_text("agents:\n  - name: a\n    skil: x\n")
    with pytest.raises(RiverbeamError) as info:
        runner_env(config=config, agents=None, cwd=tmp_path, environ={})
    assert info.value.code is ErrorCode.CONFIG_INVALID
    assert info.value.details["line"] == "3"


def test_serve_flags_are_runner_settings_only() -> None:
    assert serve_overrides("runner", agents="m:f", config=None) == {"agents": "m:f"}
    import typer

    with pytest.raises(typer.BadParameter):
        serve_overrides("router", agents="m:f", config=None)


def test_the_watch_sees_the_config_and_python_files_change(tmp_path: Path) -> None:
    config = tmp_path / "riverbeam.yaml"
    config.write_text("agents: []\n")
    module = tmp_path / "tools.py"
    module.write_text("X = 1\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "ignored.py").write_text("")
    watch = Watch([config], [tmp_path])
    assert watch.changed() == []
    later = time.time() + 5
    os.utime(module, (later, later))
    assert watch.changed() == [module.resolve()]
    (tmp_path / "new_tool.py").write_text("")
    os.utime(config, (later + 1, later + 1))
    assert watch.changed() == sorted([config.resolve(), (tmp_path / "new_tool.py").resolve()])
    (tmp_path / ".venv" / "ignored.py").write_text("changed")
    assert watch.changed() == []


async def test_restart_replaces_the_runner_and_wait_exit_does_not_fire(
    tmp_path: Path, fake_python: str
) -> None:
    async with LocalStack(data_dir=tmp_path, python=fake_python) as stack:
        exited = asyncio.ensure_future(stack.wait_exit())
        before = stack.pids
        await stack.restart("runner")
        after = stack.pids
        assert after["runner"] != before["runner"]
        assert {k: v for k, v in after.items() if k != "runner"} == {
            k: v for k, v in before.items() if k != "runner"
        }
        assert stack.endpoints["runner"] == "127.0.0.1:7002"
        await asyncio.sleep(0.3)
        assert not exited.done()
        # A failed restart is reported and leaves the rest of the stack running.
        stack._env_overrides["runner"] = {"FAKE_MODE": "fail"}
        with pytest.raises(StackError) as info:
            await stack.restart("runner")
        assert "boom: runner cannot start" in info.value.log_tail
        await asyncio.sleep(0.3)
        assert not exited.done()
        stack._env_overrides["runner"] = {}
        await stack.restart("runner")
        assert "runner" in stack.endpoints
        # A process that dies on its own still ends `up`.
        os.kill(stack.pids["sandbox"], 9)
        name, _ = await asyncio.wait_for(exited, 10)
        assert name == "sandbox"


async def _until_replaced(stack: LocalStack, pids: dict[str, int]) -> None:
    """Until each process named in `pids` is a new one, serving (a guard against a hang, not
    a timing assertion: the caller asserts what it needs)."""
    for _ in range(200):
        if all(stack.pids[n] != pid and n in stack.endpoints for n, pid in pids.items()):
            return
        await asyncio.sleep(0.05)


async def test_the_watcher_restarts_the_runner_on_a_change(
    tmp_path: Path, fake_python: str
) -> None:
    config = tmp_path / "riverbeam.yaml"
    config.write_text("agents: []\n")
    out, err = consoles()
    async with LocalStack(data_dir=tmp_path / "data", python=fake_python) as stack:
        watch = Watch([config], [])
        task = asyncio.create_task(watch_and_restart(stack, watch, out, interval_s=0.05))
        try:
            pid = stack.pids["runner"]
            later = time.time() + 5
            os.utime(config, (later, later))
            await _until_replaced(stack, {"runner": pid})
            assert stack.pids["runner"] != pid
        finally:
            task.cancel()
    assert "restarting the runner" in err.getvalue()


async def test_the_watcher_restarts_every_runner_replica_one_after_another(
    tmp_path: Path, fake_python: str
) -> None:
    config = tmp_path / "riverbeam.yaml"
    config.write_text("agents: []\n")
    out, err = consoles()
    async with LocalStack(data_dir=tmp_path / "data", python=fake_python, runners=2) as stack:
        watch = Watch([config], [])
        up: list[set[str]] = []  # the other replicas serving whenever one is replaced
        replacing: set[str] = set()
        original_restart = stack.restart

        async def restart(name: str) -> None:
            assert not replacing, f"{name} restarted while {replacing} was"
            up.append({n for n in stack.runner_names if n in stack.endpoints and n != name})
            replacing.add(name)
            try:
                await original_restart(name)
            finally:
                replacing.discard(name)

        stack.restart = restart  # type: ignore[method-assign]
        task = asyncio.create_task(watch_and_restart(stack, watch, out, interval_s=0.05))
        try:
            before = {n: stack.pids[n] for n in stack.runner_names}
            later = time.time() + 5
            os.utime(config, (later, later))
            await _until_replaced(stack, before)
            assert all(stack.pids[n] != before[n] for n in ("runner-1", "runner-2"))
        finally:
            task.cancel()
    assert up == [{"runner-2"}, {"runner-1"}]
    assert "runner-1 restarted" in err.getvalue() and "runner-2 restarted" in err.getvalue()
