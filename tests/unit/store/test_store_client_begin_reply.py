"""StoreClient's lent begin-run result converts its interaction and human message only when
they are read, and then they equal begin_run's own."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from riverbeam.runtime import RiverBeam
from riverbeam.store import StoreClient
from riverbeam.store._begin_reply import RepliedBeginRun, lease_epoch_of
from riverbeam.store._lent_history import LentBeginRun
from riverbeam.types import AgentResult, ContentPart, Interaction, Message, Run
from tests.support.direct_store import direct_store_client


@pytest.fixture
async def client() -> StoreClient:
    return direct_store_client()


def _conversions(
    monkeypatch: pytest.MonkeyPatch, models: tuple[type[Any], ...], note: Callable[[Any, Any], str]
) -> list[str]:
    """`note(cls, message)` of every from_proto of `models` from here on."""
    seen: list[str] = []
    for model in models:
        original = model.from_proto.__func__

        def counting(cls: type[Any], msg: Any, original: Any = original) -> Any:
            seen.append(note(cls, msg))
            return original(cls, msg)

        monkeypatch.setattr(model, "from_proto", classmethod(counting))
    return seen


@pytest.fixture
def converted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Interaction and Message records converted from protobuf."""
    return _conversions(monkeypatch, (Interaction, Message), lambda cls, _: cls.__name__)


def _step(session_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "agent_name": "a",
        "run_id": str(uuid.uuid4()),
        "interaction_id": str(uuid.uuid4()),
        "lease_owner": "w",
        "lease_ttl_s": 30,
        "human_content": [ContentPart.of_text("hello")],
        "history_limit": 10,
        **extra,
    }


async def test_a_lent_result_converts_neither_until_read(
    client: StoreClient, converted: list[str]
) -> None:
    begun = await client.begin_run_lending(**_step(str(uuid.uuid4())))
    assert isinstance(begun, RepliedBeginRun) and isinstance(begun, LentBeginRun)
    assert begun.run.status == "running" and begun.session.last_seq == 1
    assert converted == []

    interaction = begun.interaction
    assert converted == ["Interaction"]
    assert interaction.interaction_id == begun.run.interaction_id
    assert begun.interaction is interaction  # converted once, then kept
    human = begun.human_message
    assert human is not None and human.seq == 1 and human.text == "hello"
    assert begun.human_message is human
    assert converted == ["Interaction", "Message"]


async def test_once_read_it_equals_begin_runs_own(client: StoreClient) -> None:
    session_id = str(uuid.uuid4())
    lent = await client.begin_run_lending(**_step(session_id))
    stored = await client.get_interaction(interaction_id=lent.run.interaction_id)
    assert lent.interaction == stored
    messages, _ = await client.list_messages(session_id=session_id)
    assert lent.human_message == messages[0]
    # Its fields are BeginRunResult's: the same, read through the lazy ones.
    names = [f.name for f in dataclasses.fields(lent) if f.compare]
    assert {"interaction", "human_message", "history"} <= set(names)
    with pytest.raises(dataclasses.FrozenInstanceError):
        lent.interaction = stored  # type: ignore[misc]


async def test_a_step_that_saves_no_human_message_reads_none(client: StoreClient) -> None:
    begun = await client.begin_run_lending(**_step(str(uuid.uuid4()), human_content=[]))
    assert isinstance(begun, RepliedBeginRun)
    assert begun.human_message is None


async def test_begin_run_still_converts_both(client: StoreClient, converted: list[str]) -> None:
    begun = await client.begin_run(**_step(str(uuid.uuid4())))
    assert type(begun).__name__ == "BeginRunResult"
    assert converted == ["Interaction", "Message"]
    assert begun.human_message is not None and begun.human_message.seq == 1


async def test_an_invoke_over_a_store_client_converts_no_interaction(
    client: StoreClient, converted: list[str]
) -> None:
    beam = RiverBeam(store=client)
    beam.register_echo_agent()
    session_id = str(uuid.uuid4())
    for text in ("one", "two"):
        result = await beam.invoke(
            {
                "agent_name": "assistant",
                "session_id": session_id,
                "content": [{"type": "text", "text": text}],
            }
        )
        assert isinstance(result, AgentResult) and result.text == f"Echo: {text}"
    assert "Interaction" not in converted
    messages = await beam.list_messages(session_id)
    assert [m.seq for m in messages] == [1, 2, 3, 4]


@pytest.fixture
def runs_converted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Run records converted from protobuf, by run id."""
    return _conversions(monkeypatch, (Run,), lambda _, msg: msg.run_id)


async def test_a_lent_result_converts_its_run_when_read_and_its_epoch_without(
    client: StoreClient, runs_converted: list[str]
) -> None:
    step = _step(str(uuid.uuid4()))
    begun = await client.begin_run_lending(**step)
    assert isinstance(begun, RepliedBeginRun)
    assert lease_epoch_of(begun) == 1
    assert runs_converted == []  # the epoch is read from the reply
    run = begun.run
    assert runs_converted == [step["run_id"]]
    assert run.run_id == step["run_id"] and run.status == "running" and run.lease_epoch == 1
    assert begun.run is run  # converted once, then kept
    assert lease_epoch_of(begun) == 1 and runs_converted == [step["run_id"]]
    stored = await client.get_run(run_id=step["run_id"])
    assert run == stored


async def test_lease_epoch_of_reads_any_result_and_an_unset_epoch_as_none(
    client: StoreClient,
) -> None:
    begun = await client.begin_run(**_step(str(uuid.uuid4())))
    assert type(begun).__name__ == "BeginRunResult" and lease_epoch_of(begun) == 1
    lent = await client.begin_run_lending(**_step(str(uuid.uuid4())))
    assert isinstance(lent, RepliedBeginRun)
    lent.reply.run.ClearField("lease_epoch")
    assert lease_epoch_of(lent) is None
    assert lent.run.lease_epoch is None  # as the conversion reads it


async def test_an_invoke_over_a_store_client_converts_no_run(
    client: StoreClient, runs_converted: list[str]
) -> None:
    beam = RiverBeam(store=client)
    beam.register_echo_agent()
    result = await beam.invoke(
        {
            "agent_name": "assistant",
            "session_id": str(uuid.uuid4()),
            "content": [{"type": "text", "text": "one"}],
        }
    )
    assert isinstance(result, AgentResult) and result.text == "Echo: one"
    assert result.run_id not in runs_converted
    run = await client.get_run(run_id=result.run_id or "")
    assert run.status == "completed" and run.lease_epoch == 1
