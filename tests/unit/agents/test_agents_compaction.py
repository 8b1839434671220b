"""Context compaction: the budget counts everything sent; summarise, trim, elide, retry on 084."""

from __future__ import annotations

from typing import Any

from agents_kit import Recorder, make_context, make_input, msg, run

from riverbeam.agents import (
    PendingToolCall,
    RigAgentRunner,
    RigOptions,
    ScriptedClient,
    Skill,
    Text,
    ToolCalls,
)
from riverbeam.agents._compaction import (
    SUMMARY_PREFIX,
    CompactionOptions,
    history_after_summary,
)
from riverbeam.agents._tokens import EstimatingCounter, estimate_text
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import Message, TokenUsage


def long_history(turns: int, words: int = 60) -> list[Message]:
    out: list[Message] = []
    for i in range(turns):
        text = " ".join(f"word{i}" for _ in range(words))
        out.append(msg("human", f"question {i}: {text}").model_copy(update={"seq": 2 * i + 1}))
        out.append(msg("ai", f"answer {i}: {text}").model_copy(update={"seq": 2 * i + 2}))
    return out


def options(budget: int, **fields: Any) -> RigOptions:
    return RigOptions(compaction=CompactionOptions(context_tokens=budget, answer_share=0, **fields))


def test_estimate_and_calibration() -> None:
    assert estimate_text("") == 0
    assert estimate_text("hello world") == 2
    assert estimate_text("internationalization") == 5
    assert estimate_text("数据库") == 3
    counter = EstimatingCounter()
    counter.calibrate(100, 150)
    assert counter.factor > 1.0
    messages = [{"role": "user", "content": "hello world"}]
    assert counter.count(messages, []) > counter.raw(messages, [])


async def test_older_turns_are_summarised_and_the_summary_recorded() -> None:
    client = ScriptedClient([Text("they discussed words"), Text("done")])
    runner = RigAgentRunner("c", client, [], options=options(300, keep_turns=1))
    history = long_history(4)
    frames = await run(runner, make_input("next?"), make_context(full_history=history))
    result = frames[-1].result
    assert frames[-1].type == "done" and result is not None and result.text == "done"
    summary_call, model_call = client.calls
    assert summary_call.tools == []
    assert "question 0" in summary_call.messages[-1]["content"]
    sent = model_call.messages
    assert sent[0] == {"role": "system", "content": f"{SUMMARY_PREFIX}\nthey discussed words"}
    assert "question 0" not in str(sent) and "question 3" in str(sent)
    layer = (result.metadata or {})["agent_layer"]
    assert layer["summary"]["covers_until_seq"] == 6
    assert layer["compaction"]["summarized_messages"] == 6
    assert layer["compaction"]["tokens_after"] <= 300


async def test_a_stored_summary_replaces_what_it_covers() -> None:
    history = long_history(3)
    summary = msg("system", f"{SUMMARY_PREFIX}\nold stuff", type="summary").model_copy(
        update={"seq": 7, "metadata": {"covers_until_seq": 4}}
    )
    kept = history_after_summary([*history, summary])
    assert kept[0] is summary and [m.seq for m in kept[1:]] == [5, 6]
    client = ScriptedClient([Text("ok")])
    runner = RigAgentRunner("c", client, [])
    await run(runner, make_input("hi"), make_context(full_history=[*history, summary]))
    sent = str(client.calls[0].messages)
    assert "old stuff" in sent and "question 0" not in sent and "question 2" in sent


async def test_a_failed_summary_falls_back_to_trimming() -> None:
    client = ScriptedClient(
        [RiverbeamError(ErrorCode.MODEL_UNAVAILABLE, "down"), Text("still answered")]
    )
    runner = RigAgentRunner("c", client, [], options=options(250, keep_turns=1))
    frames = await run(runner, make_input("next?"), make_context(full_history=long_history(4)))
    result = frames[-1].result
    assert result is not None and result.text == "still answered"
    layer = (result.metadata or {})["agent_layer"]["compaction"]
    assert layer["summary_error"] == "BEM-085" and layer["trimmed_turns"] >= 1
    sent = client.calls[1].messages
    assert sent[0]["role"] == "user"  # a trimmed history starts at a user turn


async def test_system_prompt_and_tool_schemas_count_too() -> None:
    big = Skill("s", "d", " ".join(["rule"] * 400), ())
    client = ScriptedClient([Text("never")])
    runner = RigAgentRunner("c", client, [Recorder("t")], skill=big, options=options(200))
    frames = await run(runner, make_input("hi"))
    assert frames[-1].error_code == "BEM-225"
    assert client.calls == []


async def test_the_tool_loop_s_own_results_are_elided() -> None:
    tool = Recorder("dump", result={"data": " ".join(["blob"] * 300)})
    client = ScriptedClient(
        [ToolCalls([PendingToolCall("dump", {}, id="d1")]), Text("summarised the dump")]
    )
    runner = RigAgentRunner("c", client, [tool], options=options(200, summarize=False))
    frames = await run(runner, make_input("dump it"))
    assert frames[-1].type == "done", frames[-1]
    second = client.calls[1].messages
    assert second[-1]["role"] == "tool" and "elided" in second[-1]["content"]
    layer = (frames[-1].result.metadata or {})["agent_layer"]  # type: ignore[union-attr]
    assert layer["compaction"]["elided_results"] == 1


async def test_a_provider_context_error_compacts_and_retries_once() -> None:
    too_long = RiverbeamError(ErrorCode.MODEL_CONTEXT_LENGTH, "context length exceeded")
    client = ScriptedClient([too_long, Text("summary"), Text("fits now")])
    runner = RigAgentRunner("c", client, [], options=options(100_000, keep_turns=1))
    frames = await run(runner, make_input("next?"), make_context(full_history=long_history(3)))
    result = frames[-1].result
    assert result is not None and result.text == "fits now"
    layer = (result.metadata or {})["agent_layer"]["compaction"]
    assert layer["provider_context_error"] is True
    assert len(client.calls) == 3

    twice = ScriptedClient([too_long, Text("summary"), too_long])
    runner = RigAgentRunner("c", twice, [], options=options(100_000, keep_turns=1))
    frames = await run(runner, make_input("next?"), make_context(full_history=long_history(3)))
    assert frames[-1].error_code == "BEM-084"


async def test_summary_usage_counts_against_the_token_budget() -> None:
    usage = TokenUsage(prompt_tokens=500, completion_tokens=10, total_tokens=510)
    client = ScriptedClient([Text("s", usage=usage), Text("never")])
    runner = RigAgentRunner(
        "c",
        client,
        [],
        options=RigOptions(
            token_budget=100,
            compaction=CompactionOptions(context_tokens=300, answer_share=0, keep_turns=1),
        ),
    )
    frames = await run(runner, make_input("x"), make_context(full_history=long_history(4)))
    assert frames[-1].error_code == "BEM-216"
