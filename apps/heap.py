"""The web process's heap once it has loaded: left out of the collector's full walks."""

import gc


def freeze_heap() -> None:
    """Move everything alive now out of the collector's reach. Django, Plotly and the URL and
    template caches leave a few hundred thousand long-lived objects, and every full collection
    walked them all: about one request in forty paid a 100–250 ms pause (bench/pages.py
    measured 288 ms of collection over 40 board requests, 76 ms once frozen, no pause over
    20 ms). Objects made later are collected as before."""
    gc.collect()
    gc.freeze()
