"""A handoff target's approval in the handed turn through the runner service: real NATS, the
store service over both stores (memory and Postgres), agents from riverbeam.yaml (the held
call is a policy's approval) and a chat-completions server playing the model. The
interaction pauses with the target's own held call pending; the resume runs it once in the
target's own run."""

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
  - name: billing
    instructions: Shout what you are given.
    tools: [{kind: python, entry: "tests.unit.runtime.config_tools:Shout"}]
    policies: [{kind: confirm, tools: [shout]}]
  - name: triage
    instructions: Hand everything to billing.
    tools: []
    handoffs: [billing]
"""


async def test_a_targets_approval_pauses_the_interaction_and_the_target_resumes_it(
    tmp_path: Path,
    store: BeamStore,
    nats: NatsConnection,
    nats_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = [
        tool_calls([call("transfer_to_billing", {"reason": "loud"}, id="t1")]),  # triage
        tool_calls([call("shout", {"text": "hi"}, id="b1")]),  # billing: held
        text("Shouted HI."),  # billing, resumed
    ]
    path = tmp_path / "riverbeam.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    model_config = ModelConfig(name="m", provider="custom")
    session = uid()
    async with configured_runner(store, nats_url, path, script, monkeypatch) as (client, model):
        first = await invoke_until_held(
            client, nats.js, "triage", "make it loud", session, model_config
        )
        assert first.handoff_to == "billing"
        (held,) = first.action_required
        assert (held.tool, held.args, held.child) == ("shout", {"text": "hi"}, None)
        runs = await store.list_runs(interaction_id=first.interaction_id or "")
        assert sorted((r.agent_name, r.status) for r in runs) == [
            ("billing", "interrupted"),
            ("triage", "interrupted"),
        ]
        pending, _ = await store.list_pending_actions(session_id=session)
        assert [(a.action_id, a.child) for a in pending] == [(held.action_id, None)]
        interaction = await store.get_interaction(interaction_id=first.interaction_id or "")
        assert interaction.agent_name == "billing"

        resume = ResumePayload.parse(
            {
                "agent_name": "billing",
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
    assert done.result.text == "Shouted HI." and not done.result.interrupted
    # The approved call ran once, with the stored arguments, in billing's own run.
    resumed = model.completions[2].body["messages"]
    answers = [m for m in resumed if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in answers][-1] == ("b1", "HI")
    assert len(model.completions) == 3
    run = await store.get_run(run_id=again.run_id or "")
    assert (run.agent_name, run.status, run.parent_run_id) == ("billing", "completed", None)
    action = await store.get_action(action_id=held.action_id)
    assert (action.status, action.outcome, action.result) == ("resolved", "approved_ran", "HI")
