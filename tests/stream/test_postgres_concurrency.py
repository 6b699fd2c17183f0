"""`PostgresEventStore` across processes: several writers, a writer killed mid-append, live readers.

Real processes on a real local server (loopback only: a Unix socket). Counts are bounded and no
test measures time: timeouts only guard against a hang.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
from conftest import HANG_GUARD_SECONDS

from openhands_memory import EventStream, MessageAction
from openhands_memory.events import event_from_json

pytestmark = pytest.mark.slow

WORKERS = Path(__file__).with_name("_postgres_workers.py")
REPO = Path(__file__).resolve().parents[2]
HANG_GUARD = HANG_GUARD_SECONDS
"""Seconds to wait for a line from a worker before calling it hung (it normally takes milliseconds; a
loaded machine is slow, not hung)."""


class Worker:
    """A worker process whose stdout lines are read by a thread, so reading one can time out."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen(
            [sys.executable, str(WORKERS), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def read(self) -> str:
        try:
            line = self.lines.get(timeout=HANG_GUARD)
        except queue.Empty:
            self.process.kill()
            pytest.fail(f"worker {self.process.args[2:4]} said nothing for {HANG_GUARD} s")
        if line is None:
            self.process.wait(timeout=HANG_GUARD)
            assert self.process.stderr is not None
            pytest.fail(f"worker ended ({self.process.returncode}): {self.process.stderr.read()[-2000:]}")
        return line

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def finish(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        assert self.process.wait(timeout=HANG_GUARD) == 0

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=HANG_GUARD)


def _rows(postgres_url: str, conversation: str) -> list[tuple[int, int, bytes]]:
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(
            "SELECT position, event_id, body FROM openhands_events WHERE conversation_id = %s ORDER BY position",
            (conversation,),
        ).fetchall()
    return [(position, event_id, bytes(body)) for position, event_id, body in rows]


def test_concurrent_writers_never_share_an_id_nor_leave_a_gap(postgres_url: str) -> None:
    url = f"{postgres_url}&conversation=race"
    with EventStream.open(url):  # creates the table before the race, so every writer starts alike
        pass
    writers = [Worker("writer", url, f"w{n}", "25") for n in range(4)]
    for worker in writers:
        assert worker.read() == "ready"
    for worker in writers:
        worker.send("go")
    acked: dict[str, list[int]] = {}
    for number, worker in enumerate(writers):
        lines = [worker.read() for _ in range(26)]
        acked[f"w{number}"] = [int(line.split()[1]) for line in lines[:25]]
        assert lines[25].startswith("conflicts ")
        worker.finish()
    rows = _rows(postgres_url, "race")
    assert [position for position, _, _ in rows] == list(range(100))
    assert [event_id for _, event_id, _ in rows] == list(range(100))  # no id twice, no gap
    contents = {event_id: event_from_json(body).content for _, event_id, body in rows}
    for name, ids in acked.items():
        # Every acknowledged id holds that writer's event, in the order it wrote them.
        assert [contents[event_id] for event_id in ids] == [f"{name}:{n}" for n in range(25)]
    assert sorted(contents.values()) == sorted(f"w{n}:{i}" for n in range(4) for i in range(25))


def test_a_writer_killed_mid_append_leaves_every_acknowledged_event_and_nothing_half(postgres_url: str) -> None:
    url = f"{postgres_url}&conversation=killed"
    worker = Worker("stepper", url)
    assert worker.read() == "ready"
    for number in range(5):
        worker.send(f"event {number}")
        assert worker.read() == "appending"
        assert worker.read() == f"ack {number}"
    with psycopg.connect(postgres_url) as blocker:
        # Hold the table so the next INSERT waits inside its transaction: the kill lands mid-append.
        blocker.execute("LOCK TABLE openhands_events IN EXCLUSIVE MODE")
        worker.send("event 5")
        assert worker.read() == "appending"
        with psycopg.connect(postgres_url, autocommit=True) as watcher:
            deadline = time.monotonic() + HANG_GUARD
            while not watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO%%'"
            ).fetchone()[0]:
                assert time.monotonic() < deadline, "the append never reached the database"
                time.sleep(0.01)
        worker.kill()
        blocker.rollback()  # the INSERT now runs, in a transaction its dead client can never commit
    rows = _rows(postgres_url, "killed")
    deadline = time.monotonic() + HANG_GUARD
    while _waiting_backends(postgres_url):  # the dead client's server process rolls back and ends
        assert time.monotonic() < deadline
        time.sleep(0.01)
    rows = _rows(postgres_url, "killed")
    # The append is one statement: sent before the kill, the server may finish it (the worker never
    # learnt it): then it is there whole, else not at all; either way no gap and nothing half.
    stored = len(rows)
    assert stored in (5, 6)
    assert [(position, event_id) for position, event_id, _ in rows] == [(n, n) for n in range(stored)]
    assert [event_from_json(body).content for _, _, body in rows] == [f"event {n}" for n in range(stored)]
    with EventStream.open(url) as stream:  # the next writer goes on with the next id: no gap
        assert stream.add_event(MessageAction(content="after the kill"), "agent") == stored


def _waiting_backends(postgres_url: str) -> int:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'INSERT INTO%%' AND pid <> pg_backend_pid() "
            "AND state <> 'idle'"
        ).fetchone()[0]


def test_a_writer_killed_while_appending_in_a_loop_leaves_whole_events_only(postgres_url: str) -> None:
    url = f"{postgres_url}&conversation=loop"
    worker = Worker("stepper", url)
    assert worker.read() == "ready"
    for number in range(40):  # queued at once: the worker appends back to back
        worker.send(f"event {number}")
    acked = 0
    while acked < 20:
        line = worker.read()
        if line.startswith("ack"):
            acked += 1
    worker.kill()
    rows = _rows(postgres_url, "loop")
    # Everything acknowledged is there, whole; at most the appends in flight came after it.
    assert len(rows) >= acked
    assert [(position, event_id) for position, event_id, _ in rows] == [(n, n) for n in range(len(rows))]
    assert [event_from_json(body).content for _, _, body in rows] == [f"event {n}" for n in range(len(rows))]


def test_a_live_reader_in_another_process_is_told_of_each_new_event(postgres_url: str) -> None:
    url = f"{postgres_url}&conversation=live"
    with EventStream.open(url) as stream:
        reader = Worker("reader", url, "3")
        assert reader.read() == "ready"
        for number in range(3):
            stream.add_event(MessageAction(content=f"live {number}"), "agent")
            assert reader.read() == f"got {number} live {number}"
        # It waited with no timeout each time: only a notification could wake it, once per event.
        assert reader.read() == "notifications 3"
        reader.finish()
