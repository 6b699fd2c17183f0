"""`load_events` on a JSONL log a stream is appending to: readers never see half a line."""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from pathlib import Path

import pytest
from conftest import HANG_GUARD_SECONDS

from openhands_memory.errors import MalformedEventError
from openhands_memory.events import event_to_json, load_events
from openhands_memory.stream import JsonlEventStore
from openhands_memory.testing.store_contract import stored_event


def _append_raw(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def test_a_log_open_for_writing_is_read_up_to_its_last_complete_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    store = JsonlEventStore(path)
    for i in range(3):
        store.append(stored_event(i))
    # What a reader sees while the next append is half written.
    _append_raw(path, event_to_json(stored_event(3))[:25])
    try:
        assert [e.id for e in load_events(path)] == [0, 1, 2]
    finally:
        store.close()


def test_a_torn_last_line_in_a_log_no_stream_has_open_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(event_to_json(stored_event(i)) + b"\n" for i in range(2)) + b'{"id": 2, "act')
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}:3: invalid JSON: ")) as caught:
        load_events(path)
    assert "the last line has no newline" in str(caught.value)


def test_a_complete_last_line_without_its_newline_is_read(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(event_to_json(stored_event(0)) + b"\n" + event_to_json(stored_event(1)))
    assert [e.id for e in load_events(path)] == [0, 1]


def test_a_bad_line_before_the_last_one_is_still_an_error(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(event_to_json(stored_event(0)) + b"\n" + b"garbage\n")
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}:2: invalid JSON")):
        load_events(path)


def test_readers_never_fail_while_a_stream_appends_4_mb_events(tmp_path: Path) -> None:
    big = "x" * (4 * 1024 * 1024)
    current = [tmp_path / "log-0.jsonl"]
    appended = [0]
    stop = threading.Event()

    def write() -> None:
        # Six 4 MB events a log, then the next log: keeps reads quick and the disk use bounded.
        for number in itertools.count():
            store = JsonlEventStore(tmp_path / f"log-{number}.jsonl")
            current[0] = store.path
            for event_id in range(6):
                if stop.is_set():
                    store.close()
                    return
                store.append(stored_event(event_id, big))
                appended[0] += 1
            store.close()
            store.path.unlink()

    writer = threading.Thread(target=write)
    writer.start()
    reads, failures = 0, []
    started = time.monotonic()
    try:
        # An amount of work, not of time: 10 reads while two logs' worth of events is appended,
        # however slow a loaded machine makes either (the clock only guards against a hang).
        while (reads < 10 or appended[0] < 12) and time.monotonic() - started < HANG_GUARD_SECONDS:
            try:
                events = load_events(current[0])
            except FileNotFoundError:  # not created yet, or just finished and removed
                continue
            except MalformedEventError as exc:
                failures.append(str(exc)[-120:])
                continue
            reads += 1
            assert [e.id for e in events] == list(range(len(events)))
    finally:
        stop.set()
        writer.join()
    assert failures == []
    assert reads >= 10 and appended[0] >= 12
