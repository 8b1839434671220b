"""The stack's child processes: each in a session of its own, logging to a file.

Started with the Linux parent-death signal, checked while they get ready, and stopped as a
group: SIGTERM, a grace period, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "LOG_TAIL_LINES",
    "Child",
    "StackError",
    "check_alive",
    "log_tail",
    "spawn_child",
    "terminate_child",
]

LOG_TAIL_LINES = 25


class StackError(Exception):
    """A process of the stack did not start, or died.

    Attributes:
        service: Which process (`nats`, `router`, ...), when one is to blame.
        log_tail: Its last log lines.
    """

    def __init__(self, message: str, *, service: str | None = None, log_tail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.service = service
        self.log_tail = log_tail


@dataclass(slots=True)
class Child:
    """A started process of the stack and where it logs (its address once ready)."""

    name: str
    proc: asyncio.subprocess.Process
    log_path: Path
    address: str = ""


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last lines of a log file ("" when there is none)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


async def spawn_child(
    name: str,
    args: list[str],
    env: dict[str, str],
    *,
    log_path: Path,
    cwd: Path,
    stop_with_parent: bool,
) -> Child:
    """Start `args` in a new session, stdout and stderr appended to `log_path`.

    With `stop_with_parent` (Linux) the kernel SIGTERMs the child should this process die.
    """
    with log_path.open("ab") as log:
        proc = await asyncio.create_subprocess_exec(
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
            env=env,
            cwd=str(cwd),
            start_new_session=True,  # Ctrl-C reaches us only; we stop children in order
            preexec_fn=death_signal_setter() if stop_with_parent else None,
        )
    return Child(name, proc, log_path)


async def check_alive(child: Child, deadline: float, ready_timeout_s: float) -> None:
    """Between polls: fail when the child died or the deadline passed, else wait a bit."""
    code = child.proc.returncode
    if code is not None:
        raise StackError(
            f"{child.name} exited with status {code} before it was ready (log: {child.log_path})",
            service=child.name,
            log_tail=log_tail(child.log_path),
        )
    if asyncio.get_running_loop().time() > deadline:
        raise StackError(
            f"{child.name} was not ready within {ready_timeout_s:g}s (log: {child.log_path})",
            service=child.name,
            log_tail=log_tail(child.log_path),
        )
    await asyncio.sleep(0.05)


async def terminate_child(child: Child, stop_timeout_s: float) -> None:
    """SIGTERM the child's process group, then SIGKILL it after `stop_timeout_s`."""
    proc = child.proc
    if proc.returncode is None:
        # The group is the child's own session (start_new_session): the child and anything
        # it started, and nothing else. Signalled only while the child is not yet reaped.
        signal_group(proc.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), stop_timeout_s)
        except TimeoutError:
            signal_group(proc.pid, signal.SIGKILL)
            await proc.wait()


def death_signal_setter() -> Callable[[], None] | None:
    """On Linux, a pre-exec hook: the kernel SIGTERMs the child when its parent dies.

    Resolved in the parent, so the child makes one C call (and checks that its parent did not
    die before that call took effect).
    """
    if sys.platform != "linux":
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    parent = os.getpid()

    def set_death_signal() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGTERM))
        if os.getppid() != parent:  # the parent died already: the signal will never come
            os.kill(os.getpid(), signal.SIGTERM)

    return set_death_signal


def signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
