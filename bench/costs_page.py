"""/costs/ with a model chosen against the board (/), on the shipped reference data, in one run.

    python bench/costs_page.py [--repeat 5]

Loads the reference data (accelerators, prices, published runs and the InferenceX snapshot)
into a fresh PostgreSQL database, as `loadreference` does, then asks each page `--repeat`
times, taking turns, through Django's test client (the whole view and template, no network),
and keeps the fastest of each, the same rule on both sides of the ratio (on a shared machine
the slower answers mostly measure the neighbours). Prints seconds, HTML size and table rows of
each page and the time ratio; no figure is a threshold. Uses the PostgreSQL at DATABASE_URL
(default: postgres://postgres@127.0.0.1:5432/inferboard_bench); the database is created and
dropped by the run. The shared cache is cleared before each answer, so the board's cached
parts do not make it look cheaper than a first visit.
"""

import argparse
import time

from _db import scratch_postgres


def measure(args: argparse.Namespace) -> None:
    from django.core.cache import cache
    from django.core.management import call_command
    from django.test import Client

    from apps.costs.procurement_table import default_model

    started = time.perf_counter()
    call_command("loadreference", verbosity=0)
    print(f"reference data loaded in {time.perf_counter() - started:.1f} s")
    model = default_model(org=None)
    pages = {"board /": "/", f"/costs/ ({model})": f"/costs/?model={model}"}
    client = Client(HTTP_HOST="127.0.0.1")
    best: dict[str, tuple[float, int, int]] = {}
    for _ in range(args.repeat):
        for name, url in pages.items():
            cache.clear()
            start = time.perf_counter()
            response = client.get(url)
            seconds = time.perf_counter() - start
            assert response.status_code == 200, (url, response.status_code)
            html = response.content.decode()
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, len(response.content), html.count('class="row-main"'))
    for name, (seconds, size, rows) in best.items():
        print(f"{name:32s} {seconds:6.3f} s  {size / 1024:6.1f} KB  {rows:3d} table rows")
    board, costs = best["board /"][0], best[f"/costs/ ({model})"][0]
    print(f"/costs/ / board: {costs / board:.2f}x (fastest of {args.repeat} each)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="answers per page")
    args = parser.parse_args()
    with scratch_postgres("costs_page.py"):
        measure(args)


if __name__ == "__main__":
    main()
