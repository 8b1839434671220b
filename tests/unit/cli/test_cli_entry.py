"""The command's entry point (services/cli/_entry.py): which argv take the plain serve path.

The plain path serves without loading the command line; everything else goes to the typer app,
which must treat it as it always has (tests/unit/test_service_imports.py checks what the plain
path loads).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import services.cli._serve as serving
from services.cli._entry import _plain_serve, run
from services.cli._up_config import serve_overrides


@pytest.mark.parametrize(
    ("argv", "plain"),
    [
        (["serve", "router"], ("router", {})),
        (["serve", "store", "--listen", "127.0.0.1:1"], ("store", {"--listen": "127.0.0.1:1"})),
        (
            ["serve", "sandbox", "--listen=h:1", "--ready-file", "f"],
            ("sandbox", {"--listen": "h:1", "--ready-file": "f"}),
        ),
        (
            ["serve", "runner", "--config", "c.yaml", "--agents=m:f"],
            ("runner", {"--config": "c.yaml", "--agents": "m:f"}),
        ),
        (["serve", "router", "--config", "c.yaml"], None),  # the runner's only: exit 2 there
        (["serve", "console", "--agents", "m:f"], None),
        (["serve", "router", "--help"], None),
        (["serve", "router", "--listen"], None),
        (["serve", "router", "--listen", "--ready-file", "f"], None),
        (["serve", "router", "--listen", "a", "--listen", "b"], None),
        (["serve", "nope"], None),
        (["serve"], None),
        (["up"], None),
    ],
)
def test_which_forms_are_plain(argv: list[str], plain: object) -> None:
    assert _plain_serve(argv) == plain


def test_the_runners_flags_become_the_settings_the_full_command_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    served: list[tuple[object, ...]] = []
    monkeypatch.setattr(serving, "serve", lambda *args: served.append(args))
    run(
        ["serve", "runner", "--listen", "h:1", "--config", "conf/riverbeam.yaml", "--agents", "m:f"]
    )
    expected = serve_overrides("runner", agents="m:f", config=Path("conf/riverbeam.yaml"))
    assert served == [(serving.ServiceName.runner, "h:1", None, expected)]
    assert expected == {"agents": "m:f", "config": tmp_path / "conf" / "riverbeam.yaml"}


def test_another_services_runner_flag_is_refused_by_the_full_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served: list[tuple[object, ...]] = []
    monkeypatch.setattr(serving, "serve", lambda *args: served.append(args))
    argv = ["serve", "router", "--config", "riverbeam.yaml"]
    monkeypatch.setattr(sys, "argv", ["riverbeam", *argv])
    with pytest.raises(SystemExit) as info:
        run(argv)
    assert info.value.code == 2
    assert served == []
