"""Kill -9 PostgreSQL writers and restart the server under them, then count what was lost, stored twice or left a gap (issue 33).

    python benchmarks/kill_restart_postgres.py [--seconds 60] [--writers 6] [--conversations 3]
        [--kill-every 0.5] [--restart-every 6] [--out benchmarks/results/kill_restart_postgres.json]

A throwaway local server (fsync on). `--writers` processes append to `--conversations`
conversations (two or more writers each) through `History.add_event` (which catches up after a lost
race), each event under a key of its own, retried with that key after a database error (a restart
cuts every connection: the outcome of the append in flight is unknown). Each prints the content of
every event once it is acknowledged. Every `--kill-every` seconds one writer is killed with SIGKILL
and a new one started; every `--restart-every` seconds the server is restarted (`pg_ctl restart`,
alternately `-m fast` and `-m immediate`, a crash).

At the end it reads every conversation and counts: acknowledged events missing (lost), events
stored twice (the same content at two ids), positions without an event or ids out of order (gaps),
events whose JSON does not read back (half rows). The exit status is 1 when any is not zero. Wall
time only bounds the run; the result is counts.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent


def writer(url: str, name: str) -> None:
    """Append `name:0`, `name:1`, ... for ever, printing each once it is acknowledged."""
    from openhands_memory import History, MessageAction
    from openhands_memory.condenser import Condenser
    from openhands_memory.errors import ConcurrentAppendError, StoreDatabaseError

    history = None
    number = 0
    while True:
        key = f"{name}:{number}"
        while True:
            try:
                if history is None:
                    history = History.open(url, condenser=Condenser.from_config({"type": "noop"}))
                history.add_event(MessageAction(content=key), "agent", key=key)
                break
            except (StoreDatabaseError, ConcurrentAppendError):
                # The server is restarting (or others kept storing first): the same key again, until it goes in.
                time.sleep(random.uniform(0.05, 0.3))
        print(key, flush=True)
        number += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--writers", type=int, default=6)
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--kill-every", type=float, default=0.5)
    parser.add_argument("--restart-every", type=float, default=6.0)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "kill_restart_postgres.json")
    args = parser.parse_args(argv)

    from openhands_memory.testing.postgres_server import LocalPostgres

    server = LocalPostgres.start()
    base = server.url("postgres")
    acked: list[str] = []
    lock = threading.Lock()
    processes: dict[str, subprocess.Popen[str]] = {}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))}

    def pump(process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            with lock:
                acked.append(line.strip())

    def start(number: int) -> None:
        name = f"w{number}-{uuid.uuid4().hex[:6]}"
        url = f"{base}&conversation=c{number % args.conversations}"
        process = subprocess.Popen(
            [sys.executable, __file__, "--writer", url, name], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
        )
        processes[name] = process
        threading.Thread(target=pump, args=(process,), daemon=True).start()

    kills = restarts = 0
    try:
        for number in range(args.writers):
            start(number)
        end = time.monotonic() + args.seconds
        next_restart = time.monotonic() + args.restart_every
        spawned = args.writers
        while time.monotonic() < end:
            time.sleep(args.kill_every)
            victim = random.choice([name for name, p in processes.items() if p.poll() is None])
            processes[victim].send_signal(signal.SIGKILL)
            processes[victim].wait()
            kills += 1
            start(spawned)
            spawned += 1
            if time.monotonic() >= next_restart:
                mode = "immediate" if restarts % 2 else "fast"
                server._run(["pg_ctl", "-D", str(server.root / "data"), "-l", str(server.root / "server.log"), "-m", mode, "-w", "restart"], 120.0)
                restarts += 1
                next_restart = time.monotonic() + args.restart_every
        for process in processes.values():
            process.send_signal(signal.SIGKILL)
            process.wait()
        time.sleep(0.5)  # the pumps read what the writers printed before they died
        counts = check(base, args.conversations, list(acked))
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
        server.stop()
    counts.update(kills=kills, restarts=restarts, seconds=args.seconds, writers=args.writers, conversations=args.conversations)
    print(
        f"{counts['acknowledged']:,} acknowledged events, {counts['stored']:,} stored, {kills} kills, {restarts} restarts: "
        f"lost {counts['lost']}, stored twice {counts['duplicates']}, gaps {counts['gaps']}, unreadable {counts['unreadable']}"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(
        orjson.dumps({"when": datetime.now(timezone.utc).isoformat(timespec="seconds"), **counts}, option=orjson.OPT_INDENT_2)
    )
    return 1 if counts["lost"] or counts["duplicates"] or counts["gaps"] or counts["unreadable"] else 0


def check(base: str, conversations: int, acked: list[str]) -> dict[str, int]:
    """Counts of what the database holds against what was acknowledged."""
    import psycopg

    from openhands_memory.events import event_from_json

    contents: list[str] = []
    gaps = unreadable = 0
    with psycopg.connect(base) as conn:
        for number in range(conversations):
            rows = conn.execute(
                "SELECT position, event_id, body FROM openhands_events WHERE conversation_id = %s ORDER BY position",
                (f"c{number}",),
            ).fetchall()
            last = -1
            for expected, (position, event_id, body) in enumerate(rows):
                gaps += position != expected or event_id <= last
                last = event_id
                try:
                    contents.append(event_from_json(bytes(body)).content)  # type: ignore[attr-defined]
                except ValueError:
                    unreadable += 1
    stored = Counter(contents)
    return {
        "acknowledged": len(acked),
        "stored": len(contents),
        "lost": sum(1 for content in acked if content not in stored),
        "duplicates": sum(count - 1 for count in stored.values() if count > 1),
        "gaps": gaps,
        "unreadable": unreadable,
    }


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--writer":
        writer(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
