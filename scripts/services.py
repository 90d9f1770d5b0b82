"""Checks that the PostgreSQL and Redis the tests need answer, with a clear message if not."""

import argparse
import socket
import sys
import time
from urllib.parse import urlsplit


def reachable(url: str, default_port: int, wait_s: float = 10.0) -> bool:
    parts = urlsplit(url)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with socket.create_connection((parts.hostname, parts.port or default_port), timeout=2):
                return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--postgres", required=True)
    parser.add_argument("--redis", required=True)
    args = parser.parse_args()
    missing = [
        f"{name} at {url}"
        for name, url, port in (("PostgreSQL", args.postgres, 5432), ("Redis", args.redis, 6379))
        if not reachable(url, port)
    ]
    if missing:
        sys.exit(
            "The test suite needs these services and cannot reach them: "
            + "; ".join(missing)
            + ". Start them (see README, 'Tests') or set TEST_DATABASE_URL / TEST_REDIS_URL."
        )
    print("PostgreSQL and Redis answer.")


if __name__ == "__main__":
    main()
