"""A load job fanned out over several workers: its option, its messages, its members' events
and parts, and the one run their merge stores."""

import base64
import json
import time
import uuid
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from apps.jobs.crypto import job_binding_secret
from apps.jobs.models import Job, JobPart
from apps.jobs.specs import job_spec
from apps.runs.models import Run

KEY = "sk-secret-endpoint-key-123"


@pytest.fixture
def broker(settings):
    """Redis DB 12 for this module's queues (the jobs suite's own fixture, on another DB)."""
    from apps.jobs.services import pools_first_party_ensure

    base = urlsplit(settings.REDIS_URL or "redis://127.0.0.1:6379/0")
    settings.CELERY_BROKER_URL = urlunsplit((base.scheme, base.netloc, "/12", "", ""))
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    created: list[str] = []

    class Broker:
        def pool(self) -> str:
            name = f"pool.m{uuid.uuid4().hex[:10]}"
            pools_first_party_ensure([name])
            created.append(name)
            return name

        def specs(self, queue: str) -> list[tuple[dict, dict]]:
            out = []
            for raw in client.lrange(queue, 0, -1):
                message = json.loads(raw)
                args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
                out.append((message["headers"], args[0]))
            return out

    yield Broker()
    if created:
        client.delete(*created)
    client.close()


def post(client, url, body, auth, **headers):
    return client.post(
        url, data=json.dumps(body), content_type="application/json", **auth, **headers
    )


def run_now(client, auth, endpoint, scenario, **options):
    body = {"scenario": scenario.slug, "concurrency": [3], "requests": 6, **options}
    return post(client, f"/api/v1/endpoints/{endpoint.pk}/runs", body, auth)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"members": 17}, "an integer from 1 to 16"),
        ({"members": 3, "requests": None, "duration_s": 5}, "a request count, not a duration"),
        ({"members": 7}, "at most one member per request"),
        (
            {"members": 2, "kind": "accuracy", "protocol": "gsm8k-5shot-v1", "concurrency": None},
            "only a load job",
        ),
    ],
)
def test_it_refuses_members_a_job_cannot_have_naming_the_option(
    client, auth, endpoint, scenario, options, message
):
    response = run_now(client, auth, endpoint, scenario, **options)
    assert response.status_code == 422, response.content
    [error] = response.json()["detail"]
    assert error["path"] == "members"
    assert message in error["message"]
    assert not Job.objects.exists()


def test_it_sends_one_message_per_member_with_one_start_instant(
    client, auth, endpoint, scenario, broker, settings
):
    settings.JOB_MEMBERS_START_LEAD_S = 7
    before = datetime.now(UTC)
    response = run_now(client, auth, endpoint, scenario, members=3)
    assert response.status_code == 202, response.content
    job = Job.objects.get()
    messages = broker.specs(endpoint.pool)
    specs = sorted((spec for _headers, spec in messages), key=lambda s: s["member"])
    assert [s["member"] for s in specs] == [0, 1, 2]
    assert {s["members"] for s in specs} == {3}
    assert len({s["start_at"] for s in specs}) == 1
    start_at = datetime.fromisoformat(specs[0]["start_at"])
    assert 6 <= (start_at - before).total_seconds() <= 8
    assert len({h["id"] for h, _ in messages}) == 3  # three tasks, one job
    assert {s["job_id"] for s in specs} == {job.pk}
    assert all(KEY not in json.dumps(s) for s in specs)


# Parts as members submit them, of a plan of 6 requests at c=3, on a clock of our own.


def _part(job: Job, member: int, members: int, start_at_ns: int, worker: str) -> dict:
    from workers.loadgen.members import MemberLevel, MemberRun, member_part, timing_on_wall_clock
    from workers.loadgen.metrics import NS_PER_MS, RequestTiming
    from workers.loadgen.output import make_document
    from workers.loadgen.runner import Level, LoadPlan, SweepResult, level_point
    from workers.result_facts import Deployment, ModelInfo, Scenario

    spec = job_spec(job)
    level = Level(concurrency=3)
    timings = []
    for i in range(member, 6, members):
        send = start_at_ns + i * NS_PER_MS
        timing = RequestTiming(i=i, t_send_ns=send, n_in=32, n_out=8)
        timing.text_ns = [send + (5 + k) * NS_PER_MS for k in range(8)]
        timing.t_end_ns = timing.text_ns[-1]
        timings.append(timing)
    point = level_point(timings, level, LoadPlan(levels=[level], requests=6))
    result = SweepResult(points=[point], timings=[timings], levels=[level])
    document = make_document(
        model=ModelInfo.model_validate(spec["model"]),
        deployment=Deployment.model_validate(spec["deployment"]),
        scenario=Scenario.model_validate(spec["scenario"]),
        result=result,
        started_at=datetime.now(UTC),
    )
    document.idempotency_key = job.idempotency_key
    document.environment.worker = worker
    entry = MemberLevel(
        label=level.label,
        concurrency=3,
        started_ns=start_at_ns + member * 1000,
        timings=[timing_on_wall_clock(t, 0) for t in timings],
    )
    run = MemberRun(result=result, levels=[entry], start_skew_ms=member * 0.001)
    part = member_part(document, run, member=member, members=members, start_at_ns=start_at_ns)
    return part.model_dump(mode="json", by_alias=True, exclude_none=True)


@pytest.fixture
def fanned_out(client, auth, endpoint, scenario, broker):
    response = run_now(client, auth, endpoint, scenario, members=3)
    assert response.status_code == 202, response.content
    job = Job.objects.get()
    start_at_ns = time.time_ns()

    def event(member: int, name: str, worker: str | None = None, message: str = ""):
        body = {
            "event": name,
            "attempt": 1,
            "worker": worker or f"w{member}",
            "member": member,
            "message": message,
        }
        return post(client, f"/api/v1/jobs/{job.pk}/events", body, auth).json()

    def submit(member: int, worker: str | None = None):
        worker = worker or f"w{member}"
        body = {
            "attempt": 1,
            "member": member,
            "worker": worker,
            "part": _part(job, member, 3, start_at_ns, worker),
        }
        secret = {"HTTP_X_INFERBOARD_JOB_SECRET": job_binding_secret(job.idempotency_key, 1)}
        return post(client, f"/api/v1/jobs/{job.pk}/parts", body, auth, **secret)

    return job, event, submit


def test_the_last_part_in_merges_every_member_s_into_one_run(fanned_out):
    job, event, submit = fanned_out
    for member in range(3):
        started = event(member, "started")
        assert started["proceed"] is True and started["api_key"] == KEY
    assert [submit(0).json()["run_id"], submit(1).json()["run_id"]] == [None, None]
    job.refresh_from_db()
    assert (job.status, job.progress) == ("running", "2 of 3 members submitted")
    assert not Run.objects.exists()  # nothing stored before every part is in
    last = submit(2)
    assert last.status_code == 200, last.content
    job.refresh_from_db()
    assert job.status == "succeeded" and last.json()["run_id"] == job.run_id
    run = Run.objects.get()
    assert run.idempotency_key == job.idempotency_key
    assert run.origin == "scheduled"
    [point] = run.points.all()
    assert (point.requests_total, point.requests_succeeded) == (6, 6)
    assert sorted(r.i for r in point.records.all()) == list(range(6))
    members = run.environment["extra"]["members"]
    assert [(m["member"], m["worker"], m["start_skew_ms"]) for m in members] == [
        (0, "w0", 0.0),
        (1, "w1", 0.001),
        (2, "w2", 0.002),
    ]
    assert not JobPart.objects.exists()
    # A redelivered part of the merged job answers its run and stores nothing new.
    again = submit(2)
    assert again.status_code == 200 and again.json()["run_id"] == job.run_id
    assert Run.objects.count() == 1


def test_a_member_that_fails_fails_the_job_and_discards_the_parts_already_in(fanned_out):
    job, event, submit = fanned_out
    for member in range(3):
        event(member, "started")
    assert submit(0).status_code == 200
    assert JobPart.objects.filter(part__isnull=False).count() == 1
    event(1, "failed", message="the endpoint did not answer in time")
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error == "member 1 of 3: the endpoint did not answer in time"
    assert not JobPart.objects.exists()
    # The others learn it at their next heartbeat; a late part is refused and stores nothing.
    assert event(2, "heartbeat")["cancel"] is True
    late = submit(2)
    assert late.status_code == 409
    assert not Run.objects.exists()


def test_a_member_s_share_is_held_by_one_worker_at_a_time(fanned_out):
    job, event, submit = fanned_out
    assert event(0, "started")["proceed"] is True
    taken = event(0, "started", worker="intruder")
    assert taken["proceed"] is False and "already running on w0" in taken["detail"]
    assert event(0, "heartbeat", worker="intruder")["cancel"] is True
    assert submit(0, worker="intruder").status_code == 409
    assert event(5, "started").get("proceed") is not True  # no member 5 in a job of 3


def test_a_job_of_one_worker_takes_no_member_reports(client, auth, endpoint, scenario, broker):
    assert run_now(client, auth, endpoint, scenario).status_code == 202
    job = Job.objects.get()
    body = {"event": "started", "attempt": 1, "worker": "w", "member": 0}
    response = post(client, f"/api/v1/jobs/{job.pk}/events", body, auth)
    assert response.status_code == 422
    assert response.json()["detail"][0]["path"] == "member"
    job.refresh_from_db()
    assert job.status == "queued" and not JobPart.objects.exists()


def test_cancelling_a_fanned_out_job_discards_its_parts(fanned_out, client, auth):
    job, event, submit = fanned_out
    for member in range(3):
        event(member, "started")
    assert submit(0).status_code == 200
    assert post(client, f"/api/v1/jobs/{job.pk}/cancel", {}, auth).json()["status"] == "cancelled"
    assert not JobPart.objects.exists()
    assert event(1, "heartbeat")["cancel"] is True
    assert submit(1).status_code == 409
    assert not Run.objects.exists()


def test_it_takes_the_members_bound_from_settings_and_the_worker_accepts_it(
    client, auth, endpoint, scenario, broker, settings
):
    """JOB_MAX_MEMBERS=32: the server allows 32 members and names the bound past it, and the
    worker parses every message the server sends (it checks shape, not the server's bound)."""
    from workers.tasks import JobSpec

    settings.JOB_MAX_MEMBERS = 32
    refused = run_now(client, auth, endpoint, scenario, members=33, requests=40)
    assert refused.status_code == 422, refused.content
    [error] = refused.json()["detail"]
    assert (error["path"], "an integer from 1 to 32" in error["message"]) == ("members", True)

    response = run_now(client, auth, endpoint, scenario, members=32, requests=40)
    assert response.status_code == 202, response.content
    specs = [spec for _headers, spec in broker.specs(endpoint.pool)]
    assert sorted(spec["member"] for spec in specs) == list(range(32))
    parsed = [JobSpec.model_validate(spec) for spec in specs]
    assert {spec.members for spec in parsed} == {32}
