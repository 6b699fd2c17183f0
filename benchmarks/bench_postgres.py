"""PostgreSQL event store benchmark, beside the JSONL store: appends per second, opening big conversations.

    python benchmarks/bench_postgres.py [--url postgresql://...] [--appends 2000] [--sizes 10000 200000]
        [--repeat 3] [--shared-appends 300] [--step 1] [--only shared] [--out benchmarks/results/postgres.json]

Without `--url` it starts a throwaway local server (`LocalPostgres`: initdb in a temporary folder, a
Unix socket, PostgreSQL's default durability: fsync on, synchronous_commit on, so every
acknowledged append is on disk) and removes it at the end. With `--url` it uses that database
(tables in a new schema `bench_<time>`, dropped at the end).

Measures, each the median of `--repeat` runs:
- appends/s, 1 conversation: one process adds `--appends` events (synthetic, as a coding session
  has them) with `EventStream.add_event`, to PostgreSQL, to PostgreSQL with `synchronous_commit=off`
  ("PG async", set in the URL: `options=-csynchronous_commit=off`), to a JSONL file, and to a JSONL
  file with `fsync=True`. PostgreSQL's default and JSONL with fsync survive a power loss; PG async
  and the JSONL default survive the worker being killed (PG async: and a server crash, but for the
  last fraction of a second, never its consistency);
- appends/s, 8 conversations: 8 processes, one conversation (or file) each, `--appends` events
  each, started together; events of all 8 over the time from the start to the last one done;
- shared conversations (PostgreSQL only): 16 processes on 8 conversations (two writers each, as
  workers that hand a conversation over or a dashboard that annotates it), `--shared-appends`
  events each, started together; each append is timed from its first try to its acknowledgement
  (a lost race is caught up and tried again, as `History.add_event` does: in the conversation's
  turn, or after a random pause with a store that has none): p50, p99 and max latency over every
  append of every run, appends/s (all of them over the span), lost races, the most for one append;
- open: a conversation of each of `--sizes` events. `EventStream.open` (PostgreSQL reads the ids
  only; JSONL reads and parses every line), and open + every event read (`stream.snapshot()`, what
  `History.open` does);
- import: `PostgresEventStore.append_all` (COPY, one transaction) of each size, and `dump_events`
  of the same events to JSONL;
- the body column: the real OpenHands logs stored as jsonb, json and bytea, how many come back
  byte for byte and how long reading them back takes (why the store keeps bytea).

Prints a table and writes the JSON report (every sample) to `--out`. A report, not a gate: exit 0.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from openhands_memory.events import Event, MessageAction, dump_events, event_to_json, load_events
from openhands_memory.stream import EventStream, PostgresEventStore
from openhands_memory.testing.synthetic import synthetic_session

HERE = Path(__file__).resolve().parent
REAL_LOGS = HERE.parent.parent / "shared" / "fixtures" / "openhands-logs"
WRITERS = 8


def median_of(samples: list[float]) -> float:
    return statistics.median(samples)


def timed(run: Callable[[], Any], repeat: int, setup: Callable[[], Any] | None = None) -> list[float]:
    """`repeat` timings of `run` (after `setup`, untimed), garbage collector off while timing."""
    samples = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        gc.disable()
        try:
            started = time.perf_counter()
            run()
            samples.append(time.perf_counter() - started)
        finally:
            gc.enable()
    return samples


def new_events(count: int) -> list[Event]:
    """Events as a session adds them (no ids yet): the synthetic session's, ids and times cleared."""
    events = synthetic_session(count, seed=3)
    for event in events:
        event.id = None
    return events


def append_all(location: str, events: list[Event], *, fsync: bool = False, step: int = 1) -> float:
    """Add every event to a new stream at `location` (`step` at a time with `add_events`); returns the seconds it took (opening excluded)."""
    with EventStream.open(location, fsync=fsync) as stream:
        started = time.perf_counter()
        if step > 1:
            for start in range(0, len(events), step):
                batch = [event.model_copy() for event in events[start : start + step]]
                stream.add_events(batch, batch[0].source or "agent")
        else:
            for event in events:
                stream.add_event(event.model_copy(), event.source or "agent")
        return time.perf_counter() - started


def _writer(location: str, count: int, fsync: bool, barrier: Any, results: Any) -> None:
    events = new_events(count)
    with EventStream.open(location, fsync=fsync) as stream:
        barrier.wait()
        started = time.time()
        for event in events:
            stream.add_event(event, event.source or "agent")
        results.put((started, time.time()))


def concurrent_appends(locations: list[str], count: int, *, fsync: bool = False) -> float:
    """Events per second of `len(locations)` processes appending `count` events each, started together."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(locations))
    results = context.Queue()
    workers = [context.Process(target=_writer, args=(loc, count, fsync, barrier, results)) for loc in locations]
    for worker in workers:
        worker.start()
    spans = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=600)
        if worker.exitcode != 0:
            raise RuntimeError(f"a writer failed ({worker.exitcode})")
    return len(locations) * count / (max(end for _, end in spans) - min(start for start, _ in spans))


SHARED_WRITERS, SHARED_CONVERSATIONS = 16, 8
TURN_AFTER = 2
"""As `openhands_memory.history.TURN_AFTER` (the bench runs on code from before it too)."""


def _shared_writer(location: str, count: int, barrier: Any, results: Any, turn_after: int, step: int = 1) -> None:
    from openhands_memory.errors import ConcurrentAppendError

    events = new_events(count)
    add: Callable[[Any, Any], Any] = (lambda stream, event: stream.add_event(event, event.source or "agent"))
    if step > 1:  # an agent step's events at once (`add_events`): one append of `step` events
        events = [events[start : start + step] for start in range(0, len(events), step)]  # type: ignore[misc]
        add = lambda stream, batch: stream.add_events(batch, batch[0].source or "agent")  # noqa: E731
    latencies: list[float] = []
    conflicts = in_a_row = 0
    with EventStream.open(location) as stream:
        turn = getattr(stream.store, "turn", None) if turn_after else None
        barrier.wait()
        started = time.time()
        for event in events:
            began = time.perf_counter()
            lost = 0
            while True:
                try:
                    if turn is not None and lost >= turn_after:
                        with turn():  # as `History.add_event` does: the writer that won waits for this one
                            stream.catch_up()
                            add(stream, event)
                    else:
                        add(stream, event)
                    break
                except ConcurrentAppendError:
                    lost += 1
                    if turn is None:  # a store without turns (before issue 33): a random, growing pause
                        time.sleep(random.uniform(0, min(0.5, 0.005 * 2**lost)))
                        stream.catch_up()
                    elif lost < turn_after:
                        stream.catch_up()
            conflicts += lost
            in_a_row = max(in_a_row, lost)
            latencies.append(time.perf_counter() - began)
        results.put((started, time.time(), latencies, (conflicts, in_a_row)))


def shared_appends(base_url: str, count: int, run: int, turn_after: int = TURN_AFTER, step: int = 1) -> dict[str, Any]:
    """`SHARED_WRITERS` processes on `SHARED_CONVERSATIONS` conversations, `count` events each (`step` an append): latencies, rate, lost races."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(SHARED_WRITERS)
    results = context.Queue()
    locations = [f"{base_url}&conversation=shared{run}_{n % SHARED_CONVERSATIONS}" for n in range(SHARED_WRITERS)]
    for location in dict.fromkeys(locations):  # the conversations exist before the race (as in real use)
        EventStream.open(location).close()
    workers = [context.Process(target=_shared_writer, args=(loc, count, barrier, results, turn_after, step)) for loc in locations]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=900) for _ in workers]
    for worker in workers:
        worker.join(timeout=600)
        if worker.exitcode != 0:
            raise RuntimeError(f"a writer failed ({worker.exitcode})")
    span = max(end for _, end, _, _ in outcomes) - min(start for start, _, _, _ in outcomes)
    latencies = [latency for _, _, samples, _ in outcomes for latency in samples]
    return {
        "appends_per_second": len(latencies) / span,
        "latencies": latencies,
        "conflicts": sum(lost for *_, (lost, _) in outcomes),
        "most_in_a_row": max(row for *_, (_, row) in outcomes),
    }


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def body_column_measure(url: str) -> dict[str, Any]:
    """The real logs as jsonb, json and bytea: exact round trips and read time (median of 5)."""
    import psycopg

    bodies: list[bytes] = []
    for path in sorted(REAL_LOGS.glob("*.json")):
        bodies.extend(event_to_json(e) for e in load_events(path))
    report: dict[str, Any] = {"events": len(bodies), "bytes": sum(map(len, bodies))}
    with psycopg.connect(url, autocommit=True) as conn:
        for kind in ("jsonb", "json", "bytea"):
            conn.execute(f"DROP TABLE IF EXISTS body_{kind}; CREATE TABLE body_{kind} (i int PRIMARY KEY, b {kind})")
            with conn.cursor() as cursor:
                params = [(i, b if kind == "bytea" else b.decode()) for i, b in enumerate(bodies)]
                cursor.executemany(f"INSERT INTO body_{kind} VALUES (%s, %s{'' if kind == 'bytea' else '::' + kind})", params)
            select = f"SELECT {'b' if kind == 'bytea' else 'b::text'} FROM body_{kind} ORDER BY i"
            back: list[bytes] = []

            def read() -> None:
                with conn.cursor(binary=True) as cursor:
                    rows = cursor.execute(select).fetchall()
                back[:] = [bytes(r[0]) if kind == "bytea" else r[0].encode() for r in rows]

            samples = timed(read, 5)
            report[kind] = {"exact": sum(a == b for a, b in zip(back, bodies)), "read_seconds": samples}
            conn.execute(f"DROP TABLE body_{kind}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a database to use (default: start a throwaway local server)")
    parser.add_argument("--appends", type=int, default=2000, help="events appended per run (per process with 8)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 200_000], help="conversation sizes to open")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measure; the median is reported")
    parser.add_argument("--shared-appends", type=int, default=300, help="events appended per writer, 16 writers on 8 conversations")
    parser.add_argument(
        "--turn-after", type=int, default=TURN_AFTER,
        help="shared: lost races in a row before a writer waits for the conversation's turn (0: never, a random pause each time)",
    )
    parser.add_argument(
        "--step", type=int, default=1,
        help="events per append (an agent step's, with add_events) in shared (its latencies and appends/s count appends) "
        "and in PostgreSQL's appends/s of 1 conversation (events/s)",
    )
    parser.add_argument(
        "--only", nargs="+", choices=["append", "shared", "open", "body"], help="run only these measures (default: all)"
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "postgres.json", help="the JSON report")
    args = parser.parse_args(argv)

    server = None
    schema = f"bench_{int(time.time())}"
    if args.url is None:
        from openhands_memory.testing.postgres_server import LocalPostgres

        print("starting a throwaway local PostgreSQL server (fsync on, synchronous_commit on)...", file=sys.stderr)
        server = LocalPostgres.start()
        base = server.url("postgres")
    else:
        base = args.url
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        server_version = conn.info.server_version
        settings = {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in ("fsync", "synchronous_commit")}
    url = f"{base}{'&' if '?' in base else '?'}options={quote(f'-csearch_path={schema}', safe='')}"
    # The same database with commits acknowledged before their WAL is flushed: an append then survives
    # the worker being killed (as the JSONL default does), and a server crash loses at most the last moment.
    async_url = f"{base}{'&' if '?' in base else '?'}options={quote(f'-csearch_path={schema} -csynchronous_commit=off', safe='')}"
    workdir = Path(tempfile.mkdtemp(prefix="bench-postgres-"))
    runs = iter(range(1_000_000))
    results: dict[str, Any] = {}
    try:
        with EventStream.open(f"{url}&conversation=warm") as stream:  # create the table outside the timings
            stream.add_event(MessageAction(content="warm up"), "user")

        wanted = set(args.only or ["append", "shared", "open", "body"])
        if "shared" in wanted:
            print(
                f"appends: {SHARED_WRITERS} writers on {SHARED_CONVERSATIONS} conversations, {args.shared_appends} each...",
                file=sys.stderr,
            )
            runs_shared = [shared_appends(url, args.shared_appends, next(runs), args.turn_after, args.step) for _ in range(args.repeat)]
            latencies = [latency for run in runs_shared for latency in run["latencies"]]
            results["shared"] = {
                "appends_per_second": [run["appends_per_second"] for run in runs_shared],
                "p50_ms": percentile(latencies, 0.50) * 1000,
                "p99_ms": percentile(latencies, 0.99) * 1000,
                "max_ms": max(latencies) * 1000,
                "appends": len(latencies),
                "conflicts": sum(run["conflicts"] for run in runs_shared),
                "most_lost_races_for_one_append": max(run["most_in_a_row"] for run in runs_shared),
                "events_per_append": args.step,
            }
        events = new_events(args.appends) if "append" in wanted else []
        if "append" in wanted:
            print(f"appends: {args.appends} events, 1 conversation...", file=sys.stderr)
            results["append_1"] = {
                "postgres": [
                    args.appends / append_all(f"{url}&conversation=a{next(runs)}", events, step=args.step) for _ in range(args.repeat)
                ],
                "postgres_async": [
                    args.appends / append_all(f"{async_url}&conversation=a{next(runs)}", events, step=args.step)
                    for _ in range(args.repeat)
                ],
                "jsonl": [args.appends / append_all(str(workdir / f"a{next(runs)}.jsonl"), events) for _ in range(args.repeat)],
                "jsonl_fsync": [
                    args.appends / append_all(str(workdir / f"a{next(runs)}.jsonl"), events, fsync=True) for _ in range(args.repeat)
                ],
            }
            print(f"appends: {args.appends} events in each of {WRITERS} conversations at once...", file=sys.stderr)
            results["append_8"] = {
                "postgres": [
                    concurrent_appends([f"{url}&conversation=c{next(runs)}" for _ in range(WRITERS)], args.appends)
                    for _ in range(args.repeat)
                ],
                "postgres_async": [
                    concurrent_appends([f"{async_url}&conversation=c{next(runs)}" for _ in range(WRITERS)], args.appends)
                    for _ in range(args.repeat)
                ],
                "jsonl": [
                    concurrent_appends([str(workdir / f"c{next(runs)}.jsonl") for _ in range(WRITERS)], args.appends)
                    for _ in range(args.repeat)
                ],
                "jsonl_fsync": [
                    concurrent_appends([str(workdir / f"c{next(runs)}.jsonl") for _ in range(WRITERS)], args.appends, fsync=True)
                    for _ in range(args.repeat)
                ],
            }
        del events
        for size in args.sizes if "open" in wanted else []:
            print(f"open: {size:,} events...", file=sys.stderr)
            stored = synthetic_session(size, seed=0, condense_every=200)
            location, path = f"{url}&conversation=open{size}", workdir / f"open{size}.jsonl"
            store = PostgresEventStore.from_url(location)
            started = time.perf_counter()
            store.append_all(stored)
            copy_seconds = time.perf_counter() - started
            store.close()
            started = time.perf_counter()
            dump_events(stored, path)
            dump_seconds = time.perf_counter() - started
            del stored, store
            gc.collect()

            def open_only(where: str) -> Callable[[], None]:
                return lambda: EventStream.open(where).close()

            def open_and_read(where: str) -> Callable[[], None]:
                def run() -> None:
                    with EventStream.open(where) as stream:
                        assert len(stream.snapshot()) == size

                return run

            results[f"open_{size}"] = {
                "postgres": timed(open_only(location), args.repeat),
                "jsonl": timed(open_only(str(path)), args.repeat),
            }
            results[f"open_read_{size}"] = {
                "postgres": timed(open_and_read(location), args.repeat),
                "jsonl": timed(open_and_read(str(path)), args.repeat),
            }
            results[f"import_{size}"] = {"postgres": [copy_seconds], "jsonl": [dump_seconds], "jsonl_bytes": path.stat().st_size}
            path.unlink()
        if REAL_LOGS.is_dir() and "body" in wanted:
            print("body column: jsonb, json, bytea...", file=sys.stderr)
            results["body_column"] = body_column_measure(url)
    finally:
        for leftover in workdir.glob("*"):
            leftover.unlink()
        workdir.rmdir()
        if server is not None:
            server.stop()
        else:
            with psycopg.connect(base, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')

    print_table(results, args, server_version, settings)
    report = {
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "versions": {"psycopg": version("psycopg"), "postgresql": server_version, **settings},
        "options": {
            "appends": args.appends, "sizes": args.sizes, "repeat": args.repeat, "writers": WRITERS,
            "shared_appends": args.shared_appends, "shared_writers": SHARED_WRITERS,
            "shared_conversations": SHARED_CONVERSATIONS, "only": args.only, "turn_after": args.turn_after,
        },  # fmt: skip
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    print(f"\nwrote {args.out}", file=sys.stderr)
    return 0


def print_table(results: dict[str, Any], args: argparse.Namespace, server_version: int, settings: dict[str, str]) -> None:
    print(
        f"\nPostgreSQL {server_version // 10000}.{server_version % 10000} (fsync {settings['fsync']}, synchronous_commit "
        f"{settings['synchronous_commit']}), local Unix socket; {os.cpu_count()} CPUs; medians of {args.repeat} runs\n"
    )
    print(f"| {'measure':<44} | {'PostgreSQL':>12} | {'PG async':>12} | {'JSONL':>12} | {'JSONL fsync':>12} |")
    print(f"|{'-' * 46}|{'-' * 14}|{'-' * 14}|{'-' * 14}|{'-' * 14}|")

    def row(name: str, key: str, unit: str) -> None:
        if key not in results:
            return
        cells = []
        for store in ("postgres", "postgres_async", "jsonl", "jsonl_fsync"):
            samples = results[key].get(store)
            if not samples:
                cells.append("-")
            elif unit == "/s":
                cells.append(f"{median_of(samples):,.0f}/s")
            else:
                cells.append(f"{median_of(samples):.3f} s")
        print(f"| {name:<44} | {cells[0]:>12} | {cells[1]:>12} | {cells[2]:>12} | {cells[3]:>12} |")

    row("appends, 1 conversation", "append_1", "/s")
    row(f"appends, {WRITERS} conversations at once (all)", "append_8", "/s")
    for size in args.sizes:
        row(f"open {size:,} events (stream: ids)", f"open_{size}", "s")
        row(f"open {size:,} events + read every event", f"open_read_{size}", "s")
        row(f"store {size:,} events at once (COPY / dump)", f"import_{size}", "s")
    shared = results.get("shared")
    if shared:
        print(
            f"\n{SHARED_WRITERS} writers on {SHARED_CONVERSATIONS} conversations (PostgreSQL), {shared['appends']:,} appends of {shared.get('events_per_append', 1)} event(s):\n"
            f"| {'p50 append':>11} | {'p99 append':>11} | {'max append':>11} | {'appends/s':>10} | {'lost races':>10} | "
            f"{'most for one':>12} |\n"
            f"|{'-' * 13}|{'-' * 13}|{'-' * 13}|{'-' * 12}|{'-' * 12}|{'-' * 14}|\n"
            f"| {shared['p50_ms']:>8.2f} ms | {shared['p99_ms']:>8.2f} ms | {shared['max_ms']:>8.1f} ms | "
            f"{median_of(shared['appends_per_second']):>10,.0f} | {shared['conflicts']:>10,} | "
            f"{shared['most_lost_races_for_one_append']:>12,} |"
        )
    body = results.get("body_column")
    if body:
        print(f"\nbody column, {body['events']:,} real OpenHands events ({body['bytes'] / 1e6:.1f} MB):")
        for kind in ("jsonb", "json", "bytea"):
            print(
                f"  {kind:<6} exact {body[kind]['exact']:>5,}/{body['events']:,}, read back in "
                f"{median_of(body[kind]['read_seconds']):.3f} s"
            )


if __name__ == "__main__":
    sys.exit(main())
