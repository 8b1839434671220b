"""A run's per-request options: recorded on the run, inherited by a resume (docs/agents.md).

A request's `response_schema`, `time_limit_s`, `token_budget` and `turn_config` are recorded
on its run (`Run.options`) by the begin-run step. A resume (an InvokeRequest answering the
interaction's pending actions) carries no options of its own as a rule, so it inherits the
interrupted run's; when it sends some they only add to the inherited ones, with the rules the
router sanitises by: both schemas apply, the smaller limit wins, and its turn_config narrows
the tools further (its instructions, when the router let them through, are added).
"""

from __future__ import annotations

from typing import Any, TypeVar

from riverbeam.core.errors import RiverbeamError
from riverbeam.store import BeamStore
from riverbeam.types import InvokeRequest, RunOptions, TurnConfig

__all__ = [
    "apply_options",
    "combined_options",
    "inherited_options",
    "request_options",
    "run_options_for",
]

N = TypeVar("N", int, float)


def request_options(request: InvokeRequest) -> RunOptions:
    """The options the request itself sets."""
    return RunOptions(
        response_schema=request.response_schema,
        time_limit_s=request.time_limit_s,
        token_budget=request.token_budget,
        turn_config=request.turn_config,
    )


async def inherited_options(store: BeamStore, request: InvokeRequest) -> RunOptions | None:
    """The options recorded on the run a resume answers, or None.

    Read before the begin-run step, which checks the answers for real: an action that is not
    found, or not of this interaction, gives None here and its own refusal there.
    """
    if not request.actions or not request.interaction_id:
        return None
    try:
        action = await store.get_action(action_id=request.actions[0].action_id)
        if action.interaction_id != request.interaction_id:
            return None
        run = await store.get_run(run_id=action.run_id)
    except RiverbeamError:
        return None
    return run.options


async def run_options_for(store: BeamStore, request: InvokeRequest) -> RunOptions:
    """The options a request's run goes with: its own, on a resume added to the inherited."""
    own = request_options(request)
    recorded = await inherited_options(store, request)
    return own if recorded is None else combined_options(recorded, own)


def combined_options(first: RunOptions, then: RunOptions) -> RunOptions:
    """`then` added to `first`: never looser than either."""
    return RunOptions(
        response_schema=_both_schemas(first.response_schema, then.response_schema),
        time_limit_s=_smaller(first.time_limit_s, then.time_limit_s),
        token_budget=_smaller(first.token_budget, then.token_budget),
        turn_config=_narrowed(first.turn_config, then.turn_config),
    )


def apply_options(request: InvokeRequest, options: RunOptions) -> InvokeRequest:
    """The request with `options` as its per-request options (what the agent is given).

    The request itself when it already holds them (a new turn's options are its own): no copy.
    """
    update = {
        "response_schema": options.response_schema,
        "time_limit_s": options.time_limit_s,
        "token_budget": options.token_budget,
        "turn_config": options.turn_config,
    }
    if all(getattr(request, name) is value for name, value in update.items()):
        return request
    return request.model_copy(update=update)


def _smaller(a: N | None, b: N | None) -> N | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def _both_schemas(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any] | None:
    if a is None or b is None or a == b:
        return a if b is None else b
    return {"allOf": [a, b]}


def _narrowed(a: TurnConfig | None, b: TurnConfig | None) -> TurnConfig | None:
    if a is None or b is None:
        return a if b is None else b
    return a.then(b)
