"""Validation of caller-supplied relative paths, before any filesystem access.

A path that passes `parse_path` is a tuple of plain components: no absolute prefix, no `..`,
no control or invisible characters, no backslash, nothing that names the `.git` directory in
any spelling. Whether it stays inside the root once symlinks are considered is decided later,
component by component, by `SandboxRoot`.
"""

from __future__ import annotations

import re
import unicodedata

from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = [
    "MAX_COMPONENT_BYTES",
    "MAX_PATH_BYTES",
    "display_path",
    "has_bad_character",
    "is_git_alias",
    "parse_path",
]

MAX_PATH_BYTES = 4096
MAX_COMPONENT_BYTES = 255

# Characters that render as nothing (or as blank) but are not in a Cc/Cf/Z* category.
_INVISIBLE_EXTRA = frozenset(
    {
        0x034F,  # combining grapheme joiner
        0x115F,  # hangul choseong filler
        0x1160,  # hangul jungseong filler
        0x17B4,  # khmer vowel inherent aq
        0x17B5,  # khmer vowel inherent aa
        0x180B,  # mongolian free variation selectors and vowel separator
        0x180C,
        0x180D,
        0x180E,
        0x180F,
        0x2800,  # braille pattern blank
        0x3164,  # hangul filler
        0xFFA0,  # halfwidth hangul filler
        0xFFFC,  # object replacement character
        0xFFFD,  # replacement character: a decoding accident, never a real name
    }
)
_REJECTED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
_DRIVE = re.compile(r"[A-Za-z]:")
_SHORT_NAME = re.compile(r"git~[0-9]+")


def _is_variation_selector(point: int) -> bool:
    return 0xFE00 <= point <= 0xFE0F or 0xE0100 <= point <= 0xE01EF


def has_bad_character(ch: str) -> bool:
    """Whether one character may not appear in a path.

    Rejected: backslash, NUL and every control character, format characters (zero-width
    space and joiners, bidi overrides, BOM, tags), surrogates, private-use and unassigned
    code points, line and paragraph separators, every space except U+0020, variation
    selectors and the fillers that render blank.
    """
    point = ord(ch)
    if point < 0x80:
        return point < 0x20 or point == 0x7F or ch == "\\"
    if point in _INVISIBLE_EXTRA or _is_variation_selector(point):
        return True
    return unicodedata.category(ch) in _REJECTED_CATEGORIES


def _fold(component: str) -> str:
    """NFKC, case-folded, with invisible characters dropped: how lenient systems compare names."""
    folded = unicodedata.normalize("NFKC", component).casefold()
    return "".join(ch for ch in folded if not has_bad_character(ch))


def is_git_alias(component: str) -> bool:
    """Whether a single component names (or could be taken for) the `.git` directory.

    Catches `.git` in any case, with trailing spaces or dots, with an NTFS stream suffix
    (`.git::$INDEX_ALLOCATION`), the 8.3 short name `git~1`, and NFKC variants such as a
    fullwidth `.git` (U+FF0E U+FF47 U+FF49 U+FF54), after dropping zero-width characters.
    """
    name = _fold(component)
    name = name.split(":", 1)[0].rstrip(" .")
    return name == ".git" or _SHORT_NAME.fullmatch(name) is not None


def display_path(path: object, limit: int = 120) -> str:
    """A short, printable rendering of a hostile path for error details."""
    text = repr(path)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fail(code: ErrorCode, message: str, path: object) -> RiverbeamError:
    return RiverbeamError(code, message, path=display_path(path))


def parse_path(path: object, *, allow_root: bool = False) -> tuple[str, ...]:
    """Validate a relative path and split it into components.

    Args:
        path: what the caller sent; anything that is not a str is rejected.
        allow_root: accept "" and "." as the root itself (an empty tuple).

    Returns:
        The components, with "." components dropped.

    Raises:
        RiverbeamError: BEM-002 (not a string), BEM-300 absolute, BEM-301 `..`, BEM-302 bad
            character, BEM-303 empty path or component, BEM-304 too long, BEM-306 `.git`.
    """
    if not isinstance(path, str):
        raise _fail(ErrorCode.INVALID_ARGUMENT, "path must be a string", path)
    if path in ("", "."):
        if allow_root:
            return ()
        raise _fail(ErrorCode.PATH_EMPTY, "path is empty", path)
    if len(path) > MAX_PATH_BYTES:
        raise _fail(ErrorCode.PATH_TOO_LONG, f"path longer than {MAX_PATH_BYTES} bytes", path)
    try:
        encoded = path.encode("utf-8")
    except UnicodeEncodeError:
        raise _fail(ErrorCode.PATH_BAD_CHARACTER, "path is not valid Unicode", path) from None
    if len(encoded) > MAX_PATH_BYTES:
        raise _fail(ErrorCode.PATH_TOO_LONG, f"path longer than {MAX_PATH_BYTES} bytes", path)
    for ch in path:
        if has_bad_character(ch):
            raise _fail(
                ErrorCode.PATH_BAD_CHARACTER,
                f"path contains forbidden character U+{ord(ch):04X}",
                path,
            )
    if path.startswith("/") or _DRIVE.match(path):
        raise _fail(ErrorCode.PATH_ABSOLUTE, "path must be relative to the workspace", path)
    components: list[str] = []
    for part in path.split("/"):
        if part == ".":
            continue
        if part == "" or part.strip() == "":
            raise _fail(ErrorCode.PATH_EMPTY, "path has an empty component", path)
        # "..", and anything a lenient system reads as "..": "...", ".. ", fullwidth dots.
        dots = unicodedata.normalize("NFKC", part).strip(" .")
        if dots == "" and ".." in unicodedata.normalize("NFKC", part):
            raise _fail(ErrorCode.PATH_PARENT, "`..` is not allowed in paths", path)
        if dots == "":
            raise _fail(ErrorCode.PATH_EMPTY, "path component is only dots and spaces", path)
        if len(part.encode("utf-8")) > MAX_COMPONENT_BYTES:
            raise _fail(
                ErrorCode.PATH_TOO_LONG,
                f"path component longer than {MAX_COMPONENT_BYTES} bytes",
                path,
            )
        if is_git_alias(part):
            raise _fail(ErrorCode.PATH_GIT_DIR, "the .git directory is off limits", path)
        components.append(part)
    if not components:
        if allow_root:
            return ()
        raise _fail(ErrorCode.PATH_EMPTY, "path names no file", path)
    return tuple(components)
