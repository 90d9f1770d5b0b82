"""schemathesis against the live OpenAPI document, with a token: no input, however odd, may
get a 5xx or an answer that breaks the documented schema."""

from __future__ import annotations

import os

import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

# Examples per operation: the API's operations at this many stay within a few minutes and add
# up to more than 5,000 generated cases (the test asserts it and the summary prints it).
EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES", "200"))
MIN_CASES = 5_000
CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
]
GENERATED: list[str] = []


def test_no_generated_request_gets_a_server_error_or_breaks_the_schema(site):
    schema = schemathesis.openapi.from_url(f"{site.url}/api/v1/openapi.json")
    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()

        # One hypothesis run per operation, so one bad operation cannot hide another.
        # Valid-looking input and input that breaks the schema, half and half.
        modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
        cases = st.one_of(*(operation.as_strategy(generation_mode=mode) for mode in modes))

        @given(case=cases)
        @hypothesis_settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            database=None,
            report_multiple_bugs=False,
        )
        def check(case) -> None:
            GENERATED.append(case.operation.label)
            case.call_and_validate(headers=site.auth, checks=CHECKS, timeout=60)

        try:
            check()
        except (Exception, BaseExceptionGroup) as exc:  # report every operation's failures
            failures.append(f"{operation.label}: {exc}"[:3000])
    assert not failures, "\n\n".join(failures)
    assert len(GENERATED) >= MIN_CASES
