"""Reading riverbeam.yaml: YAML with line numbers, validated into RiverbeamConfig.

Every error is BEM-230 naming the file, the line and the field (`agents[0].tools[2].server`),
so a bad file fails the runner at start with something a person can fix.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from riverbeam.agents._config import RiverbeamConfig
from riverbeam.core.errors import ErrorCode, RiverbeamError

if TYPE_CHECKING:  # yaml is imported by the first file read: a runner without one skips it
    import yaml

__all__ = [
    "LoadedConfig",
    "config_error",
    "expand_env",
    "load_config",
    "parse_config",
    "parse_yaml_model",
]

Loc = Sequence[str | int]
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """A validated config and where it came from.

    Attributes:
        config: The validated document.
        path: The file (resolved), or None for a document given as text.
        root: The YAML node tree, for the line of a field found wrong after validation.
    """

    config: RiverbeamConfig
    path: Path | None
    root: yaml.Node | None

    @property
    def source(self) -> str:
        return str(self.path) if self.path is not None else "<config>"

    @property
    def base_dir(self) -> Path:
        """Where relative paths in the file (cwd, entry point modules) are resolved."""
        return self.path.parent if self.path is not None else Path.cwd()

    def line_of(self, loc: Loc) -> int | None:
        """The line of a field path, or of its nearest present ancestor."""
        return _line_of(self.root, loc)

    def error(self, code: ErrorCode, loc: Loc, message: str) -> RiverbeamError:
        """An error about one field, naming the file, line and field."""
        return config_error(code, self.source, self.line_of(loc), loc, message)


def format_loc(loc: Loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def config_error(
    code: ErrorCode, source: str, line: int | None, loc: Loc, message: str
) -> RiverbeamError:
    field = format_loc(loc)
    where = f"{source}:{line}" if line is not None else source
    text = f"{where}: {field}: {message}" if field else f"{where}: {message}"
    return RiverbeamError(code, text, file=source, line=line, field=field or None)


def load_config(path: str | os.PathLike[str]) -> LoadedConfig:
    """Read and validate a riverbeam.yaml file.

    Raises:
        RiverbeamError: BEM-230 when the file cannot be read, is not YAML, has a key twice,
            or does not match the schema; the message names file, line and field.
    """
    file = Path(path).resolve()
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise config_error(
            ErrorCode.CONFIG_INVALID, str(file), None, (), f"cannot read it ({exc})"
        ) from None
    return parse_config(text, path=file)


def parse_config(text: str, *, path: Path | None = None) -> LoadedConfig:
    """Validate a riverbeam.yaml document given as text; see load_config."""
    config, root = parse_yaml_model(text, RiverbeamConfig, path=path, code=ErrorCode.CONFIG_INVALID)
    return LoadedConfig(config, path, root)


def parse_yaml_model(
    text: str, model: type[M], *, path: Path | None, code: ErrorCode
) -> tuple[M, yaml.Node | None]:
    """Parse YAML text into a pydantic model; errors carry `code`, file, line and field.

    Returns:
        The validated model and the YAML node tree (for the lines of later errors).
    """
    import yaml

    source = str(path) if path is not None else "<config>"
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text) if root is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise config_error(code, source, line, (), f"invalid YAML: {problem}") from None
    if data is None:
        data = {}
    if root is not None:
        _check_duplicate_keys(root, source, code)
    if not isinstance(data, Mapping):
        raise config_error(code, source, 1, (), "the document must be a mapping")
    try:
        value = model.model_validate(data)
    except ValidationError as exc:
        # The deepest error is the most precise one (a union reports one per member).
        first = max(exc.errors(include_url=False), key=lambda e: len(e.get("loc", ())))
        loc = _data_loc(first.get("loc", ()), data)
        raise config_error(code, source, _line_of(root, loc), loc, _message(first)) from None
    return value, root


_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env(value: str, env: Mapping[str, str], *, where: str) -> str:
    """`${VAR}` replaced from `env`; an unset variable is BEM-230 naming `where`."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise RiverbeamError(
                ErrorCode.CONFIG_INVALID,
                f"{where}: the environment variable {name} is not set",
                field=where,
                variable=name,
            )
        return env[name]

    return _ENV.sub(sub, value)


# ---- line numbers ---------------------------------------------------------------------------------
def _line_of(root: yaml.Node | None, loc: Loc) -> int | None:
    """Walk the node tree along `loc`; components that are not keys (union tags) are skipped."""
    if root is None:
        return None
    node = root
    for part in loc:
        child = _child(node, part)
        if child is not None:
            node = child
    return node.start_mark.line + 1


def _child(node: yaml.Node, part: str | int) -> yaml.Node | None:
    import yaml

    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                # A key that is not allowed points at the key itself.
                return value if not isinstance(value, yaml.ScalarNode) or value.value else key
        return None
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int):
        return node.value[part] if 0 <= part < len(node.value) else None
    return None


def _data_loc(loc: Loc, data: Any) -> list[str | int]:
    """The pydantic loc without union tags (`tagged-union[...]`, `mcp`, `str`), as data keys."""
    out: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, Mapping) and isinstance(part, str) and part in node:
            out.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            out.append(part)
            node = node[part]
        elif isinstance(node, Mapping) and part == node.get("kind"):
            continue  # the discriminator's tag, not a key
        elif isinstance(node, Mapping) and isinstance(part, str) and not _is_tag(part):
            out.append(part)  # a missing or unknown key: name it
            node = None
    return out


def _is_tag(part: str) -> bool:
    return part.startswith(("tagged-union[", "literal[", "function-")) or part in {
        "str",
        "bool",
        "list[str]",
        "stdio",
        "http",
        "sandbox",
        "mcp",
        "python",
        "remember",
        "text",
        "json_schema",
        "max_input_chars",
        "regex",
        "confirm",
        "deny",
        "agent",
        # the agent layer's guardrails and tool policies
        "max_length",
        "deny_patterns",
        "pii",
        "model_judge",
        "confirm_required",
        "approve_tools",
        "approve_path_outside",
        "max_tool_calls",
        "deny_tools",
        "redact_result",
    }


def _message(error: Mapping[str, Any]) -> str:
    kind = error.get("type")
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required field missing"
    if kind == "union_tag_invalid":
        ctx = error.get("ctx") or {}
        return f"kind {ctx.get('tag')!r} is not one of {ctx.get('expected_tags')}"
    if kind == "union_tag_not_found":
        return "needs a `kind`"
    return str(error.get("msg", "invalid"))


def _check_duplicate_keys(
    node: yaml.Node, source: str, code: ErrorCode, loc: tuple[str | int, ...] = ()
) -> None:
    import yaml

    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key)
            if name in seen:
                raise config_error(
                    code,
                    source,
                    key.start_mark.line + 1,
                    (*loc, name),
                    "key given twice",
                )
            seen.add(name)
            _check_duplicate_keys(value, source, code, (*loc, name))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _check_duplicate_keys(item, source, code, (*loc, index))
