"""The OpenAPI document matches what the console does: schemathesis on the read endpoints.

Schemathesis loads /openapi.json from the running console (validating it as an OpenAPI 3.1
document), generates requests for every GET operation from its parameters' schemas, sends them
over HTTP with a real token, and checks each response against the document: no 5xx, only
documented statuses and content types, bodies that validate against the response schemas.
"""

from __future__ import annotations

import pytest
import schemathesis
from console_kit import ALICE_TOKEN, ConsoleEnv
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

pytestmark = [pytest.mark.e2e, pytest.mark.nats, pytest.mark.postgres]

EXAMPLES_PER_OPERATION = 5


def _run(operation: object, headers: dict[str, str], excluded: list[object]) -> None:
    @given(case=operation.as_strategy())  # type: ignore[attr-defined]
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=headers, excluded_checks=excluded)

    check()


def test_read_endpoints_match_the_openapi_document(console_env: ConsoleEnv) -> None:
    schema = schemathesis.openapi.from_url(f"{console_env.url}/openapi.json")
    # The frame stream follows a request until it ends: tested in test_console_api.py.
    reads = schema.include(method="GET").exclude(path_regex=r"/frames$")
    operations = [result.ok() for result in reads.get_all_operations()]
    paths = {op.path for op in operations}
    assert {"/v1/agents", "/v1/runs/{run_id}", "/v1/inbox", "/readyz"} <= paths, paths
    headers = {"Authorization": f"Bearer {ALICE_TOKEN}"}
    for operation in operations:
        # A page token is opaque: any string fits its schema, but only the server's own are
        # accepted (BEM-015). Where one is sent, a 400 for "schema-valid" data is expected.
        # Likewise a usage range: start must come before end (BEM-425), which no JSON Schema of
        # two separate query parameters can say.
        names = {p.name for p in operation.query}
        paged = "page_token" in names or {"start", "end"} <= names
        _run(operation, headers, [positive_data_acceptance] if paged else [])
