"""/costs/claim/ and its verdict image: check a published cost claim against price tiers and
against stored runs, the latter through the one answer (apps/costs/answer.py) at the claim's
SLO, so the claim checker, /answer/, /compare/ and the API give one figure for one question.

The checker opens on a claim of the ledger (apps/claims: `?claim=<slug>`, the seed's by
default; `claim=` blank for none): its figures, sides, basis tier, the prices of its own date
and its workload fill the form, and the ledger's verdict now stands beside the check, so a
claim is checked one way on the checker, the ledger and the story.

Parse (the ledger's claim under the query, ClaimQuery), ask the answer service, render."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from apps.accounts.scoping import current_org, viewer_org
from apps.claims.checker import SEED_CLAIM, claim_fields, ledger_claim, ledger_claims
from apps.claims.selectors import ledger_entry
from apps.costs import selectors
from apps.costs.answer import STATED_LATENCY, Answer
from apps.costs.answer_selectors import ask
from apps.costs.claims import ClaimPage, Comparison
from apps.costs.forms import ClaimQuery, field_label
from apps.costs.formulas import CostInputError, Tier
from apps.costs.prices import asked_price_set, profile_prices
from apps.costs.reference import TIER_LABELS
from apps.htmx import page_or_partial
from apps.projections import selectors as projection_selectors
from apps.projections.claims import projected_cost_ratios, projected_throughput_ratio

CLAIM_WORDS = {Comparison.BELOW: "below", Comparison.AT_MOST: "at most", Comparison.ABOUT: "about"}
# The verdict card's link: lines short enough for its 1,080 px of width at 22 px (URLs have
# no spaces to wrap at, and wide glyphs like W or % reach 0.8 em), and no more than two.
CARD_URL_CHARS = 72
CARD_URL_LINES = 2


def claim(request: HttpRequest) -> HttpResponse:
    """Check a published cost claim against price tiers and stored runs."""
    context = _claim_context(request)
    _add_projected_claim(context, request, context["page"])
    return page_or_partial(request, "costs/claim.html", "claim-result", context)


def claim_image(request: HttpRequest) -> HttpResponse:
    """The claim page's verdict as a 1200×630 SVG card (the size link previews use), from the
    same query string, so a verdict can be pasted where a link would not be read. The page
    turns it into a PNG in the browser."""
    context = _claim_context(request)
    page: ClaimPage = context["page"]
    if page.errors:
        problems = "; ".join(f"{error.field}: {error.message}" for error in page.errors)
        return HttpResponse(
            f"No verdict to draw: {problems}", status=400, content_type="text/plain"
        )
    check = page.check
    assert check is not None  # a page without errors has a check
    claim = check.claim
    context.update(
        {
            "statement": textwrap.wrap(
                f"{claim.label_a} at {CLAIM_WORDS[claim.comparison]} "
                f"{claim.claimed_cost_ratio:g}× the "
                f"cost of {claim.label_b} per million tokens, with {claim.throughput_ratio:g}× "
                f"its throughput at ${claim.usd_per_gpu_hour_a:g} vs "
                f"${claim.usd_per_gpu_hour_b:g} per GPU-hour",
                width=58,
            )[:3],
            "formula": f"({claim.usd_per_gpu_hour_a:g} / {claim.usd_per_gpu_hour_b:g})"
            f" ÷ {claim.throughput_ratio:g}",
            "tiers": [TIER_LABELS.get(p.tier, p.tier) for p in (page.price_a, page.price_b) if p],
            "held": len(check.assumptions_that_hold),
            "tried": len(check.verdicts),
            "url_lines": card_lines(context["share_url"]),
            # The card travels without its page: it names what was checked and from where.
            "subject": _card_subject(page.values),
            "source": _card_source(request.GET.get("claim", SEED_CLAIM)),
        }
    )
    response = render(request, "costs/claim_card.svg", context, content_type="image/svg+xml")
    response["Content-Disposition"] = 'inline; filename="claim-verdict.svg"'
    return response


def _card_subject(values: Mapping[str, str]) -> str:
    """The claim's model and scenario for the card's heading, cut to fit beside its name."""
    subject = " · ".join(v for v in (values.get("model"), values.get("scenario")) if v)
    subject = subject or "no model named"
    return subject if len(subject) <= 40 else subject[:39] + "…"


def _card_source(slug: str) -> str:
    """The ledger claim's source as one line of the card ("" for a claim typed by hand)."""
    claim = ledger_claim(slug)
    if claim is None:
        return "a claim typed in the checker"
    title = (claim.get("source") or {}).get("title") or claim["title"]
    return textwrap.shorten(f"{title}, published {claim['published_on']}", width=86)


def card_lines(url: str) -> list[str]:
    """The card's link cut into lines that fit its width; past the last line, an ellipsis
    (the page beside the card has the whole link and a copy button)."""
    lines = [url[i : i + CARD_URL_CHARS] for i in range(0, len(url), CARD_URL_CHARS)]
    if len(lines) > CARD_URL_LINES:
        lines = lines[:CARD_URL_LINES]
        lines[-1] = lines[-1][:-1] + "…"
    return lines


def _stored_answers(query: ClaimQuery, org: Any) -> tuple[list[Answer], list[str], str]:
    """The one answer for each of the claim's stored-run questions, why any side has none,
    and the /answer/ link of the first question."""
    answers: list[Answer] = []
    notes: list[str] = []
    questions = query.questions()
    for asked in questions:
        try:
            answers.append(ask(asked, org=org, with_swing=False).answer)
        except CostInputError as exc:
            notes.append(f"{field_label(exc.field)}: {exc.message}")
            break
    for result in answers:
        notes += [side.reason for side in (result.a, result.b) if side.point is None]
    first = questions[0]
    link = urlencode(
        {
            "model": first.model,
            "scenario": first.scenario,
            "precision": first.facts.precision,
            "spec": first.facts.spec,
            "engine": first.facts.engine,
            "a": first.a,
            "b": first.b,
            "interactivity_min": first.bounds.get("interactivity_min") or "",
            STATED_LATENCY.ceiling_param: first.bounds.get("ttft_s_max") or "",
        }
    )
    return answers, list(dict.fromkeys(notes)), link


def checker_params(query: Mapping[str, str]) -> dict[str, str]:
    """The checker's query over the ledger claim it names (`claim`; the seed's when absent,
    none when blank): what the query gives wins, so a typed value or a blank stays."""
    slug = query.get("claim", SEED_CLAIM)
    return {**(claim_fields(slug) if slug else {}), **{k: query[k] for k in query}}


def _claim_context(request: HttpRequest) -> dict[str, Any]:
    """The claim page's state from its query string: the page and the template's context."""
    org = viewer_org(request)
    params = checker_params(request.GET)
    asked = asked_price_set(params)
    params["prices_as_of"] = asked.value
    book = selectors.price_book(org=org, prices_as_of=asked.value)
    # The organization's active price profile gives each side's own price unless typed.
    profile, own = profile_prices(current_org(request))
    query = ClaimQuery(params, book=book, own_prices=own)
    answers: list[Answer] = []
    notes: list[str] = []
    answer_link = ""
    if query.is_valid():
        answers, notes, answer_link = _stored_answers(query, org)
    page = query.page(answers, notes)
    share_url = request.build_absolute_uri(reverse("costs:claim")) + (
        f"?{request.GET.urlencode()}" if request.GET else ""
    )
    chosen = params.get("claim", "")
    return {
        "page": page,
        "values": page.values,
        "error_fields": {error.field for error in page.errors},
        "field_labels": {error.field: field_label(error.field) for error in page.errors},
        "tiers": [(tier.value, TIER_LABELS[tier.value]) for tier in Tier],
        "accelerators": sorted(book),
        "comparisons": [c.value for c in Comparison],
        "profile_name": profile if own else "",
        "share_url": share_url,
        "answer_link": answer_link,
        "price_set": book.price_set,
        "price_problem": asked.problem,
        "ledger_claims": ledger_claims(),
        "ledger_entry": ledger_entry(chosen, org=org) if chosen else None,
    }


def _add_projected_claim(context: dict[str, Any], request: HttpRequest, page: ClaimPage) -> None:
    """Only when asked (?projected=1): the throughput ratio a projection gives, beside the
    claim's own check and never in it, labelled projected."""
    context["show_projected"] = request.GET.get("projected") in {"1", "on", "true"}
    sides = (page.values.get("accelerator_a", "").upper(), page.values.get("accelerator_b", ""))
    if not context["show_projected"] or page.errors or sides != ("MI355X", "B200"):
        return
    projection = projection_selectors.projection_for_shape(
        model=page.values.get("model") or None,
        input_tokens=None,
        output_tokens=None,
        cache_hit_rate=None,
    )
    if isinstance(projection, projection_selectors.NoProjection):
        context["no_projection"] = projection.reason
        return
    ratio = projected_throughput_ratio(projection)
    if ratio is None or page.price_a is None or page.price_b is None:
        return
    context["projected_claim"] = {
        **ratio,
        **projected_cost_ratios(
            ratio,
            usd_per_gpu_hour_a=page.price_a.usd_per_gpu_hour,
            usd_per_gpu_hour_b=page.price_b.usd_per_gpu_hour,
        ),
        "median_ape": projection["validation"].median_ape,
        "validation": projection["validation"],
        "model": projection["model"],
    }
