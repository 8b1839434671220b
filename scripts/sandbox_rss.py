"""Measure the sandbox's RSS over many tool calls on one workspace (issue 11, section 9).

    python scripts/sandbox_rss.py 3000                  # the default bound on libgit2's cache
    python scripts/sandbox_rss.py 3000 --git-cache 0    # caching off
    python scripts/sandbox_rss.py 3000 --git-cache 268435456   # libgit2's own default

Each call round writes a file, stages it, commits, and runs status, diff, log, read and list,
as an author agent does. RSS and libgit2's cached bytes are printed every 500 rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

import pygit2

from riverbeam.sandbox import WorkspaceConfig, WorkspaceManager


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def main(rounds: int, cache: int | None) -> None:
    with tempfile.TemporaryDirectory() as base:
        config = WorkspaceConfig(base_dir=Path(base))
        if cache is not None:
            config = config.model_copy(update={"git_object_cache_bytes": cache})
        manager = WorkspaceManager(config)
        await manager.create("soak")
        print(f"start  rss {rss_mib():6.1f} MiB  cached {pygit2.settings.cached_memory}")
        for i in range(rounds):
            tree = await manager.get("soak")
            await tree.write_file(f"notes/f{i % 50}.md", f"line {i}\n" * 20)
            await tree.git_add(".")
            await tree.git_commit(f"round {i}")
            await tree.git_status()
            await tree.git_diff()
            await tree.git_log(20)
            await tree.read_file(f"notes/f{i % 50}.md")
            await tree.list_tree("notes")
            if (i + 1) % 500 == 0:
                used = pygit2.settings.cached_memory
                print(f"{i + 1:5d}  rss {rss_mib():6.1f} MiB  cached {used}", flush=True)
        await manager.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", type=int)
    parser.add_argument("--git-cache", type=int, default=None, help="bytes; 0 turns it off")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.git_cache))
