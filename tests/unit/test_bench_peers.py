"""The four-process benchmark's peer columns (ADK) and its CPU accounting, on made-up readings.

The benchmark itself is slow (`make bench-stack`); what it computes from its readings is
checked here: a peer's column is filled where it has the figure and empty where it has no
counterpart, and a process that starts or ends between two readings is accounted for.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from bench._adk import adk_database_url
from bench._driver import REAPED, _add_cost
from bench._procs import children_cpu_seconds
from bench.test_bench_stack import _tables

OURS, PEER = "memory", "ADK memory"


def _case(calls: int, cpu: dict[str, float], **more: Any) -> dict[str, Any]:
    return {"calls": calls, "cpu": cpu, "wakes": {k: 10 for k in cpu}, **more}


def _result() -> dict[str, Any]:
    ms = 1e-3
    samples = {
        "echo.c1": [0.5 * ms] * 3,
        "chain.c1": [2.0 * ms] * 3,
        "nats.first": [0.2 * ms] * 3,
        "nats.done": [0.4 * ms] * 3,
        f"{OURS}.new": [4.0 * ms] * 3,
        f"{OURS}.turn2": [4.0 * ms] * 3,
        f"{OURS}.history": [4.2 * ms] * 3,
        f"{OURS}.first": [3.0 * ms] * 3,
        f"{OURS}.done": [5.0 * ms] * 3,
        f"{OURS}.follow": [6.0 * ms] * 3,
        f"{PEER}.new": [8.0 * ms] * 3,
        f"{PEER}.turn2": [5.0 * ms] * 3,
        f"{PEER}.history": [15.0 * ms] * 3,
        f"{PEER}.first": [3.5 * ms] * 3,
        f"{PEER}.done": [4.5 * ms] * 3,
    }
    c32 = {
        "echo": _case(100, {"echo": 0.03}, wall=0.05, client_cpu=0.02),
        "chain": _case(100, {"a": 0.1, "b": 0.1}, wall=0.2, client_cpu=0.02),
        OURS: _case(100, {"router": 0.1, "runner": 0.1, "nats-server": 0.01}, wall=0.2),
        PEER: _case(100, {"adk": 0.5, "postgres[7]": 0.1, REAPED: 0.05}, wall=0.5),
    }
    c1 = {n: _case(3, dict(c["cpu"])) for n, c in c32.items()}
    rss = {
        OURS: {"router": 60 * 2**20, "runner": 64 * 2**20},
        PEER: {"adk": 106 * 2**20},
        "nats-server": {"nats-server": 13 * 2**20},
        "bare echo": {"echo": 35 * 2**20},
    }
    return {"samples": samples, "c1": c1, "c32": c32, "rss_idle": rss, "rss_load": rss}


def _rows(tables: list[Any], title_start: str) -> dict[str, list[str]]:
    table = next(t for t in tables if t[0].startswith(title_start))
    return {row[0]: row[1:] for row in table[2]}


def test_a_peer_column_has_its_figures_and_no_cells_for_what_it_lacks() -> None:
    tables = _tables(_result(), [OURS, PEER], 0, [OURS])
    main = _rows(tables, "6.")
    # columns: bare, ours, / bare, peer, / bare
    assert main["invoke, new session, c1, p50"][3] == "8.00 ms"
    assert main["invoke, new session, c1, p50"][4] == "16.00x"
    chain = main["  bare chain of its hops (3 processes, 4 calls), c1, p50"]
    assert chain[1] == "2.00 ms" and chain[3:] == ["", ""]
    assert main["  FollowStream over NATS direct"][3:] == ["", ""]
    assert main["  of which nats-server"][1] != "" and main["  of which nats-server"][3:] == [
        "",
        "",
    ]
    # The peer's Postgres backends, the ended ones included, are its own.
    assert main["  of which Postgres backends"][3] == "1.50 ms"
    # Its RSS is its own process, without the nats-server ours shares.
    assert main["RSS, whole stack after load (+ nats-server)"][1] == "137 MiB"
    assert main["RSS, whole stack after load (+ nats-server)"][3] == "106 MiB"
    per_process = _rows(tables, "6b.")
    assert per_process["adk"][:3] == ["", "", ""] and per_process["adk"][3] == "106 MiB"
    assert per_process["router"][3:] == ["", "", ""]
    assert per_process["nats-server (shared)"][3:] == ["", "", ""]
    wakes = _rows(tables, "6c.")
    assert wakes["runner"][4:] == ["", "", "", ""] and wakes["adk"][:4] == ["", "", "", ""]


def test_without_peers_every_column_is_ours() -> None:
    result = _result()
    tables = _tables(result, [OURS], 0)
    main = _rows(tables, "6.")
    assert main["  bare chain of its hops (3 processes, 4 calls), c1, p50"][1] == "2.00 ms"
    assert all(len(cells) == 3 for cells in main.values())


def test_a_process_that_started_or_ended_between_readings_is_accounted_for() -> None:
    entry: dict[str, Any] = {"cpu": {}, "wakes": {}}
    before = {"router": 1.0, "postgres[1]": 2.0, REAPED: 5.0}
    # postgres[1] ended (reads 0), postgres[2] started, the ended backends' total grew.
    after = {"router": 1.5, "postgres[1]": 0.0, "postgres[2]": 0.25, REAPED: 5.5}
    woke_before = {"router": 3, "postgres[1]": 9, REAPED: 0}
    woke_after = {"router": 7, "postgres[1]": 0, "postgres[2]": 4, REAPED: 0}
    _add_cost(entry, (before, after), (woke_before, woke_after))
    assert entry["cpu"] == {"router": 0.5, "postgres[1]": 0.0, "postgres[2]": 0.25, REAPED: 0.5}
    assert entry["wakes"] == {"router": 4, "postgres[1]": 0, "postgres[2]": 4, REAPED: 0}


def test_children_cpu_seconds_counts_a_child_that_ended() -> None:
    before = children_cpu_seconds(os.getpid())
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", burn], check=True)  # run() waits: the child is reaped
    assert children_cpu_seconds(os.getpid()) > before
    assert children_cpu_seconds(2**22 + 12345) == 0.0  # no such process


def test_adk_database_url_is_the_same_server_in_sqlalchemys_asyncpg_form() -> None:
    url = adk_database_url("postgresql://postgres@127.0.0.1:5432/test?sslmode=disable", "adk_x")
    assert url == "postgresql+asyncpg://postgres@127.0.0.1:5432/adk_x"
