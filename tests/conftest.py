"""Shared fixtures: real PostgreSQL and NATS, found or started by the tests themselves.

In CI (CI=true) a missing service is a failure, never a skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

# Before any test module imports grpc: importing riverbeam turns gRPC's fork support off
# (riverbeam/__init__.py), and gRPC reads that setting only when it is first imported. A test
# module that imports grpc before riverbeam (import order puts grpc first) would otherwise leave
# it on in its worker, and children started with a preexec_fn would now and then abort.
import riverbeam  # noqa: F401
from tests.support.postgres import find_postgres

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing_service(what: str) -> None:
    """Fail in CI, skip elsewhere."""
    if IN_CI:
        pytest.fail(f"{what} (CI=true: a missing service is a failure)", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A PostgreSQL URL for the test session."""
    url, container, how = find_postgres()
    if url is None:
        missing_service(f"PostgreSQL not available: {how}")
    assert url is not None
    try:
        yield url
    finally:
        if container is not None:
            container.stop()  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def nats_url() -> Iterator[str]:
    """A NATS (JetStream) URL: RIVERBEAM_TEST_NATS_URL, or a nats-server started on a free port."""
    from tests.support.nats_server import nats_url_fixture

    yield from nats_url_fixture(missing_service)
