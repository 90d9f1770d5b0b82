"""A reviewer's approval in tests: a public self-reported run (posted with an organization's
token) ranks on the default board and /costs/ only once a reviewer approved it (issue 53,
apps/runs/sweeps.py). Tests that put such runs on those pages approve them first, as a
reviewer would; a run the board's other rules refuse cannot be approved and is left as is."""

from __future__ import annotations

from typing import Any

from apps.runs.models import Run
from apps.runs.services import IngestResult, run_ingest, runs_version_bump
from apps.runs.sweeps import AWAITING_REVIEW
from apps.trust.services import review_decide, review_propose


def approved(run: Run) -> Run:
    """`run` approved by a reviewer where it waits for one and may be approved."""
    run.refresh_from_db()
    if not run.rules_passed or not Run.objects.filter(AWAITING_REVIEW, pk=run.pk).exists():
        return run
    review = review_propose(run=run, actor="submitter@example.com")
    review_decide(review=review, approve=True, reason="reviewed", actor="reviewer@example.com")
    runs_version_bump()  # as the decision's commit does (a test's transaction never commits)
    run.refresh_from_db()
    return run


def ingest_reviewed(**kwargs: Any) -> IngestResult:
    """run_ingest, then the reviewer's approval (approved)."""
    outcome = run_ingest(**kwargs)
    return IngestResult(run=approved(outcome.run), created=outcome.created)
