"""How the CLI's help reads: flags without a `<bool>` type, usage lines as `AGENT TEXT`.

Typer (0.29, with its vendored click) prints a bool option's type (`--json <bool>`), which reads
as if it took a value, and writes required arguments in braces (`{agent} {text}`). Commands and
the group made through `RiverbeamTyper` print flags bare and arguments the usual way: `AGENT`
when required, `[AGENT]` when optional.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

__all__ = ["RiverbeamCommand", "RiverbeamGroup", "RiverbeamTyper"]


def _bare_flags(params: list[Any]) -> list[Any]:
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""  # no `<bool>`: a flag takes no value
    return params


def _usage_pieces(command: Any, ctx: Any) -> list[str]:
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if isinstance(param, TyperArgument):
            name = (param.metavar or param.name or "").upper()
            piece = name if param.required else f"[{name}]"
            pieces.append(piece + ("..." if param.nargs != 1 else ""))
        else:
            pieces.extend(param.get_usage_pieces(ctx))
    return pieces


class RiverbeamCommand(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _bare_flags(super().get_params(ctx))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return _usage_pieces(self, ctx)


class RiverbeamGroup(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _bare_flags(super().get_params(ctx))


class RiverbeamTyper(typer.Typer):
    """A Typer whose commands are RiverbeamCommands unless told otherwise."""

    def command(
        self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Callable[[Any], Any]:
        return super().command(name, cls=cls or RiverbeamCommand, **kwargs)
