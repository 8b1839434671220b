"""6. The four processes of `riverbeam up`, driven over gRPC from a separate client process.

`make bench-stack`. Starts a nats-server (tests/support/nats_server.py), a bare grpc.aio echo
server in its own process, and the four services as `riverbeam up` starts them (LocalStack):
once with the in-memory store and once on PostgreSQL (a throwaway schema). The client is
`bench/_driver.py` in its own process; it prints JSON, from which this file prints the table
of issue 16, every figure next to the bare echo (or a bare JetStream publish) measured in the
same run, interleaved. CPU per invoke is utime + stime from /proc of every process of the
stack, nats-server and the store's Postgres backends; RSS is VmRSS. The driver's own CPU per
call gives the client half of a bare call, so the table also prices the gRPC floor of an
invoke's hops (what no code of ours can save without fewer hops) and what is above it. That
floor is also measured: a bare chain of three processes in the shape of the hops (a "router"
calling a "runner", which calls a "store" twice in turn; bench._procs.BareChain), sent the
echo's bytes, at c1 and c32. Google ADK's api_server runs beside them as a peer (bench/_adk.py),
in memory and on PostgreSQL, driven by the same client in the same blocks.

Settings (environment):
- RIVERBEAM_BENCH_SCALE: counts times this (0.2 for a smoke run).
- RIVERBEAM_BENCH_STACKS: `memory,postgres` (default) or one of them.
- RIVERBEAM_BENCH_BEFORE_TREE: a second checkout (e.g. `git archive` of an older commit); its
  stacks run beside ours in the same run, named `memory (before)` ..., for before/after tables.
  RIVERBEAM_BENCH_BEFORE_ENV (`K=V,K=V`) is added to those stacks' environment (so the same
  tree with `RIVERBEAM_EVENT_LOOP=asyncio` is an A/B of one setting), and
  RIVERBEAM_BENCH_BEFORE_LABEL names them (default `before`).
- RIVERBEAM_BENCH_RUNNERS: runner replicas in each stack (default 1; `riverbeam up
  --runners`), and RIVERBEAM_BENCH_BEFORE_RUNNERS in the before stacks (default the same): with
  RIVERBEAM_BENCH_BEFORE_TREE=. that is an A/B of the replica count.
- RIVERBEAM_BENCH_FILL_RUNS: runs added to each store for the stored-runs figure (default
  20000, scaled; bounded by RIVERBEAM_BENCH_FILL_BUDGET_S per stack, default 60).
- RIVERBEAM_BENCH_FILL_CONTROL=1: one more stack of this tree per kind, named `... (control)`,
  measured like the others but given no runs: the stored-runs rows' drift with nothing stored.
- RIVERBEAM_BENCH_README: a markdown file whose section between `<!-- bench-stack:begin -->`
  and `<!-- bench-stack:end -->` is replaced with this run's tables (bench/README.md).
- RIVERBEAM_BENCH_MARKDOWN: as for every benchmark, append the tables there.
- RIVERBEAM_BENCH_ADK: `0` leaves ADK out, `1` fails when it cannot run (default: measured when
  bench/.adk, which `make bench-stack` installs, or RIVERBEAM_BENCH_ADK_PYTHON has it).

Each tree's code is compiled to bytecode first, as the image does at install
(deploy/Dockerfile's `pip install --compile`): with PYTHONDONTWRITEBYTECODE set, as on the
machines this runs on, every service would otherwise compile every module at each start, which
costs each one 0.3-0.6 MiB of idle RSS that a deployed service does not have.

No assertion on any time: the test fails only when something does not work.
"""

from __future__ import annotations

import asyncio
import compileall
import contextlib
import json
import os
import statistics
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bench._adk import AdkServer, AdkUnavailable, adk_database_url, adk_python
from bench._kit import emit_table, fmt_duration, machine_note, scaled
from bench._procs import BareChain, EchoProcess, StackSpec, tagged_dsn
from services.cli._up import LocalStack
from tests.support.nats_server import NatsServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

ROOT = Path(__file__).resolve().parent.parent
_NOT_INHERITED = ("RIVERBEAM_", "BEAM_", "GFS_BEAM_", "NVIDIA_API_KEY", "OTEL_")
BEGIN, END = "<!-- bench-stack:begin -->", "<!-- bench-stack:end -->"
HISTORY_TURNS = 100  # 200 stored messages: the runner's default max_history_messages


def _env(tree: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_NOT_INHERITED)}
    if tree is not None:
        env["PYTHONPATH"] = f"{tree / 'libs'}{os.pathsep}{tree}"
        for pair in os.environ.get("RIVERBEAM_BENCH_BEFORE_ENV", "").split(","):
            key, sep, value = pair.partition("=")
            if sep:
                env[key.strip()] = value.strip()
    return env


@contextlib.asynccontextmanager
async def _stack(
    name: str, nats_url: str, pg_url: str | None, tree: Path | None, *, runners: int = 1
) -> AsyncIterator[StackSpec]:
    tag = f"rbbench_{uuid.uuid4().hex[:10]}"
    schema = tag if pg_url else None
    overrides: dict[str, dict[str, str]] = (
        {"store": {"RIVERBEAM_DB_SCHEMA": schema}} if schema else {}
    )
    stack = LocalStack(
        database_url=tagged_dsn(pg_url, tag) if pg_url else None,
        nats_url=nats_url,
        base_env=_env(tree),
        env_overrides=overrides,
        ready_timeout_s=120,
        stop_timeout_s=10,
        runners=runners,
    )
    try:
        await stack.start()
        yield StackSpec(
            name=name, router=stack.router, pids=stack.pids, pg_tag=tag if pg_url else None
        )
    finally:
        await stack.stop()
        if pg_url and schema:
            await _pg_execute(pg_url, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


async def _pg_execute(pg_url: str, statement: str) -> None:
    """One statement on a connection of its own (CREATE / DROP DATABASE take no transaction)."""
    conn = await asyncpg.connect(pg_url)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@contextlib.asynccontextmanager
async def _adk(name: str, python: Path, workdir: Path, pg_url: str | None) -> AsyncIterator[Any]:
    """ADK's api_server (bench/_adk.py): sessions in memory, or with `pg_url` in a database of
    its own (ADK makes its tables in the database's public schema), dropped afterwards."""
    database = f"rbbench_adk_{uuid.uuid4().hex[:10]}" if pg_url else None
    if pg_url and database:
        await _pg_execute(pg_url, f'CREATE DATABASE "{database}"')
    try:
        uri = adk_database_url(pg_url, database) if pg_url and database else None
        async with AdkServer(python, workdir, name=name, session_uri=uri, env=_env()) as server:
            yield server.to_json(database)
    finally:
        if pg_url and database:
            await _pg_execute(pg_url, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def _signed(seconds: float) -> str:
    """A difference of two p50s: negative when noise outweighs it."""
    return ("-" if seconds < 0 else "") + fmt_duration(abs(seconds))


def _p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _mib(n: float) -> str:
    return f"{n / 2**20:.0f} MiB"


def _x(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base and base == base and value == value else "-"


PG_BACKENDS = "Postgres backends"


def _per_call(case: dict[str, Any], proc: str | None = None, key: str = "cpu") -> float:
    """A measured case's CPU seconds (or, with key="wakes", wakes) per call: of one process,
    of the store's Postgres backends (PG_BACKENDS), or of every process together (None)."""
    values: dict[str, float] = case[key]
    if proc is None:
        total = sum(values.values())
    elif proc == PG_BACKENDS:
        total = sum(v for k, v in values.items() if k.startswith("postgres["))
    else:
        total = values.get(proc, 0)
    return float(total / case["calls"])


def _tables(
    res: dict[str, Any], names: list[str], fill_target: int, ours: list[str] | None = None
) -> list[tuple[str, list[str], list[list[str]], str]]:
    """The tables of a run: a column per name, ours (Riverbeam's stacks; default all) and the
    peers (ADK), whose cells are empty where a row has no counterpart (the chain of our hops,
    FollowStream, NATS, the stored-runs fill)."""
    own = set(names if ours is None else ours)
    nan = float("nan")
    s = dict(res["samples"])
    for n in names:
        for key in ("new", "turn2", "history", "first", "done", "follow", "invoke_stream"):
            s.setdefault(f"{n}.{key}", [])
    echo = _p50(s["echo.c1"])
    js_first, js_done = _p50(s["nats.first"]), _p50(s["nats.done"])
    c32 = res["c32"]
    echo_c32 = c32["echo"]
    echo_rate = echo_c32["calls"] / echo_c32["wall"]
    echo_cpu = _per_call(echo_c32)
    headers = ["figure", "bare"] + [h for n in names for h in (n, "/ bare")]
    rows: list[list[str]] = []

    def row(
        label: str, bare: float, values: list[float], fmt: Any = fmt_duration, ratio: bool = True
    ) -> None:
        cells = [label, fmt(bare) if bare == bare else ""]
        for v in values:
            cells += [fmt(v), _x(v, bare) if ratio else ""] if v == v else ["", ""]
        rows.append(cells)

    def ours_only(value: float) -> list[float]:
        return [value if n in own else nan for n in names]

    hist_msgs = 2 * HISTORY_TURNS
    row("invoke, new session, c1, p50", echo, [_p50(s[f"{n}.new"]) for n in names])
    # The bare chain (bench._procs.BareChain): the same hops, bare processes, nothing else.
    chain = _p50(s["chain.c1"])
    row("  bare chain of its hops (3 processes, 4 calls), c1, p50", echo, ours_only(chain))
    row(
        "  invoke / bare chain",
        float("nan"),
        [_p50(s[f"{n}.new"]) / chain if n in own else nan for n in names],
        fmt=lambda v: f"{v:.2f}x",
        ratio=False,
    )
    c1_cost = res["c1"]
    c1_echo, c1_chain = _per_call(c1_cost["echo"]), _per_call(c1_cost["chain"])
    row(
        "  server CPU per invoke at c1 (all processes)",
        c1_echo,
        [_per_call(c1_cost[n]) for n in names],
    )
    row("  bare chain's CPU per call at c1", c1_echo, ours_only(c1_chain))
    row("2nd turn of a session, c1, p50", echo, [_p50(s[f"{n}.turn2"]) for n in names])
    row(
        f"turn with {hist_msgs} history messages, c1, p50",
        echo,
        [_p50(s[f"{n}.history"]) for n in names],
    )
    row(
        "  per history message per turn",
        float("nan"),
        [(_p50(s[f"{n}.history"]) - _p50(s[f"{n}.turn2"])) / (hist_msgs - 2) for n in names],
        fmt=_signed,
        ratio=False,
    )

    def rate(n: str) -> float:
        return float(c32[n]["calls"] / c32[n]["wall"])

    row(
        "new-session invokes/s at c32",
        echo_rate,
        [rate(n) for n in names],
        fmt=lambda v: f"{v:,.0f}",
    )
    row(
        "  bare chain of its hops at c32",
        echo_rate,
        ours_only(rate("chain")),
        fmt=lambda v: f"{v:,.0f}",
    )

    def cpu(n: str) -> float:
        return _per_call(c32[n])

    row("server CPU per invoke at c32 (all processes)", echo_cpu, [cpu(n) for n in names])

    row(
        "  of which Postgres backends",
        float("nan"),
        [_per_call(c32[n], PG_BACKENDS) for n in names],
        ratio=False,
    )
    row(
        "  of which nats-server",
        float("nan"),
        [_per_call(c32[n], "nats-server") if n in own else nan for n in names],
        ratio=False,
    )
    # An invoke's server processes hold one server half (the router's Invoke) and three whole
    # calls (RunInvoke, BeginRun, FinishRun): priced at the bare call's two halves of this run,
    # that is the CPU no code of ours could save without fewer hops.
    echo_client = echo_c32.get("client_cpu", float("nan")) / echo_c32["calls"]

    def floor_rows(label: str, floor: float, above: str) -> None:
        row(label, float("nan"), ours_only(floor), ratio=False)
        above_it = [cpu(n) - floor if n in own else nan for n in names]
        row(above, float("nan"), above_it, fmt=_signed, ratio=False)

    floor_rows(
        "  bare gRPC floor of its hops (1 server half + 3 calls)",
        echo_cpu + 3 * (echo_cpu + echo_client),
        "  above that floor",
    )
    # The same floor measured: the bare chain's three processes.
    floor_rows(
        "  bare chain of its hops, measured (its 3 processes)",
        cpu("chain"),
        "  above the bare chain",
    )
    row(
        "client CPU per call at c32 (the driver)",
        echo_client,
        [c32[n].get("client_cpu", float("nan")) / c32[n]["calls"] for n in names],
    )
    row("first frame at a NATS subscriber, p50", js_first, [_p50(s[f"{n}.first"]) for n in names])
    row("done frame at a NATS subscriber, p50", js_done, [_p50(s[f"{n}.done"]) for n in names])
    for rpc, key in (("FollowStream", "follow"), ("InvokeStream", "invoke_stream")):
        row(f"done frame via {rpc}, p50", js_done, [_p50(s[f"{n}.{key}"]) for n in names])
        row(
            f"  {rpc} over NATS direct",
            float("nan"),
            [_p50(s[f"{n}.{key}"]) - _p50(s[f"{n}.done"]) for n in names],
            fmt=_signed,
            ratio=False,
        )
    scale = res.get("scale") or {}
    if scale:
        e_low, e_high = _p50(scale["echo"]["low"]), _p50(scale["echo"]["high"])

        def stored(n: str, key: str) -> float:
            return _p50(scale[n][key]) if n in scale else nan

        row("2nd turn p50, runs stored so far", e_low, [stored(n, "low") for n in names])
        filled = ", ".join(f"{n}: +{scale[n]['filled']:,}" for n in names if n in scale)
        if res.get("pg_autovacuum"):
            # Postgres stacks are vacuumed before each of these rows (bench/_driver.py).
            filled += (
                f"; Postgres vacuumed before each row, server autovacuum {res['pg_autovacuum']}"
            )
        row(
            f"2nd turn p50 after adding runs ({filled})",
            e_high,
            [stored(n, "high") for n in names],
        )
        rows.append(
            ["  after / before (p50 ratio)", f"{e_high / e_low:.2f}"]
            + [
                c
                for n in names
                for c in (
                    (f"{stored(n, 'high') / stored(n, 'low'):.2f}", "") if n in scale else ("", "")
                )
            ]
        )
    rss_load = res["rss_load"]
    rss_idle = res["rss_idle"]
    row(
        "RSS, whole stack after load (+ nats-server)",
        float(rss_load["bare echo"]["echo"]),
        [
            float(sum(rss_load[n].values()))
            + (rss_load["nats-server"]["nats-server"] if n in own else 0)
            for n in names
        ],
        fmt=_mib,
    )
    row(
        "RSS of the largest idle service",
        float(rss_idle["bare echo"]["echo"]),
        [float(max(v for k, v in rss_idle[n].items() if k != "nats")) for n in names],
        fmt=_mib,
    )
    n_note = f"c1 n={len(s['echo.c1'])} echo, {len(s[f'{names[0]}.new'])} invokes per stack; c32 {c32[names[0]]['calls']} invokes per stack"
    main = (
        "6. Four processes, one client process (p50; / bare = ratio to the bare figure of the same run)",
        headers,
        rows,
        n_note,
    )

    procs = sorted({p for n in names for p in res["rss_idle"][n]} - {"nats"})
    ran = {n: set(res["rss_idle"][n]) for n in names}  # the processes of each column
    headers2 = ["process"] + [
        h for n in names for h in (f"{n}: idle RSS", "after load", "CPU / invoke c32")
    ]
    rows2 = []
    for p in procs:
        cells = [p]
        for n in names:
            cells += (
                [
                    _mib(rss_idle[n].get(p, 0)),
                    _mib(rss_load[n].get(p, 0)),
                    fmt_duration(_per_call(c32[n], p)),
                ]
                if p in ran[n]
                else ["", "", ""]
            )
        rows2.append(cells)
    nats_cells = ["nats-server (shared)"]
    for n in names:
        nats_cells += (
            [
                _mib(rss_idle["nats-server"]["nats-server"]),
                _mib(rss_load["nats-server"]["nats-server"]),
                fmt_duration(_per_call(c32[n], "nats-server")),
            ]
            if n in own
            else ["", "", ""]
        )
    rows2.append(nats_cells)
    pg_cells = [PG_BACKENDS]
    for n in names:
        pg_cells += ["", "", fmt_duration(_per_call(c32[n], PG_BACKENDS))]
    rows2.append(pg_cells)
    per_proc = ("6b. Per process: RSS and CPU per invoke at c32", headers2, rows2, "")
    return [main, per_proc, _wakes_table(res, names, procs, own)]


def _wakes_table(
    res: dict[str, Any], names: list[str], procs: list[str], ours: set[str]
) -> tuple[str, list[str], list[list[str]], str]:
    """6c: each process's CPU and wakes (voluntary context switches) per invoke, one at a time
    against 32 in flight: what batching saves each of them."""
    c1, c32 = res["c1"], res["c32"]
    headers = ["process"] + [
        h for n in names for h in (f"{n}: CPU / invoke c1", "c32", "wakes / invoke c1", "c32")
    ]
    rows = []
    for proc in [*procs, "nats-server", PG_BACKENDS]:
        cells = [proc]
        for n in names:
            part = (
                proc == PG_BACKENDS
                or proc in res["rss_idle"][n]
                or (proc == "nats-server" and n in ours)
            )
            cells += (
                [
                    fmt_duration(_per_call(c1[n], proc)),
                    fmt_duration(_per_call(c32[n], proc)),
                    f"{_per_call(c1[n], proc, 'wakes'):.1f}",
                    f"{_per_call(c32[n], proc, 'wakes'):.1f}",
                ]
                if part
                else ["", "", "", ""]
            )
        rows.append(cells)
    title = "6c. Per process: CPU and wakes per invoke, one at a time and 32 in flight"
    return (title, headers, rows, "wakes: voluntary context switches, all threads")


def _markdown(tables: list[tuple[str, list[str], list[list[str]], str]], caption: str) -> str:
    lines: list[str] = []
    for title, headers, rows, note in tables:
        lines += [
            f"#### {title}",
            "",
            "| " + " | ".join(headers) + " |",
            "|" + "|".join("---" for _ in headers) + "|",
        ]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in r) + " |" for r in rows]
        lines += ["", f"_{' | '.join(p for p in (note, caption) if p)}_", ""]
    return "\n".join(lines)


def _compile(tree: Path) -> None:
    """Bytecode for a tree's code, as a deployed image has it (see the module docstring)."""
    for part in ("libs", "services"):
        compileall.compile_dir(tree / part, quiet=1)


def _write_readme(path: Path, body: str) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    path.write_text(text[:start] + "\n" + body + "\n" + text[end:], encoding="utf-8")


async def test_bench_stack(pg_url: str) -> None:
    wanted = [
        w.strip()
        for w in os.environ.get("RIVERBEAM_BENCH_STACKS", "memory,postgres").split(",")
        if w.strip()
    ]
    before = os.environ.get("RIVERBEAM_BENCH_BEFORE_TREE")
    runners = int(os.environ.get("RIVERBEAM_BENCH_RUNNERS", "1"))
    before_runners = int(os.environ.get("RIVERBEAM_BENCH_BEFORE_RUNNERS", str(runners)))
    trees: list[tuple[str, Path | None, int]] = [("", None, runners)]
    if before:
        label = os.environ.get("RIVERBEAM_BENCH_BEFORE_LABEL", "before")
        trees.insert(0, (f" ({label})", Path(before), before_runners))
    fill = scaled(int(os.environ.get("RIVERBEAM_BENCH_FILL_RUNS", "20000")), minimum=0)
    # A control stack of this tree per kind, measured as the others but never filled: what the
    # stored-runs figure would show with nothing stored (the machine's own drift).
    control = fill > 0 and os.environ.get("RIVERBEAM_BENCH_FILL_CONTROL", "") not in ("", "0")
    if control:
        trees.append((" (control)", None, runners))
    fill_budget = float(os.environ.get("RIVERBEAM_BENCH_FILL_BUDGET_S", "60"))
    rounds = 3
    counts = {
        "c1": scaled(300, minimum=rounds * 4),
        "history": scaled(60, minimum=rounds * 2),
        "stream": scaled(150, minimum=rounds * 2),
        "c32": scaled(1200, minimum=rounds * 32),
        "c32_echo": scaled(6000, minimum=rounds * 32),
        "scale": scaled(90, minimum=rounds * 2),
        "history_turns": HISTORY_TURNS,
    }
    try:
        adk = await asyncio.to_thread(adk_python)  # it asks the interpreter: a second or two
    except AdkUnavailable as exc:
        pytest.fail(str(exc))
    for tree in {t or ROOT for _, t, _ in trees}:
        await asyncio.to_thread(_compile, tree)
    with NatsServer() as nats_server, tempfile.TemporaryDirectory(prefix="rbbench-") as tmp:
        assert nats_server.pid is not None
        async with contextlib.AsyncExitStack() as es:
            echo = await es.enter_async_context(EchoProcess(Path(tmp), _env()))
            chain = await es.enter_async_context(BareChain(Path(tmp), _env()))
            specs: list[StackSpec] = []
            for kind in wanted:
                for suffix, tree, replicas in trees:
                    specs.append(
                        await es.enter_async_context(
                            _stack(
                                kind + suffix,
                                nats_server.url,
                                pg_url if kind == "postgres" else None,
                                tree,
                                runners=replicas,
                            )
                        )
                    )
            peers: list[dict[str, Any]] = []
            for kind in wanted if adk is not None else []:
                assert adk is not None
                peers.append(
                    await es.enter_async_context(
                        _adk(f"ADK {kind}", adk, Path(tmp), pg_url if kind == "postgres" else None)
                    )
                )
            config = {
                "echo": echo.address,
                "echo_pid": echo.pid,
                "chain": chain.address,
                "chain_pids": chain.pids,
                "nats": nats_server.url,
                "nats_pid": nats_server.pid,
                "pg_dsn": pg_url if "postgres" in wanted else None,
                "stacks": [spec.to_json() for spec in specs],
                "adk": peers,
                "rounds": rounds,
                "counts": counts,
                "budget_s": 240.0,
                "fill_runs": fill,
                "fill_skip": [spec.name for spec in specs if spec.name.endswith(" (control)")],
                "fill_budget_s": fill_budget,
            }
            cfg = Path(tmp) / "config.json"
            cfg.write_text(json.dumps(config), encoding="utf-8")
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench._driver", str(cfg),
                stdout=asyncio.subprocess.PIPE, cwd=str(ROOT), env=_env(),
            )  # fmt: skip
            try:
                stdout, _ = await asyncio.wait_for(proc.communicate(), 1200)
            except TimeoutError:
                proc.kill()
                await proc.wait()
                raise
            assert proc.returncode == 0, "the driver failed (its stderr is above)"
    result = json.loads(stdout)
    ours = [spec.name for spec in specs]
    names = ours + [peer["name"] for peer in peers]
    tables = _tables(result, names, fill, ours)
    caption = machine_note()
    if peers:
        caption += (
            " | ADK: google-adk api_server (bench/adk-requirements.txt), an LlmAgent with an echo"
            " model, over HTTP/1.1 keep-alive (aiohttp); new session = create + run; first / done"
            " frame = first / last server-sent event of /run_sse"
        )
    for title, headers, rows, note in tables:
        emit_table(title, headers, rows, caption=note)
    _save(result, _markdown(tables, caption))


def _save(result: dict[str, Any], markdown: str) -> None:
    readme = os.environ.get("RIVERBEAM_BENCH_README")
    if readme:
        _write_readme(Path(readme), markdown)
    raw = os.environ.get("RIVERBEAM_BENCH_JSON")
    if raw:
        Path(raw).write_text(json.dumps(result), encoding="utf-8")
