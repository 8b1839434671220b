"""The store service on the wire: raw protobuf callers, error details, wiring."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import grpc
import pytest
from google.protobuf import struct_pb2
from store_kit import OWNER, begin, expect, uid

from riverbeam.core.errors import ErrorCode
from riverbeam.core.settings import StoreSettings
from riverbeam.server import DOMAIN, GrpcServer, error_from_rpc, open_channel
from riverbeam.store import InMemoryStore, PgBeamStore, StoreClient
from riverbeam.v1 import store_service_pb2 as pb
from riverbeam.v1 import store_service_pb2_grpc as pb_grpc
from services.store.app import SERVICE_NAME, binding, build


@pytest.fixture
async def served() -> AsyncIterator[tuple[InMemoryStore, str]]:
    store = InMemoryStore()
    async with GrpcServer([binding(store)], listen="127.0.0.1:0", grace_s=0.5) as server:
        yield store, server.address


@pytest.fixture
async def stub(served: tuple[InMemoryStore, str]) -> AsyncIterator[object]:
    channel = open_channel(served[1])
    yield pb_grpc.StoreServiceStub(channel)  # type: ignore[no-untyped-call]
    await channel.close()


async def test_errors_travel_as_error_info(stub: pb_grpc.StoreServiceStub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.FetchSession(pb.FetchSessionRequest(session_id="nope"))
    assert info.value.code() is grpc.StatusCode.NOT_FOUND
    err = error_from_rpc(info.value)
    assert err.code is ErrorCode.SESSION_NOT_FOUND and err.details == {"session_id": "nope"}
    assert DOMAIN == "riverbeam"


async def test_raw_callers_get_catalog_errors_for_bad_enums(
    served: tuple[InMemoryStore, str], stub: pb_grpc.StoreServiceStub
) -> None:
    begun = await begin(served[0])
    request = pb.FinishRunRequest(run_id=begun.run.run_id, lease_owner=OWNER)  # status unspecified
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.FinishRun(request)
    assert error_from_rpc(info.value).code is ErrorCode.INVALID_ENUM
    assert (await served[0].get_run(run_id=begun.run.run_id)).status == "running"


async def test_raw_callers_may_leave_ids_and_numbers_to_the_store(
    served: tuple[InMemoryStore, str], stub: pb_grpc.StoreServiceStub
) -> None:
    begun = await begin(served[0])
    metadata = struct_pb2.Struct()
    metadata.update({"count": 3, "ratio": 0.5, "nested": {"n": [1, 2]}})
    resp = await stub.AppendMessage(
        pb.AppendMessageRequest(
            session_id=begun.session.session_id,
            message=pb.NewMessage(role="human", metadata=metadata),
        )
    )
    assert resp.message.message_id and resp.message.seq == 2
    (_, stored), _ = await served[0].list_messages(session_id=begun.session.session_id)
    assert stored.metadata == {"count": 3, "ratio": 0.5, "nested": {"n": [1, 2]}}
    assert isinstance(stored.metadata["count"], int)


async def test_fetch_run_by_request_leaves_the_run_unset_when_there_is_none(
    stub: pb_grpc.StoreServiceStub,
) -> None:
    resp = await stub.FetchRunByRequest(pb.FetchRunByRequestRequest(request_id=uid()))
    assert not resp.HasField("run")


async def test_fetch_run_by_request_with_session_answers_both_in_one_call(
    served: tuple[InMemoryStore, str], stub: pb_grpc.StoreServiceStub
) -> None:
    begun = await begin(served[0], user_id="alice")
    request_id = begun.run.request_id
    resp = await stub.FetchRunByRequest(
        pb.FetchRunByRequestRequest(request_id=request_id, with_session=True)
    )
    assert resp.run.run_id == begun.run.run_id
    assert resp.session.session_id == begun.session.session_id
    assert resp.session.user_id == "alice"
    plain = await stub.FetchRunByRequest(pb.FetchRunByRequestRequest(request_id=request_id))
    assert plain.HasField("run") and not plain.HasField("session")
    none = await stub.FetchRunByRequest(
        pb.FetchRunByRequestRequest(request_id=uid(), with_session=True)
    )
    assert not none.HasField("run") and not none.HasField("session")

    async with StoreClient(served[1]) as client:
        run, session = await client.get_run_with_session(request_id=request_id)
        assert run == begun.run and session == begun.session
        assert await client.get_run_with_session(request_id=uid()) == (None, None)


async def test_an_unreachable_store_service_is_store_unavailable() -> None:
    async with StoreClient("127.0.0.1:1", timeout_s=5) as client:
        with expect(ErrorCode.STORE_UNAVAILABLE):
            await client.get_session(session_id=uid())


async def test_build_serves_memory_without_a_database_url() -> None:
    async with build(StoreSettings(database_url=None)) as app:
        assert [b.name for b in app.bindings] == [SERVICE_NAME]
        async with GrpcServer(app.bindings) as server, StoreClient(server.address) as client:
            begun = await begin(client)
            assert (await client.get_session(session_id=begun.session.session_id)).last_seq == 1


@pytest.mark.postgres
async def test_build_uses_postgres_with_a_database_url(pg_url: str, pg_schema: str) -> None:
    settings = StoreSettings(database_url=pg_url, db_schema=pg_schema, db_pool_max=2)
    async with build(settings) as app:
        async with GrpcServer(app.bindings) as server, StoreClient(server.address) as client:
            begun = await begin(client)
        direct = await PgBeamStore.connect(pg_url, schema=pg_schema, max_size=1)
        try:
            assert (await direct.get_run(run_id=begun.run.run_id)).status == "running"
        finally:
            await direct.aclose()


async def test_delete_idle_sessions_refuses_a_window_under_an_hour(
    served: tuple[InMemoryStore, str], stub: pb_grpc.StoreServiceStub
) -> None:
    begun = await begin(served[0])
    request = pb.DeleteIdleSessionsRequest()
    request.older_than.FromTimedelta(timedelta(minutes=30))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.DeleteIdleSessions(request)
    assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    err = error_from_rpc(info.value)
    assert err.code is ErrorCode.INVALID_ARGUMENT and err.details["field"] == "older_than"
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.DeleteIdleSessions(pb.DeleteIdleSessionsRequest())  # no window: zero
    assert error_from_rpc(info.value).code is ErrorCode.INVALID_ARGUMENT
    request.older_than.FromTimedelta(timedelta(hours=1))
    assert (await stub.DeleteIdleSessions(request)).deleted == 0
    assert (await served[0].get_session(session_id=begun.session.session_id)).last_seq == 1
