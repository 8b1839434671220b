"""Fixtures of the router suite: the whole stack (store, runner, router) over real gRPC and NATS."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.integration.router.router_kit import Stack, open_stack


@pytest.fixture
async def stack(nats_url: str) -> AsyncIterator[Stack]:
    """A fresh stack per test: its own store, runner and router on 127.0.0.1:0."""
    async with open_stack(nats_url) as opened:
        yield opened
