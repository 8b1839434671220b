"""What StoreClient puts in a step's request: nothing the store would ignore.

The client's calls go straight to a StoreServicer (serialised and parsed on the way, as on
the wire) so that the server's conversions can be counted.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from riverbeam.store import StoreClient
from riverbeam.types import ContentPart, RunOptions, TurnConfig
from tests.support.direct_store import DirectStub, direct_store_client


@pytest.fixture
async def client() -> StoreClient:
    return direct_store_client()


@pytest.fixture
def options_read(monkeypatch: pytest.MonkeyPatch) -> list[RunOptions]:
    """The RunOptions the store service converts out of requests."""
    seen: list[RunOptions] = []
    original = RunOptions.from_proto.__func__  # type: ignore[attr-defined]

    def counting(cls: type[RunOptions], msg: Any) -> RunOptions:
        out: RunOptions = original(cls, msg)
        seen.append(out)
        return out

    monkeypatch.setattr(RunOptions, "from_proto", classmethod(counting))
    return seen


async def _begin_step(client: StoreClient, **fields: Any) -> None:
    """A BeginRun of a new session and run by `client`, with `fields` besides its ids and lease."""
    await client.begin_run(
        session_id=str(uuid.uuid4()),
        agent_name="a",
        run_id=str(uuid.uuid4()),
        lease_owner="w",
        lease_ttl_s=30,
        **fields,
    )


async def _begin(client: StoreClient, options: RunOptions | None) -> None:
    await _begin_step(client, human_content=[ContentPart.of_text("hello")], run_options=options)


async def test_empty_run_options_are_not_sent(
    client: StoreClient, options_read: list[RunOptions]
) -> None:
    await _begin(client, RunOptions())
    stub: DirectStub = client._stub
    assert not stub.requests[-1].HasField("run_options")
    assert options_read == []  # nothing for the service to convert


async def test_run_options_that_say_something_are_sent(
    client: StoreClient, options_read: list[RunOptions]
) -> None:
    options = RunOptions(time_limit_s=5.0, turn_config=TurnConfig(append_instructions="be brief"))
    await _begin(client, options)
    stub: DirectStub = client._stub
    assert stub.requests[-1].HasField("run_options")
    assert options_read == [options]


class _Sent(Exception):
    """Raised by _Recorder once it holds the request."""


class _Recorder:
    """A stub that keeps each request as sent and answers none."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        async def call(request: Any, **_: Any) -> Any:
            self.requests.append(request)
            raise _Sent

        return call


async def test_a_begin_requests_parts_and_answers_are_their_own_messages() -> None:
    from riverbeam.types import ActionResponseEnvelope

    store_client = StoreClient("127.0.0.1:1")
    recorder = _Recorder()
    store_client._stub = recorder
    parts = [
        ContentPart.of_text("hello"),
        ContentPart(type="image_url", url="https://example.com/a.png", metadata={"alt": "a"}),
        ContentPart.of_text(""),
    ]
    answers = [
        ActionResponseEnvelope(
            action_id=str(uuid.uuid4()),
            kind="confirmation",
            request_id=str(uuid.uuid4()),
            payload={"approved": True},
        ),
        ActionResponseEnvelope(
            action_id=str(uuid.uuid4()), kind="input", request_id=str(uuid.uuid4())
        ),
    ]
    with pytest.raises(_Sent):
        await _begin_step(store_client, human_content=parts, action_responses=answers)
    (sent,) = recorder.requests
    assert list(sent.human_content) == [p.to_proto() for p in parts]
    assert list(sent.action_responses) == [a.to_proto() for a in answers]
    with pytest.raises(_Sent):
        await _begin_step(store_client)
    assert len(recorder.requests[-1].human_content) == 0
    assert len(recorder.requests[-1].action_responses) == 0
