"""The shared nats_url fixture body: env URL, skip locally, fail in CI."""

from __future__ import annotations

import pytest

from riverbeam.stream import find_nats_server
from tests.support import nats_server


def test_env_url_is_used_as_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIVERBEAM_TEST_NATS_URL", "nats://example:4222")
    assert list(nats_server.nats_url_fixture()) == ["nats://example:4222"]


@pytest.mark.parametrize(
    ("ci", "outcome"), [("", pytest.skip.Exception), ("true", pytest.fail.Exception)]
)
def test_missing_server_skips_locally_and_fails_in_ci(
    monkeypatch: pytest.MonkeyPatch, ci: str, outcome: type[BaseException]
) -> None:
    monkeypatch.delenv("RIVERBEAM_TEST_NATS_URL", raising=False)
    monkeypatch.setenv("CI", ci)
    monkeypatch.setattr(nats_server, "find_nats_server", lambda: None)

    with pytest.raises(outcome, match="nats-server not found"):
        list(nats_server.nats_url_fixture())


def test_missing_server_goes_through_the_given_callback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RIVERBEAM_TEST_NATS_URL", raising=False)
    monkeypatch.setattr(nats_server, "find_nats_server", lambda: None)
    told: list[str] = []

    assert list(nats_server.nats_url_fixture(told.append)) == []
    assert told and "nats-server not found" in told[0]


@pytest.mark.nats
def test_server_starts_and_stops() -> None:
    if find_nats_server() is None:
        pytest.skip("no nats-server")
    server = nats_server.NatsServer()
    with server:
        assert server.is_running()
        assert nats_server._server_info(server.host, server.port, timeout_s=2) is not None
    assert not server.is_running()
    server.stop()  # idempotent
