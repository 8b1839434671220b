"""Decoding chat-completions responses: SSE events, streamed deltas, whole bodies."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riverbeam.agents import Text, ToolCalls
from riverbeam.agents._sse import StreamAssembler, completion_from_json, iter_sse_data, parse_usage
from riverbeam.core.errors import RiverbeamError


async def _lines(*lines: str) -> AsyncIterator[str]:
    for line in lines:
        yield line


async def test_iter_sse_data_joins_fields_and_skips_comments() -> None:
    got = [
        d
        async for d in iter_sse_data(
            _lines(
                ": keepalive",
                "event: message",
                'data: {"a":',
                "data: 1}",
                "",
                "id: 7",
                "data:[DONE]",
                "",
                "data: tail",
            )
        )
    ]
    assert got == ['{"a":\n1}', "[DONE]", "tail"]


def _chunk(delta: dict, finish: str | None = None, **extra: object) -> dict:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def test_assembler_text_usage_and_model() -> None:
    asm = StreamAssembler(requested_model="asked")
    assert asm.feed(_chunk({"role": "assistant", "content": ""}, model="served")) == ""
    assert asm.feed(_chunk({"content": "Hel"})) == "Hel"
    assert asm.feed(_chunk({"content": "lo"}, "stop")) == "lo"
    assert asm.feed({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}) == ""
    done = asm.finish()
    assert done == Text(
        "Hello", usage=parse_usage({"prompt_tokens": 5, "completion_tokens": 2}), model="served"
    )
    assert done.usage is not None and done.usage.total_tokens == 7


def test_assembler_interleaved_tool_call_deltas() -> None:
    asm = StreamAssembler()
    asm.feed(
        _chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "a",
                        "type": "function",
                        "function": {"name": "read", "arguments": ""},
                    }
                ]
            }
        )
    )
    asm.feed(
        _chunk(
            {
                "tool_calls": [
                    {"index": 1, "id": "b", "function": {"name": "write", "arguments": '{"pa'}}
                ]
            }
        )
    )
    asm.feed(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path":'}}]}))
    asm.feed(_chunk({"tool_calls": [{"index": 1, "function": {"arguments": 'th": "x"}'}}]}))
    asm.feed(
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": ' "y"}'}}]}, "tool_calls")
    )
    done = asm.finish()
    assert isinstance(done, ToolCalls)
    assert [(c.id, c.name, c.args) for c in done.calls] == [
        ("a", "read", {"path": "y"}),
        ("b", "write", {"path": "x"}),
    ]


def test_assembler_tolerates_repeated_names_and_missing_ids() -> None:
    asm = StreamAssembler()
    asm.feed(
        _chunk({"tool_calls": [{"index": 0, "function": {"name": "read", "arguments": "{}"}}]})
    )
    asm.feed(_chunk({"tool_calls": [{"index": 0, "function": {"name": "read"}}]}, "tool_calls"))
    done = asm.finish()
    assert isinstance(done, ToolCalls)
    assert done.calls[0].name == "read" and done.calls[0].id.startswith("call_")


@pytest.mark.parametrize(
    "chunk",
    [
        [1],
        {"choices": "x"},
        {"choices": [1]},
        {"choices": [{"delta": 3}]},
        {"id": "no choices"},
        {"choices": [{"delta": {"tool_calls": {}}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": "0"}]}}]},
    ],
)
def test_assembler_malformed_chunks_are_bem_093(chunk: object) -> None:
    with pytest.raises(RiverbeamError) as caught:
        StreamAssembler().feed(chunk)
    assert caught.value.bem == "BEM-093"


def test_assembler_error_object_is_bem_080_and_empty_stream_is_bem_093() -> None:
    with pytest.raises(RiverbeamError) as caught:
        StreamAssembler().feed({"error": {"message": "overloaded"}})
    assert caught.value.bem == "BEM-080" and "overloaded" in caught.value.message
    with pytest.raises(RiverbeamError) as caught:
        StreamAssembler().finish()
    assert caught.value.bem == "BEM-093"


@settings(deadline=None)
@given(
    args=st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.one_of(st.integers(), st.text(max_size=20), st.booleans()),
        max_size=5,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=12),
)
def test_tool_call_arguments_survive_any_split(args: dict, cuts: list[int]) -> None:
    text = json.dumps(args)
    points = sorted({min(c, len(text)) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    asm = StreamAssembler()
    asm.feed(
        _chunk(
            {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": ""}}]}
        )
    )
    for piece in pieces:
        asm.feed(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    done = asm.finish()
    assert isinstance(done, ToolCalls) and done.calls[0].args == args


def test_completion_from_json_text_and_tools() -> None:
    body = {
        "model": "m",
        "choices": [{"message": {"content": "hi"}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    assert completion_from_json(body) == Text("hi", usage=parse_usage(body["usage"]), model="m")
    body = {
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "x",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"a": 1}'},
                        },
                        {
                            "id": "y",
                            "type": "function",
                            "function": {"name": "g", "arguments": {"b": 2}},
                        },
                    ],
                }
            }
        ]
    }
    done = completion_from_json(body, requested_model="asked")
    assert isinstance(done, ToolCalls) and done.model == "asked"
    assert [(c.id, c.args) for c in done.calls] == [("x", {"a": 1}), ("y", {"b": 2})]


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"choices": []},
        {"choices": [{}]},
        {"choices": [{"message": {"content": 3}}]},
        {"choices": [{"message": {"tool_calls": [{"function": {}}]}}]},
        {"choices": [{"message": {"tool_calls": "x"}}]},
    ],
)
def test_completion_from_json_malformed_is_bem_093(body: object) -> None:
    with pytest.raises(RiverbeamError) as caught:
        completion_from_json(body)
    assert caught.value.bem == "BEM-093"


def test_parse_usage_ignores_nonsense() -> None:
    assert parse_usage(None) is None
    assert parse_usage({"prompt_tokens": -1, "completion_tokens": 1}) is None
    usage = parse_usage({"prompt_tokens": 2, "completion_tokens": 3})
    assert usage is not None and usage.total_tokens == 5
