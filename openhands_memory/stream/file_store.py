"""`JsonlEventStore`: one conversation's events in one JSONL file, safe against crashes.

Each append is one `os.write` of one line (`event_to_json(event)` and a newline) on a file
opened with `O_APPEND`, so a process killed at any moment leaves every acknowledged line
whole; only the line being written when it died can be torn. Opening the file again finds
such a torn tail, sets its bytes aside in a sidecar file next to the log, truncates the log
to its last complete line and warns (see `RecoveryReport`). Anything else that does not
read back is an error, and opening changes nothing on disk then.

Before each append the store checks that its path still names the file it has open (same device
and inode; one `stat`). If the file was replaced (`dump_events(path)` over it), moved or deleted,
the append writes nothing and raises `StoreReplacedError`: the line would go to a file nobody can
read any more. When the old file has no name left, its bytes (every event the store acknowledged)
are first copied beside the log as `<log name>.replaced-<UTC time>`, which the error names. The
lock is on the old file, so the path can be opened again meanwhile: that second store writes the
new file, and the stale one refuses every append.
"""

from __future__ import annotations

import logging
import os
import warnings
import weakref
from collections.abc import Callable, Iterator
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
    StoreReplacedError,
)
from openhands_memory.events import Event, event_to_json
from openhands_memory.events._codec import event_from_parsed
from openhands_memory.events._formats import detect_records
from openhands_memory.events._loaded import LoadedEvents
from openhands_memory.events._reading import ResponseSharer, gc_paused, iter_lines
from openhands_memory.events.validation import id_order_problem
from openhands_memory.stream.store import check_next_id

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock; a second writer goes undetected there
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)


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
        CorruptRecordError: a complete line is not JSON, or not an event with an id (>= 0); names `file:line`.
        OutOfOrderRecordError: a line's id is not greater than the id of the line before it.

    Appending raises `StoreReplacedError` once the path names another file (or none); see the module.
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
            info = os.fstat(fd)
            if created and fsync:
                _fsync_dir(self.path.parent)
            self._events, self._size, self.recovered = _load(fd, self.path)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._closer = weakref.finalize(self, os.close, fd)
        self._last_id: int | None = self._events[-1].id if self._events else None
        # Absolute, so a later chdir cannot make the path seem to name another file.
        self._where = os.path.abspath(self.path)
        self._identity = (info.st_dev, info.st_ino)
        self._replaced: StoreReplacedError | None = None
        self._appended = False
        if self.recovered is not None:
            warnings.warn(self.recovered.describe(), RecoveryWarning, stacklevel=2)

    def append(self, event: Event) -> None:
        """Write one event as one line; when this returns, the line is in the file (and on disk with `fsync`).

        On failure the file is cut back to where it was, so a failed append leaves no trace.

        Raises:
            StoreClosedError: the store was closed.
            DuplicateEventError: the event's id does not follow the last one.
            StoreReplacedError: the path no longer names this file; nothing was written (see the module).
        """
        if self._fd < 0:
            raise StoreClosedError(self.path)
        check_next_id(event, self._last_id, len(self._events))
        if self._replaced is None:
            # One stat (about 2 µs): a write into a replaced file would be acknowledged, then lost.
            reason = self._path_changed()
            if reason is not None:
                self._replaced = self._set_replaced_aside(reason)
        if self._replaced is not None:
            raise _replaced_copy(self._replaced)
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
        self._appended = True

    def read_events(self, start: int = 0, stop: int | None = None) -> Iterator[Event]:
        """The events at positions `start` to `stop` (excluded), in order, from memory."""
        if self._fd < 0:
            raise StoreClosedError(self.path)
        return iter(self._events[start:stop])

    def snapshot(self) -> list[Event]:
        """Every event, as a new list that keeps what loading noted of each (see `LoadedEvents`)."""
        if self._fd < 0:
            raise StoreClosedError(self.path)
        return self._events.snapshot()

    def event_ids(self) -> list[int]:
        """The ids of every event, in order (from what loading noted, while it still holds)."""
        if self._fd < 0:
            raise StoreClosedError(self.path)
        record = self._events.record()
        return record.ids.tolist() if record is not None else [event.id for event in self._events]  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self._events)

    def close(self) -> None:
        """Close the file, which releases the lock; calling it again does nothing.

        If the path was replaced since the last append, which was then written into the old file,
        the old file is copied aside first (and a WARNING logged), as the next append would have.
        """
        if self._fd >= 0:
            if self._appended and self._replaced is None:
                try:
                    reason = self._path_changed()
                    if reason is not None:
                        self._replaced = self._set_replaced_aside(reason)
                except OSError:  # pragma: no cover - fstat of our own open fd does not fail
                    logger.exception("%s: could not check whether the log was replaced", self.path)
            self._fd = -1
            self._events = LoadedEvents()
            self._closer()

    def __repr__(self) -> str:
        state = "closed" if self._fd < 0 else f"{len(self._events)} events"
        return f"JsonlEventStore({str(self.path)!r}, {state})"

    def _path_changed(self) -> str | None:
        """What happened to the path since opening (`replaced by another file`, `deleted`, ...), or None."""
        try:
            info = os.stat(self._where)
        except FileNotFoundError:
            return "deleted"
        except OSError as exc:
            return f"can no longer be reached ({exc.strerror or exc})"
        if (info.st_dev, info.st_ino) == self._identity:
            return None
        return "replaced by another file"

    def _set_replaced_aside(self, reason: str) -> StoreReplacedError:
        """Copy the old file beside the log if no name links to it any more; the error says where, and is logged."""
        linked_elsewhere = os.fstat(self._fd).st_nlink > 0
        saved_to = None
        if not linked_elsewhere:
            try:
                saved_to = _copy_aside(self._fd, self.path, "replaced")
            except OSError as exc:
                reason = f"{reason} (copying the file it wrote failed: {exc})"
        error = StoreReplacedError(self.path, reason, saved_to=saved_to, linked_elsewhere=linked_elsewhere)
        logger.warning("%s", error)
        return error

    def _roll_back(self) -> None:
        """Cut the file back to its last acknowledged line after a failed append."""
        try:
            os.ftruncate(self._fd, self._size)
        except OSError:
            # We cannot tell what the file ends with now: refuse further appends rather than risk
            # writing an id twice. Reopening the file will sort out its tail.
            self.close()


def _replaced_copy(error: StoreReplacedError) -> StoreReplacedError:
    """A fresh error with the same facts, so each refused append gets its own traceback."""
    return StoreReplacedError(
        error.path, error.reason, saved_to=error.saved_to, linked_elsewhere=error.linked_elsewhere
    )


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


def _reader(fd: int) -> tuple[Callable[[int], bytes], list[int]]:
    """A `read(n)` over the file from its start with `pread` (the fd's offset is the appender's); and
    a one-item list that counts the bytes read."""
    done = [0]

    def read(size: int) -> bytes:
        chunk = os.pread(fd, size, done[0])
        done[0] += len(chunk)
        return chunk

    return read, done


def _load(fd: int, path: Path) -> tuple[LoadedEvents, int, RecoveryReport | None]:
    """Read and check the whole log; repair a torn tail. Returns the events, the file size and the report.

    Everything is checked before anything is repaired, so an error leaves the file as it was. The file
    is read a chunk at a time (a log can be gigabytes), with the garbage collector paused: parsed
    events hold no cycles, and collecting while they are built made opening a big log twice as slow.
    Each event's class, id and hidden flag are noted while it is at hand (`LoadedEvents`), so that
    a history opened on the log need not read every event again.
    """
    read, size = _reader(fd)
    events: list[Event] = []
    types: list[type] = []
    ids: list[int] = []
    hidden = bytearray()
    last_id = -1
    loads = ResponseSharer().loads
    tail = b""
    number = 0
    with gc_paused():
        # The per-line steps are written out here (this loop runs once per event of the log); the
        # torn-tail path below uses the same checks through `_parse_line` and `check_record_id`.
        for number, line, ended in iter_lines(read):
            if not ended:
                tail = line
                break
            if not line.strip():
                continue
            try:
                value = loads(line)
            except orjson.JSONDecodeError as exc:
                raise CorruptRecordError(path, number, f"invalid JSON: {exc}") from exc
            try:
                event = event_from_parsed(value)
            except MalformedEventError as exc:
                raise CorruptRecordError(path, number, exc.reason + _foreign_hint(value, first=not events)) from exc
            fields = event.__dict__
            event_id = fields["id"]
            if event_id is None or event_id <= last_id:
                check_record_id(event_id, last_id if events else None, path, number, len(events))
            last_id = event_id
            events.append(event)
            types.append(type(event))
            ids.append(event_id)
            hidden.append(fields["hidden"])
    if tail:
        try:
            value = orjson.loads(tail)
        except orjson.JSONDecodeError:
            # A torn write: every line we write is a JSON object, and no proper prefix of one parses.
            report = _set_aside(fd, path, tail, number, keep=size[0] - len(tail))
            return LoadedEvents.as_read(events, types, ids, hidden), size[0] - len(tail), report
        # A complete record that only lacks its newline: keep it, and end it properly.
        event = _parse_line(value, path, number)
        check_record_id(event.id, last_id if events else None, path, number, len(events))
        events.append(event)
        types.append(type(event))
        ids.append(event.id)  # type: ignore[arg-type]
        hidden.append(event.hidden)
        os.write(fd, b"\n")
        os.fsync(fd)
        size[0] += 1
    return LoadedEvents.as_read(events, types, ids, hidden), size[0], None


def _foreign_hint(value: object, *, first: bool) -> str:
    """What to do when a log's first record is another agent's: a stream appends to OpenHands logs only."""
    fmt = detect_records([value]) if first else None
    if fmt is None:
        return ""
    return f"; this is a {fmt} log, which load_events reads but a stream does not append to: `openhands-memory convert` it first"


def _parse_line(value: object, path: Path, number: int) -> Event:
    try:
        return event_from_parsed(value)  # type: ignore[arg-type]
    except MalformedEventError as exc:
        raise CorruptRecordError(path, number, exc.reason) from exc


def check_record_id(event_id: int | None, last_id: int | None, path: Path, number: int, index: int) -> int:
    """Raise unless a JSONL log's event on line `number` (the `index`-th) may have `event_id` after `last_id`.

    The rule a stream opens a log by, which `repair_log` applies to the lines it keeps and
    `validate_events` to every log: every event has an id (a stream numbers each one it writes),
    ids start at 0 and strictly increase. Returns `event_id`.

    Raises:
        CorruptRecordError: the event has no id, or a negative one.
        OutOfOrderRecordError: the id is not greater than `last_id`.
    """
    if event_id is None:
        raise CorruptRecordError(path, number, "the event has no id")
    # The rule `validate_events` applies for `load_events`: every reader refuses the same logs.
    if id_order_problem(event_id, last_id) is None:
        return event_id
    if event_id < 0:
        raise CorruptRecordError(path, number, f"id {event_id}: negative id (ids name events and start at 0)")
    raise OutOfOrderRecordError(path, number, event_id, last_id, index)


def sidecar_name(path: Path, kind: str, attempt: int = 1, *, stamp: str | None = None) -> Path:
    """`<log name>.<kind>-<UTC time>` beside the log; `...-<attempt>` from the second attempt on."""
    stamp = stamp or datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    return path.with_name(f"{path.name}.{kind}-{stamp}" + (f"-{attempt}" if attempt > 1 else ""))


def _new_sidecar(path: Path, kind: str) -> tuple[int, Path]:
    """Create `<log name>.<kind>-<UTC time>` (or `...-2`, ...) beside the log, owner-only; its fd and path."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    sidecar = sidecar_name(path, kind, stamp=stamp)
    suffix = 1
    while True:
        try:
            out = os.open(sidecar, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            break
        except FileExistsError:
            suffix += 1
            sidecar = sidecar_name(path, kind, suffix, stamp=stamp)
    try:
        os.fchmod(out, FILE_MODE)
    except BaseException:
        os.close(out)
        raise
    return out, sidecar


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _copy_aside(fd: int, path: Path, kind: str) -> Path:
    """Copy the whole file open as `fd` into a new sidecar of the log, durably; returns the sidecar."""
    out, sidecar = _new_sidecar(path, kind)
    try:
        offset, size = 0, os.fstat(fd).st_size
        while offset < size:
            chunk = os.pread(fd, min(size - offset, 1 << 20), offset)
            if not chunk:
                break
            _write_all(out, chunk)
            offset += len(chunk)
        os.fsync(out)
    except BaseException:
        os.close(out)
        sidecar.unlink(missing_ok=True)
        raise
    os.close(out)
    _fsync_dir(path.parent)
    return sidecar


def _set_aside(fd: int, path: Path, tail: bytes, number: int, *, keep: int) -> RecoveryReport:
    """Move a torn tail into a sidecar file, durably, then truncate the log to `keep` bytes."""
    out, sidecar = _new_sidecar(path, "torn")
    try:
        _write_all(out, tail)
        os.fsync(out)
    finally:
        os.close(out)
    # The sidecar is on disk (and listed) before the log loses those bytes.
    _fsync_dir(path.parent)
    os.ftruncate(fd, keep)
    os.fsync(fd)
    return RecoveryReport(path=path, line=number, byte_count=len(tail), sidecar=sidecar)
