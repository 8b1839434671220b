"""Approval previews through the router (issue 13), on real NATS and PostgreSQL.

router -> runner -> store service (PgBeamStore) and sandbox service (real git, a bare origin):
a held git_push carries the commits and diff it would push, in the interrupted result, the
inbox and FetchAction; the branch moves after the preview; the approval is refused (BEM-275),
nothing is pushed, the first action is recorded approved_failed and a new pending action
carries a fresh preview; approving that one pushes exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pygit2
import pytest

from riverbeam.agents import PendingToolCall, RigAgentRunner, ScriptedClient, Text, ToolCalls
from riverbeam.client import RiverbeamClient
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.core.settings import SandboxSettings
from riverbeam.runtime import JetStreamSinks, RiverBeam
from riverbeam.sandbox import SandboxClient, WorkspacesClient, sandbox_tools
from riverbeam.server import GrpcServer, ServiceBinding, open_channel
from riverbeam.store import PgBeamStore, StoreClient
from riverbeam.stream import NatsConnection, StreamConfig, ensure_stream
from riverbeam.v1 import runner_service_pb2_grpc as runner_grpc
from services.runner.servicer import RunnerServicer
from services.sandbox.app import build as build_sandbox
from services.store.app import binding as store_binding
from tests.integration.router.router_kit import TOKENS, collect, open_router, routing_models
from tests.integration.store.store_kit import new_schema_name

pytestmark = [pytest.mark.nats, pytest.mark.postgres]


@dataclass
class Shipyard:
    store: PgBeamStore
    script: ScriptedClient
    tree: SandboxClient
    origin: Path
    router_address: str

    def remote(self) -> dict[str, str]:
        repo = pygit2.Repository(str(self.origin))
        return {name: str(repo.references[name].target) for name in repo.references}


@pytest.fixture
async def yard(nats_url: str, pg_url: str, tmp_path: Path) -> AsyncIterator[Shipyard]:
    remotes = tmp_path / "remotes"
    remotes.mkdir()
    origin = remotes / "ship.git"
    pygit2.init_repository(str(origin), bare=True)
    sandbox_settings = SandboxSettings(
        listen="127.0.0.1:0", workspace_base=tmp_path / "workspaces", origin_base=remotes
    )
    schema = new_schema_name()
    stream_config = StreamConfig()
    async with contextlib.AsyncExitStack() as stack:
        store = await PgBeamStore.connect(pg_url, schema=schema, min_size=1, max_size=5)
        stack.push_async_callback(store.aclose)
        store_server = await stack.enter_async_context(
            GrpcServer([store_binding(store)], listen="127.0.0.1:0", grace_s=0.2)
        )
        sandbox_app = await stack.enter_async_context(build_sandbox(sandbox_settings))
        sandbox_server = await stack.enter_async_context(
            GrpcServer(sandbox_app.bindings, listen="127.0.0.1:0", grace_s=0)
        )
        channel = open_channel(sandbox_server.address)
        stack.push_async_callback(channel.close)
        workspaces = WorkspacesClient(channel)
        await workspaces.create("ship", branch="feature", origin=str(origin))
        tree = workspaces.tree("ship")

        runner_store = StoreClient(store_server.address)
        stack.push_async_callback(runner_store.aclose)
        nats = await stack.enter_async_context(
            NatsConnection(nats_url, name="preview-tests-runner", initial_connect_timeout_s=10)
        )
        await ensure_stream(nats.js, stream_config)
        beam = RiverBeam(store=runner_store, sinks=JetStreamSinks(nats.js, stream_config))
        script = ScriptedClient([])
        beam.register_agent(RigAgentRunner.new("shipper", script, sandbox_tools(tree), None))
        servicer = RunnerServicer(beam)
        runner_server = await stack.enter_async_context(
            GrpcServer(
                [
                    ServiceBinding(
                        "riverbeam.v1.RunnerService",
                        lambda server: runner_grpc.add_RunnerServiceServicer_to_server(  # type: ignore[no-untyped-call]
                            servicer, server
                        ),
                    )
                ],
                listen="127.0.0.1:0",
                grace_s=0.2,
            )
        )
        stack.push_async_callback(beam.aclose, grace_s=2.0)
        router_address = await stack.enter_async_context(
            open_router(
                store_address=store_server.address,
                runner_address=runner_server.address,
                nats_url=nats_url,
                models=routing_models(),
                stream_config=stream_config,
            )
        )
        yield Shipyard(store, script, tree, origin, router_address)
    admin = await asyncpg.connect(pg_url)
    try:
        await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await admin.close()


async def _commit(tree: SandboxClient, path: str, body: str, message: str) -> str:
    await tree.write_file(path, body)
    await tree.git_add(path)
    return (await tree.git_commit(message)).id


async def test_an_approval_is_bound_to_its_preview(yard: Shipyard) -> None:
    alice = RiverbeamClient(yard.router_address, token=TOKENS["alice"], timeout_s=30.0)
    try:
        reviewed = await _commit(yard.tree, "docs/guide.md", "# Guide\n", "Add the guide")
        yard.script.push(ToolCalls((PendingToolCall("git_push", {}, id="p1"),)))
        paused = await alice.invoke("shipper", "ship it")
        assert paused.interrupted and paused.session_id and paused.interaction_id
        (required,) = paused.action_required
        assert required.preview is not None
        assert required.preview.state.head == reviewed
        assert required.preview.commits[0].summary == "Add the guide"
        assert "+# Guide" in required.preview.diff
        assert required.args["expect"] == {"head": reviewed, "origin": "absent"}
        (listed,) = await alice.list_pending_actions()
        assert listed.preview == required.preview
        assert (await alice.get_action(required.action_id)).preview == required.preview

        # The branch moves after the preview (a commit nobody reviewed).
        sneaked = await _commit(yard.tree, "sneaked.txt", "not reviewed\n", "Sneak")
        ack = await alice.approve(paused.session_id, paused.interaction_id)
        frames = await collect(alice.follow(ack.request_id))
        results = [f.data.tool_result for f in frames if f.data and f.data.type == "tool_result"]
        assert [r["error"]["code"] for r in results] == ["BEM-275"]
        assert frames[-1].type == "done" and frames[-1].result is not None
        assert frames[-1].result.interrupted
        assert "refs/heads/feature" not in yard.remote()  # nothing was pushed
        first = await alice.get_action(required.action_id)
        assert first.status == "resolved" and first.outcome == "approved_failed"
        assert first.error is not None and first.error.startswith("BEM-275")

        (fresh,) = await alice.list_pending_actions()
        assert fresh.action_id != required.action_id
        assert fresh.preview is not None and fresh.preview.state.head == sneaked
        assert fresh.preview.commits[0].summary == "Sneak"
        assert "+not reviewed" in fresh.preview.diff
        assert fresh.args["expect"]["head"] == sneaked

        # Five approvals of the fresh action at once: the store resolves it exactly once.
        yard.script.push(Text("Shipped."))
        answers = await asyncio.gather(
            *(
                alice.approve(paused.session_id, paused.interaction_id, action_id=fresh.action_id)
                for _ in range(5)
            ),
            return_exceptions=True,
        )
        acks = [a for a in answers if not isinstance(a, BaseException)]
        lost = [a for a in answers if isinstance(a, RiverbeamError)]
        assert len(acks) == 1 and len(lost) == 4, answers
        assert {e.code for e in lost} == {ErrorCode.ACTION_NOT_PENDING}
        (ack,) = acks
        frames = await collect(alice.follow(ack.request_id))
        assert frames[-1].type == "done" and frames[-1].result is not None
        assert frames[-1].result.text == "Shipped."
        assert yard.remote()["refs/heads/feature"] == sneaked
        second = await alice.get_action(fresh.action_id)
        assert second.outcome == "approved_ran" and second.result["commit"] == sneaked
        assert await alice.list_pending_actions() == []
        runs = await yard.store.list_runs(interaction_id=paused.interaction_id)
        assert [r.status for r in runs] == ["interrupted", "interrupted", "completed"]
    finally:
        await alice.close()
