"""The typer application: one command per verb."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from services.cli._serve import ServiceName, serve

app = typer.Typer(
    name="riverbeam",
    help="Riverbeam: LLM agents served as gRPC microservices.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.command("serve")
def serve_cmd(
    service: Annotated[ServiceName, typer.Argument(help="Which service to run.")],
    listen: Annotated[str | None, typer.Option(help="HOST:PORT to listen on (RIVERBEAM_LISTEN).")] = None,
    ready_file: Annotated[
        str | None, typer.Option(help="Write the bound address to this file once serving.")
    ] = None,
) -> None:
    """Run one service (router, runner, sandbox or store) until SIGTERM."""
    serve(service, listen, ready_file)


@app.command("schema")
def schema_cmd(type_name: Annotated[str, typer.Argument(help="A wire type, e.g. InvokeRequest.")]) -> None:
    """Print the JSON Schema of a wire type."""
    from riverbeam.core.errors import RiverbeamError
    from riverbeam.types import json_schema

    try:
        typer.echo(json.dumps(json_schema(type_name), indent=2))
    except RiverbeamError as err:
        typer.echo(f"{err.bem}: {err.message}", err=True)
        raise typer.Exit(2) from None


def main() -> None:
    app()
