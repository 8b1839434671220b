"""Bearer tokens: the tokens file, authentication, and never showing a token."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from pathlib import Path
from typing import Any, ClassVar

import pytest

from riverbeam.auth import Principal, Role, TokenAuthenticator, generate_token, hash_token
from riverbeam.core.errors import ErrorCode, RiverbeamError

ALICE_TOKEN = "alice-token-0123456789abcdef"
WEB_TOKEN = "web-backend-token-fedcba9876543210"
PLAIN_TOKEN = "plain-token-value-000111222333"


def tokens_doc() -> dict[str, Any]:
    return {
        "tokens": [
            {"token_sha256": hash_token(ALICE_TOKEN), "subject": "alice", "org_id": "acme"},
            {
                "token_sha256": hash_token(WEB_TOKEN).upper(),
                "subject": "svc-web",
                "org_id": "acme",
                "roles": ["backend", "approver"],
                "name": "web backend",
                "description": "the public web app",
            },
        ]
    }


@pytest.fixture
def auth() -> TokenAuthenticator:
    return TokenAuthenticator.from_data(tokens_doc())


def secrets_in(text: str) -> list[str]:
    needles = [ALICE_TOKEN, WEB_TOKEN, PLAIN_TOKEN]
    needles += [hash_token(t) for t in needles] + [hash_token(t).upper() for t in needles]
    return [n for n in needles if n in text]


# ---- authenticate ---------------------------------------------------------------------------


def test_known_tokens_authenticate(auth: TokenAuthenticator) -> None:
    alice = auth.authenticate(f"Bearer {ALICE_TOKEN}")
    assert alice == Principal(subject="alice", org_id="acme", roles=frozenset({Role.USER}))
    web = auth.authenticate(f"Bearer {WEB_TOKEN}")
    assert web.subject == "svc-web"
    assert web.roles == frozenset({Role.BACKEND, Role.APPROVER})
    assert web.name == "web backend"
    assert web.description == "the public web app"


@pytest.mark.parametrize(
    "header", [f"bearer {ALICE_TOKEN}", f"BEARER {ALICE_TOKEN}", f"  Bearer   {ALICE_TOKEN}  "]
)
def test_scheme_is_case_insensitive_and_blanks_are_trimmed(
    auth: TokenAuthenticator, header: str
) -> None:
    assert auth.authenticate(header).subject == "alice"


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (None, "missing authorization"),
        ("", "missing authorization"),
        ("   ", "missing authorization"),
        (ALICE_TOKEN, "not a bearer token"),
        (f"Basic {ALICE_TOKEN}", "not a bearer token"),
        ("Bearer", "not a bearer token"),
        ("Bearer    ", "not a bearer token"),
        (f"Bearer {ALICE_TOKEN} extra", "not a bearer token"),
        (f"Token {ALICE_TOKEN}", "not a bearer token"),
        ("Bearer " + "x" * 9000, "too long"),
        ("Bearer not-a-known-token-at-all", "invalid bearer token"),
        (f"Bearer {ALICE_TOKEN[:-1]}", "invalid bearer token"),
        (f"Bearer {ALICE_TOKEN}0", "invalid bearer token"),
        (f"Bearer {ALICE_TOKEN.upper()}", "invalid bearer token"),
        (f"Bearer {hash_token(ALICE_TOKEN)}", "invalid bearer token"),
    ],
)
def test_refusals_are_bem_050_and_never_echo_the_value(
    auth: TokenAuthenticator, header: str | None, message: str
) -> None:
    with pytest.raises(RiverbeamError) as info:
        auth.authenticate(header)
    err = info.value
    assert err.code is ErrorCode.UNAUTHENTICATED
    assert err.bem == "BEM-050"
    assert message in err.message
    shown = " ".join([str(err), repr(err), json.dumps(err.to_dict())])
    assert secrets_in(shown) == []
    if header and header.strip():
        assert header.strip() not in shown


class _CountingAuthenticator(TokenAuthenticator):
    """Observes the comparisons the authenticator makes (no patching of the library)."""

    calls: ClassVar[list[tuple[bytes, bytes]]] = []

    @staticmethod
    def _compare(a: bytes, b: bytes) -> bool:  # type: ignore[override]
        _CountingAuthenticator.calls.append((a, b))
        return hmac.compare_digest(a, b)


def counting(n: int) -> tuple[_CountingAuthenticator, list[str]]:
    tokens = [f"token-number-{i:04d}-abcdefghijkl" for i in range(n)]
    principals = {hash_token(t): Principal(subject=f"u{i}") for i, t in enumerate(tokens)}
    _CountingAuthenticator.calls = []
    return _CountingAuthenticator(principals), tokens


def test_every_entry_is_compared_whichever_matches() -> None:
    auth, tokens = counting(5)
    for i, token in enumerate([*tokens, "unknown-token-zzzzzzzzzzzz"]):
        _CountingAuthenticator.calls.clear()
        try:
            assert auth.authenticate(f"Bearer {token}").subject == f"u{i}"
        except RiverbeamError as err:
            assert err.code is ErrorCode.UNAUTHENTICATED
        # As many comparisons for the first, the last, and no match at all.
        assert len(_CountingAuthenticator.calls) == 5


def test_comparisons_are_of_fixed_size_digests_never_the_token() -> None:
    auth, tokens = counting(3)
    for token in [tokens[1], "short", "x" * 500]:
        _CountingAuthenticator.calls.clear()
        try:
            auth.authenticate(f"Bearer {token}")
        except RiverbeamError:
            pass
        presented = hashlib.sha256(token.encode()).digest()
        for a, b in _CountingAuthenticator.calls:
            assert a == presented
            assert len(a) == len(b) == 32
            assert token.encode() not in (a, b)


def test_the_default_comparison_is_constant_time() -> None:
    assert TokenAuthenticator._compare is hmac.compare_digest


def test_non_ascii_tokens_work() -> None:
    token = "jeton-secret-ünïcödé-€€€"
    auth = TokenAuthenticator({hash_token(token): Principal(subject="u")})
    assert auth.authenticate(f"Bearer {token}").subject == "u"


# ---- reprs never show a token ---------------------------------------------------------------


def test_reprs_show_no_token_or_digest(auth: TokenAuthenticator) -> None:
    principal = auth.authenticate(f"Bearer {WEB_TOKEN}")
    for text in (repr(auth), str(auth), repr(principal), str(principal)):
        assert secrets_in(text) == []
    assert repr(auth) == "TokenAuthenticator(<2 tokens>)"
    assert len(auth) == 2


def test_plaintext_entry_is_hashed_and_not_kept(caplog: pytest.LogCaptureFixture) -> None:
    doc = [{"token": PLAIN_TOKEN, "subject": "bob"}]
    with caplog.at_level(logging.WARNING, logger="riverbeam.auth"):
        auth = TokenAuthenticator.from_data(doc, source="tokens.yaml")
    assert auth.authenticate(f"Bearer {PLAIN_TOKEN}").subject == "bob"
    assert "plaintext token" in caplog.text and "token_sha256" in caplog.text
    assert "bob" in caplog.text
    assert secrets_in(caplog.text) == []
    assert secrets_in(repr(auth)) == []
    assert secrets_in(repr(vars(auth)) if hasattr(auth, "__dict__") else "") == []


def test_hashed_entries_log_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="riverbeam.auth"):
        TokenAuthenticator.from_data(tokens_doc())
    assert caplog.text == ""


# ---- the tokens file ------------------------------------------------------------------------


def test_from_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(
        "tokens:\n"
        f"  - token_sha256: {hash_token(ALICE_TOKEN)}\n"
        "    subject: alice\n"
        "    org_id: acme\n"
        "    roles: [user, approver]\n"
    )
    principal = TokenAuthenticator.from_file(path).authenticate(f"Bearer {ALICE_TOKEN}")
    assert principal.roles == frozenset({Role.USER, Role.APPROVER})


def test_from_json_file_with_a_top_level_list(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(tokens_doc()["tokens"]))
    assert TokenAuthenticator.from_file(str(path)).authenticate(f"Bearer {WEB_TOKEN}").subject == (
        "svc-web"
    )


def test_docs_example_loads(tmp_path: Path) -> None:
    doc = Path(__file__).parents[3] / "docs" / "auth.md"
    text = doc.read_text()
    example = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "tokens.yaml"
    path.write_text(example)
    assert len(TokenAuthenticator.from_file(path)) >= 3


def bad(doc: Any, **kwargs: Any) -> RiverbeamError:
    with pytest.raises(RiverbeamError) as info:
        TokenAuthenticator.from_data(doc, source="t.yaml", **kwargs)
    return info.value


H = hash_token(ALICE_TOKEN)


@pytest.mark.parametrize(
    ("doc", "fragment"),
    [
        (None, "expected a list"),
        ("tokens", "expected a list"),
        ({"tokens": None}, "expected a list"),
        ({"tokens": [], "extra": 1}, "unknown top-level keys ['extra']"),
        ([], "no token entries"),
        ([{"subject": "a"}], "entry 0: give exactly one of token_sha256 and token"),
        (
            [{"subject": "a", "token_sha256": H, "token": PLAIN_TOKEN}],
            "entry 0: give exactly one",
        ),
        ([{"subject": "a", "token_sha256": "abc"}], "entry 0: token_sha256"),
        ([{"subject": "a", "token_sha256": "g" * 64}], "entry 0: token_sha256"),
        (
            [{"subject": "a", "token": "short"}],
            "entry 0: token: a plaintext token needs at least 16 characters",
        ),
        ([{"subject": "", "token_sha256": H}], "entry 0: subject"),
        ([{"token_sha256": H}], "entry 0: subject: Field required"),
        ([{"subject": "a", "token_sha256": H, "roles": []}], "entry 0: roles"),
        ([{"subject": "a", "token_sha256": H, "roles": ["root"]}], "entry 0: roles.0"),
        ([{"subject": "a", "token_sha256": H, "tokn": "x"}], "entry 0: tokn: Extra inputs"),
        (["just-a-string"], "entry 0"),
        (
            [
                {"subject": "a", "token_sha256": H},
                {"subject": "b", "token": ALICE_TOKEN},
            ],
            "entry 1 repeats the token of an earlier entry",
        ),
        (
            [
                {"subject": "a", "token_sha256": H},
                {"subject": "b", "token_sha256": H.upper()},
            ],
            "entry 1 repeats",
        ),
    ],
)
def test_invalid_files_are_refused_without_showing_tokens(doc: Any, fragment: str) -> None:
    err = bad(doc)
    assert fragment in err.message
    assert err.message.startswith("tokens file t.yaml: ")
    assert err.details["source"] == "t.yaml"
    shown = " ".join([str(err), repr(err), json.dumps(err.to_dict())])
    assert secrets_in(shown) == []


def test_a_short_plaintext_token_is_not_echoed() -> None:
    err = bad([{"subject": "a", "token": "tiny-secret"}])
    assert "tiny-secret" not in str(err)


def test_same_subject_with_two_tokens_is_allowed_for_rotation() -> None:
    auth = TokenAuthenticator.from_data(
        [
            {"subject": "alice", "token_sha256": hash_token(ALICE_TOKEN)},
            {"subject": "alice", "token_sha256": hash_token(WEB_TOKEN)},
        ]
    )
    assert auth.authenticate(f"Bearer {WEB_TOKEN}").subject == "alice"
    assert auth.authenticate(f"Bearer {ALICE_TOKEN}").subject == "alice"


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(RiverbeamError, match="cannot read it"):
        TokenAuthenticator.from_file(tmp_path / "missing.yaml")


def test_yaml_parse_error_shows_the_line_not_the_text(tmp_path: Path) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(f"tokens:\n  - token: {PLAIN_TOKEN}\n    subject: [unclosed\n")
    with pytest.raises(RiverbeamError) as info:
        TokenAuthenticator.from_file(path)
    assert "invalid YAML at line" in info.value.message
    assert secrets_in(str(info.value)) == []


def test_json_parse_error_shows_the_line_not_the_text(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(f'[{{"token": "{PLAIN_TOKEN}", "subject": }}]')
    with pytest.raises(RiverbeamError) as info:
        TokenAuthenticator.from_file(path)
    assert "invalid JSON at line 1" in info.value.message
    assert secrets_in(str(info.value)) == []


def test_constructor_refuses_bad_digests() -> None:
    with pytest.raises(ValueError, match="hex SHA-256"):
        TokenAuthenticator({"zz": Principal(subject="a")})
    with pytest.raises(ValueError, match="hex SHA-256"):
        TokenAuthenticator({"ab" * 16: Principal(subject="a")})


def test_hash_and_generate() -> None:
    assert hash_token("abc") == hashlib.sha256(b"abc").hexdigest()
    first, second = generate_token(), generate_token()
    assert first != second
    assert len(first) >= 43
    auth = TokenAuthenticator({hash_token(first): Principal(subject="a")})
    assert auth.authenticate(f"Bearer {first}").subject == "a"


def test_invalid_tokens_file_has_its_own_code(tmp_path: Path) -> None:
    bad = tmp_path / "tokens.yaml"
    bad.write_text("- subject: alice\n  roles: [user]\n")  # no token at all
    with pytest.raises(RiverbeamError) as info:
        TokenAuthenticator.from_file(bad)
    assert info.value.code is ErrorCode.TOKENS_FILE_INVALID
