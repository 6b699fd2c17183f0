"""`repair_log` and `openhands-memory repair`: unreadable lines move to a sidecar, every readable byte stays."""

from __future__ import annotations

import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import HANG_GUARD_SECONDS

from _folders import unwritable  # noqa: F401  (a fixture)

from openhands_memory.cli import main
from openhands_memory.errors import (
    CorruptRecordError,
    MalformedEventError,
    StoreLockedError,
)
from openhands_memory.events import (
    dump_events,
    event_to_dict,
    event_to_json,
    load_events,
)
from openhands_memory.stream import EventStream, JsonlEventStore, repair_log
from openhands_memory.testing.store_contract import stored_event

GARBAGE = b"this is not json at all"
NULS = b"\x00" * 4096
NOT_AN_EVENT = b'{"action": 42, "args": []}'


def _line(event_id: int) -> bytes:
    return event_to_json(stored_event(event_id)) + b"\n"


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    """A log whose lines 3, 5 and 7 cannot be read, and whose last line was cut off."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(
        _line(0) + _line(1) + GARBAGE + b"\n" + _line(2) + NULS + b"\n" + _line(3) + NOT_AN_EVENT + b"\n"
        + _line(4) + _line(5)[:30]
    )  # fmt: skip
    return path


def _sidecar_lines(sidecar: Path) -> dict[int, bytes]:
    lines = sidecar.read_bytes().split(b"\n")
    assert lines.pop() == b""
    return {int(number): raw for number, raw in (line.split(b"\t", 1) for line in lines)}


def test_a_damaged_log_is_repaired_and_a_stream_opens_it(damaged: Path) -> None:
    with pytest.raises(CorruptRecordError, match=re.escape(f"{damaged}:3: invalid JSON")):
        EventStream.open(damaged)
    report = repair_log(damaged)
    assert [(m.line, m.byte_count) for m in report.moved] == [(3, len(GARBAGE)), (5, 4096), (7, len(NOT_AN_EVENT)), (9, 30)]
    assert report.kept_events == 5
    assert damaged.read_bytes() == b"".join(_line(i) for i in range(5))  # every kept line byte for byte
    stream = EventStream.open(damaged)
    assert len(stream) == 5
    stream.close()


def test_repair_names_the_reason_of_every_moved_line(damaged: Path) -> None:
    reasons = [m.reason for m in repair_log(damaged).moved]
    assert reasons[0].startswith("invalid JSON: ")
    assert reasons[1] == "a block of 4,096 NUL bytes"
    assert reasons[2].startswith("not an event: ")
    assert reasons[3].startswith("torn last line (no newline): invalid JSON: ")


def test_nothing_is_deleted_the_log_and_the_sidecar_rebuild_the_original(damaged: Path) -> None:
    original = damaged.read_bytes()
    report = repair_log(damaged)
    assert report.sidecar is not None and report.sidecar.parent == damaged.parent
    assert report.sidecar.name.startswith("events.jsonl.unreadable-")
    moved = _sidecar_lines(report.sidecar)
    kept = iter(damaged.read_bytes().split(b"\n"))
    total = original.count(b"\n") + 1
    rebuilt = [moved[n] if n in moved else next(kept) for n in range(1, total + 1)]
    assert b"\n".join(rebuilt) == original


def test_the_sidecar_and_the_repaired_log_are_owner_only(damaged: Path) -> None:
    damaged.chmod(0o644)
    report = repair_log(damaged)
    assert report.sidecar is not None
    assert stat.S_IMODE(report.sidecar.stat().st_mode) == 0o600
    assert stat.S_IMODE(damaged.stat().st_mode) == 0o600


def test_a_clean_log_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line(0) + _line(1))
    before = path.stat()
    report = repair_log(path)
    assert not report.is_repaired and report.sidecar is None and report.kept_events == 2
    assert path.stat().st_ino == before.st_ino and path.stat().st_mtime_ns == before.st_mtime_ns
    assert list(tmp_path.iterdir()) == [path]


def test_a_log_a_stream_has_open_is_refused_and_unchanged(damaged: Path, tmp_path: Path) -> None:
    path = tmp_path / "open.jsonl"
    store = JsonlEventStore(path)
    store.append(stored_event(0))
    with path.open("ab") as out:
        out.write(GARBAGE + b"\n")
    try:
        with pytest.raises(StoreLockedError, match=re.escape(f"{path}: is open for writing")):
            repair_log(path)
    finally:
        store.close()
    assert path.read_bytes() == _line(0) + GARBAGE + b"\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.jsonl", "open.jsonl"]


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b'[\n  {"id": 0, "action": "message"}\n]\n', "is a JSON list, not JSONL"),
        (b'{"trajectory": [\n{"id": 0}\n]}', "is a JSON document, not JSONL"),
        (b'{"id": "e1", "kind": "MessageEvent"}\n{"id": "e2", "kind": "MessageEvent"}\n', "is an OpenHands SDK (V1) log"),
    ],
)
def test_a_log_that_is_not_jsonl_of_events_is_refused_and_unchanged(tmp_path: Path, body: bytes, what: str) -> None:
    path = tmp_path / "log.json"
    path.write_bytes(body)
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}: {what}")):
        repair_log(path)
    assert path.read_bytes() == body
    assert list(tmp_path.iterdir()) == [path]


def test_repair_through_a_symlink_repairs_the_file_and_keeps_the_link(damaged: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(damaged)
    repair_log(link)
    assert link.is_symlink()
    assert [e.id for e in load_events(damaged)] == [0, 1, 2, 3, 4]


def test_cli_repair_prints_each_moved_line_and_a_summary(damaged: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repair", str(damaged)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": ", 1)[0] for line in out[:4]] == [f"{damaged}:{n}" for n in (3, 5, 7, 9)]
    assert out[4].startswith(f"repaired {damaged}: moved 4 unreadable lines (")
    assert out[4].endswith("; kept 5 events byte for byte")
    assert main(["repair", str(damaged)]) == 0
    assert capsys.readouterr().out == f"{damaged}: nothing to repair (5 events, every line readable)\n"


def test_cli_repair_json(damaged: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repair", str(damaged), "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["repaired"] is True and report["kept_events"] == 5
    assert [m["line"] for m in report["moved"]] == [3, 5, 7, 9]
    assert Path(report["sidecar"]).is_file()


def test_cli_repair_of_an_open_log_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "events.jsonl"
    store = JsonlEventStore(path)
    try:
        assert main(["repair", str(path)]) == 1
    finally:
        store.close()
    assert capsys.readouterr().err == f"error: {path}: is open for writing in another process (or stream)\n"


def test_a_real_log_with_a_nul_block_and_garbage_keeps_every_event_as_written(real_logs_dir: Path, tmp_path: Path) -> None:
    source = real_logs_dir / "v0_enyst-playground_issue10730_trajectory_297ev.json"
    path = tmp_path / "events.jsonl"
    dump_events(load_events(source), path)
    lines = path.read_bytes().splitlines(keepends=True)
    damaged = lines[:100] + [NULS + b"\n"] + lines[100:200] + [GARBAGE + b"\n"] + lines[200:]
    path.write_bytes(b"".join(damaged))
    report = repair_log(path)
    assert [m.line for m in report.moved] == [101, 202]
    assert path.read_bytes() == b"".join(lines)
    assert [event_to_dict(e) for e in load_events(path)] == [event_to_dict(e) for e in load_events(source)]


@pytest.mark.parametrize("end", [b"\r", b"\r\n"], ids=["cr", "crlf"])
def test_a_cr_log_loses_only_its_bad_line_and_keeps_its_line_ends(tmp_path: Path, end: bytes) -> None:
    path = tmp_path / "events.jsonl"
    lines = [_line(i).rstrip(b"\n") + end for i in range(3)]
    path.write_bytes(lines[0] + GARBAGE + end + lines[1] + lines[2])
    report = repair_log(path)
    assert [(m.line, m.byte_count) for m in report.moved] == [(2, len(GARBAGE))]
    assert report.kept_events == 3
    assert path.read_bytes() == b"".join(lines)  # byte for byte, line ends included
    assert report.sidecar is not None and _sidecar_lines(report.sidecar) == {2: GARBAGE}
    stream = EventStream.open(path)
    assert [e.id for e in stream.get_events()] == [0, 1, 2]
    stream.close()


# Repairs the log, but stops for good just before the N-th fsync (printing "paused"), to be killed there.
_PAUSED_REPAIR = """
import os, sys, time
from openhands_memory.stream import repair_log

stop_at, calls, fsync = int(sys.argv[2]), [0], os.fsync

def paused_fsync(fd):
    calls[0] += 1
    if calls[0] == stop_at:
        print("paused", flush=True)
        time.sleep(120)
    fsync(fd)

os.fsync = paused_fsync
repair_log(sys.argv[1])
print("done", flush=True)
"""


@pytest.mark.parametrize(
    ("fsync", "left"),
    [
        (1, r"\.events\.jsonl\.unreadable-[0-9T.Z]+\.[a-z0-9_]{8}\.tmp"),  # the sidecar half written
        (2, r"events\.jsonl\.unreadable-[0-9T.Z]+"),  # the sidecar whole, the log not replaced yet
        (3, r"\.events\.jsonl\.[a-z0-9_]{8}\.tmp events\.jsonl\.unreadable-[0-9T.Z]+"),  # the new log half written
    ],
    ids=["sidecar written", "sidecar published", "new log written"],
)
def test_a_repair_killed_midway_is_cleaned_up_by_the_next_one(damaged: Path, fsync: int, left: str) -> None:
    original = damaged.read_bytes()
    child = subprocess.Popen(
        [sys.executable, "-c", _PAUSED_REPAIR, str(damaged), str(fsync)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "paused\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=HANG_GUARD_SECONDS)
    leftovers = sorted(p.name for p in damaged.parent.iterdir() if p != damaged)
    assert re.fullmatch(left, " ".join(leftovers)), leftovers
    assert damaged.read_bytes() == original  # killed before the log was replaced: nothing lost

    report = repair_log(damaged)
    assert [p.name for p in report.cleaned] == leftovers
    assert report.describe()[0] == f"{damaged}: removed what an interrupted repair left: {', '.join(leftovers)}"
    assert report.sidecar is not None
    assert sorted(damaged.parent.iterdir()) == sorted([damaged, report.sidecar])
    assert damaged.read_bytes() == b"".join(_line(i) for i in range(5))
    assert sorted(_sidecar_lines(report.sidecar)) == [3, 5, 7, 9]


def test_a_repair_killed_after_replacing_the_log_left_nothing_to_clean(damaged: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-c", _PAUSED_REPAIR.replace("time.sleep(120)", "os.kill(os.getpid(), 9)"), str(damaged), "4"],
        capture_output=True, text=True, timeout=HANG_GUARD_SECONDS,
    )
    assert child.returncode == -signal.SIGKILL and child.stdout == "paused\n"
    (sidecar,) = [p for p in damaged.parent.iterdir() if p != damaged]
    report = repair_log(damaged)
    assert (report.moved, report.cleaned) == ((), ())  # the finished sidecar is not a copy of anything the log holds
    assert sorted(damaged.parent.iterdir()) == sorted([damaged, sidecar])


def test_a_sidecar_the_log_no_longer_holds_line_for_line_is_kept(damaged: Path) -> None:
    first = repair_log(damaged)
    assert first.sidecar is not None
    damaged.write_bytes(damaged.read_bytes() + GARBAGE + b"\n")
    second = repair_log(damaged)
    assert second.cleaned == () and first.sidecar.exists() and second.sidecar is not None
    assert _sidecar_lines(second.sidecar) == {6: GARBAGE}


def test_a_log_in_a_folder_that_cannot_be_written_is_refused_before_anything_moves(
    unwritable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = unwritable / "events.jsonl"
    unwritable.chmod(0o700)
    log.write_bytes(_line(0) + GARBAGE + b"\n" + _line(1))
    unwritable.chmod(0o500)
    original = log.read_bytes()
    assert main(["repair", str(log)]) == 1
    assert capsys.readouterr().err == f"error: {log}: cannot be written: {unwritable} is not writable\n"
    assert log.read_bytes() == original and list(unwritable.iterdir()) == [log]
