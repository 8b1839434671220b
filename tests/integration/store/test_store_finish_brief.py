"""FinishRun's brief reply: the result and token usage the caller sent are not sent back.

Counted as the fields of the reply's run (what the store service serialises and the client
parses); a request without `brief`, as an older client sends it, still gets the whole run.
"""

from __future__ import annotations

from typing import Any

import pytest
from store_kit import OWNER, begin

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.server import GrpcServer
from riverbeam.store import BeamStore, InMemoryStore, NewMessage, StoreClient
from riverbeam.types import AgentResult, ContentPart, TokenUsage
from riverbeam.v1 import store_service_pb2 as pb
from services.store.app import binding
from services.store.servicer import StoreServicer


def _result(text: str = "hi") -> AgentResult:
    return AgentResult(
        agent_name="author",
        content=[ContentPart.of_text(text)],
        model_used="m",
        token_usage=TokenUsage(prompt_tokens=3, completion_tokens=2, total_tokens=5),
        metadata={"n": 1},
        latency_ms=0.5,
    )


_USAGE = TokenUsage(prompt_tokens=3, completion_tokens=2, total_tokens=5)


def _finish(run_id: str, result: AgentResult, *, brief: bool) -> pb.FinishRunRequest:
    return pb.FinishRunRequest(
        run_id=run_id,
        lease_owner=OWNER,
        status="RUN_STATUS_COMPLETED",
        messages=[NewMessage(role="ai", content=result.content).to_proto()],
        token_usage=_USAGE.to_proto(),
        model_used="m",
        result=result.to_proto(),
        lease_epoch=1,
        brief=brief,
    )


def _run_fields(resp: pb.FinishRunResponse) -> set[str]:
    return {field.name for field, _ in resp.run.ListFields()}


async def test_a_brief_reply_leaves_out_what_the_request_carried(direct_store: BeamStore) -> None:
    servicer = StoreServicer(direct_store)
    begun = await begin(direct_store)
    resp = await servicer.FinishRun(_finish(begun.run.run_id, _result(), brief=True), None)
    assert resp.as_sent  # on Postgres too: the result read back out of JSONB is still equal
    fields = _run_fields(resp)
    assert "result" not in fields and "token_usage" not in fields
    assert {"run_id", "status", "finished_at", "model_used", "lease_epoch"} <= fields
    # ... and what was left out is what the store holds.
    stored = await direct_store.get_run(run_id=begun.run.run_id)
    assert stored.result == _result() and stored.token_usage == _USAGE


async def test_a_request_without_brief_gets_the_whole_run(direct_store: BeamStore) -> None:
    servicer = StoreServicer(direct_store)
    begun = await begin(direct_store)
    resp = await servicer.FinishRun(_finish(begun.run.run_id, _result(), brief=False), None)
    assert not resp.as_sent
    assert {"result", "token_usage"} <= _run_fields(resp)
    assert AgentResult.from_proto(resp.run.result) == _result()


async def test_a_retry_answered_with_another_result_gets_the_whole_run(
    direct_store: BeamStore,
) -> None:
    servicer = StoreServicer(direct_store)
    begun = await begin(direct_store)
    await servicer.FinishRun(_finish(begun.run.run_id, _result("first"), brief=True), None)
    again = await servicer.FinishRun(_finish(begun.run.run_id, _result("second"), brief=True), None)
    assert not again.as_sent
    assert AgentResult.from_proto(again.run.result) == _result("first")


async def test_a_result_the_store_changed_comes_back_whole(direct_store: BeamStore) -> None:
    servicer = StoreServicer(direct_store)
    begun = await begin(direct_store)
    resp = await servicer.FinishRun(_finish(begun.run.run_id, _result("a\x00b"), brief=True), None)
    assert not resp.as_sent
    assert AgentResult.from_proto(resp.run.result).text == "a\ufffdb" != "a\x00b"


async def test_the_client_returns_the_whole_run_from_a_brief_reply(
    memory_store: InMemoryStore,
) -> None:
    async with GrpcServer([binding(memory_store)], listen="127.0.0.1:0", grace_s=0.5) as server:
        async with StoreClient(server.address) as client:
            begun = await begin(client)
            result = _result()
            run = await client.finish_run(
                run_id=begun.run.run_id,
                lease_owner=OWNER,
                status="completed",
                token_usage=_USAGE,
                model_used="m",
                result=result,
                lease_epoch=1,
            )
            assert run == await client.get_run(run_id=begun.run.run_id)
            assert run.result == result and run.token_usage == _USAGE
            # Copies: the run shares nothing with what the caller passed.
            assert run.result is not result and run.token_usage is not _USAGE
            assert run.result is not None and run.result.content[0] is not result.content[0]


async def test_the_client_asks_for_a_brief_reply(memory_store: InMemoryStore) -> None:
    seen: list[pb.FinishRunRequest] = []
    original = StoreServicer.FinishRun

    async def recording(
        self: StoreServicer, request: pb.FinishRunRequest, context: object
    ) -> pb.FinishRunResponse:
        seen.append(request)
        return await original(self, request, context)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StoreServicer, "FinishRun", recording)
        async with GrpcServer([binding(memory_store)], listen="127.0.0.1:0", grace_s=0.5) as srv:
            async with StoreClient(srv.address) as client:
                begun = await begin(client)
                await client.finish_run(
                    run_id=begun.run.run_id, lease_owner=OWNER, status="completed"
                )
    assert [r.brief for r in seen] == [True]


async def test_an_unread_finish_writes_the_same_step(memory_store: InMemoryStore) -> None:
    """finish_run_unread (the runner's finish) sends finish_run's request, and its refusals
    are finish_run's; only the reply is left unconverted."""
    async with GrpcServer([binding(memory_store)], listen="127.0.0.1:0", grace_s=0.5) as server:
        async with StoreClient(server.address) as client:
            begun = await begin(client)
            step = {
                "run_id": begun.run.run_id,
                "lease_owner": OWNER,
                "status": "completed",
                "messages": [NewMessage(role="ai", content=_result().content)],
                "token_usage": _USAGE,
                "model_used": "m",
                "result": _result(),
                "lease_epoch": 1,
            }
            await client.finish_run_unread(**step)
            stored = await memory_store.get_run(run_id=begun.run.run_id)
            assert (stored.status, stored.result, stored.token_usage) == (
                "completed",
                _result(),
                _USAGE,
            )
            # A retry of the same step is answered as finish_run's is; a stale epoch refused.
            await client.finish_run_unread(**step)
            with pytest.raises(RiverbeamError) as info:
                await client.finish_run_unread(**{**step, "lease_epoch": 7})
            assert info.value.code is ErrorCode.STALE_EPOCH


async def test_an_unread_finish_goes_through_a_replaced_finish_run(
    memory_store: InMemoryStore,
) -> None:
    calls: list[str] = []
    async with GrpcServer([binding(memory_store)], listen="127.0.0.1:0", grace_s=0.5) as server:
        async with StoreClient(server.address) as client:
            begun = await begin(client)
            original = client.finish_run

            async def recording(**kwargs: Any) -> Any:
                calls.append(kwargs["run_id"])
                return await original(**kwargs)

            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(client, "finish_run", recording)
                await client.finish_run_unread(
                    run_id=begun.run.run_id, lease_owner=OWNER, status="completed"
                )
    assert calls == [begun.run.run_id]
