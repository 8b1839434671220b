"""Which origin URLs a workspace may push to.

An origin comes from server configuration: the configured default, or a URL a create request
names that matches the allowlist. Never from the repository's own config.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.sandbox._paths import display_path

__all__ = ["OriginPolicy", "check_origin_form"]

MAX_URL_CHARS = 2048
_SCHEMES = frozenset({"https", "http", "file", "git", "ssh"})
_SAFE = re.compile(r"[A-Za-z0-9._~:/+-]+")


def _refuse(url: object, why: str) -> RiverbeamError:
    return RiverbeamError(ErrorCode.INVALID_ORIGIN, why, url=display_path(url))


def check_origin_form(url: object) -> str:
    """Check that a URL is a plain, credential-free remote location.

    Accepted: `https://`, `http://`, `git://`, `ssh://`, `file://` URLs and absolute local
    paths, made of ASCII letters, digits and `. _ ~ : / + -` only: no user info (`@`), no
    percent escapes, no whitespace, no `.` or `..` segments, no query or fragment.

    Raises:
        RiverbeamError: BEM-329.
    """
    if not isinstance(url, str) or not url:
        raise _refuse(url, "origin must be a non-empty string")
    if len(url) > MAX_URL_CHARS:
        raise _refuse(url, "origin URL too long")
    if not _SAFE.fullmatch(url):
        raise _refuse(
            url, "origin URL has characters that are not allowed (credentials, escapes, spaces)"
        )
    if url.startswith("/"):
        rest = url
    else:
        parts = urlsplit(url)
        if parts.scheme not in _SCHEMES or "://" not in url:
            raise _refuse(url, "origin must be an absolute path or a URL with a known scheme")
        if parts.scheme != "file" and not parts.hostname:
            raise _refuse(url, "origin URL has no host")
        rest = parts.path
    if any(seg in (".", "..") for seg in rest.split("/")):
        raise _refuse(url, "origin URL has `.` or `..` segments")
    return url


class OriginPolicy:
    """An allowlist of origin URLs.

    Args:
        allowed: entries ending in "/" allow every URL under them; other entries allow that
            exact URL (and URLs under it followed by "/").
    """

    def __init__(self, allowed: Iterable[str]) -> None:
        self._entries = tuple(check_origin_form(entry) for entry in allowed)

    @property
    def entries(self) -> tuple[str, ...]:
        return self._entries

    def allows(self, url: str) -> bool:
        for entry in self._entries:
            if not entry.endswith("/") and url == entry:
                return True
            prefix = entry if entry.endswith("/") else entry + "/"
            if url.startswith(prefix) and len(url) > len(prefix):
                return True
        return False

    def check(self, url: object) -> str:
        """The URL, if well-formed and allowed.

        Raises:
            RiverbeamError: BEM-329.
        """
        checked = check_origin_form(url)
        if not self.allows(checked):
            raise _refuse(url, "origin URL is not in the sandbox's allowlist")
        return checked
