"""Bearer-token authentication against a tokens file.

Tokens are kept only as SHA-256 digests. A presented token is hashed and compared with every
entry using ``hmac.compare_digest``, so neither the comparison nor the number of comparisons
depends on which entry (if any) matches. No token, digest or authorization header value is ever
logged, put in an error message, or shown by a repr.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from riverbeam.auth._principal import Principal, Role
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["TokenAuthenticator", "generate_token", "hash_token"]

_log = logging.getLogger("riverbeam.auth")

_MAX_AUTHORIZATION_CHARS = 8192
MIN_PLAINTEXT_TOKEN_CHARS = 16


def hash_token(token: str) -> str:
    """The hex SHA-256 of a token: the value to put in a tokens file's ``token_sha256``."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def generate_token() -> str:
    """A new random bearer token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


class _Entry(BaseModel):
    """One tokens-file entry, as written."""

    # Built by the first tokens file read: a router in dev mode never reads one.
    model_config = ConfigDict(
        extra="forbid", frozen=True, hide_input_in_errors=True, defer_build=True
    )

    token_sha256: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{64}$")
    token: SecretStr | None = None
    subject: str = Field(min_length=1)
    org_id: str | None = None
    roles: list[Role] = Field(default_factory=lambda: [Role.USER], min_length=1)
    name: str | None = None
    description: str | None = None

    @field_validator("token")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_PLAINTEXT_TOKEN_CHARS:
            raise ValueError(
                f"a plaintext token needs at least {MIN_PLAINTEXT_TOKEN_CHARS} characters"
            )
        return value

    @model_validator(mode="after")
    def _one_secret(self) -> Self:
        if (self.token_sha256 is None) == (self.token is None):
            raise ValueError("give exactly one of token_sha256 and token")
        return self

    def digest_hex(self) -> str:
        if self.token is not None:
            return hash_token(self.token.get_secret_value())
        assert self.token_sha256 is not None
        return self.token_sha256.lower()

    def principal(self) -> Principal:
        return Principal(
            subject=self.subject,
            org_id=self.org_id,
            roles=frozenset(self.roles),
            name=self.name,
            description=self.description,
        )


def _file_error(source: str, message: str, **details: object) -> RiverbeamError:
    # Start-up configuration error; the catalog has no dedicated code for the tokens file yet.
    return RiverbeamError(
        ErrorCode.TOKENS_FILE_INVALID, f"tokens file {source}: {message}", source=source, **details
    )


def _entry_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first.get("loc", ()))
    # Only the location and the message: never the input, which may be a token.
    msg = str(first["msg"]).removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg


class TokenAuthenticator:
    """Authenticates ``authorization: Bearer <token>`` against known token digests.

    Args:
        credentials: Hex SHA-256 digest of each token (see `hash_token`) -> its principal.

    Raises:
        ValueError: A key is not a 64-character hex digest.
    """

    # Overridable only so a test can observe the comparisons; never replace it in production.
    _compare = staticmethod(hmac.compare_digest)

    def __init__(self, credentials: Mapping[str, Principal]) -> None:
        entries: list[tuple[bytes, Principal]] = []
        for digest_hex, principal in credentials.items():
            try:
                digest = bytes.fromhex(digest_hex)
            except ValueError:
                raise ValueError("token digests must be hex SHA-256") from None
            if len(digest) != hashlib.sha256().digest_size:
                raise ValueError("token digests must be hex SHA-256")
            entries.append((digest, principal))
        self._entries: tuple[tuple[bytes, Principal], ...] = tuple(entries)

    def __repr__(self) -> str:
        return f"TokenAuthenticator(<{len(self._entries)} tokens>)"

    def __len__(self) -> int:
        return len(self._entries)

    @classmethod
    def from_data(cls, data: Any, *, source: str = "<data>") -> TokenAuthenticator:
        """Build from a parsed tokens document: a list of entries or ``{"tokens": [...]}``.

        Args:
            data: The parsed JSON/YAML document.
            source: Where it came from, for error messages.

        Raises:
            RiverbeamError: The document is malformed, an entry is invalid, two entries hold
                the same token, or there are no entries.
        """
        if isinstance(data, Mapping):
            unknown = sorted(str(k) for k in data if k != "tokens")
            if unknown:
                raise _file_error(source, f"unknown top-level keys {unknown}")
            data = data.get("tokens")
        if not isinstance(data, list):
            raise _file_error(source, 'expected a list of entries or {"tokens": [...]}')
        if not data:
            raise _file_error(source, "no token entries; every call would be refused")
        credentials: dict[str, Principal] = {}
        for index, raw in enumerate(data):
            try:
                entry = _Entry.model_validate(raw)
            except ValidationError as exc:
                raise _file_error(
                    source, f"entry {index}: {_entry_problem(exc)}", entry=index
                ) from None
            digest = entry.digest_hex()
            if digest in credentials:
                raise _file_error(
                    source, f"entry {index} repeats the token of an earlier entry", entry=index
                )
            if entry.token is not None:
                _log.warning(
                    "tokens file %s: entry %d (subject %s) stores a plaintext token; "
                    "store token_sha256 instead",
                    source,
                    index,
                    entry.subject,
                )
            credentials[digest] = entry.principal()
        return cls(credentials)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> TokenAuthenticator:
        """Load a tokens file: JSON when it ends in ``.json``, YAML otherwise.

        Raises:
            RiverbeamError: The file cannot be read or parsed, or `from_data` refuses it.
        """
        import yaml  # here: a router in dev mode reads no tokens file

        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise _file_error(source, f"cannot read it ({type(exc).__name__})") from None
        try:
            if source.lower().endswith(".json"):
                data = json.loads(text)
            else:
                data = yaml.safe_load(text)
        except json.JSONDecodeError as exc:
            # The position only: the parser's excerpt could show a token.
            raise _file_error(source, f"invalid JSON at line {exc.lineno}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise _file_error(source, f"invalid YAML{where}") from None
        return cls.from_data(data, source=source)

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal of an ``authorization`` header value.

        Args:
            authorization: The header (gRPC metadata) value, ``Bearer <token>``, or None.

        Returns:
            The principal whose token was presented.

        Raises:
            RiverbeamError: BEM-050 when the header is missing, malformed or names no token.
        """
        digest = hashlib.sha256(_bearer_token(authorization).encode("utf-8")).digest()
        found: Principal | None = None
        for known, principal in self._entries:
            # Every entry is compared, match or not; digests are unique, so at most one hits.
            if self._compare(digest, known):
                found = principal
        if found is None:
            raise RiverbeamError(ErrorCode.UNAUTHENTICATED, "invalid bearer token")
        return found


def _bearer_token(authorization: str | None) -> str:
    if authorization is None or not authorization.strip():
        raise RiverbeamError(ErrorCode.UNAUTHENTICATED, "missing authorization")
    if len(authorization) > _MAX_AUTHORIZATION_CHARS:
        raise RiverbeamError(ErrorCode.UNAUTHENTICATED, "authorization value too long")
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.casefold() != "bearer" or not token or any(c.isspace() for c in token):
        raise RiverbeamError(ErrorCode.UNAUTHENTICATED, "authorization is not a bearer token")
    return token
