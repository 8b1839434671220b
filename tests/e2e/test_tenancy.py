"""Two users behind a router with a tokens file: bob cannot tell alice's session from none.

The router runs with RIVERBEAM_TOKENS_FILE (digests of alice's and bob's tokens) and without
development mode. Whatever bob asks about alice's session (or its interaction, run or frames)
gets exactly the answer an id nobody uses gets, and changes nothing.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from e2e_kit import GUARD_S, ChatProcess, assert_sequenced, pg_schema, run_cli, running_stack

from riverbeam.auth import hash_token
from riverbeam.client import RiverbeamClient, action_response
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import StoreClient
from riverbeam.types import AgentResult, InvokeAuthContext, StreamAck
from services.cli._up import LocalStack
from tests.support.chat_server import call, delayed, text, tool_calls

pytestmark = [pytest.mark.e2e, pytest.mark.nats, pytest.mark.postgres]
module_loop = pytest.mark.asyncio(loop_scope="module")

ALICE = "alice-e2e-token-4f1c9a7d2b6e8f03"
BOB = "bob-e2e-token-9d2e7c4a1f6b3e58"
# Two organisations' backends, each acting for its own user "alice".
ACME = "acme-backend-e2e-token-3b8d1e6f9a2c"
OTHER = "other-backend-e2e-token-7e4a2c9d1b5f"


@dataclass(frozen=True, slots=True)
class Tenancy:
    stack: LocalStack
    chat: ChatProcess


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tenancy(
    tmp_path_factory: pytest.TempPathFactory, pg_url: str, nats_url: str
) -> AsyncIterator[Tenancy]:
    root = tmp_path_factory.mktemp("tenancy")
    tokens = root / "tokens.json"
    tokens.write_text(
        json.dumps(
            [
                {"token_sha256": hash_token(ALICE), "subject": "alice"},
                {"token_sha256": hash_token(BOB), "subject": "bob"},
                {
                    "token_sha256": hash_token(ACME),
                    "subject": "svc-acme",
                    "org_id": "acme",
                    "roles": ["backend"],
                },
                {
                    "token_sha256": hash_token(OTHER),
                    "subject": "svc-other",
                    "org_id": "other",
                    "roles": ["backend"],
                },
            ]
        )
    )
    async with pg_schema(pg_url, "e2e_tenancy") as schema, ChatProcess(root / "chat") as chat:
        overrides = {
            "store": {"RIVERBEAM_DB_SCHEMA": schema},
            "runner": chat.model_env(),
            "router": {"RIVERBEAM_TOKENS_FILE": str(tokens), "RIVERBEAM_DEV_MODE": "false"},
        }
        async with running_stack(
            database_url=pg_url, nats_url=nats_url, data_dir=root / "data", env_overrides=overrides
        ) as running:
            yield Tenancy(running, chat)


async def _refusal(call: Awaitable[Any], asked: str) -> tuple[str, str, Any]:
    """The error a call ends with, (code, message, details), with the id it asked about
    written as "<id>" (an answer may name the id it was asked about, and nothing else)."""
    with pytest.raises(RiverbeamError) as caught:
        await call
    err = caught.value
    shown = json.dumps([err.message, err.details], sort_keys=True).replace(asked, "<id>")
    message, details = json.loads(shown)
    return err.bem, message, details


async def _drain(client: RiverbeamClient, request_id: str) -> None:
    async for _ in client.follow(request_id, timeout_s=GUARD_S):
        pass


@module_loop
async def test_bob_gets_the_same_answer_for_alices_session_as_for_none(tenancy: Tenancy) -> None:
    stack = tenancy.stack
    async with (
        RiverbeamClient(stack.router, token=ALICE, timeout_s=GUARD_S) as alice,
        RiverbeamClient(stack.router, token=BOB, timeout_s=GUARD_S) as bob,
    ):
        mine = await alice.invoke("assistant", "alice's private note")
        assert isinstance(mine, AgentResult) and mine.session_id and mine.run_id
        ack = await alice.invoke("assistant", "more", session_id=mine.session_id, stream=True)
        assert isinstance(ack, StreamAck)
        assert_sequenced([f async for f in alice.follow(ack.request_id, timeout_s=GUARD_S)])
        before = await alice.list_messages(mine.session_id)
        sid, nobody = mine.session_id, str(uuid.uuid4())

        missing = await _refusal(bob.get_session(nobody), nobody)
        assert missing[0] == ErrorCode.SESSION_NOT_FOUND.spec.code == "BEM-025"
        assert await _refusal(bob.get_session(sid), sid) == missing
        assert await _refusal(bob.list_messages(nobody), nobody) == missing
        assert await _refusal(bob.list_messages(sid), sid) == missing
        # Invoking into alice's session is refused with that same answer (an unknown id would
        # start a new session of bob's: the refusal must not be told apart from a read's).
        assert await _refusal(bob.invoke("assistant", "let me in", session_id=sid), sid) == missing
        streamed = bob.invoke("assistant", "streamed", session_id=sid, stream=True)
        assert await _refusal(streamed, sid) == missing

        # Her pending actions, interaction, run and frames are as unknown to bob as ids nobody
        # uses.
        for get, theirs in (
            (lambda s: bob.list_pending_actions(session_id=s), sid),
            (bob.get_interaction, mine.interaction_id),
            (bob.get_run, mine.run_id),
            (lambda rid: _drain(bob, rid), ack.request_id),
        ):
            other = str(uuid.uuid4())
            assert await _refusal(get(theirs), theirs) == await _refusal(get(other), other)

        # Nothing bob did changed alice's session.
        session = await alice.get_session(sid)
        assert session.user_id == "alice"
        assert await alice.list_messages(sid) == before
        assert [m.seq for m in before] == [1, 2, 3, 4]

    # The CLI shows bob one and the same refusal.
    theirs = await run_cli("session", sid, router=stack.router, token=BOB)
    none = await run_cli("session", nobody, router=stack.router, token=BOB)
    assert theirs.returncode == none.returncode == 2, (theirs, none)
    assert "error BEM-025" in theirs.stderr
    assert theirs.stderr == none.stderr.replace(nobody, sid)
    assert theirs.stdout == none.stdout == ""


@module_loop
async def test_without_a_token_nothing_is_answered(tenancy: Tenancy) -> None:
    stack = tenancy.stack
    async with RiverbeamClient(stack.router, timeout_s=GUARD_S) as anonymous:
        nobody = str(uuid.uuid4())
        code, _, _ = await _refusal(anonymous.get_session(nobody), nobody)
        assert code == "BEM-050"
        code, _, _ = await _refusal(anonymous.invoke("assistant", "hi"), nobody)
        assert code == "BEM-050"
    wrong = await run_cli("agents", router=stack.router, token="not-a-known-token-at-all")
    assert wrong.returncode == 2, wrong
    assert "error BEM-050" in wrong.stderr


@module_loop
async def test_bob_can_neither_answer_nor_cancel_alices_runs(tenancy: Tenancy) -> None:
    stack, chat = tenancy.stack, tenancy.chat
    async with (
        RiverbeamClient(stack.router, token=ALICE, timeout_s=GUARD_S) as alice,
        RiverbeamClient(stack.router, token=BOB, timeout_s=GUARD_S) as bob,
    ):
        # Alice's run waits for her approval of a push.
        await chat.push(tool_calls([call("git_push", {})], text="May I push?"))
        waiting = await alice.invoke("author", "publish", stream=True)
        assert isinstance(waiting, StreamAck)
        done = [f async for f in alice.follow(waiting.request_id, timeout_s=GUARD_S)][-1]
        assert done.result is not None and done.result.interrupted
        [action] = await alice.pending_for(waiting.session_id, waiting.interaction_id)

        # Bob, knowing every id, answers it: refused exactly like an interaction nobody has.
        envelope = action_response(action)
        theirs = bob.resume("author", waiting.session_id, waiting.interaction_id, [envelope])
        fake = action_response(action.model_copy(update={"action_id": str(uuid.uuid4())}))
        nobody_sid, nobody_iid = str(uuid.uuid4()), str(uuid.uuid4())
        none = bob.resume("author", nobody_sid, nobody_iid, [fake])
        refused = await _refusal(theirs, waiting.session_id)
        assert refused[0] == "BEM-065"
        assert refused == await _refusal(none, nobody_sid)
        assert (await alice.get_action(action.action_id)).status == "pending"

        # Alice's live run: bob's cancel is the answer an unknown request gets.
        before = len(await chat.completions())
        await chat.push(delayed(text("too late"), 30))
        live = await alice.invoke("author", "slowly", stream=True)
        assert isinstance(live, StreamAck)
        await chat.wait_for_completions(before + 1)
        try:
            other = str(uuid.uuid4())
            assert await _refusal(bob.cancel(live.request_id), live.request_id) == await _refusal(
                bob.cancel(other), other
            )
            assert (await alice.get_run(live.run_id or "")).status == "running"
        finally:
            assert await alice.cancel(live.request_id) is True
        last = [f async for f in alice.follow(live.request_id, timeout_s=GUARD_S)][-1]
        assert last.error_code == "BEM-033"


@module_loop
async def test_equal_user_ids_of_two_orgs_share_no_memory(tenancy: Tenancy) -> None:
    """Memory is keyed by organisation: other's alice never reads acme's alice's entries."""
    stack, chat = tenancy.stack, tenancy.chat
    store = StoreClient(stack.endpoints["store"])
    try:
        await store.remember(
            scope_name="user",
            scope_id="alice",
            content="alice-acme's card PIN is 4321",
            org_id="acme",
        )
    finally:
        await store.aclose()
    scopes = {"memory_scopes": [{"name": "user", "id": "alice"}]}
    async with (
        RiverbeamClient(stack.router, token=ACME, timeout_s=GUARD_S) as acme,
        RiverbeamClient(stack.router, token=OTHER, timeout_s=GUARD_S) as other,
    ):
        for backend, sees_the_pin in ((other, False), (acme, True)):
            before = len(await chat.completions())
            await chat.push(text("noted"))
            result = await backend.invoke(
                "author",
                "what do you know about me?",
                auth_context=InvokeAuthContext(user_id="alice"),
                metadata=scopes,
            )
            assert isinstance(result, AgentResult) and result.text == "noted"
            sent = json.dumps((await chat.completions())[before])
            assert ("4321" in sent) is sees_the_pin, sent[:2000]
