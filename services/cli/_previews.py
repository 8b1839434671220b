"""How the CLI shows an action's preview: its summary, the commits a push would send, the diff.

The summary and the commits are always shown; the diff only when asked (`--diff`), since it
may run to the sandbox's preview limit (64 KiB by default).
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from riverbeam.types import ActionPreview

__all__ = ["diff_text", "preview_block", "preview_summary"]

_SHOWN_COMMITS = 10


def preview_summary(preview: ActionPreview) -> Text:
    """One line: what approving would do, and the state approval is bound to."""
    line = Text("preview ", style="bold magenta")
    line.append(preview.summary or preview.tool)
    state = preview.state
    if state.head:
        line.append(f" · head {state.head[:12]}", style="dim")
    if state.blob:
        line.append(f" · file {state.blob[:12]}", style="dim")
    return line


def diff_text(diff: str) -> Text:
    """A unified diff, additions green and removals red."""
    out = Text()
    for line in diff.splitlines(keepends=True):
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("[... preview truncated"):
            style = "yellow"
        else:
            style = ""
        out.append(line, style=style)
    return out


def preview_block(preview: ActionPreview, *, diff: bool, indent: str = "  ") -> RenderableType:
    """The summary and commits of a preview, and its diff when `diff` (else a hint)."""
    parts: list[RenderableType] = [Text(indent).append_text(preview_summary(preview))]
    for commit in preview.commits[:_SHOWN_COMMITS]:
        line = Text(f"{indent}  {commit.id[:12]} ", style="yellow")
        line.append(commit.summary, style="")
        line.append(f"  {commit.author}", style="dim")
        parts.append(line)
    hidden = len(preview.commits) - _SHOWN_COMMITS
    if hidden > 0 or preview.commits_truncated:
        parts.append(Text(f"{indent}  … more commits", style="dim"))
    if diff and preview.diff:
        parts.append(diff_text(preview.diff))
    elif preview.diff:
        hint = f"{indent}  diff: {preview.diff_bytes} bytes (riverbeam pending --diff shows it)"
        parts.append(Text(hint, style="dim"))
    return Group(*parts)
