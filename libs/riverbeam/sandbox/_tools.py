"""The nine sandbox tools, bound to a working tree (local or remote, they cannot tell).

Arguments come from a model that may have been manipulated by what it read: they are
checked against the schema here (BEM-090), and then again, as paths and refs, by the tree.

Where a call's tree comes from (its source) is one small function per call: a bound tree, the
workspace a request's metadata names (when the deployment allows it), or the run's own
workspace under the workspace policy (`RunWorkspaces`).

A held git_push states what its approval covers: `approval_args` turns the model's arguments
into the stored ones, `{"ref": <branch>, "workspace": <name>}`, and the approved call refuses
(BEM-315) to run in any other workspace than the one it names. A held git_push or write_file
also shows what it would do: `approval_preview` asks the tree for a preview (the commits and
diff of the push, the diff of the file) and adds the state it saw to the stored arguments as
`expect`, which the approved call passes on, so the tree refuses it (BEM-275) if that moved.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from riverbeam.agents._io import AgentInput
from riverbeam.agents._tool import Tool, ToolSpec, json_params
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._results import WorkingTreeOps
from riverbeam.sandbox._runspaces import RunWorkspaces

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
_PREVIEWED = frozenset({"git_push", "write_file"})
_EXPECT_KEYS = {"git_push": ("head", "origin"), "write_file": ("blob",)}


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


@dataclass(frozen=True, slots=True)
class _Located:
    """A call's tree, and its workspace's name when the source knows it."""

    tree: WorkingTreeOps
    workspace: str | None = None


_Handler = Callable[[WorkingTreeOps, dict[str, Any]], Awaitable[Any]]
_TreeSource = Callable[[AgentInput], Awaitable[_Located]]


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
        if wanted == "object" and not _string_map(value):
            raise _bad_args(spec.name, f"{key} must be an object of strings")
        checked[key] = value
    return checked


def _string_map(value: object) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def _expected(tool: str, args: dict[str, Any]) -> dict[str, str]:
    """The previewed state an approved call must still find (none for an ordinary call)."""
    expect = args.get("expect") or {}
    return {key: expect[key] for key in _EXPECT_KEYS.get(tool, ()) if key in expect}


@dataclass(frozen=True, slots=True)
class _SandboxTool:
    """One sandbox tool: its spec, what it does, and where its tree comes from."""

    tool_spec: ToolSpec
    handler: _Handler
    source: _TreeSource
    # Each sandbox tool's schema is a valid JSON Schema (tested): BoundTool compiles it at the
    # tool's first call, not when an agent is built.
    schema_checked: ClassVar[bool] = True

    def spec(self) -> ToolSpec:
        return self.tool_spec

    async def _locate(self, checked: dict[str, Any], input: AgentInput) -> _Located:
        located = await self.source(input)
        named = checked.pop("workspace", None)
        if named is not None and named != located.workspace:
            raise RiverbeamError(
                ErrorCode.WORKSPACE_MISMATCH,
                "the call names another workspace than this run's",
                tool=self.tool_spec.name,
                workspace=str(named)[:64],
                run_workspace=located.workspace,
            )
        return located

    async def invoke(self, args: dict[str, Any], input: AgentInput) -> Any:
        checked = _check_args(self.tool_spec, args)
        located = await self._locate(checked, input)
        return await self.handler(located.tree, checked)

    async def approval_args(self, args: dict[str, Any], input: AgentInput) -> dict[str, Any]:
        """The arguments to store with a held call: the branch made explicit, the workspace named.

        Raises:
            RiverbeamError: BEM-090 bad arguments, BEM-315 another workspace, BEM-326 when the
                current branch is needed and HEAD is not on one.
        """
        checked = _check_args(self.tool_spec, args)
        located = await self._locate(checked, input)
        if "ref" not in self.tool_spec.parameters["properties"]:
            return {**checked, **({"workspace": located.workspace} if located.workspace else {})}
        ref = checked.get("ref") or (await located.tree.git_status()).branch
        if not ref:
            raise RiverbeamError(ErrorCode.NO_BRANCH, "HEAD is not on a branch")
        stored: dict[str, Any] = {**checked, "ref": ref}
        if located.workspace is not None:
            stored["workspace"] = located.workspace
        return stored

    async def approval_preview(
        self, args: dict[str, Any], input: AgentInput
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The stored arguments with `expect` (the previewed state), and the preview.

        Only git_push and write_file have previews, and only on a tree that computes them.

        Raises:
            RiverbeamError: BEM-090 bad arguments, BEM-315 another workspace, the tree's
                refusals (a protected branch, a path outside the workspace, ...).
        """
        name = self.tool_spec.name
        if name not in _PREVIEWED:
            return args, None
        checked = _check_args(self.tool_spec, args)
        located = await self._locate(checked, input)
        previewer = getattr(located.tree, "preview_action", None)
        if previewer is None:
            return args, None
        if name == "git_push":
            preview = await previewer(name, ref=checked.get("ref") or None)
        else:
            preview = await previewer(name, path=checked["path"], body=checked["body"])
        return {**args, "expect": preview.state.expect()}, preview.to_json()


def _bound(tree: WorkingTreeOps) -> _TreeSource:
    located = _Located(tree)

    async def source(_input: AgentInput) -> _Located:
        return located

    return source


def _per_run(runs: RunWorkspaces) -> _TreeSource:
    async def source(input: AgentInput) -> _Located:
        if "sandbox_root" in (input.metadata or {}):
            raise RiverbeamError(
                ErrorCode.WORKSPACE_NOT_ALLOWED, "requests cannot choose a directory (sandbox_root)"
            )
        placement, tree = await runs.tree_for_run(input)
        return _Located(tree, placement.workspace)

    return source


def _from_request(workspaces: WorkspaceResolver | None) -> _TreeSource:
    async def source(input: AgentInput) -> _Located:
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
        return _Located(await workspaces.tree_for_request(name), name)

    return source


async def _list_tree(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    return (await tree.list_tree(args.get("path", ""))).to_json()


async def _read_file(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    return (await tree.read_file(args["path"])).to_json()


async def _write_file(tree: WorkingTreeOps, args: dict[str, Any]) -> Any:
    expect = _expected("write_file", args)
    if not expect:
        return (await tree.write_file(args["path"], args["body"])).to_json()
    return (await tree.write_file(args["path"], args["body"], expect.get("blob"))).to_json()


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
    expect = _expected("git_push", args)
    if not expect:
        return (await tree.git_push(args.get("ref") or None)).to_json()
    pushed = await tree.git_push(args.get("ref") or None, expect.get("head"), expect.get("origin"))
    return pushed.to_json()


_PATH = {"type": "string", "description": "Path relative to the workspace root, e.g. docs/intro.md"}
_SET_ON_HOLD = {
    "workspace": {
        "type": "string",
        "description": "Set by Riverbeam when the call waits for approval; leave it out",
    },
    "expect": {
        "type": "object",
        "description": "Set by Riverbeam when the call waits for approval (the previewed "
        "state); leave it out",
    },
}

_SPECS: tuple[tuple[ToolSpec, _Handler], ...] = (
    (
        ToolSpec(
            "list_tree",
            "List the files in the workspace (or under one directory), sorted. Skips .git.",
            json_params(
                {"path": {**_PATH, "description": "Directory to list; omit for everything"}}
            ),
            read_only=True,
        ),
        _list_tree,
    ),
    (
        ToolSpec(
            "read_file",
            "Read a text file from the workspace. Long files are truncated with a marker.",
            json_params({"path": _PATH}, ["path"]),
            read_only=True,
        ),
        _read_file,
    ),
    (
        ToolSpec(
            "write_file",
            "Create or replace a file in the workspace with the given body; creates parent directories.",
            json_params(
                {
                    "path": _PATH,
                    "body": {"type": "string", "description": "The whole new content"},
                    **_SET_ON_HOLD,
                },
                ["path", "body"],
            ),
            idempotent=True,
        ),
        _write_file,
    ),
    (
        ToolSpec(
            "git_status",
            "Show the current branch and changed, staged and untracked files.",
            json_params({}),
            read_only=True,
        ),
        _git_status,
    ),
    (
        ToolSpec(
            "git_diff",
            "Show staged and unstaged changes as unified diffs (long diffs are truncated with a marker).",
            json_params({}),
            read_only=True,
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
            read_only=True,
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
            idempotent=True,
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
                    },
                    "workspace": {
                        "type": "string",
                        "description": "Set by Riverbeam when the push waits for approval; "
                        "leave it out",
                    },
                    "expect": _SET_ON_HOLD["expect"],
                }
            ),
            confirm_required=True,
        ),
        _git_push,
    ),
)


def sandbox_tools(
    tree: WorkingTreeOps | None,
    *,
    workspaces: WorkspaceResolver | None = None,
    runs: RunWorkspaces | None = None,
) -> list[Tool]:
    """The nine sandbox tools.

    Args:
        tree: the working tree every call works in (a `WorkingTree` or a `SandboxClient`).
        workspaces: only used when `tree` and `runs` are None: resolves a request's
            metadata.workspace, and refuses (BEM-313) unless the deployment allows requests
            to choose. A request can never name a host directory: metadata.sandbox_root is
            refused.
        runs: only used when `tree` is None: each call works in its run's workspace under
            the workspace policy (one per session by default), created on first use. This is
            what a service passes.

    Returns:
        list_tree, read_file, write_file, git_status, git_diff, git_log, git_add, git_commit
        and git_push (which has confirm_required).
    """
    if tree is not None:
        source = _bound(tree)
    elif runs is not None:
        source = _per_run(runs)
    else:
        source = _from_request(workspaces)
    return [_SandboxTool(spec, handler, source) for spec, handler in _SPECS]
