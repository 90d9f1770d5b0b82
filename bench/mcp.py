"""What asking through /mcp/ costs over asking the REST API: the same answer both ways, and
tools/list against the trivial /healthz, on a running site, each as a ratio measured in the
same run (interleaved, so the machine's load weighs on both alike).

    python bench/mcp.py [--site http://127.0.0.1:8000] [--requests 15]

Needs the site running with the reference data loaded (`scripts/run` does both).
"""

import argparse
import statistics
import time

import httpx

QUESTION = {
    "model": "DeepSeek-R1-0528",
    "scenario": "8k-1k",
    "a": "MI355X",
    "b": "B200",
    "precision": "fp4",
    "interactivity_min": 30,
    "swing": False,
}
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


def rpc(method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def timed(client: httpx.Client, send) -> float:
    started = time.perf_counter()
    answered = send(client)
    assert answered.status_code == 200, answered.text[:500]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--site", default="http://127.0.0.1:8000")
    parser.add_argument("--requests", type=int, default=15)
    args = parser.parse_args()
    site = args.site.rstrip("/")
    asks = {
        "answer, REST API": lambda c: c.get(
            f"{site}/api/v1/compare/answer", params={**QUESTION, "swing": "false"}
        ),
        "answer, MCP": lambda c: c.post(
            f"{site}/mcp/",
            json=rpc("tools/call", {"name": "answer", "arguments": QUESTION}),
            headers=HEADERS,
        ),
        "/healthz": lambda c: c.get(f"{site}/healthz"),
        "tools/list, MCP": lambda c: c.post(
            f"{site}/mcp/", json=rpc("tools/list", {}), headers=HEADERS
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in asks}
    with httpx.Client(timeout=300) as client:
        for send in asks.values():
            timed(client, send)  # warm
        for _ in range(args.requests):
            for name, send in asks.items():
                times[name].append(timed(client, send))
    median = {name: statistics.median(values) for name, values in times.items()}
    for name, value in median.items():
        print(f"{name:18} median {value * 1000:8.1f} ms")
    print(f"answer: MCP / REST API = {median['answer, MCP'] / median['answer, REST API']:.2f}")
    print(f"tools/list / healthz   = {median['tools/list, MCP'] / median['/healthz']:.2f}")


if __name__ == "__main__":
    main()
