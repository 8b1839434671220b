"""Multi-agent composition across processes: riverbeam.yaml agents calling agents, a handoff,
a crew and an approval inside a called agent, through the router, with the four services as processes on real NATS and Postgres.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from e2e_kit import GUARD_S, ChatProcess, pg_schema, running_stack

from riverbeam.client import RiverbeamClient
from riverbeam.server import open_channel
from riverbeam.types import AgentResult, InvokeRequest, StreamAck
from riverbeam.v1 import riverbeam_service_pb2 as pb
from riverbeam.v1 import riverbeam_service_pb2_grpc as pb_grpc
from tests.support.chat_server import call, text, tool_calls

pytestmark = [pytest.mark.e2e, pytest.mark.nats, pytest.mark.postgres]

CONFIG = """\
builtin_agents: false
agents:
  - name: helper
    description: Looks things up
    instructions: Answer briefly.
    tools: []
  - name: lead
    instructions: Ask the helper, then answer.
    tools: [{kind: agent, agent: helper}]
  - name: triage
    instructions: Hand billing questions to the helper.
    tools: []
    handoffs: [helper]
  - name: shouter
    instructions: Shout what you are given.
    tools: [{kind: python, entry: "loud_tools:Shout"}]
    policies: [{kind: confirm, tools: [shout]}]
  - name: boss
    instructions: Ask the shouter, then answer.
    tools: [{kind: agent, agent: shouter}]
crews:
  - name: pair
    kind: sequential
    agents: [helper, lead]
"""


LOUD_TOOLS = """\
from riverbeam.agents import ToolSpec, json_params


class Shout:
    def spec(self):
        return ToolSpec(
            name="shout",
            description="Upper-case a text.",
            parameters=json_params({"text": {"type": "string"}}, ["text"]),
        )

    async def invoke(self, args, input):
        return args["text"].upper()
"""


async def test_composition_through_the_router(tmp_path: Path, pg_url: str, nats_url: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = project / "riverbeam.yaml"
    config.write_text(textwrap.dedent(CONFIG))
    (project / "loud_tools.py").write_text(textwrap.dedent(LOUD_TOOLS))
    async with (
        pg_schema(pg_url, "e2e_composition") as schema,
        ChatProcess(tmp_path / "chat") as chat,
    ):
        overrides = {
            "store": {"RIVERBEAM_DB_SCHEMA": schema},
            "runner": {**chat.model_env(), "RIVERBEAM_CONFIG": str(config)},
        }
        async with (
            running_stack(
                database_url=pg_url,
                nats_url=nats_url,
                data_dir=tmp_path / "data",
                env_overrides=overrides,
            ) as stack,
            RiverbeamClient(stack.router, timeout_s=GUARD_S) as client,
        ):
            # Agent as tool: the helper's frames on the lead's stream, its own run record.
            await chat.push(
                tool_calls([call("ask_helper", {"task": "what is six times seven?"})]),
                text("42"),
                text("The helper says 42."),
            )
            ack = await client.invoke("lead", "ask the helper", stream=True)
            assert isinstance(ack, StreamAck)
            frames = [f async for f in client.follow(ack.request_id, timeout_s=GUARD_S)]
            assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
            child = [f for f in frames if f.parent_run_id]
            assert child and {(f.agent_name, f.parent_run_id) for f in child} == {
                ("helper", ack.run_id)
            }
            assert any(f.type == "chunk" and f.data and f.data.text == "42" for f in child)
            assert frames[-1].type == "done" and frames[-1].result is not None
            assert frames[-1].result.text == "The helper says 42."
            [child_run_id] = {f.run_id for f in child}
            record = await client.get_run(child_run_id or "")
            assert (record.agent_name, record.status, record.parent_run_id) == (
                "helper",
                "completed",
                ack.run_id,
            )

            # Handoff: triage gives the conversation to the helper for the interaction.
            await chat.push(
                tool_calls([call("transfer_to_helper", {"reason": "billing"})]),
                text("Your invoice is paid."),
                text("It was 12 EUR."),
            )
            first = await client.invoke("triage", "is my invoice paid?")
            assert isinstance(first, AgentResult)
            assert (first.text, first.handoff_to) == ("Your invoice is paid.", "helper")
            channel = open_channel(stack.router)
            try:
                stub = pb_grpc.RiverbeamServiceStub(channel)  # type: ignore[no-untyped-call]
                request = InvokeRequest.parse(
                    {
                        "agent_name": "triage",
                        "content": [{"type": "text", "text": "how much was it?"}],
                        "session_id": first.session_id,
                        "interaction_id": first.interaction_id,
                    }
                )
                reply: pb.InvokeResponse = await stub.Invoke(request.to_proto(), timeout=GUARD_S)
            finally:
                await channel.close(None)
            second = AgentResult.from_proto(reply.result)
            assert (second.text, second.agent_name) == ("It was 12 EUR.", "helper")

            # A crew from the file: each step a child run of the crew's run.
            await chat.push(text("step one"), text("step two"))
            crewed = await client.invoke("pair", "go")
            assert isinstance(crewed, AgentResult) and crewed.text == "step two"
            assert [c.tool_name for c in crewed.tool_calls] == ["helper", "lead"]

            # An approval inside the called agent pauses the tree; approving resumes it once.
            await chat.push(
                tool_calls([call("ask_shouter", {"task": "shout hi"}, id="p1")]),
                tool_calls([call("shout", {"text": "hi"}, id="s1")]),
            )
            paused = await client.invoke("boss", "make it loud")
            assert isinstance(paused, AgentResult) and paused.interrupted
            assert paused.session_id and paused.interaction_id
            (held,) = paused.action_required
            assert (held.tool, held.args) == ("shout", {"text": "hi"})
            assert held.child is not None and held.child["agent"] == "shouter"
            pending = await client.list_pending_actions(session_id=paused.session_id)
            assert [a.action_id for a in pending] == [held.action_id]
            asked = len(await chat.completions())
            await chat.push(text("It shouted HI."), text("The shouter says HI."))
            resumed = await client.approve(
                paused.session_id, paused.interaction_id, action_id=held.action_id
            )
            frames = [f async for f in client.follow(resumed.request_id, timeout_s=GUARD_S)]
            assert frames[-1].type == "done" and frames[-1].result is not None
            assert frames[-1].result.text == "The shouter says HI."
            assert frames[-1].result.tool_calls[0].result["answer"] == "It shouted HI."
            # The approved call ran once, its result shown to the shouter's model.
            later = (await chat.completions())[asked:]
            assert len(later) == 2
            shown = [m for m in later[0]["body"]["messages"] if m["role"] == "tool"]
            assert [(m["tool_call_id"], m["content"]) for m in shown] == [("s1", "HI")]
            assert (await client.get_run(paused.run_id or "")).status == "interrupted"
            assert (await client.get_run(resumed.run_id or "")).status == "completed"
            assert await client.list_pending_actions(session_id=paused.session_id) == []
