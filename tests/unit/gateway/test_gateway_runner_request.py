"""The runner's request made from the caller's message (the router's invoke path) reads back as
exactly the sanitised request, whoever calls and whatever cleaning changed."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from google.protobuf.unknown_fields import UnknownFieldSet

from riverbeam.auth import Principal, Role, sanitize_invoke
from riverbeam.runtime._client import _fill_request
from riverbeam.types import InvokeRequest
from riverbeam.v1 import runner_service_pb2 as runner_pb
from riverbeam.v1 import types_pb2

USER = Principal("alice", org_id="acme")
BACKEND = Principal("svc", org_id="acme", roles=frozenset({Role.BACKEND}))
ADMIN = Principal("root", roles=frozenset({Role.ADMIN}))
APPROVER = Principal("carol", org_id="acme", roles=frozenset({Role.APPROVER}))


def _message(**fields: Any) -> Any:
    metadata = fields.pop("metadata", {"client": "test", "n": 1, "nested": {"a": [1, "x"]}})
    fields.setdefault("session_id", str(uuid.uuid4()))
    message = types_pb2.InvokeRequest(
        agent_name="assistant", content=[types_pb2.ContentPart(type="text", text="hi")], **fields
    )
    if metadata:
        message.metadata.update(metadata)
    return message


def _scopes(*ids: str) -> list[dict[str, str]]:
    return [{"name": "notes", "id": i} for i in ids]


CASES: list[tuple[str, Principal, Any]] = [
    ("user", USER, _message()),
    ("user-no-metadata", USER, _message(metadata={})),
    (
        "user-own-auth",
        USER,
        _message(
            auth_context=types_pb2.InvokeAuthContext(user_id="alice", profile_id="p", mcp_token="t")
        ),
    ),
    ("user-names-its-request", USER, _message(request_id=str(uuid.uuid4()), stream=True)),
    ("user-upper-case-ids", USER, _message(session_id=str(uuid.uuid4()).upper())),
    ("user-strips-confirm", USER, _message(metadata={"confirm": True, "k": "v"})),
    (
        "user-strips-instructions",
        USER,
        _message(
            turn_config=types_pb2.TurnConfig(prepend_instructions="be terse", include_tools=["a"])
        ),
    ),
    ("user-schema-and-limits", USER, _message(time_limit_s=5.0, token_budget=100)),
    ("approver-confirms", APPROVER, _message(metadata={"confirm": True})),
    (
        "backend-for-user",
        BACKEND,
        _message(auth_context=types_pb2.InvokeAuthContext(user_id="erin", org_id="other")),
    ),
    (
        "backend-scopes-kept",
        BACKEND,
        _message(
            auth_context=types_pb2.InvokeAuthContext(user_id="erin"),
            metadata={"memory_scopes": _scopes("erin", "acme")},
        ),
    ),
    (
        "backend-scopes-dropped",
        BACKEND,
        _message(
            auth_context=types_pb2.InvokeAuthContext(user_id="erin"),
            metadata={"memory_scopes": _scopes("erin", "mallory")},
        ),
    ),
    (
        "admin-for-user",
        ADMIN,
        _message(
            auth_context=types_pb2.InvokeAuthContext(user_id="erin", org_id="x"),
            session_config=types_pb2.TurnConfig(append_instructions="sign off"),
        ),
    ),
]


@pytest.mark.parametrize(
    ("principal", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_runners_request_reads_back_as_the_sanitised_request(
    principal: Principal, message: Any
) -> None:
    # As off the wire, with a field of a newer client (number 501): not relayed.
    sent = types_pb2.InvokeRequest.FromString(message.SerializeToString() + b"\xa8\x1f\x01")
    request = InvokeRequest.from_proto(sent)
    clean = sanitize_invoke(
        request, principal, request_id=None if request.request_id else str(uuid.uuid4())
    )

    made = runner_pb.RunInvokeRequest()
    _fill_request(made.request, clean.request, sent, clean.replaced)
    converted = runner_pb.RunInvokeRequest()
    _fill_request(converted.request, clean.request, None, clean.replaced)

    assert InvokeRequest.from_proto(made.request) == clean.request
    assert InvokeRequest.from_proto(made.request).model_fields_set == (
        InvokeRequest.from_proto(converted.request).model_fields_set
    )
    assert len(UnknownFieldSet(sent)) == 1 and len(UnknownFieldSet(made.request)) == 0
    if sent.session_id == request.session_id:  # ids as sent are canonical: the same bytes
        assert made.request == converted.request


def test_a_request_without_the_callers_message_is_converted() -> None:
    request = InvokeRequest.from_proto(_message())
    clean = sanitize_invoke(request, USER, request_id=str(uuid.uuid4()))
    made = runner_pb.RunInvokeRequest()

    _fill_request(made.request, clean.request, None, clean.replaced)

    assert made.request == clean.request.to_proto()


def test_cleaning_says_which_fields_it_changed() -> None:
    same = sanitize_invoke(InvokeRequest.from_proto(_message()), USER)
    stripped = sanitize_invoke(
        InvokeRequest.from_proto(_message(metadata={"confirm": True})), USER, request_id=None
    )
    named = sanitize_invoke(
        InvokeRequest.from_proto(_message()), USER, request_id=str(uuid.uuid4())
    )

    assert same.replaced == {"auth_context"}
    assert stripped.replaced == {"auth_context", "metadata"}
    assert named.replaced == {"auth_context", "request_id"}


def test_the_identity_is_written_as_its_conversion_would_write_it() -> None:
    from itertools import product

    from riverbeam.runtime._client import _AUTH_CONTEXT_FIELDS, _fill_auth_context
    from riverbeam.types import InvokeAuthContext

    # Every field of the identity is written: one added to the type must be added here too.
    assert set(_AUTH_CONTEXT_FIELDS) == set(InvokeAuthContext.model_fields)
    for values in product([None, "", "u1", "é"], repeat=len(_AUTH_CONTEXT_FIELDS)):
        auth = InvokeAuthContext(**dict(zip(_AUTH_CONTEXT_FIELDS, values, strict=True)))
        target = types_pb2.InvokeRequest()

        _fill_auth_context(target.auth_context, auth)

        expected = types_pb2.InvokeRequest()
        expected.auth_context.CopyFrom(auth.to_proto())
        assert target.HasField("auth_context")
        assert target.SerializeToString() == expected.SerializeToString(), values
        for name in _AUTH_CONTEXT_FIELDS:
            assert target.auth_context.HasField(name) == expected.auth_context.HasField(name)
