"""A tiny MCP server (stdio) for examples/riverbeam.yaml: notes kept in memory."""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP

server = FastMCP("notes", log_level="WARNING")
_notes: list[str] = []


@server.tool()
def add_note(text: str) -> str:
    """Keep a note."""
    _notes.append(text)
    return f"note {len(_notes)} kept"


@server.tool()
def list_notes() -> list[str]:
    """Every note kept so far."""
    return list(_notes)


if __name__ == "__main__":
    server.run("stdio")
