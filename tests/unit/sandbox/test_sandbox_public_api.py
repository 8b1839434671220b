"""The public surface of riverbeam.sandbox, and the module-size rule."""

from __future__ import annotations

from pathlib import Path

import riverbeam.sandbox as sandbox
from riverbeam.sandbox import SandboxClient, WorkingTree, WorkingTreeOps


def test_all_is_exact_and_sorted() -> None:
    public = {name for name in dir(sandbox) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(sandbox, name)).__name__ == "module"}
    assert set(sandbox.__all__) == public - modules
    assert sandbox.__all__ == sorted(sandbox.__all__, key=lambda n: (not n.isupper(), n))


def test_both_trees_implement_the_protocol() -> None:
    for cls in (WorkingTree, SandboxClient):
        for name in (
            "list_tree",
            "read_file",
            "write_file",
            "git_status",
            "git_diff",
            "git_log",
            "git_add",
            "git_commit",
            "git_push",
            "checkout_branch",
        ):
            assert callable(getattr(cls, name)), (cls, name)
    assert issubclass(WorkingTree, WorkingTreeOps)
    assert issubclass(SandboxClient, WorkingTreeOps)


def test_modules_stay_small() -> None:
    package = Path(sandbox.__file__).parent
    for path in package.glob("*.py"):
        assert len(path.read_text().splitlines()) < 600, path.name
    assert not (package / "utils.py").exists() and not (package / "helpers.py").exists()
