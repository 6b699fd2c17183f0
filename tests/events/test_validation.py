"""One validation of logs, shared by `load_events`, `EventStream.open` and the CLI: errors refuse, warnings report."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from openhands_memory.errors import CorruptRecordError, MalformedEventError, OpenHandsMemoryError
from openhands_memory.events import (
    CondensationAction,
    MessageAction,
    event_from_dict,
    load_events,
    validate_events,
    validate_log,
)
from openhands_memory.stream import EventStream


def _message(event_id: Any, cause: Any = None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": event_id,
        "timestamp": "2025-01-01T00:00:00",
        "source": "user",
        "message": "hi",
        "action": "message",
        "args": {"content": "hi", "image_urls": None, "wait_for_response": False},
    }
    if cause is not None:
        record["cause"] = cause
    return record


def _condensation(event_id: int, forgotten: list[Any]) -> dict[str, Any]:
    return {
        "id": event_id,
        "timestamp": "2025-01-01T00:00:00",
        "source": "agent",
        "message": "",
        "action": "condensation",
        "args": {"forgotten_event_ids": forgotten, "summary": None, "summary_offset": None},
    }


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


BAD_IDS = {
    "duplicate": ([0, 1, 2, 1, 3], 4, 1, "duplicate id 1"),
    "out of order": ([0, 2, 1, 3], 3, 1, "id 1 is not greater than the id before it (2)"),
    "negative": ([-1, 0, 1], 1, -1, "negative id -1"),
}


@pytest.mark.parametrize("case", sorted(BAD_IDS))
def test_load_events_refuses_bad_ids_naming_file_line_and_id(tmp_path: Path, case: str) -> None:
    ids, line, bad_id, what = BAD_IDS[case]
    log = _write_jsonl(tmp_path / "log.jsonl", [_message(i) for i in ids])
    with pytest.raises(MalformedEventError, match=re.escape(f"log.jsonl:{line} (id {bad_id}): {what}")) as caught:
        load_events(log)
    assert (caught.value.line, caught.value.event_id) == (line, bad_id)


@pytest.mark.parametrize("case", sorted(BAD_IDS))
def test_event_stream_open_refuses_the_logs_load_events_refuses(tmp_path: Path, case: str) -> None:
    ids, line, _, _ = BAD_IDS[case]
    log = _write_jsonl(tmp_path / "log.jsonl", [_message(i) for i in ids])
    with pytest.raises(CorruptRecordError, match=re.escape(f"log.jsonl:{line}:")):
        EventStream.open(log)


@pytest.mark.parametrize("case", sorted(BAD_IDS))
def test_event_stream_from_events_refuses_the_ids_validation_refuses(case: str) -> None:
    ids, _, _, _ = BAD_IDS[case]
    events = [event_from_dict(_message(i)) for i in ids]
    assert not validate_events(events).is_valid
    with pytest.raises(OpenHandsMemoryError):
        EventStream.from_events(events)


def test_a_condensation_reusing_an_event_id_is_refused_rather_than_hiding_another_event(tmp_path: Path) -> None:
    log = _write_jsonl(tmp_path / "log.jsonl", [_message(0), _message(1), _message(2), _condensation(1, [0])])
    with pytest.raises(MalformedEventError, match=re.escape("log.jsonl:4 (id 1): duplicate id 1")):
        load_events(log)


@pytest.mark.parametrize(
    ("record", "field"),
    [
        (_message(True), "id"),
        (_message("3"), "id"),
        (_message(1, cause=True), "cause"),
        (_message(1, cause="0"), "cause"),
        (_condensation(3, ["1", "2"]), "forgotten_event_ids"),
        (_condensation(3, [True]), "forgotten_event_ids"),
        ({**_condensation(3, [1]), "args": {"forgotten_event_ids": [1], "summary": "s", "summary_offset": "3"}}, "summary_offset"),
    ],
)
def test_ids_are_strict_integers_never_coerced_from_bools_or_strings(record: dict[str, Any], field: str) -> None:
    with pytest.raises(MalformedEventError, match=re.escape(field)):
        event_from_dict(record)


def test_a_cause_that_is_not_an_earlier_event_loads_with_its_id_and_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = _write_jsonl(tmp_path / "log.jsonl", [_message(0), _message(5, cause=7), _message(7, cause=3)])
    with caplog.at_level(logging.WARNING):
        events = load_events(log)
    assert [(e.id, e.cause) for e in events] == [(0, None), (5, 7), (7, 3)]
    report = validate_log(log)
    assert report.is_valid
    assert [(f.line, f.event_id, f.what) for f in report.warnings] == [
        (2, 5, "cause 7 is not an earlier event"),
        (3, 7, "cause 3 is not in the log"),
    ]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        f.describe() for f in report.warnings
    ]


def test_a_condensation_forgetting_later_or_absent_ids_is_a_warning() -> None:
    events = [event_from_dict(_message(0)), event_from_dict(_message(2)), event_from_dict(_condensation(3, [1, 2, 4]))]
    assert isinstance(events[2], CondensationAction)
    report = validate_events(events, path="log.json")
    assert report.is_valid
    assert [f.what for f in report.warnings] == [
        "forgets ids at or after its own (4)",
        "forgets ids the log does not have (1)",
    ]
    assert report.warnings[0].describe().startswith("log.json: event #2: warning: id 3: forgets ids at or after its own (4) (")


def test_an_empty_json_file_is_refused_but_a_new_streams_empty_jsonl_is_a_log(tmp_path: Path) -> None:
    (tmp_path / "log.json").write_bytes(b"")
    with pytest.raises(MalformedEventError, match=re.escape("log.json:1: empty file")):
        load_events(tmp_path / "log.json")
    EventStream.open(tmp_path / "new.jsonl").close()
    assert load_events(tmp_path / "new.jsonl") == []


def test_events_without_ids_are_an_error_for_validation() -> None:
    report = validate_events([MessageAction(content="hi")])
    assert [f.what for f in report.errors] == ["event without an id"]


def test_every_real_openhands_log_loads_without_an_error(real_logs_dir: Path) -> None:
    logs = sorted(real_logs_dir.glob("*.json"))
    assert logs
    checked = 0
    for log in logs:
        report = validate_log(log)
        assert report.is_valid, [f.describe() for f in report.errors]
        records = _records(log)
        if all(isinstance(r.get("id"), int) for r in records):  # SDK (UUIDs) and legacy (no ids) logs are numbered
            checked += 1
            assert [e.id for e in load_events(log)] == [r["id"] for r in records]
    assert checked >= 5


def _records(log: Path) -> list[dict[str, Any]]:
    data = orjson.loads(log.read_bytes())
    return data if isinstance(data, list) else data.get("trajectory") or data.get("history")
