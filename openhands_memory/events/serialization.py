"""Events to and from OpenHands' JSON: one dict, or whole files in every layout OpenHands writes.

`load_events` reads, by what it finds at the path:
- a JSON list of events, or the UI's download `{"trajectory": [...]}` (or a record with `history`);
- JSONL, one event a line;
- an OpenHands session folder (`events/<id>.json`, one file per event), or an OpenHands SDK
  conversation folder (`events/event-<index>-<uuid>.json`, imported as an SDK log is);
- the old flattened event form (no `args` / `extras`), upcast on read;
- an OpenHands SDK (V1) log (`kind`-based events), imported into V0 events with int ids; a log is
  read as one when most of its events are SDK events (a slice of one may start anywhere).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock
    fcntl = None  # type: ignore[assignment]

from openhands_memory._files import make_private_folder, write_atomically
from openhands_memory.errors import MalformedEventError
from openhands_memory.events._codec import (
    event_from_dict,
    event_from_parsed,
    event_to_compact_dict,
    event_to_dict,
)
from openhands_memory.events._formats import (
    detect_document,
    detect_records,
    holds_openhands_events,
    read_document,
    read_jsonl,
    read_records,
    refusal,
)
from openhands_memory.events._legacy import link_legacy_observations
from openhands_memory.events._loaded import LoadedEvents
from openhands_memory.events._reading import (
    CHUNK,
    ElementError,
    ListShapeError,
    ResponseSharer,
    gc_paused,
    iter_lines,
    iter_list_elements,
    split_lines,
)
from openhands_memory.events._sdk_import import (
    import_sdk_events,
    is_sdk_event,
    is_sdk_log,
)
from openhands_memory.events.base import Event
from openhands_memory.events.validation import (
    ValidationFinding,
    ValidationReport,
    validate_events,
)

logger = logging.getLogger(__name__)

__all__ = [
    "event_from_dict",
    "event_to_dict",
    "event_to_json",
    "event_from_json",
    "load_events",
    "iter_events",
    "validate_log",
    "dump_events",
    "load_session_folder",
    "dump_session_folder",
]


def event_to_json(event: Event) -> bytes:
    """One event as compact JSON bytes (no trailing newline).

    Raises:
        MalformedEventError: a field holds a value JSON cannot carry (a set, an object, ...).
    """
    try:
        return orjson.dumps(event_to_compact_dict(event))
    except orjson.JSONEncodeError as exc:
        raise MalformedEventError(f"cannot be written as JSON: {exc}", event_id=event.id) from exc


def event_from_json(data: bytes | str, *, path: str | os.PathLike[str] | None = None, line: int | None = None) -> Event:
    """One event from JSON text; errors name `path:line` when given."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise MalformedEventError(f"invalid JSON: {exc}", path=path, line=line) from exc
    try:
        return event_from_dict(value)
    except MalformedEventError as exc:
        raise exc.at(path=path, line=line) from exc.__cause__


def load_events(path: str | os.PathLike[str]) -> list[Event]:
    """Read every event from a log file or session folder (see the module docstring for layouts).

    Events of a log where none carries an id (the old flattened form) are numbered 0, 1, 2, ... in
    file order; in a log where others have ids, an event without one is an error.
    The list remembers the ids and classes it was loaded with; `View.from_events` uses them while
    the list holds the same events and no event id was assigned since (`events._loaded`).

    A JSONL log a stream has open for writing (it holds the store's lock) is read up to its last
    complete line: a last line without its newline is an append in progress, left out. In a log
    no stream has open, such a line that does not parse is a write that was cut off, and an error
    (`EventStream.open` sets it aside; `openhands-memory repair` moves it out).

    The events are checked by `validate_events` (the check every reader shares): its warnings are
    logged at WARNING (ids are kept as written); `validate_log` returns them.

    Raises:
        FileNotFoundError: nothing is at `path`.
        MalformedEventError: the file is not a log we can read, or its ids are not a log's
            (negative, repeated, out of order); the error names the file and the line (JSONL) or
            position (JSON list) and the id of the first bad event.
    """
    events, report = _load_checked(path)
    if not report.is_valid:
        first = report.errors[0]
        raise MalformedEventError(
            f"{first.what} ({first.why}); `openhands-memory validate` lists every finding",
            path=path,
            line=first.line,
            index=None if first.line is not None else first.index,
            event_id=first.event_id,
        )
    for finding in report.warnings:
        logger.warning("%s", finding.describe())
    return LoadedEvents(events)


def validate_log(path: str | os.PathLike[str]) -> ValidationReport:
    """Check a log file or session folder: every id and reference finding, errors and warnings.

    Raises:
        FileNotFoundError: nothing is at `path`.
        MalformedEventError: the file cannot be read as events at all (bad JSON, an invalid event).
    """
    return _load_checked(path)[1]


def _load_checked(path: str | os.PathLike[str]) -> tuple[list[Event], ValidationReport]:
    events, lines = _load_unchecked(Path(path))
    numbered = _number_unnumbered(events)
    report = validate_events(events, path=path, lines=lines)
    if numbered and lines is not None:
        # What `EventStream.open` refuses (it would append numbered events after unnumbered ones).
        report.findings.insert(
            0,
            ValidationFinding(
                "warning",
                "no event has an id (the old flattened form): numbered 0, 1, 2, ... in file order",
                "EventStream.open refuses this JSONL log; `openhands-memory convert` saves it with its ids",
                line=lines[0] if lines else None,
                path=os.fspath(path),
            ),
        )
    if not events and Path(path).is_file() and Path(path).suffix != ".jsonl":
        # A stream's new log is an empty .jsonl; an empty .json (or other) file is a failed write, not a log.
        report.findings.append(
            ValidationFinding(
                "error", "empty file: no JSON list, no events", "a log holds at least a JSON list", line=1, path=os.fspath(path)
            )
        )
    return events, report


def _load_unchecked(path: Path) -> tuple[list[Event], list[int] | None]:
    if path.is_dir():
        return load_session_folder(path), None
    streamed = _load_streaming(path)
    if streamed is not None:
        return streamed
    # Another layout (a wrapper object, an SDK log), a write in progress, or an error: read the
    # whole file, which tells these apart and names the place of an error.
    with gc_paused():  # parsing a whole file builds many objects and no cycles (see `gc_paused`)
        records, lines, foreign = _read_records(path)
    if foreign is not None:
        return foreign, None
    if is_sdk_log(records):
        try:
            return import_sdk_events(records, path=path), None
        except MalformedEventError as exc:
            if lines is None or exc.index is None:
                raise
            # In JSONL the line is the place to look; the importer counts records.
            raise MalformedEventError(
                exc.reason, path=exc.path, line=lines[exc.index], event_id=exc.event_id
            ) from exc.__cause__
    events: list[Event] = []
    for index, record in enumerate(records):
        try:
            events.append(event_from_dict(record, index=None if lines else index))
        except MalformedEventError as exc:
            raise exc.at(path=path, line=lines[index] if lines else None) from exc.__cause__
    return events, lines


def _load_streaming(path: Path) -> tuple[list[Event], list[int] | None] | None:
    """The events of a JSON list or JSONL log of V0 events, or of another agent's JSONL log (`read_jsonl`),
    read a chunk at a time; None for anything else.

    Holds one chunk of the file at a time rather than the whole file and every parsed record,
    which kept loading at six times the file's size in memory. Anything unusual (another layout,
    an SDK event, a torn last line, an error) gives None: the whole-file reader decides, as before.
    """
    try:
        with open(path, "rb") as file:
            first = _first_byte(file)
            if first == b"[":
                with gc_paused():
                    events = _events_of(iter_list_elements(file.read), lines=None)
                lines = None
            elif first == b"{":
                if _first_line_is_other(file):
                    foreign = read_jsonl(file.read, path=path)  # another agent's JSONL log, or None
                    return None if foreign is None else (foreign, None)
                numbered = _jsonl_records(file.read)
                lines = []
                with gc_paused():
                    events = _events_of(numbered, lines=lines)
            else:
                return None
    except (_Unusual, MalformedEventError, ListShapeError, ElementError, orjson.JSONDecodeError):
        return None
    return events, lines


def _first_line_is_other(file: Any) -> bool:
    """Whether the file's first chunk starts with a whole line that is a JSON object but no OpenHands event
    (a record of another agent's JSONL log); the file is left at its start.

    A first line longer than a chunk (a one-line document, say) is not parsed here: the OpenHands
    reader, which stops at once at a line that is no event, leaves such a file to the whole-file reader.
    """
    try:
        head = file.read(CHUNK)
    finally:
        file.seek(0)
    end = head.find(b"\n")
    if end < 0:
        return False
    try:
        record = orjson.loads(head[:end])
    except orjson.JSONDecodeError:
        return False
    return isinstance(record, dict) and not (_EVENT_KEYS & record.keys())


class _Unusual(Exception):
    """The streaming reader leaves this log to the whole-file reader."""


def _first_byte(file: Any) -> bytes:
    """The first byte that is not white space (b"" for none); the file is left at its start."""
    while True:
        chunk = file.read(4096)
        if not chunk:
            file.seek(0)
            return b""
        stripped = chunk.lstrip()
        if stripped:
            file.seek(0)
            return stripped[:1]


def _jsonl_records(read: Any) -> Iterator[tuple[int, Any]]:
    """`(line number, parsed record)` of every non-blank line; `_Unusual` for a last line without newline."""
    sharer = ResponseSharer()  # responses stay the bytes they were written as, until read
    for number, line, ended in iter_lines(read):
        if not line.strip():
            continue
        if not ended:
            raise _Unusual  # cut off, or still being written: the whole-file reader tells which
        yield number, sharer.loads(line)


def _events_of(records: Iterable[Any], *, lines: list[int] | None) -> list[Event]:
    """Build V0 events; `records` are parsed values, or `(line, value)` pairs when `lines` collects lines."""
    sharer = ResponseSharer()
    events: list[Event] = []
    for index, record in enumerate(records):
        if lines is not None:
            number, record = record
            lines.append(number)
        if type(record) is not dict or is_sdk_event(record):
            raise _Unusual
        sharer.share(record)
        events.append(event_from_parsed(record, index=index))
    return events


def iter_events(path: str | os.PathLike[str]) -> Iterator[Event]:
    """Yield the events of a log one at a time, holding one chunk of the file: memory stays the same
    however many events the log has. For tools that make one pass (inspect, convert, index, measure).

    Reads a JSONL log or a JSON list of V0 events (the layouts a stream and `dump_events` write);
    any other layout `load_events` reads (a wrapper object, a session folder, an SDK log, another
    agent's log) is loaded whole and then yielded. Unlike `load_events`, ids are not checked across events (no
    `validate_events`) and events without an id keep None. A JSONL line without its newline at the
    end (a write cut off, or in progress) is an error, as in `load_events` on a log no stream has open.

    Raises:
        FileNotFoundError: nothing is at `path`.
        MalformedEventError: a record is not valid JSON or not an event; names the file and the line
            (JSONL) or the position in the list.
    """
    where = Path(path)
    if where.is_dir():
        yield from load_events(where)
        return
    with open(where, "rb") as file:
        first = _first_byte(file)
        if first == b"[" and _starts_with_event_element(file):
            yield from _iter_list(file, where)
            return
        if first == b"{" and _starts_with_event_line(file):
            yield from _iter_jsonl(file, where)
            return
    yield from load_events(where)


def _starts_with_event_element(file: Any) -> bool:
    """Whether a JSON list's first element is an event (not another agent's message), or the list
    cannot be read that far (the list reader then names the error)."""
    try:
        for element in iter_list_elements(file.read):
            return not isinstance(element, dict) or bool(_EVENT_KEYS & element.keys())
        return True
    except (ListShapeError, ElementError):
        return True
    finally:
        file.seek(0)


def _starts_with_event_line(file: Any) -> bool:
    """Whether the first line is one complete JSON object of an event (JSONL), not a wrapper object."""
    try:
        for _, line, _ended in iter_lines(file.read):
            if line.strip():
                record = orjson.loads(line)
                return isinstance(record, dict) and bool(_EVENT_KEYS & record.keys()) and not is_sdk_event(record)
        return False
    except orjson.JSONDecodeError:
        return False
    finally:
        file.seek(0)


def _iter_jsonl(file: Any, path: Path) -> Iterator[Event]:
    sharer = ResponseSharer()
    for number, line, ended in iter_lines(file.read):
        if not line.strip():
            continue
        try:
            record = sharer.loads(line)
        except orjson.JSONDecodeError as exc:
            reason = f"invalid JSON: {exc.msg} (column {exc.colno})"
            if not ended:
                reason += "; the last line has no newline: a write cut off"
            raise MalformedEventError(reason, path=path, line=number) from exc
        sharer.share(record)
        try:
            yield event_from_parsed(record)
        except MalformedEventError as exc:
            raise exc.at(path=path, line=number) from exc.__cause__


def _iter_list(file: Any, path: Path) -> Iterator[Event]:
    sharer = ResponseSharer()
    try:
        for index, record in enumerate(iter_list_elements(file.read)):
            sharer.share(record)
            try:
                yield event_from_parsed(record, index=index)
            except MalformedEventError as exc:
                raise exc.at(path=path) from exc.__cause__
    except (ListShapeError, ElementError) as exc:
        raise MalformedEventError(f"{exc.reason} (byte {exc.offset})", path=path, index=exc.index) from exc


def _read_records(path: Path) -> tuple[list[Any], list[int] | None, list[Event] | None]:
    """Read a log file and parse its records, waiting out a writer that finished while we read.

    The third value is the events of another agent's log (`_formats`), read by its reader; None
    for OpenHands' own layouts, whose records the caller builds.
    """
    data = path.read_bytes()
    for attempt in range(1, _READS + 1):
        try:
            return _parse_records(data, path)
        except _TornTail as torn:
            if _is_open_for_writing(path):
                # A stream writes each line and its newline in one os.write; a reader can see part of it.
                logger.debug("%s:%d: append in progress (%d bytes so far) left out", path, torn.line, torn.byte_count)
                return torn.records, torn.lines, None
            # No writer now: one may have finished (and closed) since we read. Read again to tell.
            again = path.read_bytes()
            if again == data or attempt == _READS:
                raise torn.error from torn.__cause__
            data = again
    raise AssertionError("unreachable")  # pragma: no cover


_READS = 3
"""How often a log whose last line is torn is read before the tear is taken as real (no writer)."""


class _TornTail(Exception):
    """A JSONL log's last line has no newline and does not parse: cut off, or still being written."""

    def __init__(self, records: list[Any], lines: list[int], line: int, byte_count: int, error: MalformedEventError) -> None:
        self.records = records
        self.lines = lines
        self.line = line
        self.byte_count = byte_count
        self.error = error


def _is_open_for_writing(path: Path) -> bool:
    """Whether a stream holds the log's lock (`JsonlEventStore` takes an exclusive flock while open).

    The test takes a shared lock without waiting on a file descriptor of our own and drops it at
    once, so the writer is never disturbed; only a store opening in that instant would find the
    file locked, and it says so (`StoreLockedError`).
    """
    if fcntl is None:  # pragma: no cover - no flock (Windows): no writer can be seen
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # pragma: no cover - a file system without flock
        return False
    finally:
        os.close(fd)  # closing drops the shared lock if we got it
    return False


def _parse_records(data: bytes, path: Path) -> tuple[list[Any], list[int] | None, list[Event] | None]:
    """The list of raw event dicts in a file, with their line numbers for JSONL (else None), or the
    events of another agent's log (told by its content, `_formats`) as the third value.

    A file that holds no OpenHands event and is no other agent's log is refused, saying what it holds.
    """
    stripped = data.lstrip()
    if stripped.startswith(b"["):
        document = _loads(data, path)
        fmt = detect_document(document)
        if fmt is not None:
            return [], None, read_document(fmt, document, path=path)
        records = _unwrap(document, path)
        if records and not holds_openhands_events(records):
            raise refusal(document, path=path, jsonl=False)
        return records, None, None
    if stripped.startswith(b"{"):
        # A single JSON document (a wrapper object, another agent's trajectory), or JSONL.
        document = None
        if not _is_jsonl(data):
            try:
                document = orjson.loads(data)
            except orjson.JSONDecodeError:
                document = None
        fmt = detect_document(document)
        if fmt is not None:
            return [], None, read_document(fmt, document, path=path)
        if isinstance(document, dict) and _is_wrapper(document):
            records = _unwrap(document, path)
            if records and not holds_openhands_events(records):
                raise refusal(document, path=path, jsonl=False)
            return records, None, None
        records, lines = _parse_jsonl(data, path)
        fmt = detect_records(records)
        if fmt is not None:
            return [], None, read_records(fmt, records, lines, path=path)
        if not holds_openhands_events(records):
            raise refusal(document if isinstance(document, dict) else records, path=path, jsonl=not isinstance(document, dict))
        return records, lines, None
    if not stripped:
        return [], None, None
    raise MalformedEventError("not a JSON list, a JSON object or JSONL of events", path=path, line=1)


_NOT_SPACE = re.compile(rb"\S")


def _is_jsonl(data: bytes) -> bool:
    """Whether `data` is plainly JSONL: its first line is a whole JSON value and more follows.

    Then parsing the whole file as one document can only fail, after reading all of it (0.4 s for
    100 MB), so it is not tried.
    """
    end = data.find(b"\n")
    if end < 0 or _NOT_SPACE.search(data, end) is None:  # (searched in place: `data[end:]` copies the file)
        return False
    try:
        orjson.loads(data[:end])
    except orjson.JSONDecodeError:
        return False
    return True


# A document with none of these keys is not an event (V0, old flattened, or SDK).
_EVENT_KEYS = frozenset({"action", "observation", "kind"})


def _loads(data: bytes, path: Path) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise MalformedEventError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=exc.lineno) from exc


def _is_wrapper(document: dict[str, Any]) -> bool:
    return isinstance(document.get("trajectory"), list) or isinstance(document.get("history"), list)


def _unwrap(document: Any, path: Path) -> list[Any]:
    if isinstance(document, dict):
        for key in ("trajectory", "history"):
            if isinstance(document.get(key), list):
                return document[key]
    if isinstance(document, list):
        return document
    raise MalformedEventError("expected a list of events, or an object with 'trajectory' or 'history'", path=path)


def _parse_jsonl(data: bytes, path: Path) -> tuple[list[Any], list[int]]:
    """Parse JSONL; raises `_TornTail` when only the last line, which has no newline, does not parse."""
    records: list[Any] = []
    lines: list[int] = []
    split = split_lines(data)
    for number, line in enumerate(split, start=1):
        if not line or line.isspace():  # (not `line.strip()`: it copies every line)
            continue
        try:
            records.append(orjson.loads(line))
        except orjson.JSONDecodeError as exc:
            error = MalformedEventError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=number)
            if number < len(split):
                raise error from exc
            error = MalformedEventError(
                f"{error.reason}; the last line has no newline: a write cut off (EventStream.open sets it "
                "aside, 'openhands-memory repair' moves it out)",
                path=path,
                line=number,
            )
            raise _TornTail(records, lines, number, len(line), error) from exc
        lines.append(number)
    return records, lines


def _number_unnumbered(events: list[Event]) -> bool:
    """Number 0, 1, 2, ... the events of a log where none has an id (the old flattened form), and
    link their observations to the actions they answered (`link_legacy_observations`); True if it did.

    In a log where some events have ids, one without is left without: `validate_events` makes it an
    error, as `EventStream.open` does (no id can be guessed for it among the others).
    """
    if not events or any(e.id is not None for e in events):
        return False
    for number, event in enumerate(events):
        event.id = number
    link_legacy_observations(events)
    return True


def dump_events(
    events: Iterable[Event], path: str | os.PathLike[str], *, fmt: str | None = None, overwrite: bool = True
) -> None:
    """Write events to a file: JSONL for a `.jsonl` path (or `fmt="jsonl"`), else a JSON list.

    The file (mode 0600) is replaced atomically: a reader sees the old file or the new one, never half.

    Raises:
        MalformedEventError: an event holds a value JSON cannot carry; nothing is written.
        OutputExistsError: `path` exists and `overwrite` is False; nothing is written.
    """
    path = Path(path)
    fmt = fmt or ("jsonl" if path.suffix == ".jsonl" else "json")
    if fmt == "jsonl":
        body = b"".join(event_to_json(e) + b"\n" for e in events)
    elif fmt == "json":
        events = list(events)
        try:
            body = orjson.dumps([event_to_dict(e) for e in events], option=orjson.OPT_INDENT_2)
        except orjson.JSONEncodeError:
            for event in events:
                event_to_json(event)  # names the event that cannot be written
            raise
    else:
        raise ValueError(f"unknown format {fmt!r}: use 'json' or 'jsonl'")
    write_atomically(path, body, overwrite=overwrite)


def load_session_folder(path: str | os.PathLike[str]) -> list[Event]:
    """Read an OpenHands session folder: `events/<id>.json`, one event a file, in id order.

    `path` may be the session folder or its `events/` folder. An event without an id (the old
    flattened form) gets the id its file is named by. Other `.json` files there are left out, with
    a warning on this module's logger that names them.

    An OpenHands SDK conversation folder (`events/event-<index>-<uuid>.json`, as the SDK persists a
    `Conversation`) is read the same way, in index order, and imported as an SDK log is (see
    `events._sdk_import`); its `base_state.json` (the agent's settings, not events) is not read.

    Raises:
        MalformedEventError: the folder has no event files, two files name the same id (or SDK
            index), a folder mixes both layouts, or a file is not an event (or holds an event whose
            id is not its name); the error names the file.
    """
    folder = Path(path)
    if (folder / "events").is_dir():
        folder = folder / "events"
    numbered: list[tuple[int, Path]] = []
    sdk_numbered: list[tuple[int, Path]] = []
    others: list[str] = []
    for file in folder.glob("*.json"):
        if _EVENT_FILE.fullmatch(file.name):
            numbered.append((int(file.stem), file))
        elif (sdk_name := _SDK_EVENT_FILE.fullmatch(file.name)) is not None:
            sdk_numbered.append((int(sdk_name.group(1)), file))
        else:
            others.append(file.name)
    if numbered and sdk_numbered:
        raise MalformedEventError(
            f"both <id>.json and SDK event-<index>-<uuid>.json files ({len(numbered)} and {len(sdk_numbered)}): "
            "two logs in one folder",
            path=folder,
        )
    if sdk_numbered:
        if others:
            logger.warning(
                "%s: %d file(s) not named event-<index>-<uuid>.json left out: %s", folder, len(others), ", ".join(sorted(others)[:5])
            )
        return _load_sdk_event_files(folder, sdk_numbered)
    if not numbered:
        raise MalformedEventError(
            "no events/<id>.json files in this folder (nor an SDK conversation's events/event-<index>-<uuid>.json)", path=folder
        )
    if others:
        logger.warning("%s: %d file(s) not named <id>.json left out: %s", folder, len(others), ", ".join(sorted(others)[:5]))
    numbered.sort()
    events: list[Event] = []
    for position, (event_id, file) in enumerate(numbered):
        if position and numbered[position - 1][0] == event_id:
            raise MalformedEventError(
                f"{numbered[position - 1][1].name} and {file.name} both name event {event_id}", path=folder
            )
        if not file.is_file():
            raise MalformedEventError("not a file", path=file)
        try:
            event = event_from_dict(_loads(file.read_bytes(), file))
        except MalformedEventError as exc:
            raise exc.at(path=file) from exc.__cause__
        if event.id is None:
            event.id = event_id  # the layout names each event by its id; an event without one has the file's
        elif event.id != event_id:
            raise MalformedEventError(f"holds event id {event.id}, not the {event_id} its name says", path=file)
        events.append(event)
    return events


# ASCII digits only: `str.isdigit()` also accepts '²', which `int()` refuses. 18 digits keep an id in 64 bits.
_EVENT_FILE = re.compile(r"[0-9]{1,18}\.json")

# The SDK's `EVENT_NAME_RE` (conversation/persistence_const.py): an index of 5+ digits, then the event's id.
_SDK_EVENT_FILE = re.compile(r"event-([0-9]{5,18})-[0-9A-Fa-f-]{8,}\.json")


def _load_sdk_event_files(folder: Path, files: list[tuple[int, Path]]) -> list[Event]:
    """Import an SDK conversation's event files, in index order (the order the SDK appended them)."""
    files.sort()
    records: list[Any] = []
    for position, (index, file) in enumerate(files):
        if position and files[position - 1][0] == index:
            raise MalformedEventError(f"{files[position - 1][1].name} and {file.name} both hold SDK event {index}", path=folder)
        if not file.is_file():
            raise MalformedEventError("not a file", path=file)
        records.append(_loads(file.read_bytes(), file))
    try:
        return import_sdk_events(records, path=folder)
    except MalformedEventError as exc:
        if exc.index is None or not 0 <= exc.index < len(files):
            raise
        # The file is the place to look; the importer counts records.
        raise MalformedEventError(exc.reason, path=files[exc.index][1], event_id=exc.event_id) from exc.__cause__


def dump_session_folder(events: Sequence[Event], path: str | os.PathLike[str]) -> Path:
    """Write events as an OpenHands session folder (`<path>/events/<id>.json`); returns the events folder.

    Every event must have an id, since the id names its file. Files are 0600 and the folders it
    creates 0700, whatever the umask; folders that exist keep their mode.

    Raises:
        MalformedEventError: an event has no id, or holds a value JSON cannot carry; nothing is written.
    """
    folder = Path(path) / "events"
    # Everything is checked and serialized before the first file is written.
    bodies: list[tuple[int, bytes]] = []
    for index, event in enumerate(events):
        if event.id is None:
            raise MalformedEventError("an event in a session folder needs an id", index=index)
        try:
            bodies.append((event.id, event_to_json(event)))
        except MalformedEventError as exc:
            raise exc.at(index=index) from exc.__cause__
    make_private_folder(folder)
    for event_id, body in bodies:
        write_atomically(folder / f"{event_id}.json", body, overwrite=True)
    return folder
