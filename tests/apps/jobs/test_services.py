from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from apps.jobs import schedules, services, specs
from apps.jobs.crypto import CredentialError, decrypt, encrypt
from apps.jobs.models import Endpoint, Job, Schedule
from apps.runs.services import run_ingest


@pytest.fixture
def job(endpoint, scenario):
    return services.job_enqueue(endpoint=endpoint, scenario=scenario, options={"requests": 4})


def start(job, worker="w1", attempt=None, now=None):
    return services.job_event(
        job=job, event="started", attempt=attempt or job.attempt, worker=worker, now=now
    )


def land_run(job, document):
    document["idempotency_key"] = job.idempotency_key
    return run_ingest(document=document, org=job.endpoint.org).run


def test_credentials_round_trip_and_differ_at_rest(settings):
    ciphertext = encrypt("sk-abc")
    assert ciphertext != "sk-abc" and "sk-abc" not in ciphertext
    assert decrypt(ciphertext) == "sk-abc"
    assert encrypt("") == "" and decrypt("") == ""


def test_credential_keys_rotate(settings):
    from cryptography.fernet import Fernet

    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.ENDPOINT_CREDENTIALS_KEY = old
    stored = encrypt("sk-abc")
    settings.ENDPOINT_CREDENTIALS_KEY = f"{new},{old}"
    assert decrypt(stored) == "sk-abc"
    settings.ENDPOINT_CREDENTIALS_KEY = new
    with pytest.raises(CredentialError, match="enter the key again"):
        decrypt(stored)


def test_a_started_job_runs_on_one_worker_only(job):
    assert start(job).proceed is True
    job.refresh_from_db()
    assert job.status == "running" and job.worker == "w1"
    # A second delivery while the first worker is alive must not run it again.
    second = start(job, worker="w2")
    assert second.proceed is False
    assert "already running on w1" in second.detail


def test_a_job_whose_worker_went_silent_is_taken_over_by_a_redelivery(job, settings):
    start(job)
    later = timezone.now() + timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S + 1)
    assert start(job, worker="w2", now=later).proceed is True
    job.refresh_from_db()
    assert job.worker == "w2"


def test_heartbeats_record_progress_and_carry_cancellation(job):
    start(job)
    beat = services.job_event(
        job=job, event="heartbeat", attempt=1, worker="w1", message="c=1: 2/4 requests"
    )
    assert beat.cancel is False
    job.refresh_from_db()
    assert job.progress == "c=1: 2/4 requests" and job.heartbeat_at is not None
    services.job_cancel(job=job)
    assert services.job_event(job=job, event="heartbeat", attempt=1, worker="w1").cancel is True
    services.job_event(job=job, event="cancelled", attempt=1, worker="w1")
    job.refresh_from_db()
    assert job.status == "cancelled"


def test_success_links_the_run_found_by_the_job_key(job, document):
    start(job)
    missing = services.job_event(job=job, event="succeeded", attempt=1, worker="w1")
    assert "no run" in missing.detail
    run = land_run(job, document)
    services.job_event(job=job, event="succeeded", attempt=1, worker="w1")
    job.refresh_from_db()
    assert job.status == "succeeded" and job.run == run
    # A finished job never starts again.
    assert start(job, worker="w9").proceed is False


def test_failure_is_recorded_with_its_message(job):
    start(job)
    services.job_event(
        job=job, event="failed", attempt=1, worker="w1", message="ConnectError: refused"
    )
    job.refresh_from_db()
    assert job.status == "failed" and job.error == "ConnectError: refused"
    assert job.finished_at is not None


def test_the_reaper_fails_jobs_without_heartbeats(job, settings):
    start(job)
    assert services.jobs_reap_stale() == 0
    later = timezone.now() + timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S + 1)
    assert services.jobs_reap_stale(now=later) == 1
    job.refresh_from_db()
    assert job.status == "failed"
    assert "no heartbeat from w1" in job.error


def test_the_reaper_marks_succeeded_a_job_whose_run_landed(job, settings, document):
    start(job)
    run = land_run(job, document)
    later = timezone.now() + timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S + 1)
    services.jobs_reap_stale(now=later)
    job.refresh_from_db()
    assert job.status == "succeeded" and job.run == run


def test_retry_requeues_the_same_key_as_a_new_attempt(job, broker):
    start(job)
    services.job_event(job=job, event="failed", attempt=1, worker="w1", message="boom")
    retried = services.job_retry(job=job)
    assert retried.status == "queued" and retried.attempt == 2
    assert retried.idempotency_key == job.idempotency_key
    assert len(broker.messages(job.pool)) == 2
    # The lost first attempt, redelivered, is told it was superseded.
    stale = start(job, worker="w1", attempt=1)
    assert stale.proceed is False and stale.cancel is True


def test_retry_finds_the_run_a_lost_attempt_stored(job, broker, document, settings):
    start(job)
    run = land_run(job, document)
    services.job_event(job=job, event="failed", attempt=1, worker="w1")
    retried = services.job_retry(job=job)
    assert retried.status == "succeeded" and retried.run == run
    assert len(broker.messages(job.pool)) == 1  # nothing new queued


def test_only_failed_or_cancelled_jobs_are_retried(job):
    with pytest.raises(specs.JobError):
        services.job_retry(job=job)


def test_due_schedules_queue_jobs_and_move_on(endpoint, scenario, broker):
    # A fixed noon, so that "31 minutes later" never crosses the nightly 02:00.
    now = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
    nightly = schedules.schedule_save(
        schedule=Schedule(endpoint=endpoint, scenario=scenario, cron="0 2 * * *"), now=now
    )
    every = schedules.schedule_save(
        schedule=Schedule(endpoint=endpoint, scenario=scenario, interval_minutes=30), now=now
    )
    schedules.schedule_save(
        schedule=Schedule(endpoint=endpoint, scenario=scenario, interval_minutes=5, enabled=False),
        now=now - timedelta(hours=1),
    )
    assert schedules.schedules_tick(now=now) == []
    soon = now + timedelta(minutes=31)
    (queued,) = schedules.schedules_tick(now=soon)
    assert queued.schedule == every and queued.status == "queued"
    every.refresh_from_db()
    assert every.next_run_at == soon + timedelta(minutes=30)
    assert schedules.schedules_tick(now=soon) == []
    tomorrow = now + timedelta(days=1, minutes=1)
    assert {j.schedule for j in schedules.schedules_tick(now=tomorrow)} == {every, nightly}
    assert len(broker.messages(endpoint.pool)) == 3


def test_a_schedule_needs_exactly_one_of_cron_and_interval(endpoint, scenario):
    for bad in (
        Schedule(endpoint=endpoint, scenario=scenario),
        Schedule(endpoint=endpoint, scenario=scenario, cron="@daily", interval_minutes=5),
    ):
        with pytest.raises(specs.JobError, match="either a cron"):
            schedules.schedule_save(schedule=bad)


def test_a_simulated_endpoint_labels_its_runs_simulated(endpoint, scenario):
    Endpoint.objects.filter(pk=endpoint.pk).update(simulated=True)
    endpoint.refresh_from_db()
    job = Job(
        endpoint=endpoint, scenario=scenario, idempotency_key=Job.new_key(), pool=endpoint.pool
    )
    assert specs.job_spec(job)["provenance"] == "simulated"


def test_runscheduler_once_queues_due_jobs_and_reaps(endpoint, scenario, broker, settings):
    from io import StringIO

    from django.core.management import call_command

    schedule = schedules.schedule_save(
        schedule=Schedule(endpoint=endpoint, scenario=scenario, interval_minutes=10),
        now=timezone.now() - timedelta(minutes=11),
    )
    stale = services.job_enqueue(endpoint=endpoint, scenario=scenario)
    start(stale, now=timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S + 5))
    out = StringIO()
    call_command("runscheduler", "--once", stdout=out)
    assert "queued 1 scheduled job(s), reaped 1" in out.getvalue()
    assert Job.objects.filter(schedule=schedule, status="queued").count() == 1
    stale.refresh_from_db()
    assert stale.status == "failed"


def test_each_load_job_gets_its_own_prompt_seed_so_no_run_reuses_cached_prompts(endpoint, scenario):
    first = services.job_enqueue(endpoint=endpoint, scenario=scenario)
    second = services.job_enqueue(endpoint=endpoint, scenario=scenario)
    assert first.options["seed"] != second.options["seed"]
    assert specs.job_spec(first)["load"]["seed"] == first.options["seed"]
    chosen = services.job_enqueue(endpoint=endpoint, scenario=scenario, options={"seed": 7})
    assert specs.job_spec(chosen)["load"]["seed"] == 7
