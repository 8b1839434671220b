"""The typer application: one command per verb. Exit codes: see `ExitCode` and docs/cli.md."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from riverbeam.client import DEFAULT_TARGET
from riverbeam.core.errors import ErrorCode, RiverbeamError
from services.cli import _flows
from services.cli._command_kit import (
    JsonOpt,
    RouterOpt,
    SessionOpt,
    TokenOpt,
    finish,
    print_json,
    router_client,
)
from services.cli._errors import ExitCode, cli_errors
from services.cli._eval import eval_cmd
from services.cli._flows import Consoles, Progress
from services.cli._reads import agents_cmd, models_cmd, pending_cmd, session_cmd, usage_cmd
from services.cli._serve import ServiceName, serve
from services.cli._typer import RiverbeamGroup, RiverbeamTyper

app = RiverbeamTyper(
    name="riverbeam",
    help="Riverbeam: LLM agents served as gRPC microservices.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=RiverbeamGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        from riverbeam import __version__

        sys.stdout.write(f"riverbeam {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            help="Print the version and exit.",
            callback=_show_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """Riverbeam: LLM agents served as gRPC microservices."""


# ---- services -----------------------------------------------------------------------------------
AgentsOpt = Annotated[
    str | None,
    typer.Option(
        "--agents",
        help="Runner: module:function that registers more agents (RIVERBEAM_AGENTS).",
        show_default=False,
    ),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        envvar="RIVERBEAM_CONFIG",
        help="Runner: riverbeam.yaml with agents, tools and MCP servers.",
        show_default=False,
    ),
]


@app.command("serve")
def serve_cmd(
    service: Annotated[ServiceName, typer.Argument(help="Which service to run.")],
    listen: Annotated[
        str | None, typer.Option(help="HOST:PORT to listen on (RIVERBEAM_LISTEN).")
    ] = None,
    ready_file: Annotated[
        str | None, typer.Option(help="Write the bound address to this file once serving.")
    ] = None,
    agents: AgentsOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Run one service (router, runner, sandbox, store or console) until SIGTERM."""
    from services.cli._up_config import serve_overrides

    serve(service, listen, ready_file, serve_overrides(service.value, agents=agents, config=config))


@app.command("up")
def up_cmd(
    database_url: Annotated[
        str | None,
        typer.Option(
            envvar="RIVERBEAM_DATABASE_URL",
            help="PostgreSQL URL for the store; in memory when none.",
            show_default=False,
        ),
    ] = None,
    nats_url: Annotated[
        str | None,
        typer.Option(
            envvar="RIVERBEAM_NATS_URL",
            help="Use this NATS server instead of starting one.",
            show_default=False,
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            help="Logs, workspaces and NATS data; a temporary directory when none.",
            show_default=False,
        ),
    ] = None,
    base_port: Annotated[
        int,
        typer.Option(
            help="Router on this port, runner +1, sandbox +2, store +3; runner k (k >= 2) "
            "of --runners on +2+k.",
            min=1,
        ),
    ] = 50051,
    runners: Annotated[
        int,
        typer.Option(
            help="Runner replicas: the router spreads invokes over them (round-robin) and "
            "sends an invoke to another when one stops.",
            min=1,
            max=16,
        ),
    ] = 1,
    ready_timeout: Annotated[
        float, typer.Option(help="Seconds to wait for each process to be ready.", min=1)
    ] = 60.0,
    config: ConfigOpt = None,
    agents: AgentsOpt = None,
    reload: Annotated[
        bool,
        typer.Option(
            "--reload", help="Restart the runner when the config or a local Python file changes."
        ),
    ] = False,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            envvar="RIVERBEAM_METRICS_PORT",
            help="Prometheus /metrics for every service: router on this port, runner +1, "
            "sandbox +2, store +3, runner k of --runners +2+k (shown in the banner); off "
            "when none.",
            show_default=False,
            min=1,
        ),
    ] = None,
    demo: Annotated[
        bool,
        typer.Option(
            "--demo",
            help="Also start a scripted local model and a local origin, and point the skills "
            "at them: the README tour then works as printed.",
        ),
    ] = False,
    console_port: Annotated[
        int | None,
        typer.Option(
            help="The console (HTTP API, web console) on this port; 0 for none. "
            "Default: 8080, or a free port when 8080 is taken.",
            min=0,
            show_default=False,
        ),
    ] = None,
) -> None:
    """Start NATS, the four services and the console locally; Ctrl-C stops everything."""
    from services.cli._up import DEFAULT_CONSOLE_PORT, LocalStack, port_free
    from services.cli._up_command import run_up
    from services.cli._up_config import run_up_reloading, up_runner_env

    if console_port is None:
        console_port = DEFAULT_CONSOLE_PORT if port_free("127.0.0.1", DEFAULT_CONSOLE_PORT) else -1

    consoles = Consoles.standard()
    with cli_errors(consoles.err):
        runner_env = up_runner_env(config, agents)

    def ready(name: str, address: str) -> None:
        consoles.err.print(Text.assemble(("✓ ", "green"), (f"{name:<8} ", "bold"), address))

    def make_stack(env_overrides: dict[str, dict[str, str]] | None = None) -> LocalStack:
        overrides = {name: dict(env) for name, env in (env_overrides or {}).items()}
        overrides.setdefault("runner", {}).update(runner_env)
        return LocalStack(
            database_url=database_url,
            nats_url=nats_url,
            data_dir=data_dir,
            base_port=base_port,
            runners=runners,
            ready_timeout_s=ready_timeout,
            on_ready=ready,
            metrics_base_port=metrics_port,
            console_port=None if console_port == 0 else max(console_port, 0),  # -1: free
            env_overrides=overrides,
        )

    async def main() -> ExitCode:
        if not demo:
            stack = make_stack()
            if reload:
                return await run_up_reloading(
                    stack, consoles, own_nats=nats_url is None, config=config
                )
            return await run_up(stack, consoles, own_nats=nats_url is None)
        from services.cli._demo import Demo, demo_try_lines

        async with Demo(data_dir / "demo" if data_dir else None) as scripted:
            ready("model", scripted.url)
            stack = make_stack(scripted.env_overrides())
            return await run_up(
                stack, consoles, own_nats=nats_url is None, try_lines=demo_try_lines(scripted)
            )

    finish(consoles, main)


@app.command("schema")
def schema_cmd(
    type_name: Annotated[
        str | None,
        typer.Argument(
            help="A wire type, e.g. InvokeRequest; none lists them.", show_default=False
        ),
    ] = None,
) -> None:
    """Print the JSON Schema of a wire type, or list the wire types."""
    from riverbeam.types import WIRE_TYPES, json_schema

    consoles = Consoles.standard()
    if type_name is None:
        for name in sorted(WIRE_TYPES):
            sys.stdout.write(name + "\n")
        return
    with cli_errors(consoles.err):
        try:
            schema = json_schema(type_name)
        except KeyError as exc:
            message = str(exc.args[0]) if exc.args else f"unknown wire type {type_name!r}"
            raise RiverbeamError(ErrorCode.INVALID_ARGUMENT, message, type=type_name) from None
        print_json(schema)


# ---- running agents -----------------------------------------------------------------------------
@app.command("invoke")
def invoke_cmd(
    agent: Annotated[str, typer.Argument(help="The agent to run.")],
    text: Annotated[str, typer.Argument(help='The turn\'s text ("-" reads standard input).')],
    session: Annotated[
        str | None,
        typer.Option("--session", help="Continue this session; a new one when omitted."),
    ] = None,
    json_mode: JsonOpt = False,
    stream: Annotated[
        bool, typer.Option("--stream/--no-stream", help="Follow the frames live, or wait.")
    ] = True,
    metadata: Annotated[
        str | None, typer.Option(help="Request metadata as a JSON object.", show_default=False)
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Model override (see `riverbeam models`).")
    ] = None,
    schema: Annotated[
        str | None,
        typer.Option(
            "--schema",
            help="A JSON Schema the answer must match (JSON text, or @file); the parsed "
            "value is the result's `output`.",
            show_default=False,
        ),
    ] = None,
    time_limit: Annotated[
        float | None,
        typer.Option("--time-limit", help="Whole-run time limit in seconds (only shortens)."),
    ] = None,
    token_budget: Annotated[
        int | None,
        typer.Option("--token-budget", help="Tokens the run may use (only lowers)."),
    ] = None,
    include_tool: Annotated[
        list[str] | None,
        typer.Option("--tool", help="Only this tool of the agent's (repeat for more)."),
    ] = None,
    exclude_tool: Annotated[
        list[str] | None,
        typer.Option("--no-tool", help="Not this tool (repeat for more)."),
    ] = None,
    prepend: Annotated[
        str | None, typer.Option("--prepend", help="Instructions before the agent's prompt.")
    ] = None,
    append: Annotated[
        str | None, typer.Option("--append", help="Instructions after the agent's prompt.")
    ] = None,
    for_session: Annotated[
        bool,
        typer.Option(
            "--for-session",
            help="Store --tool/--no-tool/--prepend/--append on the session for later turns.",
        ),
    ] = False,
    interaction: Annotated[
        str | None,
        typer.Option(
            "--interaction",
            help="Continue this interaction of the session (after a handoff, its agent answers).",
        ),
    ] = None,
    router: RouterOpt = DEFAULT_TARGET,
    token: TokenOpt = None,
) -> None:
    """Run an agent on one turn and show its frames as they arrive."""
    consoles = Consoles.standard()
    progress = Progress()

    async def main() -> ExitCode:
        turn = sys.stdin.read() if text == "-" else text
        meta = _flows.parse_metadata(metadata)
        layer = _flows.agent_layer_options(
            schema=schema,
            time_limit_s=time_limit,
            token_budget=token_budget,
            include_tools=include_tool or [],
            exclude_tools=exclude_tool or [],
            prepend=prepend,
            append=append,
            for_session=for_session,
        )
        if interaction is not None:
            layer = {**(layer or {}), "interaction_id": interaction}
        async with router_client(router, token) as client:
            return await _flows.invoke(
                client,
                consoles,
                progress,
                agent=agent,
                text=turn,
                session_id=session,
                stream=stream,
                json_mode=json_mode,
                metadata=meta,
                model=model,
                layer=layer,
            )

    finish(consoles, main, progress)


def _respond_cmd(
    approve: bool,
    interaction_id: str,
    session: str,
    action: str | None,
    agent: str | None,
    reason: str | None,
    json_mode: bool,
    router: str,
    token: str | None,
) -> None:
    consoles = Consoles.standard()
    progress = Progress()

    async def main() -> ExitCode:
        async with router_client(router, token) as client:
            return await _flows.respond(
                client,
                consoles,
                progress,
                approve=approve,
                session_id=session,
                interaction_id=interaction_id,
                action_id=action,
                agent=agent,
                reason=reason,
                json_mode=json_mode,
            )

    finish(consoles, main, progress)


InteractionArg = Annotated[str, typer.Argument(help="The interrupted interaction.")]
ActionOpt = Annotated[
    str | None, typer.Option("--action", help="Answer only this action.", show_default=False)
]
AgentOpt = Annotated[
    str | None,
    typer.Option("--agent", help="The agent (default: the interaction's).", show_default=False),
]
ReasonOpt = Annotated[
    str | None, typer.Option("--reason", help="Why, recorded with the answer.", show_default=False)
]


@app.command("approve")
def approve_cmd(
    interaction_id: InteractionArg,
    session: SessionOpt,
    action: ActionOpt = None,
    agent: AgentOpt = None,
    reason: ReasonOpt = None,
    json_mode: JsonOpt = False,
    router: RouterOpt = DEFAULT_TARGET,
    token: TokenOpt = None,
) -> None:
    """Approve pending actions of an interaction, then follow the resumed run."""
    _respond_cmd(True, interaction_id, session, action, agent, reason, json_mode, router, token)


@app.command("decline")
def decline_cmd(
    interaction_id: InteractionArg,
    session: SessionOpt,
    action: ActionOpt = None,
    agent: AgentOpt = None,
    reason: ReasonOpt = None,
    json_mode: JsonOpt = False,
    router: RouterOpt = DEFAULT_TARGET,
    token: TokenOpt = None,
) -> None:
    """Decline pending actions (nothing runs), then follow the resumed run."""
    _respond_cmd(False, interaction_id, session, action, agent, reason, json_mode, router, token)


@app.command("follow")
def follow_cmd(
    request_id: Annotated[str, typer.Argument(help="The request (from the invoke's ack).")],
    after: Annotated[
        int, typer.Option("--after", help="Skip frames up to this sequence number.", min=0)
    ] = 0,
    json_mode: JsonOpt = False,
    nats: Annotated[
        str | None,
        typer.Option("--nats", help="Read from this NATS server instead of the router."),
    ] = None,
    stream_name: Annotated[
        str | None, typer.Option(help="The JetStream stream (with --nats).", show_default=False)
    ] = None,
    router: RouterOpt = DEFAULT_TARGET,
    token: TokenOpt = None,
) -> None:
    """Show a request's frames: replayed from the start (or --after N), then live."""
    consoles = Consoles.standard()
    progress = Progress()

    async def main() -> ExitCode:
        async with router_client(router, token) as client:
            return await _flows.follow_request(
                client,
                consoles,
                progress,
                request_id=request_id,
                after_seq=after,
                json_mode=json_mode,
                nats_url=nats,
                stream_name=stream_name,
            )

    finish(consoles, main, progress)


@app.command("cancel")
def cancel_cmd(
    request_id: Annotated[str, typer.Argument(help="The running request.")],
    reason: ReasonOpt = None,
    json_mode: JsonOpt = False,
    router: RouterOpt = DEFAULT_TARGET,
    token: TokenOpt = None,
) -> None:
    """Stop a running request."""
    consoles = Consoles.standard()

    async def main() -> ExitCode:
        async with router_client(router, token) as client:
            cancelled = await client.cancel(request_id, reason=reason)
        if json_mode:
            print_json({"request_id": request_id, "cancelled": cancelled})
            return ExitCode.OK
        message = "cancelled" if cancelled else "no live run for this request (already finished?)"
        consoles.out.print(message)
        return ExitCode.OK

    finish(consoles, main)


# ---- reading (services/cli/_reads.py), in the order --help lists them ------------------------------
app.command("pending")(pending_cmd)
app.command("agents")(agents_cmd)
app.command("models")(models_cmd)
app.command("session")(session_cmd)
app.command("eval")(eval_cmd)
app.command("usage")(usage_cmd)


def main() -> None:
    app(prog_name="riverbeam")
