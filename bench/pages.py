"""Server time of the public pages with 1,000, 10,000 and 100,000 runs (1,000,000 request
records at the largest size).

    python bench/pages.py [--requests 30] [--sizes 1000,10000,100000] [--keep [--rounds 3]]

Fills a throwaway PostgreSQL database (DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/inferboard_bench_pages; created and dropped by the run)
with runs spread over 216 deployments, then times leaderboard, compare and run pages
in-process through Django's test client (server time, no network, DEBUG off), each as a
ratio to the trivial /healthz page measured in the same run. The page cache is defeated before every
timed request (a run "lands"), so these are uncached figures; cached hits are shown apart.

With --keep, each size has a database of its own (<name>_<size>), filled on the first run and
kept: later runs measure the same data again, so a change is timed before and after on the
same rows, and repeated runs show the noise without refilling. The sizes are then filled
first and measured in turns (--rounds N: N turns, their requests pooled), so a change in the
machine's load falls on every size alike.
"""

import argparse
import io
import itertools
import os
import random
import secrets
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/inferboard_bench_pages"
POINTS_PER_RUN = 5
RECORDS_TOTAL = 1_000_000


def fill(target_runs: int, records_per_point: int) -> None:
    """Adds runs until there are `target_runs`, with points and request records (bulk)."""
    from django.db import connection, transaction

    from apps.catalog.models import Accelerator, Deployment, Engine, Model, Scenario
    from apps.runs.models import Point, RequestRecord, Run
    from apps.runs.partitions import records_partitions_ensure
    from workers import figures

    rng = random.Random(len(Run.objects.all()) + target_runs)
    model, _ = Model.objects.get_or_create(name="GLM 5.2")
    engines = [Engine.objects.get_or_create(name=n)[0] for n in ("sglang", "vllm")]
    scenarios = list(Scenario.objects.filter(slug__in=["seed-20k-1k-60", "1k-1k"]))
    deployments = list(Deployment.objects.filter(notes="bench"))
    if not deployments:
        combos = itertools.product(
            Accelerator.objects.all(), ["BF16", "FP8", "MXFP4"], engines, [4, 8], ["0.5.2", "0.5.3"]
        )
        deployments = Deployment.objects.bulk_create(
            Deployment(
                fingerprint=uuid.uuid4().hex,
                model=model,
                accelerator=acc,
                gpus=8,
                engine=engine,
                engine_version=version,
                quant_weights=quant,
                tp=tp,
                dp=8 // tp,
                parallelism_label=f"TP{tp}×DP{8 // tp}" if tp < 8 else "TP8",
                notes="bench",
            )
            for acc, quant, engine, tp, version in combos
        )
    # The reference data's runs (InferenceX, published) come on top of the bench's own.
    missing = target_runs - Run.objects.filter(deployment__notes="bench").count()
    # Every deployment first gets a measured run in each scenario, so the board and the pages
    # show the same deployments at every size and a ratio between sizes is the cost of a
    # longer history alone (drawn at random, 1,000 runs left half of them off the board).
    shown = set(
        Run.objects.filter(deployment__notes="bench", provenance="measured").values_list(
            "deployment_id", "scenario_id"
        )
    )
    first = [
        (d, s, "measured") for d in deployments for s in scenarios if (d.pk, s.pk) not in shown
    ][:missing]
    drawn = [
        (
            rng.choice(deployments),
            scenarios[0] if rng.random() < 0.8 else scenarios[1],
            rng.choice(["measured", "measured", "imported", "simulated"]),
        )
        for _ in range(missing - len(first))
    ]
    with transaction.atomic():
        runs = Run.objects.bulk_create(
            Run(
                idempotency_key=uuid.uuid4().hex,
                deployment=deployment,
                scenario=scenario,
                provenance=provenance,
            )
            for deployment, scenario, provenance in first + drawn
        )
        points = []
        for run in runs:
            speed = rng.uniform(50, 400)
            for level, concurrency in enumerate((1, 4, 16, 64, 256)):
                tput = speed * 8 * min(concurrency, 64) ** 0.6
                # The distributions the SLO verdict reads (workers/slo.py).
                latency_ms = {
                    "ttft": {"p50": 200 * concurrency**0.5, "p99": 400 * concurrency**0.5},
                    "tpot": {"p50": 1000 / (speed / concurrency**0.3)},
                    "e2el": {"p50": 5000 + 100 * concurrency, "p99": 8000 + 150 * concurrency},
                }
                interactivity = {"p50": speed / concurrency**0.3}
                by_slot = {**latency_ms, "interactivity": interactivity}
                points.append(
                    Point(
                        run=run,
                        ordinal=level,
                        concurrency=concurrency,
                        requests_total=records_per_point,
                        requests_succeeded=records_per_point,
                        requests_failed=0,
                        success_rate=1.0,
                        output_tok_s=tput,
                        total_tok_s=tput * 10,
                        # The figures' own columns, read from their slots as ingestion does.
                        **{
                            f.column: by_slot[f.slot[0]].get(f.slot[1])
                            for f in map(figures.figure, figures.POINT_COLUMNS)
                        },
                        latency_ms=latency_ms,
                        interactivity=interactivity,
                    )
                )
        points = Point.objects.bulk_create(points, batch_size=5000)
        _summarise(runs, points)
        # Ingestion makes the partitions of new point ranges; this COPY goes around it.
        records_partitions_ensure(point_ids=[point.pk for point in points])
        table = RequestRecord._meta.db_table
        columns = "point_id, i, t_send_ms, ttft_ms, e2el_ms, status, error"
        with (
            connection.cursor() as cursor,
            cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
        ):
            for point in points:
                for i in range(records_per_point):
                    ttft = rng.uniform(100, 2000)
                    copy.write_row((point.pk, i, i * 50.0, ttft, ttft + 5000, "ok", ""))
    _score_some(rng)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _score_some(rng: random.Random) -> None:
    """An accuracy result on each measured bench run whose id is a multiple of 20 (once), as
    a history of load runs with an evaluation now and then has: the pages read each
    deployment's latest score, and the newest scores lie among the newest runs."""
    from django.db.models import Exists, OuterRef
    from django.db.models.functions import Mod

    from apps.accuracy.models import AccuracyResult
    from apps.runs.models import Run

    scored = AccuracyResult.objects.filter(run=OuterRef("pk"))
    runs = (
        Run.objects.filter(deployment__notes="bench", provenance="measured")
        .alias(every=Mod("id", 20))
        .filter(every=0)
        .exclude(Exists(scored))
        .values_list("pk", "deployment_id")
    )
    AccuracyResult.objects.bulk_create(
        (
            AccuracyResult(
                run_id=run_id,
                deployment_id=deployment_id,
                protocol="gsm8k-bench",
                task="gsm8k",
                metric="exact_match",
                n=1319,
                score=rng.uniform(0.90, 0.96),
            )
            for run_id, deployment_id in runs
        ),
        batch_size=5000,
    )


def _summarise(runs, points) -> None:
    """What run_ingest does for every run: choose the point the leaderboard shows and count
    its load levels (the board's row rule reads them, apps/runs/sweeps.py)."""
    from apps.runs import summary
    from apps.runs.models import Run

    by_run: dict[int, list] = {}
    for p in points:
        by_run.setdefault(p.run_id, []).append(
            summary.PointFigures(
                point_id=p.pk,
                output_tok_s=p.output_tok_s,
                unlabelled_tok_s=None,
                latency_ms=p.latency_ms,
                interactivity=p.interactivity,
                success_rate=p.success_rate,
                ordinal=p.ordinal,
            )
        )
    for run in runs:
        slo = summary.default_slo(run.scenario)
        best = summary.best_point(by_run[run.pk], slo, run.deployment.gpus)
        run.best_point_id, run.best_tput_per_gpu = best.point_id, best.tput_per_gpu
        run.best_meets_slo = best.meets_slo
        run.levels = len(by_run[run.pk])
    Run.objects.bulk_update(
        runs, ["best_point", "best_tput_per_gpu", "best_meets_slo", "levels"], batch_size=2000
    )


def timed(client, url: str, n: int, *, cached: bool = False) -> list[float]:
    from apps.runs.services import runs_version_bump

    times = []
    client.get(url)  # warm imports and connections
    for _ in range(n):
        if not cached:
            runs_version_bump()
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        if response.status_code != 200:
            sys.exit(f"{url} answered {response.status_code}")
    return times


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=30, help="timed requests per page")
    parser.add_argument(
        "--sizes",
        default="1000,10000,100000",
        help="run counts to measure at, ascending (comma-separated; the first is the baseline)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="one database per size (<name>_<size>), filled once and kept for the next run",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="with --keep: measure the sizes in turn this many times, pooling the requests",
    )
    args = parser.parse_args()
    if args.rounds < 1 or (args.rounds > 1 and not args.keep):
        parser.error("--rounds: 1 or more, and more than 1 only with --keep")
    try:
        sizes = sorted({int(size) for size in args.sizes.split(",")})
    except ValueError:
        parser.error(f"--sizes: comma-separated run counts, not {args.sizes!r}")
    if not sizes or sizes[0] < 10:
        parser.error("--sizes: at least one run count of 10 or more")
    # The script's own folder leads sys.path, and bench/mcp.py there would shadow the mcp
    # package the site imports (apps/agents): the repository root takes its place.
    sys.path[:] = [str(ROOT)] + [
        p for p in sys.path[1:] if Path(p or ".").resolve() != ROOT / "bench"
    ]
    os.environ["DATABASE_URL"] = os.environ.get("DATABASE_URL", DEFAULT_DB)
    # Measure as production runs: DEBUG off (no query log); plain HTTP in-process.
    os.environ.update(DEBUG="0", SECURE_SSL_REDIRECT="0")
    # Production refuses placeholder or weak secrets (apps/settings.py): generate real ones.
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    from cryptography.fernet import Fernet

    os.environ.setdefault("ENDPOINT_CREDENTIALS_KEY", Fernet.generate_key().decode())
    os.environ.setdefault("ENDPOINT_ALLOWLIST", "127.0.0.0/8")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from apps.heap import freeze_heap
    from apps.runs.models import Point, RequestRecord, Run

    if connection.vendor != "postgresql":
        sys.exit("bench/pages.py measures PostgreSQL: set DATABASE_URL to a postgres:// URL")
    settings.ALLOWED_HOSTS.append("testserver")
    from django.core.cache import cache

    db_name = connection.settings_dict["NAME"]
    test_db = ""

    opened: set[int] = set()

    def open_db(runs: int) -> None:
        """The database to fill to `runs`: the run's one throwaway database, or (--keep) the
        size's own, with the reference data loaded once."""
        nonlocal test_db
        if test_db and not args.keep:
            return
        if args.keep:
            connection.settings_dict["TEST"]["NAME"] = f"{db_name}_{runs}"
            cache.clear()  # another database: its point ids are not the last one's
        if runs in opened:  # made and migrated in this run already: connect to it again
            connection.close()
            connection.settings_dict["NAME"] = connection.settings_dict["TEST"]["NAME"]
            return
        opened.add(runs)
        test_db = connection.creation.create_test_db(
            verbosity=0, autoclobber=True, keepdb=args.keep
        )
        if not Run.objects.exists():
            call_command("loadreference", stdout=io.StringIO())

    def prepare(runs: int) -> tuple[dict[str, str], str]:
        """Fills the database to `runs`: the pages to time in it, and what it holds."""
        open_db(runs)
        started = time.perf_counter()
        fill(runs, records_per_point)
        filled = time.perf_counter() - started
        sample_run = Run.objects.filter(provenance="measured").order_by("id").first()
        ids = list(
            Run.objects.filter(provenance="measured")
            .order_by("deployment_id")
            .values_list("deployment_id", flat=True)
            .distinct()[:2]
        )
        urls = {
            "trivial (/healthz)": "/healthz",
            "leaderboard": "/?model=GLM+5.2&scenario=seed-20k-1k-60",
            "compare": f"/compare/?d={ids[0]}&d={ids[1]}",
            "run": f"/runs/{sample_run.pk}/",
        }
        held = (
            f"{Run.objects.count():,} runs, {Point.objects.count():,} points, "
            f"{RequestRecord.objects.count():,} request records (filled in {filled:.0f} s)"
        )
        return urls, held

    try:
        # DEBUG off serves hashed static names, which only collected files have.
        call_command("collectstatic", "--noinput", verbosity=0)
        client = Client()
        records_per_point = max(1, RECORDS_TOTAL // (sizes[-1] * POINTS_PER_RUN))
        times: dict[int, dict[str, list[float]]] = {runs: {} for runs in sizes}
        prepared: dict[int, tuple[dict[str, str], str]] = {}

        def measure_at(runs: int) -> None:
            urls = prepared[runs][0]
            for url in urls.values():
                client.get(url)  # what the first request loads and keeps (templates, caches)
            # As the production server does once a worker has loaded (apps/serving.py).
            freeze_heap()
            for name, url in [*urls.items(), ("leaderboard cached", urls["leaderboard"])]:
                found = timed(client, url, args.requests, cached=name.endswith("cached"))
                times[runs].setdefault(name, []).extend(found)

        if args.keep:
            # Every size filled first, then measured in turns: a change in the machine's load
            # over the run falls on every size alike, not on the last one measured.
            prepared = {runs: prepare(runs) for runs in sizes}
            for _ in range(args.rounds):
                for runs in sizes:
                    open_db(runs)
                    measure_at(runs)
        else:
            for runs in sizes:  # one database grown through the sizes: measured as it grows
                prepared[runs] = prepare(runs)
                measure_at(runs)
        results = {
            runs: {name: (pct(t, 50), pct(t, 95)) for name, t in by_page.items()}
            for runs, by_page in times.items()
        }
        for runs in sizes:
            print(f"\n{prepared[runs][1]}")
            trivial = results[runs]["trivial (/healthz)"]
            for name, (p50, p95) in results[runs].items():
                if name.endswith("cached"):
                    print(f"  {name:20} p50 {p50:7.1f} ms")
                    continue
                print(
                    f"  {name:20} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  "
                    f"({p50 / trivial[0]:5.1f}x / {p95 / trivial[1]:5.1f}x trivial)"
                )
        base = sizes[0]
        for runs in sizes[1:]:
            print(f"\n{runs:,}-run figure / {base:,}-run figure (p95):")
            for name in ("leaderboard", "compare", "run"):
                print(f"  {name:12} {results[runs][name][1] / results[base][name][1]:.2f}x")
    finally:
        if test_db and not args.keep:
            connection.creation.destroy_test_db(test_db, verbosity=0)


if __name__ == "__main__":
    main()
