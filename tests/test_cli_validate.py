"""`openhands-memory validate LOG...`: one line a finding, --json for machines, exit 1 on errors only."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from openhands_memory.cli import main

WHY_IDS = "ids name events: condensations forget and causes point by id, so a reader would have to guess"


def _message(event_id: int, cause: int | None = None) -> dict[str, Any]:
    return {
        "id": event_id,
        "timestamp": "2025-01-01T00:00:00",
        "source": "user",
        "message": "hi",
        "action": "message",
        "args": {"content": "hi", "image_urls": None, "wait_for_response": False},
        **({"cause": cause} if cause is not None else {}),
    }


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def test_validate_prints_each_error_with_file_line_id_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _jsonl(tmp_path / "dup.jsonl", [_message(0), _message(1), _message(1)])
    (tmp_path / "empty.json").write_bytes(b"")
    assert main(["validate", "dup.jsonl", "empty.json"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"dup.jsonl:3: error: id 1: duplicate id 1 ({WHY_IDS})",
        "dup.jsonl: 3 events, 1 errors, 0 warnings: refused by every reader",
        "empty.json:1: error: empty file: no JSON list, no events (a log holds at least a JSON list)",
        "empty.json: 0 events, 1 errors, 0 warnings: refused by every reader",
    ]


def test_validate_exits_0_on_warnings_only_and_view_shows_the_files_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _jsonl(tmp_path / "slice.jsonl", [_message(4, cause=2), _message(9, cause=4)])
    assert main(["validate", "slice.jsonl"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "slice.jsonl:1: warning: id 4: cause 2 is not in the log (the log may be a slice; the link is kept as written)",
        "slice.jsonl: 2 events, 0 errors, 1 warnings: loads",
    ]
    assert main(["view", "slice.jsonl", "--json"]) == 0
    assert [e["id"] for e in json.loads(capsys.readouterr().out)] == [4, 9]


def test_validate_json_lists_every_finding_and_unreadable_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _jsonl(tmp_path / "neg.jsonl", [_message(-1), _message(0)])
    (tmp_path / "bool.jsonl").write_bytes(orjson.dumps({**_message(0), "id": True}) + b"\n")
    assert main(["validate", "--json", "neg.jsonl", "bool.jsonl", "missing.json"]) == 1
    reports = json.loads(capsys.readouterr().out)
    assert [(r["path"], r["errors"], r["warnings"]) for r in reports] == [
        ("neg.jsonl", 1, 0),
        ("bool.jsonl", 1, 0),
        ("missing.json", 1, 0),
    ]
    assert reports[0]["findings"] == [
        {"path": "neg.jsonl", "line": 1, "index": 0, "event_id": -1, "level": "error", "what": "negative id -1", "why": WHY_IDS}
    ]
    assert reports[1]["findings"][0]["line"] == 1
    assert "id: Input should be a valid integer" in reports[1]["findings"][0]["what"]


def test_validate_passes_every_real_openhands_log(real_logs_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = sorted(str(p) for p in real_logs_dir.glob("*.json"))
    assert main(["validate", *logs]) == 0
    assert all(" 0 errors, " in line for line in capsys.readouterr().out.splitlines() if line.endswith(": loads"))


def test_view_refuses_a_duplicate_id_rather_than_renumbering_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _jsonl(tmp_path / "dup.jsonl", [_message(0), _message(1), _message(1), _message(2)])
    assert main(["view", "dup.jsonl"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: dup.jsonl:3 (id 1): duplicate id 1 (")


def _unnumbered(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key != "id"}


@pytest.mark.parametrize(
    ("ids", "open_reason"),
    [
        ([0, 1, None], "events.jsonl:3: the event has no id"),
        ([0, -1], "events.jsonl:2: id -1: negative id"),
        ([0, 2, 1], "events.jsonl:3: id 1 does not follow id 2"),
        ([0, 1, 1], "events.jsonl:3: id 1 does not follow id 1"),
    ],
    ids=["no id after numbered ones", "negative", "out of order", "duplicate"],
)
def test_validate_repair_and_open_refuse_the_same_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, ids: list[int | None], open_reason: str
) -> None:
    from openhands_memory.errors import CorruptRecordError
    from openhands_memory.stream import EventStream

    monkeypatch.chdir(tmp_path)
    records = [_message(0) if i is None else _message(i) for i in ids]
    log = _jsonl(tmp_path / "events.jsonl", [_unnumbered(r) if i is None else r for r, i in zip(records, ids)])
    original = log.read_bytes()
    with pytest.raises(CorruptRecordError, match=re.escape(open_reason)):
        EventStream.open(log)
    assert main(["validate", "events.jsonl"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1].endswith("1 errors, 0 warnings: refused by every reader") and out[0].startswith(open_reason[:14])
    assert main(["repair", "events.jsonl"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {open_reason}") and err.count("\n") == 1
    assert "repair moves unreadable lines and cannot give an event its id, so nothing was changed" in err
    assert log.read_bytes() == original and sorted(p.name for p in tmp_path.iterdir()) == ["events.jsonl"]


def test_a_jsonl_log_without_any_id_loads_numbered_and_validate_says_a_stream_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _jsonl(tmp_path / "old.jsonl", [_unnumbered(_message(0)), _unnumbered(_message(1))])
    assert main(["validate", "old.jsonl"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "old.jsonl:1: warning: no event has an id (the old flattened form): numbered 0, 1, 2, ... in file order "
        "(EventStream.open refuses this JSONL log; `openhands-memory convert` saves it with its ids)",
        "old.jsonl: 2 events, 0 errors, 1 warnings: loads",
    ]
    assert main(["convert", "old.jsonl", "new.jsonl"]) == 0
    assert main(["validate", "new.jsonl"]) == 0
    assert capsys.readouterr().out.splitlines() == ["new.jsonl: 2 events, 0 errors, 0 warnings: loads"]
