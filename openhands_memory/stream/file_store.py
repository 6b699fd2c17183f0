"""`JsonlEventStore`: one conversation's events in one JSONL file, safe against crashes.

Each append is one `os.write` of one line (`event_to_json(event)` and a newline) on a file
opened with `O_APPEND`, so a process killed at any moment leaves every acknowledged line
whole; only the line being written when it died can be torn. Opening the file again finds
such a torn tail, sets its bytes aside in a sidecar file next to the log, truncates the log
to its last complete line and warns (see `RecoveryReport`). Anything else that does not
read back is an error, and opening changes nothing on disk then.
"""

from __future__ import annotations

import os
import warnings
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import orjson

from openhands_memory._files import FILE_MODE, make_private_folder
from openhands_memory.errors import (
    CorruptRecordError,
    MalformedEventError,
    OutOfOrderRecordError,
    StoreClosedError,
    StoreLockedError,
)
from openhands_memory.events import Event, event_from_dict, event_to_json
from openhands_memory.stream.store import check_next_id

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock; a second writer goes undetected there
    fcntl = None  # type: ignore[assignment]


class RecoveryWarning(UserWarning):
    """Opening a log repaired it: a torn last record was set aside (see `RecoveryReport`)."""


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    """What opening a log did about a torn last record (one that had no newline and did not parse)."""

    path: Path
    """The log."""
    line: int
    """The line number the torn record started on."""
    byte_count: int
    """How many bytes it had; the log was truncated by this much."""
    sidecar: Path
    """The file its bytes were moved to, next to the log (`<log name>.torn-<UTC time>`)."""

    def describe(self) -> str:
        """One line for a log or a warning."""
        return (
            f"{self.path}:{self.line}: torn last record ({self.byte_count} bytes) moved to {self.sidecar.name}; "
            "the log now ends at its last complete record"
        )


class JsonlEventStore:
    """An `EventStore` over one JSONL file, one event a line, holding an exclusive lock while open.

    Opening reads and checks every line, and keeps the parsed events (and every appended instance)
    in memory by position, so reads never touch the disk.

    Raises (when opening):
        StoreLockedError: another store (in this process or another) has the file open.
        CorruptRecordError: a complete line is not JSON, or not an event with an id; names `file:line`.
        OutOfOrderRecordError: a line's id is not greater than the id of the line before it.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        """The log file."""
        self.fsync = fsync
        """Also fsync the file after every append (and the folder when the file is created)."""
        self.recovered: RecoveryReport | None = None
        """What opening repaired, if anything; a `RecoveryWarning` was issued then too."""
        make_private_folder(self.path.parent)
        fd, created = _open_log(self.path)
        try:
            _lock(fd, self.path)
            if created and fsync:
                _fsync_dir(self.path.parent)
            self._events, self._size, self.recovered = _load(fd, self.path)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._closer = weakref.finalize(self, os.close, fd)
        self._last_id: int | None = self._events[-1].id if self._events else None
        if self.recovered is not None:
            warnings.warn(self.recovered.describe(), RecoveryWarning, stacklevel=2)

    def append(self, event: Event) -> None:
        """Write one event as one line; when this returns, the line is in the file (and on disk with `fsync`).

        On failure the file is cut back to where it was, so a failed append leaves no trace.
        """
        if self._fd < 0:
            raise StoreClosedError(self.path)
        check_next_id(event, self._last_id, len(self._events))
        line = event_to_json(event) + b"\n"
        try:
            # One write on an O_APPEND fd: other readers never see half a line, and a crash leaves
            # at most the tail of this line behind, which opening detects.
            written = os.write(self._fd, line)
            if written != len(line):
                raise OSError(f"{self.path}: short write ({written} of {len(line)} bytes); is the disk full?")
            if self.fsync:
                os.fsync(self._fd)
        except BaseException:
            self._roll_back()
            raise
        self._size += written
        self._events.append(event)
        self._last_id = event.id

    def read_events(self, start: int = 0, stop: int | None = None) -> Iterator[Event]:
        """The events at positions `start` to `stop` (excluded), in order, from memory."""
        if self._fd < 0:
            raise StoreClosedError(self.path)
        return iter(self._events[start:stop])

    def __len__(self) -> int:
        return len(self._events)

    def close(self) -> None:
        """Close the file, which releases the lock; calling it again does nothing."""
        if self._fd >= 0:
            self._fd = -1
            self._events = []
            self._closer()

    def __repr__(self) -> str:
        state = "closed" if self._fd < 0 else f"{len(self._events)} events"
        return f"JsonlEventStore({str(self.path)!r}, {state})"

    def _roll_back(self) -> None:
        """Cut the file back to its last acknowledged line after a failed append."""
        try:
            os.ftruncate(self._fd, self._size)
        except OSError:
            # We cannot tell what the file ends with now: refuse further appends rather than risk
            # writing an id twice. Reopening the file will sort out its tail.
            self.close()


def _open_log(path: Path) -> tuple[int, bool]:
    """Open (or create, owner-only) the log for reading and appending; also say whether it was created."""
    flags = os.O_RDWR | os.O_APPEND
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return os.open(path, flags), False
    # A log holds prompts, tool output and secrets: exactly 0600, not whatever the umask leaves.
    os.fchmod(fd, FILE_MODE)
    return fd, True


def _lock(fd: int, path: Path) -> None:
    if fcntl is None:  # pragma: no cover
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        raise StoreLockedError(path) from exc


def _fsync_dir(folder: Path) -> None:
    """Make a file's creation (or renaming) durable: fsync the folder that lists it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - some platforms cannot open folders
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    chunks: list[bytes] = []
    offset = 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _load(fd: int, path: Path) -> tuple[list[Event], int, RecoveryReport | None]:
    """Read and check the whole log; repair a torn tail. Returns the events, the file size and the report.

    Everything is checked before anything is repaired, so an error leaves the file as it was.
    """
    data = _read_all(fd)
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline (or is empty)
    events: list[Event] = []
    last_id: int | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        event = _parse_line(_loads_line(line, path, number), path, number)
        last_id = _check_order(event, last_id, path, number, len(events))
        events.append(event)
    if not tail:
        return events, len(data), None

    number = len(lines) + 1
    try:
        value = orjson.loads(tail)
    except orjson.JSONDecodeError:
        # A torn write: every line we write is a JSON object, and no proper prefix of one parses.
        report = _set_aside(fd, path, tail, number, keep=len(data) - len(tail))
        return events, len(data) - len(tail), report
    # A complete record that only lacks its newline: keep it, and end it properly.
    event = _parse_line(value, path, number)
    _check_order(event, last_id, path, number, len(events))
    events.append(event)
    os.write(fd, b"\n")
    os.fsync(fd)
    return events, len(data) + 1, None


def _loads_line(line: bytes, path: Path, number: int) -> object:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise CorruptRecordError(path, number, f"invalid JSON: {exc}") from exc


def _parse_line(value: object, path: Path, number: int) -> Event:
    try:
        event = event_from_dict(value)  # type: ignore[arg-type]
    except MalformedEventError as exc:
        raise CorruptRecordError(path, number, exc.reason) from exc
    if event.id is None:
        raise CorruptRecordError(path, number, "the event has no id")
    return event


def _check_order(event: Event, last_id: int | None, path: Path, number: int, index: int) -> int:
    assert event.id is not None
    if last_id is not None and event.id <= last_id:
        raise OutOfOrderRecordError(path, number, event.id, last_id, index)
    return event.id


def _set_aside(fd: int, path: Path, tail: bytes, number: int, *, keep: int) -> RecoveryReport:
    """Move a torn tail into a sidecar file, durably, then truncate the log to `keep` bytes."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    sidecar = path.with_name(f"{path.name}.torn-{stamp}")
    suffix = 1
    while True:
        try:
            out = os.open(sidecar, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            break
        except FileExistsError:
            suffix += 1
            sidecar = path.with_name(f"{path.name}.torn-{stamp}-{suffix}")
    try:
        os.fchmod(out, FILE_MODE)  # exactly 0600, not whatever the umask leaves
        view = memoryview(tail)
        while view:
            view = view[os.write(out, view) :]
        os.fsync(out)
    finally:
        os.close(out)
    # The sidecar is on disk (and listed) before the log loses those bytes.
    _fsync_dir(path.parent)
    os.ftruncate(fd, keep)
    os.fsync(fd)
    return RecoveryReport(path=path, line=number, byte_count=len(tail), sidecar=sidecar)
