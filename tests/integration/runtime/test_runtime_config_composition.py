"""The runner service with riverbeam.yaml: the agent layer's sections and composition.

Real NATS, the store service over both stores (memory and Postgres) and a chat-completions
server playing the model: a YAML-declared guardrail, output schema and token limit take
effect, and an agent called as a tool runs as a child run on the caller's stream.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from riverbeam.runtime import Grant, RunnerClient
from riverbeam.store import BeamStore
from riverbeam.stream import NatsConnection
from riverbeam.types import InvokeRequest, ModelConfig, StreamAck, StreamChunk
from tests.integration.runtime.rt_kit import (
    assert_gap_free,
    collect,
    runner_service,
    runner_settings,
    store_service,
    text_request,
)
from tests.support.chat_server import ChatServer, call, text, tool_calls

pytestmark = pytest.mark.nats

CONFIG = """\
builtin_agents: false
agents:
  - name: counter
    instructions: Count, answering in JSON.
    tools: []
    output:
      kind: json_schema
      schema: {type: object, required: [n], properties: {n: {type: integer}}}
      repair_attempts: 1
  - name: lead
    instructions: Ask the counter, then answer.
    tools: [{kind: agent, agent: counter}]
    guardrails:
      - {kind: max_input_chars, limit: 40}
      - {kind: pii, detect: [email], stages: [output]}
    limits: {max_tokens: 500}
"""


async def _run(
    model: ChatServer,
    store: BeamStore,
    nats: NatsConnection,
    nats_url: str,
    tmp_path: Path,
    turns: list[str],
) -> list[list[StreamChunk]]:
    path = tmp_path / "riverbeam.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    out: list[list[StreamChunk]] = []
    async with store_service(store) as store_url:
        settings = runner_settings(nats_url, store_url, agents=None, config=path)
        async with runner_service(settings) as address:
            client = RunnerClient(address)
            try:
                for turn in turns:
                    ack = await client.run_invoke(
                        InvokeRequest.parse(text_request("lead", turn, stream=True)),
                        model=ModelConfig(name="m", provider="custom"),
                        grant=Grant(may_confirm=False),
                    )
                    assert isinstance(ack, StreamAck)
                    out.append(await collect(nats.js, ack.request_id))
            finally:
                await client.aclose()
    return out


async def test_yaml_guardrails_output_schema_and_child_runs_through_the_runner(
    tmp_path: Path,
    store: BeamStore,
    nats: NatsConnection,
    nats_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    script = [
        tool_calls([call("ask_counter", {"task": "count the files"})], usage=usage),
        text('{"n": "two"}', usage=usage),  # the counter's answer: not the schema's
        text('{"n": 2}', usage=usage),  # repaired
        text("There are 2; write to ann@example.com", usage=usage),
    ]
    async with ChatServer(script, api_key="k") as model:
        monkeypatch.setenv("BEAM_API_KEY", "k")
        monkeypatch.setenv("BEAM_API_BASE_URL", model.url)
        [frames, refused] = await _run(
            model, store, nats, nats_url, tmp_path, ["how many files?", "x" * 41]
        )
    assert_gap_free(frames)
    done = frames[-1]
    assert done.type == "done" and done.result is not None
    # The output guardrail (pii, from the file) rewrote the answer.
    assert "ann@example.com" not in done.result.text and done.result.text.startswith("There are 2")
    # The counter ran as a child run: its frames on the lead's stream, its own record.
    child_frames = [f for f in frames if f.parent_run_id]
    assert child_frames and {f.agent_name for f in child_frames} == {"counter"}
    assert {f.parent_run_id for f in child_frames} == {done.result.run_id}
    parent = await store.get_run(run_id=done.result.run_id or "")
    runs = await store.list_runs(interaction_id=parent.interaction_id)
    [child] = [r for r in runs if r.parent_run_id == parent.run_id]
    assert (child.agent_name, child.status) == ("counter", "completed")
    # Its structured answer was validated (and repaired once) against the file's schema.
    assert child.result is not None and child.result.output == {"n": 2}
    assert child.token_usage is not None and child.token_usage.total_tokens == 30
    assert parent.token_usage is not None and parent.token_usage.total_tokens == 60
    # The input guardrail (max_input_chars, from the file) refused the second turn: no model call.
    assert refused[-1].type == "error" and refused[-1].error_code == "BEM-205"
    assert len(model.completions) == 4


async def test_a_yaml_token_limit_ends_the_run(
    tmp_path: Path,
    store: BeamStore,
    nats: NatsConnection,
    nats_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    big = {"prompt_tokens": 400, "completion_tokens": 200, "total_tokens": 600}
    script = [tool_calls([call("ask_counter", {"task": "t"})], usage=big), text("never")]
    async with ChatServer(script, api_key="k") as model:
        monkeypatch.setenv("BEAM_API_KEY", "k")
        monkeypatch.setenv("BEAM_API_BASE_URL", model.url)
        [frames] = await _run(model, store, nats, nats_url, tmp_path, ["go"])
    assert frames[-1].type == "error" and frames[-1].error_code == "BEM-216"
    assert len(model.completions) == 1
