"""The TypeScript client package (clients/typescript), installed and built for tests.

`prepared_ts_client()` finds node (>= 20) and npm, runs `npm ci` from the committed lockfile
(skipped while a stamp in node_modules matches package.json and package-lock.json), and
compiles the package with tsc. Without node or npm the caller's test skips, except in CI
(tests.conftest.missing_service).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import missing_service

__all__ = ["TS_DIR", "TsClient", "node_env", "prepared_ts_client"]

TS_DIR = Path(__file__).resolve().parents[2] / "clients" / "typescript"
MIN_NODE_MAJOR = 20
NPM_CI_TIMEOUT_S = 240.0
TSC_TIMEOUT_S = 240.0


@dataclass(frozen=True, slots=True)
class TsClient:
    node: str
    npm: str
    tsc: str


def node_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("RIVERBEAM_TOKEN", None)
    env.update(
        {
            "NO_COLOR": "1",
            "npm_config_audit": "false",
            "npm_config_fund": "false",
            "npm_config_update_notifier": "false",
        }
    )
    return env


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _lock_digest() -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update(name.encode())
        digest.update((TS_DIR / name).read_bytes())
    return digest.hexdigest()


def _run(argv: list[str], what: str, timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(
            argv,
            cwd=TS_DIR,
            env=node_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        missing_service(f"{what} in {TS_DIR} took longer than {timeout:g}s")
    return done


def prepared_ts_client(*, build: bool = True) -> TsClient:
    """node, npm and tsc, with the package's locked dependencies installed (and built)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing = " and ".join(n for n, b in (("node", node), ("npm", npm)) if b is None)
        missing_service(f"{missing} not found on PATH: the TypeScript client needs Node >= 20")
    assert node is not None and npm is not None
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout.strip()
    match = re.match(r"v(\d+)\.", version)
    if match is None or int(match.group(1)) < MIN_NODE_MAJOR:
        missing_service(f"node {version or '(unknown)'} is too old: need >= {MIN_NODE_MAJOR}")
    stamp = TS_DIR / "node_modules" / ".riverbeam-lock-stamp"
    digest = _lock_digest()
    if not (stamp.is_file() and stamp.read_text().strip() == digest):
        done = _run(
            [npm, "ci", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"],
            "`npm ci`",
            NPM_CI_TIMEOUT_S,
        )
        if done.returncode != 0:
            missing_service(
                f"`npm ci` in {TS_DIR} failed (exit {done.returncode}; is the npm registry or "
                f"cache reachable?):\n{_tail(done.stdout + done.stderr)}"
            )
        stamp.write_text(digest + "\n")
    tsc = str(TS_DIR / "node_modules" / ".bin" / "tsc")
    if build:
        done = _run([tsc, "-p", "tsconfig.json"], "tsc", TSC_TIMEOUT_S)
        assert done.returncode == 0, f"tsc failed:\n{_tail(done.stdout + done.stderr)}"
    return TsClient(node, npm, tsc)
