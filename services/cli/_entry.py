"""Where the riverbeam command starts: `riverbeam ...` and `python -m services.cli ...`.

`serve <service> [--listen A] [--ready-file F]` (and the runner's `--config` and `--agents`),
the form `riverbeam up` gives each service and the container image's entry point (`riverbeam
serve router`), runs the service without loading the command line (typer, rich and every
other command's modules): a service's idle memory is what the service uses. Any other form,
including `serve` with other options, `--help` or a mistake, goes to the full command line,
which treats it exactly as before.
"""

from __future__ import annotations

from pathlib import Path

_SERVICES = frozenset({"router", "runner", "sandbox", "store", "console"})
# The services that import nats-py (the store and the sandbox speak no NATS).
_SPEAK_NATS = frozenset({"router", "runner", "console"})
# The options the plain form takes, and the services that take each.
_PLAIN_OPTIONS = {
    "--listen": _SERVICES,
    "--ready-file": _SERVICES,
    "--config": frozenset({"runner"}),
    "--agents": frozenset({"runner"}),
}


def _plain_serve(argv: list[str]) -> tuple[str, dict[str, str]] | None:
    """(service, {option: value}) when argv is exactly the plain serve form, else None."""
    if len(argv) < 2 or argv[0] != "serve":
        return None
    service, rest = argv[1], argv[2:]
    if service not in _SERVICES:
        return None
    found: dict[str, str] = {}
    while rest:
        option, *tail = rest
        name, eq, value = option.partition("=")
        if service not in _PLAIN_OPTIONS.get(name, ()) or name in found:
            return None
        if not eq:
            if not tail or tail[0].startswith("-"):
                return None
            value, tail = tail[0], tail[1:]
        found[name] = value
        rest = tail
    return service, found


def runner_overrides(*, agents: str | None, config: Path | str | None) -> dict[str, object]:
    """The runner's --agents and --config as settings (also the full command's, through
    `serve_overrides`)."""
    overrides: dict[str, object] = {}
    if agents:
        overrides["agents"] = agents
    if config is not None:
        overrides["config"] = Path(config).resolve()
    return overrides


def run(argv: list[str]) -> None:
    plain = _plain_serve(argv)
    if plain is None:
        from services.cli._app import main

        main()  # reads sys.argv itself
        return
    service, found = plain
    if service in _SPEAK_NATS:
        from riverbeam.server._lean_nats import import_nats_without_aiohttp

        import_nats_without_aiohttp()  # before anything else imports nats
    from services.cli._serve import ServiceName, serve

    overrides = runner_overrides(agents=found.get("--agents"), config=found.get("--config"))
    serve(ServiceName(service), found.get("--listen"), found.get("--ready-file"), overrides)
