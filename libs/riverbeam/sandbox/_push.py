"""git push, reduced to the one thing an agent may do: fast-forward its own branch on origin.

The caller names at most a branch. The refspec is built here (`refs/heads/<b>:refs/heads/<b>`,
never `+`), the URL is the workspace's configured origin (never the repository config, whose
`insteadOf` rewrites are detected and refused), no credentials are ever offered, and the
protected-ref check runs twice: on the request, and again on libgit2's negotiated updates.
"""

from __future__ import annotations

from typing import Any

import pygit2
from pygit2.enums import CredentialType, ReferenceType

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._gitdir import head_state, symref_chain
from riverbeam.sandbox._origin import OriginPolicy, check_origin_form
from riverbeam.sandbox._paths import display_path
from riverbeam.sandbox._preview import ABSENT, state_moved, tracking_ref
from riverbeam.sandbox._refs import ProtectedRefs, validate_branch_name
from riverbeam.sandbox._results import PushResult

__all__ = ["push_branch", "resolve_push_branch"]

_ZERO = "0" * 40
_HEAD_ALIASES = frozenset({"head", "@"})


class _PushGuard(pygit2.RemoteCallbacks):
    """Callbacks that offer no credentials and re-check what libgit2 is about to update."""

    def __init__(
        self,
        refname: str,
        protected: ProtectedRefs,
        repo: pygit2.Repository,
        expect_origin: str | None = None,
    ) -> None:
        super().__init__()
        self._refname = refname
        self._protected = protected
        self._repo = repo
        self._expect_origin = expect_origin
        self.rejected: list[tuple[str, str]] = []
        self.accepted: list[str] = []
        self.negotiated = False
        # The origin's tip of the branch as the remote reported it (None: not heard).
        self.remote_tip: str | None = None

    def credentials(
        self, url: str, username_from_url: str | None, allowed_types: CredentialType
    ) -> Any:
        raise RiverbeamError(
            ErrorCode.PUSH_REJECTED, "the remote asked for credentials; the sandbox sends none"
        )

    def push_negotiation(self, updates: list[pygit2.remotes.PushUpdate]) -> None:
        self.negotiated = True
        for update in updates:
            for name in (update.src_refname, update.dst_refname):
                if self._protected.matches(name):
                    raise RiverbeamError(ErrorCode.PUSH_PROTECTED, ref=display_path(name))
            if update.dst_refname != self._refname or update.src_refname != self._refname:
                raise RiverbeamError(
                    ErrorCode.PUSH_PROTECTED,
                    "push would update a ref it was not asked to",
                    ref=display_path(update.dst_refname),
                )
            old, new = str(update.src), str(update.dst)
            self.remote_tip = old
            if new == _ZERO:
                raise RiverbeamError(ErrorCode.PUSH_PROTECTED, "push would delete a remote ref")
            # Never a forced update: the remote's tip must be an ancestor of ours. (libgit2
            # refuses too when it knows the tip; this also covers tips it had to look up.)
            if old != _ZERO and old != new:
                if old not in self._repo or not self._repo.descendant_of(new, old):
                    raise RiverbeamError(
                        ErrorCode.PUSH_REJECTED, "the remote branch has commits this one does not"
                    )
            # An approved push: the origin's tip must still be the one the preview showed.
            if self._expect_origin is not None:
                expected = _ZERO if self._expect_origin == ABSENT else self._expect_origin
                if old != expected:
                    raise state_moved(
                        "the origin's branch",
                        expected=self._expect_origin,
                        actual=ABSENT if old == _ZERO else old,
                        ref=display_path(self._refname),
                    )

    def push_update_reference(self, refname: str, message: str | None) -> None:
        if message:
            self.rejected.append((refname, message))
        else:
            self.accepted.append(refname)


def resolve_push_branch(repo: pygit2.Repository, ref: object, protected: ProtectedRefs) -> str:
    """The branch a push request means, after every protected-ref check.

    Args:
        ref: the caller's `ref` (a branch name), or None/"" for the current branch.

    Raises:
        RiverbeamError: BEM-328 for a protected ref in any spelling (including HEAD or a
            symbolic ref pointing at one), BEM-325 for anything that is not a plain branch,
            BEM-326 when the current branch is needed and HEAD is detached or unborn.
    """
    if ref is not None and not isinstance(ref, str):
        raise RiverbeamError(ErrorCode.INVALID_REF, "ref must be a string")
    if ref:
        protected.check(ref, ErrorCode.PUSH_PROTECTED)
    if not ref or ref.strip().casefold() in _HEAD_ALIASES:
        state = head_state(repo)
        for name in state.chain:
            protected.check(name, ErrorCode.PUSH_PROTECTED)
        if state.branch is None:
            raise RiverbeamError(ErrorCode.NO_BRANCH, "HEAD is not on a branch")
        if state.commit is None:
            raise RiverbeamError(ErrorCode.NO_BRANCH, "the branch has no commits yet")
        if ref:
            raise RiverbeamError(ErrorCode.INVALID_REF, "name the branch to push, or omit ref")
        branch = state.branch
    else:
        branch = validate_branch_name(ref)
    chain = symref_chain(repo, f"refs/heads/{branch}")
    for name in chain:
        protected.check(name, ErrorCode.PUSH_PROTECTED)
    if len(chain) > 1:
        raise RiverbeamError(
            ErrorCode.INVALID_REF, "symbolic branch refs cannot be pushed", ref=branch
        )
    return branch


def push_branch(
    repo: pygit2.Repository,
    *,
    ref: object,
    origin: str | None,
    protected: ProtectedRefs,
    policy: OriginPolicy | None,
    expect_head: str | None = None,
    expect_origin: str | None = None,
) -> PushResult:
    """Fast-forward `refs/heads/<branch>` on origin to the local branch.

    An approved push names the state its preview was computed from: `expect_head` (the local
    branch's commit) and `expect_origin` (the origin's tip, or `absent`). Either one moved:
    BEM-275, and nothing is pushed. After a push (or an origin seen to have moved) the branch's
    remote-tracking ref records the origin's tip, for the next preview.

    Raises:
        RiverbeamError: 325/326/328 (see resolve_push_branch), 324 no origin, 329 origin not
            allowed (or rewritten by git config), 330 refused by the remote, 275 the previewed
            state moved, 320 other failures.
    """
    branch = resolve_push_branch(repo, ref, protected)
    refname = f"refs/heads/{branch}"
    local = repo.references.get(refname)
    if local is None or local.type != ReferenceType.DIRECT:
        raise RiverbeamError(ErrorCode.INVALID_REF, "no such branch", ref=branch)
    commit = str(local.target)
    if expect_head is not None and commit != expect_head:
        raise state_moved("the branch", expected=expect_head, actual=commit, ref=branch)
    if origin is None:
        raise RiverbeamError(ErrorCode.NO_ORIGIN)
    url = policy.check(origin) if policy is not None else check_origin_form(origin)
    try:
        remote = repo.remotes.create_anonymous(url)
    except pygit2.GitError as exc:
        raise RiverbeamError(ErrorCode.GIT_FAILED, f"cannot use origin: {exc}") from None
    if remote.url != url or remote.push_url not in (None, url):
        raise RiverbeamError(ErrorCode.INVALID_ORIGIN, "git configuration rewrites the origin URL")
    guard = _PushGuard(refname, protected, repo, expect_origin)
    try:
        remote.push([f"{refname}:{refname}"], callbacks=guard, proxy=None)
    except RiverbeamError as exc:
        if exc.code is ErrorCode.ACTION_STATE_MOVED:
            _remember_origin(repo, branch, guard.remote_tip)
        raise
    except pygit2.GitError as exc:
        text = str(exc)
        if "fastforward" in text.replace("-", "") or "reject" in text.lower():
            raise RiverbeamError(ErrorCode.PUSH_REJECTED, text, ref=branch) from None
        raise RiverbeamError(ErrorCode.GIT_FAILED, f"push failed: {text}", ref=branch) from None
    if guard.rejected:
        name, message = guard.rejected[0]
        raise RiverbeamError(ErrorCode.PUSH_REJECTED, message, ref=display_path(name))
    if not guard.negotiated:
        raise RiverbeamError(ErrorCode.GIT_FAILED, "push finished without negotiating", ref=branch)
    _remember_origin(repo, branch, commit)
    return PushResult(branch=branch, remote_ref=refname, commit=commit)


def _remember_origin(repo: pygit2.Repository, branch: str, tip: str | None) -> None:
    """Record the origin's tip of `branch` (when it is a commit this repository has)."""
    if tip is None or tip == _ZERO or tip not in repo:
        return
    try:
        repo.references.create(tracking_ref(branch), pygit2.Oid(hex=tip), force=True)
    except pygit2.GitError:
        pass  # only a preview's base: the next push corrects it
