"""schemathesis against the live OpenAPI document, with a token: no input, however odd, may
get a 5xx or an answer that breaks the documented schema."""

from __future__ import annotations

import os
import re

import pytest
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

# Examples per operation: the API's operations at this many stay within a few minutes and add
# up to more than 5,000 generated cases (the test asserts it and the summary prints it).
EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES", "200"))
MIN_CASES = 5_000
# Refusals no schema can state, each a 422 naming its field: (operation, path, message), as
# regular expressions. A value looked up in what is stored (an accelerator the catalog lacks,
# a run or scenario the caller cannot see), a choice between fields (this one, or those two),
# a file's content, the facts or figures of a document that contradict each other. A
# schema-valid request refused with any other 422 is a place where the OpenAPI document and
# the API disagree (issue 53).
# A price is a number, or an accelerator and a tier looked up in the price book.
PRICED_BY = r"(candidates\[\d+\]\.)?(usd_per_gpu_hour|accelerator|tier)(_[ab])?"
PRICE_CHOICE = (
    r"give usd_per_gpu_hour, or an accelerator and a price tier|is required"
    r"|unknown accelerator.*|no .*tier.*"
)
DOCUMENT_RULE = (
    r"(?!must be [<>]|unknown field$|required$|must not contain a NUL|input should|string should"
    r"|list should|dictionary should|value should).*"
)
BEYOND_THE_SCHEMA = [
    # The result document's own rules, its validators' (facts and figures that contradict
    # each other): any refusal but a type, bound or field the schema states.
    ("POST /api/v1/runs", r".*", DOCUMENT_RULE),
    ("POST /api/v1/imports", r"file", r".*"),  # the file's content
    # An SLO bound's unit must fit its metric (ms or s for latencies, tok/s/user else).
    ("POST /api/v1/scenarios", r"slo\.bounds\[\d+\]", r"unit: .*"),
    # A price set named or dated: looked up among the stored sets.
    (r"GET /api/v1/.*", r"prices_as_of(_[ab])?",
     r".* is neither a date \(YYYY-MM-DD\) nor a set .*|no price set was in force .*"),
    ("GET /api/v1/costs/(mtok|mtok/kinds|claim)", PRICED_BY, PRICE_CHOICE),
    ("GET /api/v1/costs/mtok/kinds", r"mix", r"input and output weights cannot both be zero"),
    # Cached input priced above what all input tokens cost together.
    ("GET /api/v1/costs/mtok/kinds", r"cached_input_usd_per_mtok", r"cached tokens at .*"),
    # A load is requests per day or peak requests/s: one of the two, and not so much that
    # the throughput would need more than a billion GPUs.
    ("POST /api/v1/costs/capacity", r"requests_per_day|peak_requests_per_s",
     r"give requests per day or peak requests/s.*|needs more than .*"),
    ("POST /api/v1/costs/(slo|capacity)", PRICED_BY, PRICE_CHOICE),
    ("GET /api/v1/compare/answer", r"a|b|model|scenario", r"no visible run.*"),
    # Economics: a scenario nobody may see, a model with no shipped token price (then the
    # three prices are asked), a price tier or SLO tier looked up, a feed's dated price set.
    ("GET /api/v1/economics/(margin|fleet|first-token)", r"scenario", r"no visible run.*"),
    ("GET /api/v1/economics/(margin|fleet)", r"(cached_)?(input|output)_price",
     r"no list price ships for .*"),
    ("GET /api/v1/economics/(margin|fleet|first-token)", r"tier", r"unknown price tier .*"),
    ("GET /api/v1/economics/(margin|fleet|first-token)", r"slo", r"unknown SLO tier .*"),
    ("GET /api/v1/economics/tco-feed", r"date",
     r".* is neither a date \(YYYY-MM-DD\) nor a set .*|no price set was in force .*"),
    # Two stored accuracy results compare item by item only when both kept their items and
    # ran the same protocol and metric: a fact of the stored results, not of the request.
    ("GET /api/v1/accuracy/compare", r"b",
     r".*: the result has no per-item records|metrics differ: .*|protocols differ .*"),
    # A disaggregated deployment's GPUs are its pools' (issue 51), wherever one is stated.
    (r"POST /api/v1/.*", r"deployment\.gpus", r"is \d+, but a disaggregated deployment's .*"),
    ("POST /api/v1/endpoints", r"deployment", r"give deployment_id, or model and deployment"),
    # An endpoint's URL against the operator's allowlist, its host, port and credentials.
    ("POST /api/v1/endpoints", r"url", r"(url|port|host) .*"),
]  # fmt: skip


def schema_valid_requests_are_accepted(ctx, response, case) -> None:
    """schemathesis's positive_data_acceptance, less BEYOND_THE_SCHEMA's refusals."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return
    label = case.operation.label
    detail = response.json().get("detail")
    items = detail if isinstance(detail, list) else [{"path": "", "message": str(detail)}]
    for item in items:
        if not any(
            re.fullmatch(operation, label)
            and re.fullmatch(path, item["path"])
            and re.fullmatch(message, item["message"], flags=re.S)
            for operation, path, message in BEYOND_THE_SCHEMA
        ):
            raise AssertionError(
                f"{label}: a request the schema allows was refused: {item['path']}: "
                f"{item['message']}"
            )


CHECKS = [
    not_a_server_error,
    # The schema says what the API accepts and the API accepts what it says: a request the
    # schema allows is not refused with 422, and one it forbids is not stored (issue 53).
    schema_valid_requests_are_accepted,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
]
GENERATED: list[str] = []


# Write limits for this test only, so every example reaches its operation instead of a 429
# (the limits have tests of their own: tests/faults/test_write_limits.py).
FUZZ_RATE_LIMIT = "1000000/60"


@pytest.fixture
def limits_out_of_the_way(settings) -> None:
    for name in (
        "RATE_LIMIT_TOKEN_WRITES",
        "RATE_LIMIT_ORG_WRITES",
        "RATE_LIMIT_TOKEN_REPORTS",
        "RATE_LIMIT_ORG_REPORTS",
        "RATE_LIMIT_ANON_WRITES",
    ):
        setattr(settings, name, FUZZ_RATE_LIMIT)


def test_no_generated_request_gets_a_server_error_or_breaks_the_schema(site, limits_out_of_the_way):
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
