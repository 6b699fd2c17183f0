"""Crash safety of the JSONL stream: a killed writer, torn tails, and lines that do not read back."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import warnings
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import HANG_GUARD_SECONDS

from openhands_memory.errors import CorruptRecordError, DuplicateEventError, OutOfOrderRecordError
from openhands_memory.events import MessageAction, event_to_json
from openhands_memory.stream import EventStream, RecoveryWarning, file_store
from openhands_memory.testing.store_contract import stored_event

# Appends forever and prints each acknowledged id. Every 7th event is large, so that the kill
# often lands in the middle of writing one.
_WRITER = """
import sys
from openhands_memory.events import MessageAction
from openhands_memory.stream import EventStream

stream = EventStream.open(sys.argv[1])
i = 0
while True:
    text = f"event {i} " + "x" * (300_000 if i % 7 == 0 else 20)
    event_id = stream.add_event(MessageAction(content=text), "user")
    sys.stdout.write(f"{event_id}\\n")
    sys.stdout.flush()
    i += 1
"""


def _expected_content(event_id: int) -> str:
    return f"event {event_id} " + "x" * (300_000 if event_id % 7 == 0 else 20)


def test_acknowledged_events_survive_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    child = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        acked = [int(child.stdout.readline()) for _ in range(150)]
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=HANG_GUARD_SECONDS)
    assert child.returncode == -signal.SIGKILL
    last_ack = acked[-1]

    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        stream = EventStream.open(path)
    with stream:
        ids = [e.id for e in stream.get_events()]
        assert ids == list(range(len(ids)))
        assert len(ids) > last_ack
        for event in stream.get_events(end_id=last_ack):
            assert isinstance(event, MessageAction)
            assert event.content == _expected_content(event.id)
        report = stream.store.recovered  # type: ignore[attr-defined]
        if report is not None:  # the kill tore a line: one that was never acknowledged
            assert report.line == len(ids) + 1
            assert report.sidecar.read_bytes().startswith(b'{"id":%d,' % len(ids))
        assert stream.add_event(MessageAction(content="after"), "user") == ids[-1] + 1


def _write_events(path: Path, count: int) -> bytes:
    with EventStream.open(path) as stream:
        for i in range(count):
            stream.add_event(MessageAction(content=f"message {i}"), "user")
    return path.read_bytes()


def test_torn_tail_is_set_aside_truncated_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    good = _write_events(path, 3)
    torn = event_to_json(stored_event(3))[:25]
    path.write_bytes(good + torn)

    message = "events.jsonl:4: torn last record (25 bytes) moved to events.jsonl.torn-"
    with pytest.warns(RecoveryWarning, match=re.escape(message)):
        stream = EventStream.open(path)
    report = stream.store.recovered  # type: ignore[attr-defined]
    assert (report.path, report.line, report.byte_count) == (path, 4, 25)
    assert report.sidecar.parent == tmp_path
    assert report.sidecar.name.startswith("events.jsonl.torn-")
    assert report.sidecar.read_bytes() == torn
    assert path.read_bytes() == good
    assert stream.add_event(MessageAction(content="next"), "user") == 3
    stream.close()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reopened = EventStream.open(path)
    assert reopened.store.recovered is None  # type: ignore[attr-defined]
    assert [e.id for e in reopened] == [0, 1, 2, 3]
    reopened.close()


def test_sidecar_never_overwrites_an_earlier_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class FrozenClock(datetime):
        @classmethod
        def now(cls, tz: object = None) -> FrozenClock:  # type: ignore[override]
            return cls(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)

    monkeypatch.setattr(file_store, "datetime", FrozenClock)
    path = tmp_path / "events.jsonl"
    good = _write_events(path, 1)
    sidecars = []
    for tail in (b'{"id": 1, "ti', b'{"id": 1, "act'):
        path.write_bytes(good + tail)
        with pytest.warns(RecoveryWarning):
            stream = EventStream.open(path)
        sidecars.append(stream.store.recovered.sidecar)  # type: ignore[attr-defined]
        stream.close()
    assert [p.name for p in sidecars] == [
        "events.jsonl.torn-20250102T030405.000000Z",
        "events.jsonl.torn-20250102T030405.000000Z-2",
    ]
    assert [p.read_bytes() for p in sidecars] == [b'{"id": 1, "ti', b'{"id": 1, "act']


def test_complete_last_record_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    good = _write_events(path, 2)
    last = event_to_json(stored_event(2))
    path.write_bytes(good + last)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stream = EventStream.open(path)
    assert stream.store.recovered is None  # type: ignore[attr-defined]
    assert stream.get_latest_event_id() == 2
    assert stream.add_event(MessageAction(content="next"), "user") == 3
    stream.close()
    assert path.read_bytes().startswith(good + last + b"\n")


@pytest.mark.parametrize(
    ("line_2", "reason"),
    [
        (b'{"id": 1, "act', "invalid JSON"),
        (b'{"id": 1, "foo": 2}', "neither 'action' nor 'observation' is set"),
        (b'{"action": "message", "args": {"content": "no id"}}', "the event has no id"),
        (b'{"id": 1, "action": "message", "args": {"content": 5}}', "invalid action 'message'"),
        (b'{"id": 1, "action": ["message"], "args": {}}', "'action' must be a string, got ['message']"),
        (b'{"id": 1, "kind": "ActionEvent", "action": {"kind": "TerminalAction"}}', "an OpenHands SDK (V1) event of kind 'ActionEvent'"),
        # Nested as deep as orjson reads: too deep for Python to print in a message.
        (b'{"id": 1, "action": "null", "args": {}, "source": ' + b"[" * 1000 + b"]" * 1000 + b"}", "invalid action 'null': source: "),
    ],
)
def test_corrupt_middle_line_names_file_and_line_and_changes_nothing(
    tmp_path: Path, line_2: bytes, reason: str
) -> None:
    path = tmp_path / "events.jsonl"
    lines = _write_events(path, 3).splitlines(keepends=True)
    # A torn tail too: it must not be repaired when the log is corrupt anyway.
    original = lines[0] + line_2 + b"\n" + lines[2] + b'{"id": 3, "ti'
    path.write_bytes(original)
    with pytest.raises(CorruptRecordError, match=re.escape(f"events.jsonl:2: {reason}")) as caught:
        EventStream.open(path)
    assert (caught.value.path, caught.value.line) == (path, 2)
    assert path.read_bytes() == original
    assert list(tmp_path.iterdir()) == [path]
    # The failed open let go of the lock.
    with pytest.raises(CorruptRecordError):
        EventStream.open(path)


@pytest.mark.parametrize("last", [b"not json\n", b'{"id": 3, "foo": 1}\n', b'{"id": 3, "foo": 1}'])
def test_bad_complete_last_record_is_an_error_not_a_torn_tail(tmp_path: Path, last: bytes) -> None:
    path = tmp_path / "events.jsonl"
    original = _write_events(path, 3) + last
    path.write_bytes(original)
    with pytest.raises(CorruptRecordError, match=re.escape("events.jsonl:4:")):
        EventStream.open(path)
    assert path.read_bytes() == original


def test_ids_that_do_not_increase_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    original = b"".join(event_to_json(stored_event(i)) + b"\n" for i in (0, 2, 1))
    path.write_bytes(original)
    with pytest.raises(OutOfOrderRecordError, match=re.escape("events.jsonl:3: id 1 does not follow id 2")) as caught:
        EventStream.open(path)
    assert isinstance(caught.value, DuplicateEventError)
    assert (caught.value.event_id, caught.value.previous_id, caught.value.index) == (1, 2, 2)
    assert path.read_bytes() == original


@pytest.mark.parametrize("end", [b"\r", b"\r\n"], ids=["cr", "crlf"])
def test_cr_and_crlf_line_ends_are_line_ends_not_one_torn_record(tmp_path: Path, end: bytes) -> None:
    path = tmp_path / "events.jsonl"
    original = b"".join(event_to_json(stored_event(i)) + end for i in range(3))
    path.write_bytes(original)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RecoveryWarning: nothing is set aside
        stream = EventStream.open(path)
    assert [e.id for e in stream.get_events()] == [0, 1, 2]
    assert stream.add_event(MessageAction(content="next"), "user") == 3
    stream.close()
    assert list(tmp_path.iterdir()) == [path]  # no sidecar
    assert path.read_bytes().startswith(original)
    reopened = EventStream.open(path)
    assert [e.id for e in reopened.get_events()] == [0, 1, 2, 3]
    reopened.close()


def test_a_bad_line_in_a_cr_log_is_named_by_its_cr_line_number(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    original = event_to_json(stored_event(0)) + b"\r" + b"not json\r" + event_to_json(stored_event(1)) + b"\r"
    path.write_bytes(original)
    with pytest.raises(CorruptRecordError, match=re.escape("events.jsonl:2: invalid JSON")):
        EventStream.open(path)
    assert path.read_bytes() == original
