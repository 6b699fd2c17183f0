"""`load_events` on a JSONL log a stream is appending to: readers never see half a line."""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import pytest

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
    path = tmp_path / "events.jsonl"
    store = JsonlEventStore(path)
    big = "x" * (4 * 1024 * 1024)
    stop = threading.Event()
    appended: list[int] = []

    def write() -> None:
        event_id = 0
        while not stop.is_set():
            store.append(stored_event(event_id, big))
            appended.append(event_id)
            event_id += 1
            if event_id >= 40:  # bounds the file (160 MB)
                break

    writer = threading.Thread(target=write)
    writer.start()
    reads, failures, seen = 0, [], 0
    deadline = time.monotonic() + 2.0
    try:
        while time.monotonic() < deadline and writer.is_alive():
            try:
                events = load_events(path)
            except MalformedEventError as exc:
                failures.append(str(exc)[:200])
                continue
            finally:
                reads += 1
            assert [e.id for e in events] == list(range(len(events)))
            seen = max(seen, len(events))
    finally:
        stop.set()
        writer.join()
        store.close()
    assert failures == []
    assert reads > 5 and seen > 0
