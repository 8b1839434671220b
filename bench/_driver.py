"""The client of the four-process benchmark, run as its own process; prints one JSON document.

    python -m bench._driver CONFIG.json > results.json

The config (written by bench/test_bench_stack.py) names the bare echo server, NATS, and each
stack's router with the process ids to account CPU and RSS to. The driver talks to them over
gRPC and NATS only, like any client, and reads /proc for CPU time and RSS. Every case runs in
`rounds` interleaved blocks (echo, memory, postgres, echo, memory, ...), so a burst of load on
the shared machine hits every case alike. Counts are bounded and every phase has a time budget.

Cases (all on loopback, the echo agent, non-streaming unless said):
- `c1`: one call at a time. Echo; the bare chain of an invoke's hops (router -> runner ->
  store twice, bench._procs.BareChain); Invoke on a new session; the 2nd turn of a session
  (its 1st turn untimed, just before); a turn of a session with `history` messages stored.
  For the echo, the chain and the new-session invokes, also each process's CPU and wakes
  (voluntary context switches, all threads) per call.
- `stream`: Invoke with `stream: true` and a core-NATS subscriber on the request's subject,
  subscribed before the call: time from the call to the first frame and to the terminal frame.
  Bare: two `js.publish` (awaiting each ack) to a subscribed subject of a bench stream.
- `follow`: the same Invoke, then FollowStream from seq 0: time from the call to the done frame.
- `invoke_stream`: InvokeStream (the ack and the frames in one call): time to the done frame.
- `c32`: 32 calls in flight (one channel), new sessions; calls/s, and the CPU time every process
  of the stack spent (+ nats-server, + the store's Postgres backends) divided by the calls;
  the same for the echo and for the bare chain (its three processes); wakes per call too.
- `scale`: the 2nd-turn p50 with the runs stored so far, then again after filling the store
  with more runs (c32 new-session invokes within a time budget): cost per invoke should not grow.

ADK's api_server, when the config names it (`adk`, bench/_adk.py), is measured beside the stacks
in the same blocks: `c1` (new session = create + run), the 2nd turn, the turn with history,
`stream` (first and last server-sent event of /run_sse) and `c32`.
"""

from __future__ import annotations

import asyncio
import gc
import json
import resource
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import nats

from bench._adk import AdkClient
from bench._kit import per_call
from bench._procs import ECHO_METHOD, children_cpu_seconds, cpu_seconds, rss_bytes, wakes
from riverbeam.v1 import riverbeam_service_pb2 as svc_pb
from riverbeam.v1 import riverbeam_service_pb2_grpc as svc_grpc
from riverbeam.v1 import types_pb2

AGENT = "assistant"
TEXT = "Summarise the release notes of the last sprint in three bullet points, please."
BENCH_STREAM = "RBBENCHSTACK"
BENCH_SUBJECT = "rbbench.stack"
SUBJECT_PREFIX = "riverbeam.stream."
CONCURRENCY = 32
TERMINAL = ("done", "error")

Samples = dict[str, list[float]]


def _request(session_id: str | None = None, *, stream: bool = False) -> types_pb2.InvokeRequest:
    req = types_pb2.InvokeRequest(
        agent_name=AGENT,
        content=[types_pb2.ContentPart(type="text", text=TEXT)],
        session_id=session_id or str(uuid.uuid4()),
        stream=stream,
    )
    if stream:
        req.request_id = str(uuid.uuid4())
    req.metadata.update({"client": "bench", "locale": "en-GB"})
    return req


class StackClient:
    def __init__(
        self, spec: dict[str, Any], nc: Any, pg: asyncpg.Pool | None, reaped: dict[str, int]
    ) -> None:
        self.reaped = reaped  # with Postgres: the ended backends' entry (REAPED)
        self.name: str = spec["name"]
        self.pids: dict[str, int] = spec["pids"]
        self.pg_tag: str | None = spec.get("pg_tag")
        self.pg_schema: str | None = spec.get("pg_schema")
        self.channel = grpc.aio.insecure_channel(spec["router"])
        self.stub = svc_grpc.RiverbeamServiceStub(self.channel)  # type: ignore[no-untyped-call]
        self.nc = nc
        self.pg = pg
        self.history_session = ""

    async def invoke(self, session_id: str | None = None) -> None:
        reply = await self.stub.Invoke(_request(session_id), timeout=60)
        assert reply.WhichOneof("outcome") == "result", reply

    async def new_c1(self, n: int) -> Samples:
        return {"new": await per_call(self.invoke)(n)}

    async def turn2_c1(self, n: int) -> Samples:
        session = ""

        async def first_turn() -> None:
            nonlocal session
            session = str(uuid.uuid4())
            await self.invoke(session)

        return {"turn2": await per_call(lambda: self.invoke(session), prepare=first_turn)(n)}

    async def prepare_history(self, turns: int) -> None:
        self.history_session = str(uuid.uuid4())
        for _ in range(turns):
            await self.invoke(self.history_session)

    async def history_c1(self, n: int) -> Samples:
        return {"history": await per_call(lambda: self.invoke(self.history_session))(n)}

    async def stream_c1(self, n: int) -> Samples:
        first: list[float] = []
        done: list[float] = []
        for _ in range(n):
            req = _request(stream=True)
            arrived: list[float] = []
            terminal = asyncio.Event()

            async def on_msg(
                msg: Any, arrived: list[float] = arrived, terminal: asyncio.Event = terminal
            ) -> None:
                arrived.append(time.perf_counter())
                if json.loads(msg.data).get("type") in ("done", "error"):
                    terminal.set()

            sub = await self.nc.subscribe(SUBJECT_PREFIX + req.request_id, cb=on_msg)
            await self.nc.flush()
            start = time.perf_counter()
            reply = await self.stub.Invoke(req, timeout=60)
            assert reply.WhichOneof("outcome") == "ack", reply
            await asyncio.wait_for(terminal.wait(), 60)
            await sub.unsubscribe()
            first.append(arrived[0] - start)
            done.append(arrived[-1] - start)
        return {"first": first, "done": done}

    async def follow_c1(self, n: int) -> Samples:
        out = []
        for _ in range(n):
            req = _request(stream=True)
            start = time.perf_counter()
            reply = await self.stub.Invoke(req, timeout=60)
            assert reply.WhichOneof("outcome") == "ack", reply
            call = self.stub.FollowStream(
                svc_pb.FollowStreamRequest(request_id=req.request_id, after_seq=0), timeout=60
            )
            async for frame in call:
                if frame.chunk.type in ("done", "error"):
                    out.append(time.perf_counter() - start)
                    break
            call.cancel()
        return {"follow": out}

    async def invoke_stream_c1(self, n: int) -> Samples:
        """InvokeStream: time from the call to the done frame (none from a tree without it)."""
        out = []
        for _ in range(n):
            request = svc_pb.InvokeStreamRequest(request=_request(stream=True))
            start = time.perf_counter()
            call = self.stub.InvokeStream(request, timeout=60)
            try:
                async for reply in call:
                    if reply.WhichOneof("event") == "chunk" and reply.chunk.type in TERMINAL:
                        out.append(time.perf_counter() - start)
                        break
            except grpc.aio.AioRpcError as exc:
                if exc.code() is grpc.StatusCode.UNIMPLEMENTED:
                    return {}
                raise
            finally:
                call.cancel()
        return {"invoke_stream": out}

    async def vacuum(self) -> None:
        """VACUUM (ANALYZE) this stack's Postgres tables, as autovacuum would; none in memory."""
        if self.pg is None or self.pg_tag is None:
            return
        async with self.pg.acquire() as conn:
            for table in _VACUUMED:
                await conn.execute(f'VACUUM (ANALYZE) "{self.pg_tag}".{table}')

    async def backend_pids(self) -> dict[str, int]:
        if self.pg is None or self.pg_tag is None:
            return {}
        rows = await self.pg.fetch(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1", self.pg_tag
        )
        return {f"postgres[{r['pid']}]": int(r["pid"]) for r in rows} | self.reaped


# The CPU of Postgres backends that ended: the postmaster's reaped children (cutime + cstime).
# A stack whose pool opens and closes connections under load (ADK's SQLAlchemy pool past its
# five) would otherwise lose the CPU of each backend that ended before the second reading.
REAPED = "postgres[ended]"


async def reaped_backends(pg: asyncpg.Pool | None) -> dict[str, int]:
    """{REAPED: the postmaster's pid} (the parent of a backend of `pg`); {} without Postgres."""
    if pg is None:
        return {}
    backend = int(await pg.fetchval("SELECT pg_backend_pid()"))
    text = await asyncio.to_thread(Path(f"/proc/{backend}/stat").read_text)
    return {REAPED: int(text[text.rindex(")") + 2 :].split()[1])}


_VACUUMED = ("sessions", "interactions", "runs", "messages")


async def _autovacuum(pg: asyncpg.Pool | None) -> str:
    """The server's `autovacuum` setting ("on"/"off"), or "" with no Postgres."""
    if pg is None:
        return ""
    return str(await pg.fetchval("SHOW autovacuum"))


async def _echo_calls(channel: grpc.aio.Channel, payload: bytes) -> Callable[[], Awaitable[bytes]]:
    call = channel.unary_unary(ECHO_METHOD)

    async def one() -> bytes:
        reply: bytes = await call(payload, timeout=30)
        return reply

    return one


async def _concurrent(call: Callable[[], Awaitable[object]], total: int) -> float:
    """`total` calls, CONCURRENCY in flight; the wall time."""
    left = total

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await call()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return time.perf_counter() - start


def _cpu(pids: dict[str, int]) -> dict[str, float]:
    return {
        name: children_cpu_seconds(pid) if name == REAPED else cpu_seconds(pid)
        for name, pid in pids.items()
    }


def _wakes(pids: dict[str, int]) -> dict[str, int]:
    return {name: 0 if name == REAPED else wakes(pid) for name, pid in pids.items()}


def _add_cost(
    entry: dict[str, Any],
    cpu: tuple[dict[str, float], dict[str, float]],
    woke: tuple[dict[str, int], dict[str, int]],
) -> None:
    """Add each process's CPU seconds and wakes between two readings to `entry`.

    A process only in the second reading started between them (a backend a pool opened): all of
    its CPU is the window's. One that ended reads 0 the second time: it adds nothing here (a
    backend's share is in REAPED)."""
    (cpu0, cpu1), (woke0, woke1) = cpu, woke
    for proc in cpu1:
        used = max(0.0, cpu1[proc] - cpu0.get(proc, 0.0))
        entry["cpu"][proc] = entry["cpu"].get(proc, 0.0) + used
        woken = max(0, woke1[proc] - woke0.get(proc, 0))
        entry["wakes"][proc] = entry["wakes"].get(proc, 0) + woken


def _own_cpu() -> float:
    """This client process's CPU seconds (user + system), for the client half of each call."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _read_config(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        config: dict[str, Any] = json.load(fh)
    return config


async def main(config_path: str) -> dict[str, Any]:
    config = _read_config(config_path)
    rounds: int = config["rounds"]
    counts: dict[str, int] = config["counts"]
    nc = await nats.connect(config["nats"], connect_timeout=10, allow_reconnect=False)
    js = nc.jetstream()
    await js.add_stream(name=BENCH_STREAM, subjects=[BENCH_SUBJECT + ".>"], max_age=300)
    pg = (
        await asyncpg.create_pool(config["pg_dsn"], min_size=1, max_size=2)
        if config.get("pg_dsn")
        else None
    )
    reaped = await reaped_backends(pg)
    stacks = [StackClient(spec, nc, pg, reaped) for spec in config["stacks"]]
    peers = [AdkClient(spec, pg, TEXT, reaped) for spec in config.get("adk", [])]
    echo_channel = grpc.aio.insecure_channel(config["echo"])
    echo = await _echo_calls(echo_channel, _request().SerializeToString())
    # The bare chain of an invoke's hops (bench._procs.BareChain), sent the same bytes.
    chain_channel = grpc.aio.insecure_channel(config["chain"])
    chain = await _echo_calls(chain_channel, _request().SerializeToString())
    nats_pid: int = config["nats_pid"]
    out: dict[str, Any] = {
        "samples": {},
        "c1": {},
        "c32": {},
        "rss_idle": {},
        "rss_load": {},
        "scale": {},
    }
    samples: dict[str, list[float]] = out["samples"]

    def add(prefix: str, got: Samples) -> None:
        for key, values in got.items():
            samples.setdefault(f"{prefix}.{key}", []).extend(values)

    try:
        out["rss_idle"] = {
            s.name: {p: rss_bytes(pid) for p, pid in s.pids.items()} for s in [*stacks, *peers]
        }
        out["rss_idle"]["nats-server"] = {"nats-server": rss_bytes(nats_pid)}
        out["rss_idle"]["bare echo"] = {"echo": rss_bytes(config["echo_pid"])}

        async def echo_c1(n: int, call: Callable[[], Awaitable[bytes]] = echo) -> Samples:
            res = []
            for _ in range(n):
                start = time.perf_counter()
                await call()
                res.append(time.perf_counter() - start)
            return {"c1": res}

        async def bare_stream(n: int) -> Samples:
            first: list[float] = []
            done: list[float] = []
            frame = json.dumps({"type": "chunk", "seq": 1, "data": {"content": TEXT}}).encode()
            for _ in range(n):
                subject = f"{BENCH_SUBJECT}.{uuid.uuid4().hex}"
                arrived: list[float] = []
                got_two = asyncio.Event()

                async def on_msg(
                    msg: Any, arrived: list[float] = arrived, ev: asyncio.Event = got_two
                ) -> None:
                    arrived.append(time.perf_counter())
                    if len(arrived) == 2:
                        ev.set()

                sub = await nc.subscribe(subject, cb=on_msg)
                await nc.flush()
                start = time.perf_counter()
                await js.publish(subject, frame)
                await js.publish(subject, frame)
                await asyncio.wait_for(got_two.wait(), 30)
                await sub.unsubscribe()
                first.append(arrived[0] - start)
                done.append(arrived[1] - start)
            return {"first": first, "done": done}

        # ---- warm up (channels, statements, imports on first use) --------------------------
        await echo_c1(50)
        await echo_c1(50, chain)
        await bare_stream(10)
        for s in stacks:
            await s.new_c1(20)
            await s.turn2_c1(5)
            await s.stream_c1(5)
            await s.follow_c1(5)
            await s.invoke_stream_c1(5)
            await s.prepare_history(counts["history_turns"])
        for peer in peers:
            await peer.new_c1(20)
            await peer.turn2_c1(5)
            await peer.stream_c1(5)
            await peer.prepare_history(counts["history_turns"])

        # ---- sequential cases, interleaved --------------------------------------------------
        echo_pids: dict[str, int] = {"echo": config["echo_pid"]}
        chain_pids: dict[str, int] = config["chain_pids"]

        async def c1_costed(
            name: str, pids: dict[str, int], case: Awaitable[Samples], more: Any = None
        ) -> Samples:
            """The case's samples; its processes' CPU and wakes per call go to out["c1"].
            `more`: the backend_pids of its stack, read again after (backends it opened)."""
            before = _cpu(pids), _wakes(pids)
            got = await case
            if more is not None:
                pids = pids | await more()
            after = _cpu(pids), _wakes(pids)
            entry = out["c1"].setdefault(name, {"calls": 0, "cpu": {}, "wakes": {}})
            entry["calls"] += sum(len(v) for v in got.values())
            _add_cost(entry, (before[0], after[0]), (before[1], after[1]))
            return got

        phase_budget = float(config["budget_s"])
        for _ in range(rounds):

            def share(key: str, counts: dict[str, int] = counts) -> int:
                return max(1, counts[key] // rounds)

            gc.collect()
            add("echo", await c1_costed("echo", echo_pids, echo_c1(share("c1"))))
            add("chain", await c1_costed("chain", chain_pids, echo_c1(share("c1"), chain)))
            add("nats", await bare_stream(share("stream")))
            for s in stacks:
                t0 = time.perf_counter()
                pids = dict(s.pids) | {"nats-server": nats_pid} | await s.backend_pids()
                add(s.name, await c1_costed(s.name, pids, s.new_c1(share("c1")), s.backend_pids))
                add(s.name, await s.turn2_c1(share("c1") // 2 or 1))
                add(s.name, await s.history_c1(share("history")))
                add(s.name, await s.stream_c1(share("stream")))
                add(s.name, await s.follow_c1(share("stream")))
                add(s.name, await s.invoke_stream_c1(share("stream")))
                if time.perf_counter() - t0 > phase_budget / rounds:
                    counts = {k: max(rounds, v // 2) for k, v in counts.items()}
            for peer in peers:
                t0 = time.perf_counter()
                pids = dict(peer.pids) | await peer.backend_pids()
                case = peer.new_c1(share("c1"))
                add(peer.name, await c1_costed(peer.name, pids, case, peer.backend_pids))
                add(peer.name, await peer.turn2_c1(share("c1") // 2 or 1))
                add(peer.name, await peer.history_c1(share("history")))
                add(peer.name, await peer.stream_c1(share("stream")))
                if time.perf_counter() - t0 > phase_budget / rounds:
                    counts = {k: max(rounds, v // 2) for k, v in counts.items()}

        # ---- 32 in flight: throughput and CPU per call --------------------------------------
        c32: dict[str, dict[str, Any]] = out["c32"]

        async def measure(
            name: str,
            call: Callable[[], Awaitable[object]],
            pids: dict[str, int],
            total: int,
            more: Any = None,
        ) -> None:
            before = _cpu(pids), _wakes(pids)
            own = _own_cpu()
            wall = await _concurrent(call, total)
            own = _own_cpu() - own
            if more is not None:
                pids = pids | await more()
            after = _cpu(pids), _wakes(pids)
            entry = c32.setdefault(
                name, {"calls": 0, "wall": 0.0, "cpu": {}, "wakes": {}, "client_cpu": 0.0}
            )
            entry["calls"] += total
            entry["wall"] += wall
            entry["client_cpu"] += own
            _add_cost(entry, (before[0], after[0]), (before[1], after[1]))

        await _concurrent(echo, 64)
        await _concurrent(chain, 64)
        for s in stacks:
            await _concurrent(s.invoke, 64)
        for peer in peers:
            await _concurrent(peer.invoke, 64)
        for _ in range(rounds):
            gc.collect()
            await measure("echo", echo, echo_pids, counts["c32_echo"] // rounds)
            await measure("chain", chain, chain_pids, counts["c32"] // rounds)
            for s in stacks:
                pids = dict(s.pids) | {"nats-server": nats_pid} | await s.backend_pids()
                await measure(s.name, s.invoke, pids, counts["c32"] // rounds, s.backend_pids)
            for peer in peers:
                pids = dict(peer.pids) | await peer.backend_pids()
                total = counts["c32"] // rounds
                await measure(peer.name, peer.invoke, pids, total, peer.backend_pids)

        out["rss_load"] = {
            s.name: {p: rss_bytes(pid) for p, pid in s.pids.items()} for s in [*stacks, *peers]
        }
        out["rss_load"]["nats-server"] = {"nats-server": rss_bytes(nats_pid)}
        out["rss_load"]["bare echo"] = {"echo": rss_bytes(config["echo_pid"])}

        # ---- invoke cost against the number of stored runs ----------------------------------
        fill_to: int = config["fill_runs"]
        if fill_to > 0:
            scale: dict[str, Any] = out["scale"]
            n = max(rounds, counts["scale"])
            # The phases above left every Postgres stack's tables with the dead row versions
            # of their updates (a run is written at begin and again at finish). A deployed
            # server's autovacuum removes them as it goes; where it is off (as on this
            # project's CI machine) they pile up, and the stored-runs rows would measure that
            # bloat. So each Postgres schema is vacuumed before the "low" figure and again
            # after the fill, both sides alike, and the setting is reported.
            out["pg_autovacuum"] = await _autovacuum(pg)
            for s in stacks:
                await s.vacuum()
            for s in stacks:
                scale[s.name] = {"low": (await s.turn2_c1(n))["turn2"]}
            scale["echo"] = {"low": (await echo_c1(n * 2))["c1"]}
            skip = set(config.get("fill_skip", []))
            for s in stacks:
                done = (
                    0 if s.name in skip else await _fill(s, fill_to, float(config["fill_budget_s"]))
                )
                scale[s.name]["filled"] = done
                await s.vacuum()
            for _ in range(rounds):
                scale["echo"].setdefault("high", []).extend((await echo_c1(2 * n // rounds))["c1"])
                for s in stacks:
                    scale[s.name].setdefault("high", []).extend(
                        (await s.turn2_c1(n // rounds))["turn2"]
                    )
    finally:
        await echo_channel.close()
        await chain_channel.close()
        for s in stacks:
            await s.channel.close()
        for peer in peers:
            await peer.aclose()
        await js.delete_stream(BENCH_STREAM)
        await nc.close()
        if pg is not None:
            await pg.close()
    return out


_FILL_SQL = """
INSERT INTO {q}.sessions (session_id, user_id, last_seq)
    SELECT 'fill-s-' || g, 'fill', 2 FROM generate_series($1::int, $2::int) g;
INSERT INTO {q}.interactions (interaction_id, session_id, agent_name, status)
    SELECT 'fill-i-' || g, 'fill-s-' || g, 'assistant', 'completed'
    FROM generate_series($1::int, $2::int) g;
INSERT INTO {q}.runs (run_id, interaction_id, session_id, agent_name, status, request_id,
                      finished_at, lease_owner, lease_expires_at)
    SELECT 'fill-r-' || g, 'fill-i-' || g, 'fill-s-' || g, 'assistant', 'completed',
           'fill-q-' || g, now(), 'fill', now()
    FROM generate_series($1::int, $2::int) g;
INSERT INTO {q}.messages (message_id, session_id, seq, interaction_id, run_id, role, type)
    SELECT 'fill-m-' || g || '-' || k, 'fill-s-' || g, k, 'fill-i-' || g, 'fill-r-' || g,
           CASE k WHEN 1 THEN 'human' ELSE 'ai' END, 'message'
    FROM generate_series($1::int, $2::int) g, generate_series(1, 2) k;
"""


async def _fill(s: StackClient, target: int, budget_s: float) -> int:
    """Runs added to the stack's store: on Postgres rows of finished one-turn sessions written
    into the store's schema (as many invokes would leave them; the caller then vacuums them, as
    autovacuum would); in memory c32 invokes until `target` or the time budget."""
    if s.pg is not None and s.pg_tag is not None:
        q = f'"{s.pg_tag}"'
        async with s.pg.acquire() as conn:
            for start in range(1, target + 1, 5000):
                end = min(target, start + 4999)
                for statement in _FILL_SQL.format(q=q).split(";"):
                    if statement.strip():
                        await conn.execute(statement, start, end)
        return target
    deadline = time.perf_counter() + budget_s
    added = 0
    left = target

    async def worker() -> None:
        nonlocal added, left
        while left > 0 and time.perf_counter() < deadline:
            left -= 1
            await s.invoke()
            added += 1

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return added


if __name__ == "__main__":
    result = asyncio.run(main(sys.argv[1]))
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()
