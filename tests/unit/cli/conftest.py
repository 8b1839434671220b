"""The CLI against the fake router, served from a thread (the commands run their own loop)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.cli.cli_harness import Cli
from tests.unit.client.fake_router import FakeRiverbeam, FakeRouterThread


@pytest.fixture
def fake() -> FakeRiverbeam:
    return FakeRiverbeam()


@pytest.fixture
def router(fake: FakeRiverbeam) -> Iterator[FakeRouterThread]:
    with FakeRouterThread(fake) as server:
        yield server


@pytest.fixture
def cli(router: FakeRouterThread) -> Cli:
    env: dict[str, str | None] = {
        "RIVERBEAM_ROUTER": router.address,
        "RIVERBEAM_TOKEN": None,
        "COLUMNS": "200",  # rich: wide enough that ids are never wrapped
        "NO_COLOR": "1",
        "TERM": "dumb",
    }
    return Cli(router.fake, router.address, env)
