"""The nine sandbox tools, bound to a working tree (local or remote, they cannot tell).

Arguments come from a model that may have been manipulated by what it read: they are
checked against the schema here (BEM-090), and then again, as paths and refs, by the tree.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from riverbeam.agents._io import AgentInput
from riverbeam.agents._tool import Tool, ToolSpec, json_params
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._results import WorkingTreeOps

__all__ = ["SANDBOX_TOOL_NAMES", "WorkspaceResolver", "sandbox_tools"]

SANDBOX_TOOL_NAMES = (
    "list_tree",
    "read_file",
    "write_file",
    "git_status",
    "git_diff",
    "git_log",
    "git_add",
    "git_commit",
    "git_push",
)
_MAX_LOG = 200


@runtime_checkable
class WorkspaceResolver(Protocol):
    """Finds the working tree a request names in metadata.workspace, if the deployment allows."""

    async def tree_for_request(self, name: object) -> WorkingTreeOps:
        """The named workspace's tree.

        Raises:
            RiverbeamError: BEM-313 when requests may not choose a workspace; BEM-312 or
                BEM-310 for a bad or unknown name.
        """
        ...


_Handler = Callable[[WorkingTreeOps, dict[str, Any]], Awaitable[Any]]
_TreeSource = Callable[[AgentInput], Awaitable[WorkingTreeOps]]


def _bad_args(tool: str, message: str) -> RiverbeamError:
    return RiverbeamError(ErrorCode.INVALID_TOOL_ARGS, message, tool=tool)


def _check_args(spec: ToolSpec, args: object) -> dict[str, Any]:
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise _bad_args(spec.name, "arguments must be a JSON object")
    properties: dict[str, Any] = spec.parameters["properties"]
    for key in args:
        if key not in properties:
            raise _bad_args(spec.name, f"unexpected argument {str(key)[:64]!r}")
    for key in spec.parameters["required"]:
        if key not in args:
            raise _bad_args(spec.name, f"missing argument {key!r}")
    checked: dict[str, Any] = {}
    for key, value in args.items():
        wanted = properties[key]["type"]
        if wanted == "string" and not isinstance(value, str):
            raise _bad_args(spec.name, f"{key} must be a string")
        if wanted == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
            raise _bad_args(spec.name, f"{key} must be an integer")
        checked[key] = value
    return checked


@dataclass(frozen=True, slots=True)
class _SandboxTool:
    """One sandbox tool: its spec, what it does, and where its tree comes from."""

    tool_spec: ToolSpec
    handler: _Handler
    source: _TreeSource

    def spec(self) -> ToolSpec:
        return self.tool_spec

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        checked = _check_args(self.tool_spec, args)
        tree = await self.source(input)
        return await self.handler(tree, checked)


def _bound(tree: WorkingTreeOps) -> _TreeSource:
    async def source(_input: AgentInput) -> WorkingTreeOps:
        return tree

    return source


def _from_request(workspaces: WorkspaceResolver | None) -> _TreeSource:
    async def source(input: AgentInput) -> WorkingTreeOps:
        metadata = input.metadata or {}
        if "sandbox_root" in metadata:
            raise RiverbeamError(
                ErrorCode.WORKSPACE_NOT_ALLOWED, "requests cannot choose a directory (sandbox_root)"
            )
        name = metadata.get("workspace")
        if workspaces is None or name is None:
            raise RiverbeamError(
                ErrorCode.WORKSPACE_NOT_ALLOWED, "these tools have no working tree bound to them"
            )
        return await workspaces.tree_for_request(name)

    return source


async def _list_tree(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    return (await tree.list_tree(args.get("path", ""))).to_json()


async def _read_file(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    return (await tree.read_file(args["path"])).to_json()


async def _write_file(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    return (await tree.write_file(args["path"], args["body"])).to_json()


async def _git_status(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    return (await tree.git_status()).to_json()


async def _git_diff(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    return (await tree.git_diff()).to_json()


async def _git_log(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    limit = args.get("limit", 20)
    if not 1 <= limit <= _MAX_LOG:
        raise _bad_args("git_log", f"limit must be between 1 and {_MAX_LOG}")
    return {"commits": [entry.to_json() for entry in await tree.git_log(limit)]}


async def _git_add(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    return (await tree.git_add(args.get("path", ""))).to_json()


async def _git_commit(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    return (await tree.git_commit(args["message"])).to_json()


async def _git_push(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    return (await tree.git_push(args.get("ref") or None)).to_json()


_PATH = {"type": "string", "description": "Path relative to the workspace root, e.g. docs/intro.md"}

_SPECS: tuple[tuple[ToolSpec, _Handler], ...] = (
    (
        ToolSpec(
            "list_tree",
            "List the files in the workspace (or under one directory), sorted. Skips .git.",
            json_params(
                {"path": {**_PATH, "description": "Directory to list; omit for everything"}}
            ),
        ),
        _list_tree,
    ),
    (
        ToolSpec(
            "read_file",
            "Read a text file from the workspace. Long files are truncated with a marker.",
            json_params({"path": _PATH}, ["path"]),
        ),
        _read_file,
    ),
    (
        ToolSpec(
            "write_file",
            "Create or replace a file in the workspace with the given body; creates parent directories.",
            json_params(
                {"path": _PATH, "body": {"type": "string", "description": "The whole new content"}},
                ["path", "body"],
            ),
        ),
        _write_file,
    ),
    (
        ToolSpec(
            "git_status",
            "Show the current branch and changed, staged and untracked files.",
            json_params({}),
        ),
        _git_status,
    ),
    (
        ToolSpec(
            "git_diff",
            "Show staged and unstaged changes as unified diffs (long diffs are truncated with a marker).",
            json_params({}),
        ),
        _git_diff,
    ),
    (
        ToolSpec(
            "git_log",
            "List recent commits on the current branch, newest first.",
            json_params(
                {"limit": {"type": "integer", "minimum": 1, "maximum": _MAX_LOG, "default": 20}}
            ),
        ),
        _git_log,
    ),
    (
        ToolSpec(
            "git_add",
            'Stage a file or directory for commit; "" or "." stages every change.',
            json_params(
                {"path": {**_PATH, "description": 'File or directory to stage; "" or "." for all'}}
            ),
        ),
        _git_add,
    ),
    (
        ToolSpec(
            "git_commit",
            "Commit the staged changes on the current branch and return the commit id.",
            json_params(
                {"message": {"type": "string", "description": "The commit message"}}, ["message"]
            ),
        ),
        _git_commit,
    ),
    (
        ToolSpec(
            "git_push",
            "Push a branch (default: the current one) to origin. Protected branches cannot be pushed.",
            json_params(
                {
                    "ref": {
                        "type": "string",
                        "description": "Branch name; omit for the current branch",
                    }
                }
            ),
            confirm_required=True,
        ),
        _git_push,
    ),
)


def sandbox_tools(
    tree: WorkingTreeOps | None, *, workspaces: WorkspaceResolver | None = None
) -> list[Tool]:
    """The nine sandbox tools.

    Args:
        tree: the working tree every call works in (a `WorkingTree` or a `SandboxClient`).
            Always pass one in a service.
        workspaces: only used when `tree` is None: resolves a request's metadata.workspace,
            and refuses (BEM-313) unless the deployment allows requests to choose. A request
            can never name a host directory: metadata.sandbox_root is refused.

    Returns:
        list_tree, read_file, write_file, git_status, git_diff, git_log, git_add, git_commit
        and git_push (which has confirm_required).
    """
    source = _bound(tree) if tree is not None else _from_request(workspaces)
    return [_SandboxTool(spec, handler, source) for spec, handler in _SPECS]
