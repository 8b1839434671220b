"""The BEM catalog: unique, well-formed codes, and the meanings DESIGN.md fixes."""

from __future__ import annotations

import re

import grpc
import pytest

from riverbeam.core import ErrorCode, ErrorSpec, by_code, catalog

CODE = re.compile(r"^BEM-\d{3}$")

# DESIGN.md "Errors": code -> (catalog member, words its title must contain, HTTP status if fixed).
FIXED_BY_THE_SEEDS: dict[str, tuple[ErrorCode, tuple[str, ...], int | None]] = {
    "BEM-020": (ErrorCode.AGENT_NOT_REGISTERED, ("agent", "not registered"), None),
    "BEM-027": (ErrorCode.ACTION_NOT_FOUND, ("action", "not found"), 404),
    "BEM-040": (ErrorCode.MODALITY_NOT_SUPPORTED, ("modality", "not supported", "agent"), None),
    "BEM-041": (ErrorCode.MODALITY_NOT_ROUTABLE, ("non-text", "text models"), None),
    "BEM-062": (ErrorCode.MISSING_INTERACTION_ID, ("interaction_id", "required"), None),
    "BEM-063": (ErrorCode.ACTION_ID_NOT_UUID, ("action_id", "not a uuid"), 400),
    "BEM-064": (ErrorCode.ACTION_WRONG_INTERACTION, ("action", "not belong", "interaction"), None),
    "BEM-065": (ErrorCode.INTERACTION_NOT_RESUMABLE, ("interaction",), None),
    "BEM-066": (ErrorCode.ACTION_NOT_PENDING, ("action", "not pending"), 400),
    "BEM-081": (ErrorCode.SCRIPT_EXHAUSTED, ("scripted client", "ran out"), None),
    "BEM-086": (ErrorCode.STREAM_WITHOUT_DONE, ("stream ended", "done frame"), None),
    "BEM-087": (ErrorCode.AGENT_ERROR_FRAME, ("error",), None),
    "BEM-088": (ErrorCode.TOO_MANY_TOOL_ROUNDS, ("tool rounds",), None),
    "BEM-089": (ErrorCode.UNKNOWN_TOOL, ("tool",), None),
    "BEM-109": (ErrorCode.MEMORY_NOT_CONFIGURED, ("remember",), None),
    "BEM-300": (ErrorCode.PATH_ABSOLUTE, ("path",), None),
    "BEM-301": (ErrorCode.PATH_PARENT, ("path",), None),
    "BEM-302": (ErrorCode.PATH_BAD_CHARACTER, ("path",), None),
    "BEM-303": (ErrorCode.PATH_EMPTY, ("path",), None),
    "BEM-304": (ErrorCode.PATH_TOO_LONG, ("path",), None),
    "BEM-305": (ErrorCode.PATH_ESCAPES_ROOT, ("path", "outside"), None),
    "BEM-328": (ErrorCode.PUSH_PROTECTED, ("push", "protected ref"), None),
    "BEM-330": (ErrorCode.PUSH_REJECTED, ("push rejected", "remote"), None),
}

# HTTP statuses with exactly one gRPC counterpart, both ways.
ONE_TO_ONE = {
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    404: grpc.StatusCode.NOT_FOUND,
    429: grpc.StatusCode.RESOURCE_EXHAUSTED,
    499: grpc.StatusCode.CANCELLED,
    501: grpc.StatusCode.UNIMPLEMENTED,
    504: grpc.StatusCode.DEADLINE_EXCEEDED,
}


def test_codes_are_unique() -> None:
    codes = [member.code for member in ErrorCode]
    assert len(codes) == len(set(codes))
    # Two members with an identical spec would silently become aliases of one enum member.
    assert len(ErrorCode.__members__) == len(ErrorCode)


def test_titles_are_unique() -> None:
    titles = [member.spec.title for member in ErrorCode]
    assert len(titles) == len(set(titles))


@pytest.mark.parametrize("member", list(ErrorCode), ids=lambda m: m.code)
def test_spec_is_well_formed(member: ErrorCode) -> None:
    spec = member.spec
    assert isinstance(spec, ErrorSpec)
    assert CODE.match(spec.code), spec.code
    # 0xx, 1xx, 3xx, and the durable-runs block 260-289 of 2xx
    number = int(spec.code[4:])
    assert 0 <= number < 200 or 260 <= number < 290 or 300 <= number < 400
    assert spec.title and spec.title == spec.title.strip() and not spec.title.endswith(".")
    assert 400 <= spec.http_status <= 599
    assert isinstance(spec.grpc_status, grpc.StatusCode)
    assert spec.grpc_status not in (grpc.StatusCode.OK, grpc.StatusCode.UNKNOWN)
    assert isinstance(spec.hint, str)
    assert member.code == spec.code


@pytest.mark.parametrize("http", sorted(ONE_TO_ONE))
def test_http_and_grpc_statuses_agree(http: int) -> None:
    status = ONE_TO_ONE[http]
    for spec in catalog():
        if spec.http_status == http:
            assert spec.grpc_status == status, spec
        if spec.grpc_status == status:
            assert spec.http_status == http, spec


@pytest.mark.parametrize("code", sorted(FIXED_BY_THE_SEEDS))
def test_code_fixed_by_the_seeds_has_its_meaning(code: str) -> None:
    member, words, http = FIXED_BY_THE_SEEDS[code]
    assert by_code(code) is member
    assert member.code == code
    title = member.spec.title.lower()
    for word in words:
        assert word in title, f"{code} title {member.spec.title!r} lacks {word!r}"
    if http is not None:
        assert member.spec.http_status == http


def test_sandbox_path_rejections_are_300_to_305() -> None:
    for number in range(300, 306):
        member = by_code(f"BEM-{number}")
        assert member is not None and member.name.startswith("PATH_"), number
        assert member.spec.http_status in (400, 403)


def test_catalog_lists_every_code_in_order() -> None:
    specs = catalog()
    assert [s.code for s in specs] == sorted(m.code for m in ErrorCode)
    assert {s.code for s in specs} == {m.code for m in ErrorCode}


def test_by_code() -> None:
    for member in ErrorCode:
        assert by_code(member.code) is member
    assert by_code("BEM-999") is None
    assert by_code("bem-020") is None
    assert by_code("") is None
