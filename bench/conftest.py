"""Benchmarks reuse the test suite's real services: a nats-server with JetStream and PostgreSQL.

Both fixtures (tests/conftest.py) find or start the service, skip when it is missing, and fail
instead when CI=true.
"""

from __future__ import annotations

from tests.conftest import nats_url, pg_url

__all__ = ["nats_url", "pg_url"]
