"""The remember tool: the model writes a memory entry to a scope its request may use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from riverbeam.agents._io import AgentInput, MemoryWriter
from riverbeam.agents._tool import ToolCallContext, ToolSpec, json_params
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["REMEMBER_TOOL_NAME", "RememberTool"]

REMEMBER_TOOL_NAME = "remember"
_MAX_CONTENT = 8000

_SPEC = ToolSpec(
    name=REMEMBER_TOOL_NAME,
    description=(
        "Save a fact worth keeping for later conversations, such as a preference the person stated. "
        "By default it is saved for this conversation (scope 'session'); name another scope only if "
        "you were told which scopes exist."
    ),
    parameters=json_params(
        {
            "content": {
                "type": "string",
                "minLength": 1,
                "maxLength": _MAX_CONTENT,
                "description": "The fact, in one or two sentences.",
            },
            "scope_name": {
                "type": "string",
                "minLength": 1,
                "maxLength": 128,
                "description": "Scope kind, such as 'session' or 'user'.",
            },
            "scope_id": {
                "type": "string",
                "minLength": 1,
                "maxLength": 256,
                "description": "Scope id; may be left out when the scope kind is unambiguous.",
            },
            "metadata": {"type": "object", "description": "Optional labels for the entry."},
        },
        ["content"],
    ),
)


class RememberTool:
    """Writes memory entries through a MemoryWriter.

    Run by RigAgentRunner, it receives the run's ToolCallContext (it is a ContextualTool): it
    writes through context.memory_writer (or the writer given here when the context has none)
    to one of the scopes the request may use: context.memory_scopes, plus the request's own
    session ("session", session_id), the default. Any other scope fails with BEM-100; with no
    writer at all it fails with BEM-109.

    Called as a plain Tool (invoke(args, input), no context), only the session scope is allowed
    and only the writer given here is used.

    Args:
        writer: A writer to use when the run's context has none.
    """

    def __init__(self, writer: MemoryWriter | None = None) -> None:
        self._writer = writer

    def spec(self) -> ToolSpec:
        """The remember spec: content (required), scope_name, scope_id, metadata."""
        return _SPEC

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        """Remember in the request's session scope, through the writer given at construction."""
        return await self._remember(args, input, writer=self._writer, scopes=())

    async def invoke_in_context(self, args: dict[str, Any], call: ToolCallContext) -> Any:
        """Remember in a scope of the request, through the context's writer."""
        writer = call.context.memory_writer or self._writer
        return await self._remember(
            args, call.input, writer=writer, scopes=call.context.memory_scopes
        )

    async def _remember(
        self,
        args: dict[str, Any],
        input: AgentInput,
        *,
        writer: MemoryWriter | None,
        scopes: Sequence[tuple[str, str]],
    ) -> dict[str, Any]:
        if writer is None:
            raise RiverbeamError(ErrorCode.MEMORY_NOT_CONFIGURED, tool=REMEMBER_TOOL_NAME)
        content = args.get("content")
        if not isinstance(content, str) or not content.strip():
            raise RiverbeamError(ErrorCode.INVALID_TOOL_ARGS, "remember needs non-empty content")
        scope_name, scope_id = _choose_scope(args, input, scopes)
        metadata = args.get("metadata")
        # Written for the request's organisation: memory is keyed by org as well as scope.
        entry = await writer.remember(
            scope_name=scope_name,
            scope_id=scope_id,
            content=content,
            metadata=dict(metadata) if isinstance(metadata, dict) else None,
            org_id=input.auth_context.org_id if input.auth_context else None,
        )
        return {
            "remembered": True,
            "entry_id": entry.entry_id,
            "scope": {"name": entry.scope_name, "id": entry.scope_id},
        }


def _choose_scope(
    args: dict[str, Any], input: AgentInput, scopes: Sequence[tuple[str, str]]
) -> tuple[str, str]:
    """The (name, id) to write to; BEM-100 unless the request may use it."""
    allowed: list[tuple[str, str]] = list(dict.fromkeys([*scopes, ("session", input.session_id)]))
    name = args.get("scope_name")
    scope_id = args.get("scope_id")
    if name is None and scope_id is None:
        return ("session", input.session_id)
    if name is None:
        raise RiverbeamError(
            ErrorCode.INVALID_MEMORY_SCOPE, "scope_id needs a scope_name", scope_id=scope_id
        )
    if scope_id is None:
        matches = [scope for scope in allowed if scope[0] == name]
        if len(matches) == 1:
            return matches[0]
        reason = (
            "is not one of this request's scopes" if not matches else "is ambiguous; give scope_id"
        )
        raise RiverbeamError(
            ErrorCode.INVALID_MEMORY_SCOPE, f"memory scope {name!r} {reason}", scope_name=name
        )
    if (name, scope_id) not in allowed:
        raise RiverbeamError(
            ErrorCode.INVALID_MEMORY_SCOPE,
            f"memory scope {name}/{scope_id} is not one of this request's scopes",
            scope_name=name,
            scope_id=scope_id,
        )
    return (str(name), str(scope_id))
