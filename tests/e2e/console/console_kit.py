"""What the console tests share: the tokens, the stack handle, SSE parsing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import httpx
from e2e_kit import GUARD_S, ChatProcess

from services.cli._up import LocalStack

ALICE_TOKEN = "alice-console-token-0123456789"
"""A user's plaintext token (the tokens file holds it; tests send it as a bearer token)."""
WRONG_TOKEN = "not-a-token-anyone-has-0000"


@dataclass(frozen=True, slots=True)
class ConsoleEnv:
    stack: LocalStack
    chat: ChatProcess
    origin: Path

    @property
    def url(self) -> str:
        url = self.stack.console_url
        assert url is not None
        return url

    def http(self, token: str | None = ALICE_TOKEN) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=GUARD_S, trust_env=False
        )


def sse_events(body: str) -> list[dict[str, str]]:
    """The events of a text/event-stream body (comments skipped)."""
    events = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        event: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            event[field] = f"{event[field]}\n{value}" if field in event else value
        if "data" in event:
            events.append(event)
    return events


def write_tokens(path: Path) -> Path:
    path.write_text(
        json.dumps({"tokens": [{"token": ALICE_TOKEN, "subject": "alice", "roles": ["user"]}]})
    )
    return path
