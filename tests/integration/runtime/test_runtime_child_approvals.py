"""An approval inside a called agent through the runner service: real NATS, the store service
over both stores (memory and Postgres), agents from riverbeam.yaml and a chat-completions
server playing the model. The whole tree pauses with the child's held call pending, and the
resume runs it once and completes the tree."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from riverbeam.runtime import Grant
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection
from riverbeam.types import ModelConfig, ResumePayload
from tests.integration.runtime.rt_kit import (
    approval,
    assert_gap_free,
    collect,
    configured_runner,
    invoke_until_held,
    uid,
)
from tests.support.chat_server import call, text, tool_calls

pytestmark = pytest.mark.nats

CONFIG = """\
builtin_agents: false
agents:
  - name: helper
    instructions: Shout what you are given.
    tools: [{kind: python, entry: "tests.unit.runtime.config_tools:Shout"}]
    policies: [{kind: confirm, tools: [shout]}]
  - name: lead
    instructions: Ask the helper, then answer.
    tools: [{kind: agent, agent: helper}]
"""


async def test_a_childs_approval_pauses_the_tree_and_the_resume_completes_it(
    tmp_path: Path,
    store: BeamStore,
    nats: NatsConnection,
    nats_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = [
        tool_calls([call("ask_helper", {"task": "shout hi"}, id="p1")]),  # the lead
        tool_calls([call("shout", {"text": "hi"}, id="h1")]),  # the helper: held
        text("It shouted HI."),  # the helper, resumed
        text("The helper says HI."),  # the lead, resumed
    ]
    path = tmp_path / "riverbeam.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    model_config = ModelConfig(name="m", provider="custom")
    session = uid()
    async with configured_runner(store, nats_url, path, script, monkeypatch) as (client, model):
        first = await invoke_until_held(
            client, nats.js, "lead", "make it loud", session, model_config
        )
        (held,) = first.action_required
        assert (held.tool, held.args) == ("shout", {"text": "hi"})
        assert held.child is not None and held.child["agent"] == "helper"
        runs = await store.list_runs(interaction_id=first.interaction_id or "")
        assert sorted(r.status for r in runs) == ["interrupted", "interrupted"]
        pending, _ = await store.list_pending_actions(session_id=session)
        assert [a.action_id for a in pending] == [held.action_id]
        assert pending[0].child is not None
        assert pending[0].child["parent_tool_call_id"] == "p1"
        assert pending[0].child["run_id"] == held.child["run_id"]
        assert "history" not in pending[0].child

        resume = ResumePayload.parse(
            {
                "agent_name": "lead",
                "session_id": session,
                "interaction_id": first.interaction_id,
                "actions": [approval(held.action_id)],
            }
        )
        again = await client.run_resume(resume, model=model_config, grant=Grant(may_confirm=False))
        frames = await collect(nats.js, again.request_id)
    assert_gap_free(frames)
    done = frames[-1]
    assert done.type == "done" and done.result is not None
    assert done.result.text == "The helper says HI." and not done.result.interrupted
    assert done.result.tool_calls[0].result["answer"] == "It shouted HI."
    # The approved call ran once, with the stored arguments; the helper's model saw its result.
    helper_resumed = model.completions[2].body["messages"]
    answers = [m for m in helper_resumed if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in answers] == [("h1", "HI")]
    lead_resumed = model.completions[3].body["messages"]
    assert lead_resumed[-1]["role"] == "tool" and lead_resumed[-1]["tool_call_id"] == "p1"
    assert len(model.completions) == 4
    runs = await store.list_runs(interaction_id=first.interaction_id or "")
    assert sorted((r.status, r.parent_run_id is not None) for r in runs) == [
        ("completed", False),
        ("completed", True),
        ("interrupted", False),
        ("interrupted", True),
    ]
    action = await store.get_action(action_id=held.action_id)
    assert action.status == "resolved"
