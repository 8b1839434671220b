"""The reading commands: pending, agents, models, session and usage (registered in _app.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.text import Text

from riverbeam.client import DEFAULT_TARGET, RiverbeamClient
from riverbeam.types import WireModel
from services.cli import _flows
from services.cli._command_kit import (
    JsonOpt,
    RouterOpt,
    TokenOpt,
    finish,
    print_json,
    router_client,
)
from services.cli._errors import ExitCode
from services.cli._flows import Consoles
from services.cli._render import agents_table, models_table, pending_view

__all__ = ["UsageGroupName", "agents_cmd", "models_cmd", "pending_cmd", "session_cmd", "usage_cmd"]


def pending_cmd(
    session: Annotated[
        str | None, typer.Option("--session", help="Only this session.", show_default=False)
    ] = None,
    diff: Annotated[
        bool,
        typer.Option(
            "--diff", help="Show each action's whole preview diff (what approving would change)."
        ),
    ] = False,
    json_mode: JsonOpt = False,
    router: RouterOpt = DEFAULT_TARGET,
    token: TokenOpt = None,
) -> None:
    """The approval inbox: actions waiting for an answer, with what each would do."""
    consoles = Consoles.standard()

    async def main() -> ExitCode:
        async with router_client(router, token) as client:
            actions = await client.list_pending_actions(session_id=session)
        if json_mode:
            print_json([a.to_json_dict() for a in actions])
            return ExitCode.OK
        if not actions:
            consoles.out.print("no pending actions")
            return ExitCode.OK
        consoles.out.print(pending_view(actions, diff=diff), soft_wrap=True)
        return ExitCode.OK

    finish(consoles, main)


def _show_listing(
    fetch: Callable[[RiverbeamClient], Awaitable[Sequence[WireModel]]],
    table: Callable[[Any], Any],
    *,
    json_mode: bool,
    router: str,
    token: str | None,
) -> None:
    """Fetch a list from the router and print it as a table, or as JSON."""
    consoles = Consoles.standard()

    async def main() -> ExitCode:
        async with router_client(router, token) as client:
            items = await fetch(client)
        if json_mode:
            print_json([item.to_json_dict() for item in items])
        else:
            consoles.out.print(table(items))
        return ExitCode.OK

    finish(consoles, main)


def agents_cmd(
    json_mode: JsonOpt = False, router: RouterOpt = DEFAULT_TARGET, token: TokenOpt = None
) -> None:
    """The agents you may run."""
    _show_listing(
        lambda client: client.list_agents(),
        agents_table,
        json_mode=json_mode,
        router=router,
        token=token,
    )


def models_cmd(
    json_mode: JsonOpt = False, router: RouterOpt = DEFAULT_TARGET, token: TokenOpt = None
) -> None:
    """The models the router may route to (and what answers for the built-in default)."""
    consoles = Consoles.standard()

    async def main() -> ExitCode:
        async with router_client(router, token) as client:
            models = await client.list_models()
            served = await _flows.placeholder_served_by(client, models)
        if json_mode:
            print_json(
                [
                    {
                        **m.to_json_dict(),
                        **({"served_by": served[m.name]} if m.name in served else {}),
                    }
                    for m in models
                ]
            )
            return ExitCode.OK
        consoles.out.print(models_table(models, served))
        for name, by in served.items():
            if by == "echo":
                consoles.out.print(
                    Text(
                        f"{name} is answered by the echo client (no BEAM_API_KEY on the runner): "
                        "replies repeat your text",
                        style="bold yellow",
                    ),
                    soft_wrap=True,
                )
        return ExitCode.OK

    finish(consoles, main)


def session_cmd(
    session_id: Annotated[str, typer.Argument(help="The session id.")],
    json_mode: JsonOpt = False,
    router: RouterOpt = DEFAULT_TARGET,
    token: TokenOpt = None,
) -> None:
    """A session's record: interactions → runs → messages and actions."""
    from services.cli._session_tree import load_session, session_tree

    consoles = Consoles.standard()

    async def main() -> ExitCode:
        async with router_client(router, token) as client:
            view = await load_session(client, session_id)
        if json_mode:
            print_json(view.to_json_dict())
        else:
            consoles.out.print(session_tree(view))
        return ExitCode.OK

    finish(consoles, main)


class UsageGroupName(StrEnum):
    run = "run"
    session = "session"
    user = "user"
    org = "org"


def usage_cmd(
    by: Annotated[
        UsageGroupName, typer.Option("--by", help="Sum per run, session, user or org.")
    ] = UsageGroupName.session,
    since: Annotated[
        str | None,
        typer.Option(help="Runs started since: an ISO date/time, or 24h, 7d, ... ago."),
    ] = None,
    until: Annotated[
        str | None, typer.Option(help="Runs started before this (same forms).")
    ] = None,
    user: Annotated[str | None, typer.Option("--user", help="Only this user's runs.")] = None,
    org: Annotated[str | None, typer.Option("--org", help="Only this organisation's.")] = None,
    session: Annotated[str | None, typer.Option("--session", help="Only this session.")] = None,
    json_mode: JsonOpt = False,
    router: RouterOpt = DEFAULT_TARGET,
    token: TokenOpt = None,
) -> None:
    """Token usage and cost (the model list's prices) per run, session, user or org."""
    from services.cli._usage import parse_when, usage_json, usage_table

    consoles = Consoles.standard()

    async def main() -> ExitCode:
        start = parse_when(since, option="--since")
        end = parse_when(until, option="--until")
        async with router_client(router, token) as client:
            rows, total = await client.get_usage(
                group_by=by.value,
                start=start,
                end=end,
                user_id=user,
                org_id=org,
                session_id=session,
            )
        if json_mode:
            print_json(usage_json(rows, total, group_by=by.value))
        else:
            consoles.out.print(usage_table(rows, total, group_by=by.value))
        return ExitCode.OK

    finish(consoles, main)
