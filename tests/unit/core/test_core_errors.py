"""RiverbeamError: structured fields, copies, and pickling across process pools."""

from __future__ import annotations

import copy
import pickle

import grpc
import pytest

from riverbeam.core import ErrorCode, RiverbeamError


def test_fields() -> None:
    err = RiverbeamError(ErrorCode.ACTION_NOT_FOUND, "no action 42", action_id="42", n=3, gone=None)
    assert isinstance(err, Exception)
    assert err.code is ErrorCode.ACTION_NOT_FOUND
    assert err.bem == "BEM-027"
    assert err.message == "no action 42"
    assert err.details == {"action_id": "42", "n": "3"}  # values as strings, None dropped
    assert err.http_status == 404
    assert err.grpc_status is grpc.StatusCode.NOT_FOUND
    assert err.hint == ErrorCode.ACTION_NOT_FOUND.spec.hint
    assert str(err) == "BEM-027: no action 42"


def test_message_defaults_to_the_title() -> None:
    err = RiverbeamError(ErrorCode.ACTION_NOT_PENDING)
    assert err.message == "action is not pending"
    assert str(err) == "BEM-066: action is not pending"
    assert err.hint.startswith("an action is answered once")
    assert err.details == {}


def test_with_details_returns_a_merged_copy() -> None:
    err = RiverbeamError(ErrorCode.PATH_PARENT, "bad path", path="../x")
    more = err.with_details({"root": "/srv", "path": "../y"})
    assert more is not err
    assert more.code is err.code and more.message == err.message
    assert more.details == {"path": "../y", "root": "/srv"}
    assert err.details == {"path": "../x"}


def test_to_dict() -> None:
    assert RiverbeamError(ErrorCode.UNKNOWN_TOOL).to_dict() == {
        "code": "BEM-089",
        "message": "model called a tool the agent does not have",
    }
    assert RiverbeamError(ErrorCode.UNKNOWN_TOOL, "no tool x", tool="x").to_dict() == {
        "code": "BEM-089",
        "message": "no tool x",
        "details": {"tool": "x"},
    }


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickles(protocol: int) -> None:
    err = RiverbeamError(ErrorCode.PUSH_REJECTED, "remote said no", ref="main")
    back = pickle.loads(pickle.dumps(err, protocol=protocol))
    assert type(back) is RiverbeamError
    assert back.code is ErrorCode.PUSH_REJECTED
    assert back.message == "remote said no"
    assert back.details == {"ref": "main"}
    assert str(back) == str(err)


@pytest.mark.parametrize("member", list(ErrorCode), ids=lambda m: m.code)
def test_every_code_pickles(member: ErrorCode) -> None:
    back = pickle.loads(pickle.dumps(RiverbeamError(member)))
    assert back.code is member and back.message == member.spec.title


def test_copies() -> None:
    err = RiverbeamError(ErrorCode.TOOL_TIMEOUT, "slow", tool="git_push")
    for clone in (copy.copy(err), copy.deepcopy(err)):
        assert clone.code is err.code and clone.details == err.details


def test_raised_and_caught_as_itself() -> None:
    with pytest.raises(RiverbeamError) as caught:
        raise RiverbeamError(ErrorCode.SESSION_BUSY)
    assert caught.value.bem == "BEM-030"
