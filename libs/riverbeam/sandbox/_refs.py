"""Branch names: what is valid, and what counts as a protected ref in any spelling.

Protection is decided on a "skeleton" of the name: ref prefixes and refspec syntax removed,
NFKC-normalised, case-folded, invisible characters and diacritics dropped, and common
homoglyphs (Cyrillic a, Greek omicron, digit 1, `rn` for `m`) mapped to one letter. A name
whose skeleton equals a protected name's skeleton is protected, so `refs/heads//MAIN`,
`+HEAD:main`, `:main`, a fullwidth "main" and "main" spelt with a Cyrillic a are all refused.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._paths import display_path, has_bad_character

__all__ = [
    "DEFAULT_PROTECTED_REFS",
    "ProtectedRefs",
    "check_branch_form",
    "ref_skeleton",
    "validate_branch_name",
]

DEFAULT_PROTECTED_REFS = ("main", "master")

MAX_BRANCH_CHARS = 200
_BRANCH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
_RESERVED_PREFIXES = ("refs/", "heads/", "remotes/", "tags/")

# Letters that render like a Latin letter, folded to it. Not exhaustive: non-ASCII branch
# names are invalid anyway; this only decides whether the refusal says "protected".
_HOMOGLYPHS = str.maketrans(
    {
        "\u0430": "a",
        "\u0432": "b",
        "\u0435": "e",
        "\u0451": "e",
        "\u0450": "e",
        "\u043a": "k",
        "\u043c": "m",
        "\u043d": "h",
        "\u043e": "o",
        "\u0440": "p",
        "\u0441": "c",
        "\u0442": "t",
        "\u0443": "y",
        "\u0445": "x",
        "\u0455": "s",
        "\u0456": "i",
        "\u0457": "i",
        "\u0458": "j",
        "\u04bb": "h",
        "\u0501": "d",
        "\u051b": "q",
        "\u051d": "w",
        "\u04cf": "l",
        "\u0261": "g",
        "\u0578": "n",
        "\u057c": "n",
        "\u03b1": "a",
        "\u03b5": "e",
        "\u03b9": "i",
        "\u03ba": "k",
        "\u03bd": "v",
        "\u03bf": "o",
        "\u03c1": "p",
        "\u03c4": "t",
        "\u03c5": "u",
        "\u03c7": "x",
        "\u03f2": "c",
        "\u0475": "v",
        "\u0251": "a",
        "\u0131": "i",
        "\u01c0": "l",
        "\u2170": "i",
        "\u217c": "l",
        "\u217f": "m",
        "0": "o",
        "1": "l",
        "|": "l",
        "!": "l",
        "i": "l",
        "$": "s",
        "@": "a",
        "3": "e",
        "5": "s",
        "7": "t",
    }
)
_DIGRAPHS = (("rn", "m"), ("vv", "w"), ("cl", "d"))
_STRIPPED_PREFIXES = (
    "refs/heads/",
    "refs/remotes/",
    "refs/tags/",
    "refs/",
    "heads/",
    "remotes/",
    "tags/",
    "origin/",
)
_REF_SUFFIX = re.compile(r"(\^\{[^}]*\}|\^[0-9]*|~[0-9]*|@\{[^}]*\})+$")


def _strip_ref_syntax(piece: str) -> str:
    text = piece.strip().lstrip("+")
    text = re.sub(r"/+", "/", text).strip("/")
    text = _REF_SUFFIX.sub("", text)
    changed = True
    while changed:
        changed = False
        lowered = text.casefold()
        for prefix in _STRIPPED_PREFIXES:
            if lowered.startswith(prefix):
                text = text[len(prefix) :].lstrip("/")
                changed = True
                break
    while text.casefold().endswith(".lock"):
        text = text[: -len(".lock")]
    return text.rstrip("/. ")


def ref_skeleton(name: str) -> str:
    """The comparison form of a ref name (see the module docstring)."""
    text = unicodedata.normalize("NFKC", _strip_ref_syntax(name))
    text = "".join(ch for ch in text if not has_bad_character(ch))
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    # Twice: a homoglyph maps to a letter, which may itself fold (Cyrillic i -> i -> l).
    text = text.translate(_HOMOGLYPHS).translate(_HOMOGLYPHS)
    for pair, letter in _DIGRAPHS:
        text = text.replace(pair, letter)
    return text


def _pieces(candidate: str) -> list[str]:
    """Every name a refspec-like string could refer to: both sides of each `:`."""
    return [part for part in re.split(r"[:\s]+", candidate) if part]


def check_branch_form(name: object) -> str:
    """Check a branch name (without `refs/heads/`) against the rules below, without libgit2.

    Allowed: ASCII letters, digits, `.`, `_`, `-` and `/`, starting with a letter or digit,
    following git's ref rules (no `..`, `//`, `@{`, no component starting with `.`, no
    trailing `/`, `.` or `.lock`), at most 200 characters, not `HEAD`, not `refs/...`.
    These rules imply libgit2's (a unit test checks), so a process can check a configured
    name at start-up without loading pygit2; `validate_branch_name` also asks libgit2.

    Raises:
        RiverbeamError: BEM-325.
    """
    if not isinstance(name, str):
        raise RiverbeamError(ErrorCode.INVALID_REF, "branch name must be a string")
    problem: str | None = None
    if not name:
        problem = "branch name is empty"
    elif len(name) > MAX_BRANCH_CHARS:
        problem = f"branch name longer than {MAX_BRANCH_CHARS} characters"
    elif not _BRANCH.fullmatch(name):
        problem = "branch names use ASCII letters, digits and . _ - / only"
    elif name.casefold() == "head" or name.casefold().startswith(_RESERVED_PREFIXES):
        problem = "name a branch, not a ref"
    elif any(bad in name for bad in ("..", "//", "/.", "@{")) or name.endswith(("/", ".", ".lock")):
        problem = "branch name breaks git's ref rules"
    elif any(part.endswith(".lock") for part in name.split("/")):
        problem = "branch name breaks git's ref rules"
    if problem:
        raise RiverbeamError(ErrorCode.INVALID_REF, problem, ref=display_path(name))
    return name


def validate_branch_name(name: object) -> str:
    """Check a branch name (without `refs/heads/`): `check_branch_form`, then libgit2's rules.

    Raises:
        RiverbeamError: BEM-325.
    """
    import pygit2  # here: the sandbox loads pygit2 on its first git call, not at start-up

    checked = check_branch_form(name)
    if not pygit2.reference_is_valid_name(f"refs/heads/{checked}"):
        raise RiverbeamError(
            ErrorCode.INVALID_REF, "branch name breaks git's ref rules", ref=display_path(checked)
        )
    return checked


class ProtectedRefs:
    """The set of branches nothing may commit to, check out or push.

    Args:
        names: protected branch names, e.g. ("main", "master").
    """

    def __init__(self, names: Iterable[str]) -> None:
        self._names = tuple(dict.fromkeys(names))
        self._skeletons = frozenset(ref_skeleton(n) for n in self._names)
        if "" in self._skeletons:
            raise ValueError("a protected ref name is empty")

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    def matches(self, candidate: str) -> bool:
        """Whether any name a (possibly refspec-like) string refers to is protected."""
        return any(ref_skeleton(piece) in self._skeletons for piece in _pieces(candidate))

    def check(self, candidate: str, code: ErrorCode) -> None:
        """Raise `code` if `candidate` refers to a protected ref."""
        if self.matches(candidate):
            raise RiverbeamError(code, ref=display_path(candidate))
