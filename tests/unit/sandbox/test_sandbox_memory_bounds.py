"""What the sandbox keeps in memory stays bounded however many calls and workspaces it serves.

The soak of issue 11 saw the sandbox's RSS grow steadily: libgit2's object cache (256 MiB by
default, process-wide) kept every commit and tree read, and every workspace ever used kept an
open repository. No memory thresholds here: the tests assert the bounds themselves.
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from riverbeam.sandbox import WorkspaceConfig, WorkspaceManager


async def test_the_git_object_cache_is_bounded(tmp_path: Path) -> None:
    manager = WorkspaceManager(
        WorkspaceConfig(base_dir=tmp_path, git_object_cache_bytes=1024 * 1024)
    )
    try:
        await manager.create("one")
        tree = await manager.get("one")
        for i in range(50):
            await tree.write_file("notes/a.md", f"line {i}\n")
            await tree.git_add("notes/a.md")
            await tree.git_commit(f"commit {i}")
        used, limit = pygit2.settings.cached_memory
        assert limit == 1024 * 1024
        assert used <= limit
    finally:
        await manager.aclose()
        WorkspaceManager(WorkspaceConfig(base_dir=tmp_path))  # back to the default bound


async def test_only_the_most_recent_workspaces_keep_a_repository_open(tmp_path: Path) -> None:
    manager = WorkspaceManager(WorkspaceConfig(base_dir=tmp_path, max_open_repositories=2))
    try:
        names = [f"ws{i}" for i in range(6)]
        for name in names:
            await manager.create(name)
            tree = await manager.get(name)
            await tree.write_file("a.md", name)
            await tree.git_add("a.md")
            await tree.git_commit(f"on {name}")
            assert manager.open_repositories <= 2
        # A released workspace reopens its repository on next use, with nothing lost.
        first = await manager.get(names[0])
        (entry,) = await first.git_log(1)
        assert entry.summary == "on ws0"
        assert manager.open_repositories <= 2
        assert (await first.read_file("a.md")).text == "ws0"
    finally:
        await manager.aclose()


def test_the_cache_bound_waits_for_pygit2_and_holds_from_the_first_git_call(
    tmp_path: Path,
) -> None:
    # A sandbox that has served no workspace call has not loaded pygit2 (issue 16); the bound
    # it was configured with is in force before its first git call reads an object.
    import os
    import subprocess
    import sys
    import textwrap

    probe = textwrap.dedent(
        """
        import asyncio, sys
        from pathlib import Path
        from riverbeam.sandbox import WorkspaceConfig, WorkspaceManager

        base = Path(sys.argv[1])
        manager = WorkspaceManager(WorkspaceConfig(base_dir=base, git_object_cache_bytes=3 << 20))
        print("pygit2" in sys.modules)

        async def main() -> None:
            await manager.create("one")
            import pygit2
            print(pygit2.settings.cached_memory[1])
            await manager.aclose()

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", str(3 << 20)]
