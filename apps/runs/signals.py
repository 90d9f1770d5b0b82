"""What run ingestion tells the apps above runs, which it does not import: they connect in
their AppConfig.ready, and every receiver runs inside the ingestion's transaction, so a
failure in one stores nothing.

- `run_stored(run, document)`: the run and its points are stored; store what else the
  document carries (apps.accuracy: its accuracy results). Sent before `run_settled`.
- `run_settled(run, others)`: all of the run is stored, or what a check reads of it changed
  (its records, its visibility); check it again (apps.trust: the board's rules), and with
  `others` the runs its accuracy results can change too.
- `runs_settled(runs, others)`: the same for a batch (runs_settle_batched), once at its end:
  `runs` the pks of every run that settled in it, `others` those sent with `others`. A
  receiver leaves each of them, and each run the per-run signals would have had it check
  again, as `run_settled` one run at a time would have.
- `job_claimed(idempotency_key, org, job_secret)`: a document came with a job secret; the app
  that knows jobs (apps.jobs) answers the host kind that ran it (Run.OriginHost) when the
  document is that job's, and None when it is not. No answer refuses the document.
"""

from django.dispatch import Signal

run_stored = Signal()
run_settled = Signal()
runs_settled = Signal()
job_claimed = Signal()
