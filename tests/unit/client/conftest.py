"""The fake router, served in the test's event loop, and a client of it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from riverbeam.client import RiverbeamClient
from tests.unit.client.fake_router import FakeRiverbeam, serve_fake


@pytest.fixture
def fake() -> FakeRiverbeam:
    return FakeRiverbeam()


@pytest.fixture
async def address(fake: FakeRiverbeam) -> AsyncIterator[str]:
    async with serve_fake(fake) as addr:
        yield addr


@pytest.fixture
async def client(address: str) -> AsyncIterator[RiverbeamClient]:
    async with RiverbeamClient(address, timeout_s=10) as c:
        yield c
