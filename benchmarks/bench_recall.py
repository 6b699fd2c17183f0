"""Search index benchmark: indexing a log into SQLite FTS5, and querying it, at 10k and 100k events.

    python benchmarks/bench_recall.py [--sizes 10000 100000] [--repeat 3] [--query-repeat 20]
        [--out benchmarks/results/recall/recall.json]

For each size it builds a synthetic coding session (`openhands_memory.testing.synthetic`, seed 0,
a condensation every 200 events) and measures, with the garbage collector off while timing:

- index: `SearchIndex.for_log(log).sync(events)` into a new sidecar file (the whole log, one
  transaction), median of `--repeat` runs; also in memory;
- append: `add(event)` of one new event (its own transaction, as on every append), median of 200;
- reopen: `for_log` on the existing sidecar and a `sync` with nothing new (the fingerprint check);
- query: `search(q, limit=5)` for each query below, `--query-repeat` times; the median over all of
  them, the slowest query's median, and the sidecar's size.

Targets (issue 11): index 10k events in <= 1 s (10 s for 100k), a median query in <= 10 ms at 10k
and 100k. The exit status is 0 either way: this is a report.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openhands_memory.events import AgentThinkAction, Event
from openhands_memory.recall import SearchIndex, sidecar_path
from openhands_memory.testing.synthetic import synthetic_session

HERE = Path(__file__).resolve().parent
INDEX_TARGET_S = 1.0
"""Indexing 10k events must take at most this long."""
QUERY_TARGET_S = 0.010
"""The median query must take at most this long, at 10k and at 100k events."""
QUERIES = (
    "FAILED tests/test_parser.py::test_decode_config",  # a test id
    "src/mapleleaf/config.py",  # a path
    "python -m pytest -q",  # a command
    "error",  # a common word
    "ValueError normalize state",  # a few words of an output
    "check_client models",  # an identifier and a word
    "kookaburra",  # no match
)


def _timed(run: Callable[[], Any]) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        run()
        return time.perf_counter() - start
    finally:
        gc.enable()


def measure(events: list[Event], *, repeat: int, query_repeat: int) -> dict[str, Any]:
    """Every measure of one session size."""
    result: dict[str, Any] = {"events": len(events)}
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "events.jsonl"
        log.write_text("")

        def index_file() -> None:
            sidecar_path(log).unlink(missing_ok=True)
            with SearchIndex.for_log(log) as index:
                index.sync(events)

        def index_memory() -> None:
            with SearchIndex.in_memory() as index:
                index.sync(events)

        result["index_file_s"] = statistics.median(_timed(index_file) for _ in range(repeat))
        result["index_memory_s"] = statistics.median(_timed(index_memory) for _ in range(repeat))
        result["sidecar_bytes"] = sidecar_path(log).stat().st_size
        with sqlite3.connect(sidecar_path(log)) as conn:
            result["indexed_events"] = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        conn.close()

        reopen: list[float] = []
        for _ in range(repeat):
            start = time.perf_counter()
            with SearchIndex.for_log(log) as index:
                assert index.sync(events) == 0
            reopen.append(time.perf_counter() - start)
        result["reopen_sync_s"] = statistics.median(reopen)

        with SearchIndex.for_log(log) as index:
            per_query: dict[str, dict[str, Any]] = {}
            samples: list[float] = []
            for query in QUERIES:
                index.search(query)  # warm-up
                times = [_timed(lambda q=query: index.search(q)) for _ in range(query_repeat)]
                samples.extend(times)
                hits = index.search(query)
                per_query[query] = {"median_s": statistics.median(times), "max_s": max(times), "hits": len(hits)}
            result["queries"] = per_query
            result["query_median_s"] = statistics.median(samples)
            result["query_slowest_median_s"] = max(q["median_s"] for q in per_query.values())

            last = events[-1].id
            assert last is not None
            appends = []
            for i in range(200):
                event = AgentThinkAction(id=last + 1 + i, thought=f"appended thought number {i} about the parser")
                appends.append(_timed(lambda e=event: index.add(e)))
            result["append_median_s"] = statistics.median(appends)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--query-repeat", type=int, default=20)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "recall" / "recall.json")
    args = parser.parse_args(argv)

    cases = []
    for size in args.sizes:
        print(f"{size} events...", file=sys.stderr, flush=True)
        events = synthetic_session(size, seed=0, condense_every=200)
        case = measure(events, repeat=args.repeat, query_repeat=args.query_repeat)
        case["index_target_met"] = case["index_file_s"] <= INDEX_TARGET_S * size / 10_000
        case["query_target_met"] = case["query_median_s"] <= QUERY_TARGET_S
        cases.append(case)

    header = (
        f"{'events':>7} {'indexed':>7} | {'index s':>7} {'(memory)':>8} {'append ms':>9} {'reopen ms':>9} | "
        f"{'query ms':>8} {'slowest':>7} | {'sidecar MB':>10}"
    )
    print(header)
    print("-" * len(header))
    for case in cases:
        print(
            f"{case['events']:>7} {case['indexed_events']:>7} | {case['index_file_s']:>7.2f} "
            f"{case['index_memory_s']:>8.2f} {case['append_median_s'] * 1e3:>9.2f} {case['reopen_sync_s'] * 1e3:>9.1f} | "
            f"{case['query_median_s'] * 1e3:>8.2f} {case['query_slowest_median_s'] * 1e3:>7.2f} | "
            f"{case['sidecar_bytes'] / 1e6:>10.1f}"
        )
    for case in cases:
        index_ok = "PASS" if case["index_target_met"] else "FAIL"
        query_ok = "PASS" if case["query_target_met"] else "FAIL"
        print(
            f"{case['events']} events: index {index_ok} (target {INDEX_TARGET_S * case['events'] / 10_000:.0f} s), "
            f"median query {query_ok} (target {QUERY_TARGET_S * 1e3:.0f} ms; slowest query "
            f"{case['query_slowest_median_s'] * 1e3:.1f} ms)"
        )
    print(
        "index: sync of the whole log into a new sidecar (median); append: add() of one event; reopen: for_log "
        "and a sync with nothing new; query: search(limit=5) over the queries in the JSON (median; slowest: the "
        "slowest query's median)."
    )

    report = {
        "meta": {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "repeat": args.repeat,
            "query_repeat": args.query_repeat,
            "queries": list(QUERIES),
            "timer": "time.perf_counter, garbage collector off per run",
        },
        "cases": cases,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
