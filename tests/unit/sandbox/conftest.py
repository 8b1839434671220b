"""Fixtures for the sandbox tests (helpers live in sandbox_kit)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_kit import CANARY_TEXT, GitSetup, Jail, make_git

from riverbeam.sandbox import SandboxRoot


@pytest.fixture
def jail(tmp_path: Path) -> Iterator[Jail]:
    outside = tmp_path / "outside"
    outside.mkdir()
    canary = outside / "secret.txt"
    canary.write_bytes(CANARY_TEXT)
    (outside / "dir").mkdir()
    (outside / "dir" / "secret.txt").write_bytes(CANARY_TEXT)
    root_dir = tmp_path / "root"
    root_dir.mkdir()
    root = SandboxRoot(root_dir)
    try:
        yield Jail(root_dir, outside, canary, root)
    finally:
        root.close()


@pytest.fixture
def git(tmp_path: Path) -> Iterator[GitSetup]:
    setup = make_git(tmp_path)
    try:
        yield setup
    finally:
        setup.tree.close()
