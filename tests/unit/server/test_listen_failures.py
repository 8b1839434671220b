"""A port that is taken is one line with a BEM code, never a traceback (issue 17)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import GrpcServer, listen_host, start_metrics

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


async def test_grpc_server_on_a_taken_port_is_bem_420(taken_port: int) -> None:
    server = GrpcServer([], listen=f"127.0.0.1:{taken_port}")
    with pytest.raises(RiverbeamError) as info:
        await server.start()
    assert info.value.code is ErrorCode.LISTEN_FAILED
    assert str(taken_port) in info.value.message


def test_metrics_on_a_taken_port_is_bem_421(taken_port: int) -> None:
    with pytest.raises(RiverbeamError) as info:
        start_metrics(taken_port, "127.0.0.1")
    assert info.value.code is ErrorCode.METRICS_LISTEN_FAILED
    assert info.value.details["port"] == str(taken_port)


def test_metrics_listen_on_the_host_they_are_given() -> None:
    server = start_metrics(0, "127.0.0.1")
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("listen", "host"),
    [
        ("127.0.0.1:50051", "127.0.0.1"),
        ("0.0.0.0:1", "0.0.0.0"),
        ("[::1]:5", "::1"),
        (":5", "127.0.0.1"),
    ],
)
def test_listen_host(listen: str, host: str) -> None:
    assert listen_host(listen) == host


def test_serve_with_a_taken_metrics_port_says_so_in_one_line(taken_port: int) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'libs'}:{ROOT}",
        "RIVERBEAM_METRICS_PORT": str(taken_port),
        "RIVERBEAM_LOG_FORMAT": "text",
    }
    env.pop("RIVERBEAM_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "serve", "store", "--listen", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr + done.stdout
    errors = [line for line in done.stderr.splitlines() if "BEM-421" in line]
    assert len(errors) == 1 and f"127.0.0.1:{taken_port}" in errors[0]
