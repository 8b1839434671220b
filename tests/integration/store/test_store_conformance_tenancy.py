"""Tenancy of memory, conformance: every test runs against memory, Postgres and gRPC.

Memory is keyed by organisation as well as scope (issue 11, section 2): two organisations'
users with equal ids never read each other's entries.
"""

from __future__ import annotations

from store_kit import OWNER, answer, begin, expect, interrupted_with, resume, uid

from riverbeam.core.errors import ErrorCode
from riverbeam.store import BeamStore, NewAction, NewMessage
from riverbeam.types import AgentResult, ContentPart


async def test_equal_user_ids_of_two_orgs_share_no_memory(store: BeamStore) -> None:
    pin = await store.remember(
        scope_name="user", scope_id="alice", content="alice-acme's card PIN is 4321", org_id="acme"
    )
    assert (pin.org_id, pin.scope_name, pin.scope_id) == ("acme", "user", "alice")
    await store.remember(
        scope_name="user", scope_id="alice", content="alice-other likes tea", org_id="other"
    )
    await store.remember(scope_name="user", scope_id="alice", content="unscoped alice")

    acme = await store.recall(scopes=[("user", "alice")], org_id="acme")
    other = await store.recall(scopes=[("user", "alice")], org_id="other")
    unscoped = await store.recall(scopes=[("user", "alice")])
    assert [e.content for e in acme] == ["alice-acme's card PIN is 4321"]
    assert acme[0] == pin
    assert [e.content for e in other] == ["alice-other likes tea"]
    assert [(e.content, e.org_id) for e in unscoped] == [("unscoped alice", None)]
    # "" is the unscoped organisation, as None is.
    assert await store.recall(scopes=[("user", "alice")], org_id="") == unscoped
    assert await store.recall(scopes=[("user", "alice")], org_id="third") == []


async def test_a_bad_org_id_is_refused(store: BeamStore) -> None:
    for bad in ("a\nb", "o" * 257):
        with expect(ErrorCode.INVALID_MEMORY_SCOPE):
            await store.remember(scope_name="user", scope_id="alice", content="c", org_id=bad)
        with expect(ErrorCode.INVALID_MEMORY_SCOPE):
            await store.recall(scopes=[("user", "alice")], org_id=bad)
    assert await store.recall(scopes=[("user", "alice")]) == []


# ---- U+0000 (issue 11, section 3) ---------------------------------------------------------------
NUL, FFFD = "\x00", "\ufffd"


async def test_nul_in_free_text_is_stored_as_the_replacement_character(store: BeamStore) -> None:
    begun = await begin(
        store,
        human_content=[ContentPart.of_text(f"hi{NUL}there")],
        message_metadata={f"k{NUL}": [f"v{NUL}"]},
    )
    assert begun.human_message is not None
    assert begun.human_message.text == f"hi{FFFD}there"
    assert begun.human_message.metadata == {f"k{FFFD}": [f"v{FFFD}"]}
    run_id, session_id = begun.run.run_id, begun.session.session_id
    reply = f"the model said {NUL}"
    action_id = uid()
    finished = await store.finish_run(
        run_id=run_id,
        lease_owner=OWNER,
        status="interrupted",
        messages=[
            NewMessage(
                role="ai",
                content=[ContentPart.of_text(reply)],
                tool_call_id=f"call{NUL}1",
                tool_name="note",
                tool_args={"text": NUL},
                tool_result={"out": [NUL, 1]},
                metadata={"m": NUL},
            )
        ],
        pending_actions=[NewAction(action_id=action_id, tool="git_push", args={"ref": NUL})],
        error_message=f"oops{NUL}",
        model_used=f"model{NUL}",
        result=AgentResult(content=[ContentPart.of_text(reply)], agent_name="author"),
    )
    assert finished.status == "interrupted"
    assert finished.error_message == f"oops{FFFD}"
    assert finished.result is not None and finished.result.text == f"the model said {FFFD}"
    messages, _ = await store.list_messages(session_id=session_id)
    ai = messages[-1]
    assert (ai.text, ai.tool_call_id, ai.tool_args, ai.tool_result, ai.metadata) == (
        f"the model said {FFFD}",
        f"call{FFFD}1",
        {"text": FFFD},
        {"out": [FFFD, 1]},
        {"m": FFFD},
    )
    assert (await store.get_action(action_id=action_id)).args == {"ref": FFFD}
    note = await store.append_message(
        session_id=session_id, role="tool", content=[ContentPart.of_text(NUL)]
    )
    assert note.text == FFFD
    entry = await store.remember(
        scope_name="user", scope_id="alice", content=f"pin{NUL}", metadata={NUL: NUL}
    )
    assert (entry.content, entry.metadata) == (f"pin{FFFD}", {FFFD: FFFD})


async def test_nul_in_an_id_or_name_is_refused_and_writes_nothing(store: BeamStore) -> None:
    session_id = uid()
    for field in ("user_id", "org_id", "profile_id", "agent_name", "request_id"):
        with expect(ErrorCode.NUL_IN_TEXT):
            await begin(store, session_id=session_id, **{field: f"x{NUL}y"})
    with expect(ErrorCode.SESSION_NOT_FOUND):
        await store.get_session(session_id=session_id)
    with expect(ErrorCode.NUL_IN_TEXT):
        await store.get_session(session_id=f"{session_id}{NUL}")
    with expect(ErrorCode.NUL_IN_TEXT):
        await store.get_run_by_request(request_id=NUL)
    with expect(ErrorCode.NUL_IN_TEXT):
        await store.remember(scope_name="user", scope_id=f"a{NUL}", content="c")


# ---- a resume naming another agent (issue 11, section 6) ---------------------------------------
async def test_a_resume_naming_another_agent_is_refused_atomically(store: BeamStore) -> None:
    begun, (action_id,) = await interrupted_with(store)
    with expect(ErrorCode.RESUME_AGENT_MISMATCH):
        await resume(store, begun, answer(action_id), agent_name="assistant")
    action = await store.get_action(action_id=action_id)
    assert (action.status, action.outcome) == ("pending", None)
    assert len(await store.list_runs(interaction_id=begun.interaction.interaction_id)) == 1
    session = await store.get_session(session_id=begun.session.session_id)
    assert session.last_seq == begun.session.last_seq + 1  # only the ai message of the pause
    resumed = await resume(store, begun, answer(action_id))  # begin's default: "author"
    assert [a.action_id for a in resumed.resolved_actions] == [action_id]
