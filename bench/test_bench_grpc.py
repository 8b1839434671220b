"""gRPC: one unary round trip, bare, through our server, through the runner, through the router.

Baseline: a plain grpc.aio server echoing bytes (no interceptor, default options). Then the
same echo on our GrpcServer (ErrorInterceptor + metrics), the pipeline alone in process, the
runner's RunInvoke (runner -> store service), and the public Invoke (router -> store, runner ->
store). Every hop is a real gRPC call on loopback; the store service holds an InMemoryStore.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable

import pytest

from bench._attribution import conversion_tally
from bench._kit import Case, compare, emit_table, fmt_duration, per_call, print_table
from bench._stack import (
    AGENT,
    ECHO_METHOD,
    USER_TEXT,
    NonStreamingSinks,
    bare_channel,
    bare_echo_server,
    count_rpcs,
    invoke_request,
    riverbeam_echo_server,
    router_stack,
    rpc_delta,
    run_invoke_request,
)
from riverbeam.runtime import PipelineOptions, RiverBeam
from riverbeam.server import open_channel
from riverbeam.store import InMemoryStore
from riverbeam.types import ContentPart, InvokeRequest
from riverbeam.v1 import riverbeam_service_pb2_grpc as router_grpc
from riverbeam.v1 import runner_service_pb2_grpc as runner_grpc

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _counted(
    run: Callable[[int], Awaitable[list[float]]], hops: dict[str, float]
) -> Callable[[int], Awaitable[list[float]]]:
    """Wrap a block runner to add up the server-side RPCs its operations caused."""

    async def wrapped(n: int) -> list[float]:
        before = count_rpcs()
        out = await run(n)
        for key, value in rpc_delta(before, count_rpcs()).items():
            hops[key] = hops.get(key, 0.0) + value
        hops["__ops__"] = hops.get("__ops__", 0.0) + n
        return out

    return wrapped


def _hops(hops: dict[str, float], *, share: float = 1.0) -> tuple[float, str]:
    """(RPCs per operation, a note naming them); `share` of the counted RPCs were timed."""
    ops = hops.get("__ops__", 0.0)
    if not ops:
        return 0.0, ""
    per_op = {k: v * share / ops for k, v in hops.items() if k != "__ops__"}
    per_op = {k: v for k, v in per_op.items() if v >= 0.5}
    total = sum(per_op.values())
    names = ", ".join(k.split("/")[-1] for k in sorted(per_op))
    return total, f"{total:.0f} RPCs: {names}"


async def test_grpc_round_trip() -> None:
    payload = invoke_request().SerializeToString()
    beam = RiverBeam(
        store=InMemoryStore(),
        sinks=NonStreamingSinks(),
        options=PipelineOptions(runner_id="bench-local"),
    )
    beam.register_echo_agent(AGENT)

    async def local_invoke() -> None:
        request = InvokeRequest(
            agent_name=AGENT,
            content=[ContentPart.of_text(USER_TEXT)],
            session_id=str(uuid.uuid4()),
            metadata={"client": "bench", "locale": "en-GB"},
        )
        await beam.invoke(request)

    async with (
        bare_echo_server() as bare_address,
        riverbeam_echo_server() as ours_address,
        router_stack() as stack,
    ):
        bare = bare_channel(bare_address)
        ours = open_channel(ours_address)
        to_runner = open_channel(stack.runner)
        to_router = open_channel(stack.router)
        try:
            bare_echo = bare.unary_unary(ECHO_METHOD)
            ours_echo = ours.unary_unary(ECHO_METHOD)
            runner = runner_grpc.RunnerServiceStub(to_runner)  # type: ignore[no-untyped-call]
            router = router_grpc.RiverbeamServiceStub(to_router)  # type: ignore[no-untyped-call]

            async def second_turns(n: int) -> list[float]:
                # First turns (untimed) make n sessions that already hold one exchange.
                sessions = [str(uuid.uuid4()) for _ in range(n)]
                for session in sessions:
                    await router.Invoke(invoke_request(session))
                out: list[float] = []
                for session in sessions:
                    request = invoke_request(session)
                    start = time.perf_counter()
                    await router.Invoke(request)
                    out.append(time.perf_counter() - start)
                return out

            hops: dict[str, dict[str, float]] = {"runner": {}, "new": {}, "second": {}}
            results = await compare(
                "1. gRPC unary round trip (sequential, loopback)",
                [
                    Case("bare grpc.aio echo", per_call(lambda: bare_echo(payload)), baseline=True),
                    Case(
                        "GrpcServer + ErrorInterceptor echo",
                        per_call(lambda: ours_echo(payload)),
                        note="same handler, our server",
                    ),
                    Case(
                        "pipeline in process (RiverBeam.invoke)",
                        per_call(local_invoke),
                        note="no gRPC; InMemoryStore",
                    ),
                    Case(
                        "runner RunInvoke",
                        _counted(
                            per_call(lambda: runner.RunInvoke(run_invoke_request())),
                            hops["runner"],
                        ),
                    ),
                    Case(
                        "router Invoke, new session",
                        _counted(per_call(lambda: router.Invoke(invoke_request())), hops["new"]),
                    ),
                    Case(
                        "router Invoke, 2nd turn of a session",
                        _counted(second_turns, hops["second"]),
                    ),
                ],
                n=1000,
                budget_s=5.0,
                show=False,
            )
            results[3].note = _hops(hops["runner"])[1]
            rpcs, results[4].note = _hops(hops["new"])
            # Half of the RPCs counted for 2nd turns were made by their untimed first turns.
            results[5].note = _hops(hops["second"], share=0.5)[1] + " (history of 2)"
            print_table(
                "1. gRPC unary round trip (sequential, loopback)",
                results,
                caption="echo payload = a serialized InvokeRequest; store service on InMemoryStore",
            )

            # Where an Invoke's time goes (one untimed pass with timers on the conversions).
            count = 100
            with conversion_tally() as tally:
                start = time.perf_counter()
                for _ in range(count):
                    await router.Invoke(invoke_request())
                wall = (time.perf_counter() - start) / count
            per = {k: v / count for k, v in tally.seconds.items()}
            calls = {k: v / count for k, v in tally.calls.items()}
            convert = per.get("to_proto", 0.0) + per.get("from_proto", 0.0)
            jf = per.get("json_format.ParseDict", 0.0) + per.get("json_format.MessageToDict", 0.0)
            bare_rtt = results[0].stats.p50
            rows = [
                ["Invoke, new session (this pass)", fmt_duration(wall), "100%", ""],
                [
                    "WireModel.to_proto",
                    fmt_duration(per.get("to_proto", 0.0)),
                    f"{per.get('to_proto', 0.0) / wall:.0%}",
                    f"{calls.get('to_proto', 0):.0f} calls",
                ],
                [
                    "WireModel.from_proto",
                    fmt_duration(per.get("from_proto", 0.0)),
                    f"{per.get('from_proto', 0.0) / wall:.0%}",
                    f"{calls.get('from_proto', 0):.0f} calls",
                ],
                [
                    "json_format (in the two above + Struct fields)",
                    fmt_duration(jf),
                    f"{jf / wall:.0%}",
                    "ParseDict + MessageToDict, all callers",
                ],
                [
                    f"{rpcs:.0f} gRPC hops x bare round trip",
                    fmt_duration(rpcs * bare_rtt),
                    f"{rpcs * bare_rtt / wall:.0%}",
                    "estimate: transport floor",
                ],
                [
                    "everything else",
                    fmt_duration(wall - convert - rpcs * bare_rtt),
                    f"{(wall - convert - rpcs * bare_rtt) / wall:.0%}",
                    "pipeline, store, servicers, asyncio",
                ],
            ]
            emit_table(
                "1b. Where one router Invoke spends its time",
                ["part", "per invoke", "share", "note"],
                rows,
                caption=f"{count} invokes with timers on the conversion functions",
            )
        finally:
            for channel in (bare, ours, to_runner, to_router):
                await channel.close(None)
