"""`repair_log`: move the unreadable lines of a JSONL log into a sidecar file, keep every readable line as it is.

A line is unreadable when it is not JSON (garbage, a block of NUL bytes, a write cut off) or is
JSON but not an event we can read. Such a line makes `EventStream.open` (and `load_events`)
refuse the whole log; `repair_log` moves each one, with its line number, to
`<log name>.unreadable-<UTC time>` (mode 0600) next to the log, then replaces the log atomically
with every other line, byte for byte. Nothing is deleted: the log and the sidecar together hold
every byte the log had (see `RepairReport.sidecar` for the format).

Ids are checked as `EventStream.open` checks them (`check_record_id`): repair cannot guess an id, so
a log whose readable events break that rule (an event without an id, a negative, repeated or
out-of-order id) is refused, naming the line, and left as it is: repair never passes a log a
stream refuses.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from openhands_memory._files import check_writable, remove_stale_temporary_files, write_atomically
from openhands_memory.errors import CorruptRecordError, MalformedEventError, OutputExistsError, StoreLockedError
from openhands_memory.events import Event, event_from_dict
from openhands_memory.events._reading import split_lines
from openhands_memory.events._sdk_import import is_sdk_log
from openhands_memory.stream.file_store import _fsync_dir, _read_all, check_record_id, sidecar_name

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock; a stream's lock goes unseen there
    fcntl = None  # type: ignore[assignment]

__all__ = ["RepairReport", "UnreadableLine", "repair_log"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class UnreadableLine:
    """One line `repair_log` moved out of a log."""

    line: int
    """Its line number in the log as it was (1-based)."""
    reason: str
    """Why it cannot be read."""
    byte_count: int
    """Its length in bytes, without the newline."""


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What `repair_log` did to a log."""

    path: Path
    """The log."""
    moved: tuple[UnreadableLine, ...]
    """The lines moved to the sidecar, in file order; empty when there was nothing to repair."""
    kept_events: int
    """How many events the log holds now (every line that reads as one, unchanged)."""
    sidecar: Path | None
    """Where the moved lines went (None when nothing moved).

    One line per moved line: its line number, a tab, then its bytes exactly as they were.
    """
    cleaned: tuple[Path, ...] = ()
    """What an interrupted repair of this log had left and this one removed: its hidden temporary
    files, and sidecars whose every line the log still holds byte for byte (nothing of them is lost)."""

    @property
    def is_repaired(self) -> bool:
        """Whether anything was moved (the log was rewritten)."""
        return bool(self.moved)

    def describe(self) -> list[str]:
        """One line per moved line (`file:line: reason`), then a summary line; first what was cleaned up, if anything."""
        lines = []
        if self.cleaned:
            names = ", ".join(p.name for p in self.cleaned)
            lines.append(f"{self.path}: removed what an interrupted repair left: {names}")
        lines += [f"{self.path}:{m.line}: {m.reason}" for m in self.moved]
        if not self.moved:
            lines.append(f"{self.path}: nothing to repair ({self.kept_events} events, every line readable)")
            return lines
        assert self.sidecar is not None
        count = f"{len(self.moved)} unreadable line" + ("s" if len(self.moved) > 1 else "")
        lines.append(
            f"repaired {self.path}: moved {count} ({sum(m.byte_count for m in self.moved):,} bytes) "
            f"to {self.sidecar.name}; kept {self.kept_events} events byte for byte"
        )
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready data."""
        return {
            "path": str(self.path),
            "repaired": self.is_repaired,
            "kept_events": self.kept_events,
            "sidecar": None if self.sidecar is None else str(self.sidecar),
            "moved": [{"line": m.line, "reason": m.reason, "bytes": m.byte_count} for m in self.moved],
            "cleaned": [str(p) for p in self.cleaned],
        }


def repair_log(path: str | os.PathLike[str]) -> RepairReport:
    """Move every unreadable line of the JSONL log at `path` to a sidecar file; keep the rest byte for byte.

    The sidecar is written and synced before the log is replaced (atomically, mode 0600), so a
    crash at any moment loses nothing. A last line without its newline that reads as an event is
    kept, and gets its newline. A clean log is left untouched.

    Raises:
        FileNotFoundError: nothing is at `path`.
        StoreLockedError: a stream has the log open; nothing is changed.
        OutputNotWritableError: lines must move but the log's folder cannot be written; nothing is changed.
        MalformedEventError: `path` is not a JSONL log of OpenHands events (a folder, a JSON list or
            document, an OpenHands SDK log), or an event it would keep has no id or an id that does
            not follow the one before (see the module); nothing is changed.
    """
    # Through a symlink, repair the file it names, and leave the link a link.
    log = Path(os.path.realpath(path))
    if log.is_dir():
        raise MalformedEventError("is a folder: repair works on a JSONL log file", path=path)
    fd = os.open(log, os.O_RDONLY)
    try:
        # Held until the new log is in place: no stream can open the old file meanwhile.
        _lock(fd, Path(path))
        data = _read_all(fd)
        _refuse_other_layouts(data, Path(path))
        body, moved, kept = _sort_lines(data, Path(path))
        if moved:
            check_writable(log, shown=path)  # before the sidecar: it and the new log go beside the log
        cleaned = _clean_up_interrupted(log, data) if os.access(log.parent, os.W_OK | os.X_OK) else ()
        if not moved:
            return RepairReport(path=Path(path), moved=(), kept_events=kept, sidecar=None, cleaned=cleaned)
        sidecar = _write_sidecar(log, [(m.line, raw) for m, raw in moved])
        write_atomically(log, body, overwrite=True)  # the user asked for this log to be replaced
        _fsync_dir(log.parent)
    finally:
        os.close(fd)
    return RepairReport(
        path=Path(path), moved=tuple(m for m, _ in moved), kept_events=kept, sidecar=sidecar, cleaned=cleaned
    )


def _lock(fd: int, path: Path) -> None:
    if fcntl is None:  # pragma: no cover
        return
    try:
        # The lock a `JsonlEventStore` holds while open.
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        raise StoreLockedError(path) from exc


def _refuse_other_layouts(data: bytes, path: Path) -> None:
    """Raise unless `data` is JSONL: repairing line by line would wreck a JSON list or document."""
    stripped = data.lstrip()
    if stripped.startswith(b"["):
        raise MalformedEventError("is a JSON list, not JSONL: repair works on JSONL logs, one event a line", path=path)
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        document = None
    if isinstance(document, dict) and not {"action", "observation", "kind"} & document.keys():
        raise MalformedEventError("is a JSON document, not JSONL: repair works on JSONL logs, one event a line", path=path)
    records = []
    for line in split_lines(data):
        try:
            records.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            continue
    if is_sdk_log(records):
        raise MalformedEventError(
            "is an OpenHands SDK (V1) log: repair works on V0 event logs (convert it to JSONL first)", path=path
        )


def _sort_lines(data: bytes, path: Path) -> tuple[bytes, list[tuple[UnreadableLine, bytes]], int]:
    """The new log body, the lines moved out (with their bytes) and how many events were kept.

    A line ends with `\\n`, `\\r\\n` or `\\r` (as every reader splits them); a kept line keeps its own end.
    The kept events' ids are checked as a stream checks them (see the module).
    """
    kept: list[bytes] = []
    moved: list[tuple[UnreadableLine, bytes]] = []
    events = 0
    last_id: int | None = None
    for number, piece in enumerate(data.splitlines(keepends=True), start=1):
        line = piece.rstrip(b"\r\n")
        ended = len(line) < len(piece)
        if not line.strip():
            kept.append(piece if ended else line + b"\n")  # blank lines are kept as they are
            continue
        reason, event = _read_line(line)
        if event is not None:
            last_id = _check_id(event, last_id, path, number, events)
            kept.append(piece if ended else line + b"\n")
            events += 1
            continue
        if not ended:
            reason = f"torn last line (no newline): {reason}"
        moved.append((UnreadableLine(line=number, reason=reason, byte_count=len(line)), line))
    return b"".join(kept), moved, events


def _check_id(event: Event, last_id: int | None, path: Path, number: int, index: int) -> int:
    try:
        return check_record_id(event.id, last_id, path, number, index)
    except CorruptRecordError as exc:
        raise MalformedEventError(
            f"{exc.reason}: repair moves unreadable lines and cannot give an event its id, so nothing was changed "
            "(`openhands-memory validate` lists every finding)",
            path=path,
            line=number,
        ) from exc


def _read_line(line: bytes) -> tuple[str, Event | None]:
    """The event a (non-blank) line holds, or why it holds none."""
    if line.strip(b"\x00") == b"":
        return f"a block of {len(line):,} NUL bytes", None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        nuls = line.count(b"\x00")
        with_nuls = f" ({nuls:,} NUL bytes)" if nuls else ""
        return f"invalid JSON: {exc.msg} (column {exc.colno}){with_nuls}", None
    try:
        return "", event_from_dict(value)
    except MalformedEventError as exc:
        return f"not an event: {exc.reason}", None


def _write_sidecar(log: Path, moved: list[tuple[int, bytes]]) -> Path:
    """Write the moved lines (`<number>\\t<bytes>\\n` each) to a new owner-only file next to the log, synced.

    Through a temporary file, so the sidecar appears whole or not at all (a kill while writing it
    left a partial one); a name already taken gets `-2`, `-3`, ...
    """
    body = b"".join(b"%d\t%s\n" % (number, raw) for number, raw in moved)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    attempt = 1
    while True:
        try:
            sidecar = write_atomically(sidecar_name(log, "unreadable", attempt, stamp=stamp), body)
            break
        except OutputExistsError:
            attempt += 1
    _fsync_dir(log.parent)  # listed on disk before the log loses those lines
    return sidecar


# The names `_write_sidecar` gives (`<log>.unreadable-<UTC time>[-n]`), as a regular expression after the log's name.
_SIDECAR = r"\.unreadable-[0-9]{8}T[0-9]{6}\.[0-9]{6}Z(?:-[0-9]+)?"


def _clean_up_interrupted(log: Path, data: bytes) -> tuple[Path, ...]:
    """Remove what a repair of `log` killed midway left (it holds the log's lock, so none is running).

    Its temporary files (the new log's, the sidecar's), and its sidecars that the log still holds
    line for line: it was killed before the log lost those lines, so they are copies.
    """
    name = re.escape(log.name)
    removed = remove_stale_temporary_files(log, name_pattern=f"{name}(?:{_SIDECAR})?")
    pattern = re.compile(f"{name}{_SIDECAR}")
    lines = [piece.rstrip(b"\r\n") for piece in data.splitlines(keepends=True)]
    with os.scandir(log.parent) as entries:
        sidecars = sorted(e.path for e in entries if pattern.fullmatch(e.name) and e.is_file(follow_symlinks=False))
    for sidecar in map(Path, sidecars):
        if _only_copies(sidecar.read_bytes(), lines):
            sidecar.unlink()
            removed.append(sidecar)
    if removed:
        _fsync_dir(log.parent)
        logger.warning("%s: removed what an interrupted repair left: %s", log, ", ".join(p.name for p in removed))
    return tuple(removed)


def _only_copies(sidecar: bytes, lines: list[bytes]) -> bool:
    """Whether every entry of a sidecar (`<number>\\t<bytes>\\n`) is exactly line <number> of the log.

    A last entry cut off (a sidecar written in place by an earlier version, killed while writing)
    only has to start that line.
    """
    entries = sidecar.split(b"\n")
    last = entries.pop()  # b"" when the last entry is complete
    for entry in entries:
        number, tab, raw = entry.partition(b"\t")
        if not (tab and number.isdigit() and 0 < int(number) <= len(lines) and lines[int(number) - 1] == raw):
            return False
    if last:
        number, tab, raw = last.partition(b"\t")
        if not number.isdigit():
            return False
        if tab and not (0 < int(number) <= len(lines) and lines[int(number) - 1].startswith(raw)):
            return False
    return True
