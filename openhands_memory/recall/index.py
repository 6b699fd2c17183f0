"""The full-text search index of a log's events: SQLite FTS5 with BM25 ranking, a projection of the log.

`SearchIndex.for_log(path)` keeps the index in a sidecar file beside a file-backed log,
`<log>.search.sqlite` (mode 0600); `SearchIndex.in_memory()` keeps it in memory. Either way the
index is derived from the log and rebuildable from it, never trusted over it:

- the sidecar's `meta` table records the last event id indexed and a fingerprint of the log's
  prefix (the first and the last indexed events' ids and a hash of their kind and text), checked
  cheaply by `sync(events)`; a log that was replaced, truncated or is behind the index is
  re-indexed from scratch;
- a sidecar that is corrupt, of another schema, or not a database at all is logged at WARNING and
  recreated; one that cannot be written (a read-only folder, a lock held by another process) makes
  the index fall back to memory, logged at WARNING and said by `fallback_reason`. No sidecar
  problem is ever an exception to the caller.

Queries are plain text: each whitespace-separated chunk and each word in it is quoted, so FTS5
syntax in it (`AND`, `*`, `:`, quotes, parentheses, `-`) is searched for as text and never an
error. The events holding every chunk as written are the answer when there are any (ranked by
BM25); otherwise the events holding any chunk or word, BM25 ranking those that match more of them,
and rarer ones, first.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from openhands_memory._files import FILE_MODE, refuse_inputs
from openhands_memory.errors import OutputIsInputError, StoreClosedError
from openhands_memory.events import Event, Observation

__all__ = ["SIDECAR_SUFFIX", "SearchHit", "SearchIndex", "event_text", "sidecar_path"]

logger = logging.getLogger(__name__)

SIDECAR_SUFFIX = ".search.sqlite"
"""What `SearchIndex.for_log` appends to the log's file name to name its sidecar."""

_SCHEMA_VERSION = "1"
_SNIPPET_CHARS = 200
_MAX_QUERY_TERMS = 64
"""Terms of a query beyond this are ignored: a query is a few keywords, and each term costs a pass over its postings."""

# Fields that hold no text worth searching: settings, enums, images, model plumbing, page internals.
_SKIPPED_FIELDS = frozenset(
    {
        "agent_class",
        "axtree_object",
        "confirmation_state",
        "custom_secrets_descriptions",
        "dom_object",
        "extra_element_properties",
        "file_urls",
        "goal_image_urls",
        "image_urls",
        "impl_source",
        "kernel_init_code",
        "metadata",
        "openhands_version",
        "runtime_hosts",
        "screenshot",
        "screenshot_path",
        "security_risk",
        "set_of_marks",
        "tools",
    }
)

_COPY_KINDS = frozenset({"search_history", "context_reload"})
"""Observation kinds whose content copies other events (search results, a reloaded output): not indexed, so a
search finds the original event rather than an earlier answer that quoted it."""

_WORD = re.compile(r"[^\W_]+")
_DATA_URL = re.compile(r"data:[\w/+.-]*;base64,", re.ASCII)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One event that matched a search, best first in a result list."""

    event_id: int
    """The id of the event in the log."""
    kind: str
    """The event's `action` or `observation` name, e.g. "run", "read", "message"."""
    snippet: str
    """A short excerpt around the match, on one line, at most 200 characters."""
    score: float
    """How well the event matches (the negated BM25 rank): higher is better."""


def event_text(event: Event) -> str:
    """The searchable text of an event: its content, command, path, thought, message, summary and other text fields.

    Settings, images (base64 data URLs), page internals and model plumbing are left out; strings
    nested in lists and objects (tool arguments, unknown kinds' fields) are included.
    """
    parts: list[str] = []
    if isinstance(event, Observation) and event.content:
        parts.append(event.content)
    values = event.__dict__
    for name in event.payload_fields:
        if name not in _SKIPPED_FIELDS:
            parts.extend(_strings(values.get(name)))
    extra = event.__pydantic_extra__
    if extra:
        for name, value in extra.items():
            if name not in _SKIPPED_FIELDS:
                parts.extend(_strings(value))
    return "\n".join(parts)


def _strings(value: Any) -> Iterator[str]:
    """The non-empty strings in a JSON-like value, depth first, without recursion (a value may nest deeply)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item and not _DATA_URL.match(item):
                yield item
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))


def sidecar_path(log_path: str | os.PathLike[str]) -> Path:
    """Where `SearchIndex.for_log(log_path)` keeps its index: `<log>.search.sqlite` beside the log."""
    log = Path(log_path)
    return log.with_name(log.name + SIDECAR_SUFFIX)


def _query_terms(text: str) -> tuple[list[str], list[str]]:
    """The chunks of a plain-text query (whitespace-separated, each holding a word) and all its terms.

    The terms are the chunks and, for a chunk of several words, each word: a chunk is searched as
    a phrase (`src/x.py`, `a::b` as written), its words let an event with them apart still match.
    """
    chunks: dict[str, None] = {}  # ordered and unique
    terms: dict[str, None] = {}
    for chunk in _clean(text).split():
        words = _WORD.findall(chunk)
        if not words:  # only operators or punctuation: the tokenizer would find nothing in it
            continue
        chunks[chunk] = None
        for term in (chunk, *words) if len(words) > 1 else words:
            terms[term] = None
        if len(terms) >= _MAX_QUERY_TERMS:
            break
    return list(chunks)[:_MAX_QUERY_TERMS], list(terms)[:_MAX_QUERY_TERMS]


def _fts_query(terms: Sequence[str], operator: str) -> str:
    """The FTS5 query for `terms`: each quoted (so nothing in it is syntax), joined by `operator` (AND, OR)."""
    return f" {operator} ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _excerpt(body: str, terms: Sequence[str]) -> str:
    """One line of about 200 characters of `body` around the first place a query term appears (else its start).

    Not FTS5's snippet(): its cost grows with the square of the matches in a document, which makes
    a common word in a megabyte of output take seconds; this costs one scan per term.
    """
    at = 0
    # Whole chunks first, then the longer (usually rarer) words.
    for term in sorted(terms, key=lambda t: (_WORD.fullmatch(t) is not None, -len(t))):
        # As the tokenizer sees it: not inside a longer word ("x" is not found in "example").
        found = re.search(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", body, re.IGNORECASE)
        if found is not None:
            at = found.start()
            break
    start = max(0, at - _SNIPPET_CHARS // 4)
    line = " ".join(body[start : start + 2 * _SNIPPET_CHARS].split())
    head = "…" if start > 0 else ""
    budget = _SNIPPET_CHARS - len(head)
    if len(line) > budget or start + 2 * _SNIPPET_CHARS < len(body):
        line = line[: budget - 1] + "…"
    return head + line


def _clean(text: str) -> str:
    """Text SQLite can take: NUL ends an FTS5 string early, and a lone surrogate cannot be encoded as UTF-8."""
    if "\x00" in text:
        text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _fingerprint(event: Event, text: str) -> str:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(_clean(f"{event.kind}\x00{text}").encode("utf-8"))
    return digest.hexdigest()


_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE VIRTUAL TABLE events USING fts5(
    event_id UNINDEXED, kind UNINDEXED, body, tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO meta (key, value) VALUES ('schema', '{_SCHEMA_VERSION}');
"""

# SQLite result codes that mean the file is not (or no longer) a database we can trust: recreate it.
_CORRUPT = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_FORMAT", "SQLITE_SCHEMA"})


class _SchemaMismatch(Exception):
    """The sidecar is a database, but not one of ours (or of another version)."""


@dataclass(slots=True)
class _State:
    """What the index holds, mirrored from its meta table: ids are compared in Python, not in SQL."""

    first_id: int | None = None
    first_hash: str = ""
    last_id: int | None = None
    last_hash: str = ""
    rows: int = 0

    def to_meta(self) -> list[tuple[str, str]]:
        return [
            ("first_id", "" if self.first_id is None else str(self.first_id)),
            ("first_hash", self.first_hash),
            ("last_id", "" if self.last_id is None else str(self.last_id)),
            ("last_hash", self.last_hash),
            ("rows", str(self.rows)),
        ]

    @classmethod
    def from_meta(cls, meta: dict[str, str]) -> _State:
        if meta.get("schema") != _SCHEMA_VERSION:
            raise _SchemaMismatch(f"schema {meta.get('schema')!r}, expected {_SCHEMA_VERSION!r}")
        try:
            first, last = meta.get("first_id", ""), meta.get("last_id", "")
            state = cls(
                first_id=int(first) if first else None,
                first_hash=meta.get("first_hash", ""),
                last_id=int(last) if last else None,
                last_hash=meta.get("last_hash", ""),
                rows=int(meta.get("rows", "0")),
            )
        except ValueError as exc:
            raise _SchemaMismatch(f"unreadable meta: {exc}") from None
        if (state.first_id is None) != (state.last_id is None):
            raise _SchemaMismatch("meta has a first id without a last one, or the reverse")
        return state


class SearchIndex:
    """A full-text index of a log's events: a projection, rebuildable from the log, never the source of truth.

    Keep it current with `add(event)` on every append, or `sync(events)` with the whole log (which
    also checks that the index still belongs to that log). Search results are as fresh as the last
    of those calls. Safe to share between threads; one writer process per sidecar is expected
    (another one's lock makes this one fall back to memory).
    """

    def __init__(
        self, conn: sqlite3.Connection, state: _State, *, path: Path | None, fallback_reason: str | None = None
    ) -> None:
        """Use `for_log` or `in_memory`; this takes an open connection with the schema in place."""
        self._conn: sqlite3.Connection | None = conn
        self._state = state
        self._path = path
        self._lock = threading.RLock()
        self.fallback_reason = fallback_reason
        """Why a `for_log` index lives in memory instead of its sidecar (None when it does not)."""
        self.rebuilds = 0
        """How many times this index was emptied and re-indexed from the log (a new sidecar is not counted)."""
        self.last_rebuild_reason: str | None = None
        """Why the index was last rebuilt, or recreated: a corrupt sidecar, a log that does not match."""

    # -- opening ------------------------------------------------------------------------------------

    @classmethod
    def for_log(cls, log_path: str | os.PathLike[str]) -> SearchIndex:
        """The index of the log at `log_path`, kept in the sidecar `<log>.search.sqlite` (created owner-only, 0600).

        Never raises for a sidecar problem: a corrupt one is recreated (WARNING); one that cannot be
        created or written falls back to an in-memory index (WARNING, `fallback_reason`). Either
        way the next `sync(events)` fills it from the log.
        """
        path = sidecar_path(log_path)
        try:
            refuse_inputs(path, [log_path])
        except OutputIsInputError as exc:  # a link that makes the sidecar the log itself: never write there
            return cls._memory_fallback(path, str(exc))
        try:
            return cls._open_file(path)
        except (sqlite3.Error, OSError, _SchemaMismatch) as exc:
            if not _is_corrupt(exc):
                return cls._memory_fallback(path, _describe(exc))
            logger.warning("search index %s is corrupt (%s): recreating it from the log", path, _describe(exc))
            try:
                _remove_sidecar(path)
                index = cls._open_file(path)
            except (sqlite3.Error, OSError, _SchemaMismatch) as again:
                return cls._memory_fallback(path, _describe(again))
            index.last_rebuild_reason = f"corrupt sidecar: {_describe(exc)}"
            index.rebuilds += 1
            return index

    @classmethod
    def in_memory(cls) -> SearchIndex:
        """An empty index in memory, for an in-memory stream (or when no sidecar can be written)."""
        conn = _connect(":memory:")
        conn.executescript(_SCHEMA)
        return cls(conn, _State(), path=None)

    @classmethod
    def _memory_fallback(cls, path: Path, reason: str) -> SearchIndex:
        logger.warning("search index %s cannot be used (%s): indexing in memory instead", path, reason)
        index = cls.in_memory()
        index.fallback_reason = reason
        return index

    @classmethod
    def _open_file(cls, path: Path) -> SearchIndex:
        _prepare_sidecar(path)
        conn = _connect(str(path))
        try:
            # WAL with synchronous=NORMAL: a commit costs no fsync, and a crash or power loss loses at
            # most the last commits (the next sync re-indexes them), never the file's consistency.
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
            if not tables:
                conn.executescript(_SCHEMA)
                return cls(conn, _State(), path=path)
            try:
                if not {"meta", "events"} <= tables:
                    raise _SchemaMismatch(f"tables {sorted(tables)}")
                state = _State.from_meta(dict(conn.execute("SELECT key, value FROM meta").fetchall()))
                conn.execute("SELECT event_id, kind, body FROM events LIMIT 0")
            except (_SchemaMismatch, sqlite3.OperationalError) as exc:
                if isinstance(exc, sqlite3.OperationalError) and not _is_schema_problem(exc):
                    raise
                logger.warning(
                    "search index %s is not one this version reads (%s): recreating it", path, _describe(exc)
                )
                _recreate_schema(conn)
                index = cls(conn, _State(), path=path)
                index.rebuilds += 1
                index.last_rebuild_reason = f"unreadable sidecar: {_describe(exc)}"
                return index
            return cls(conn, state, path=path)
        except BaseException:
            conn.close()
            raise

    # -- state --------------------------------------------------------------------------------------

    @property
    def path(self) -> Path | None:
        """The sidecar file, or None for an index in memory."""
        return None if self.fallback_reason is not None else self._path

    @property
    def last_indexed_id(self) -> int | None:
        """The id of the last event indexed (or looked at and found without text); None when empty."""
        return self._state.last_id

    def __len__(self) -> int:
        """How many events the index holds (events without searchable text are not held)."""
        return self._state.rows

    # -- writing ------------------------------------------------------------------------------------

    def add(self, event: Event) -> None:
        """Index one event that has an id; ids only grow, so an event without an id or with id <= last is ignored."""
        with self._lock:
            last = self._state.last_id
            if event.id is None or (last is not None and event.id <= last):
                return
            self._write([event], start=False)

    def sync(self, events: Sequence[Event]) -> int:
        """Catch up with the log `events` (in id order); returns how many of its events were gone through.

        Only the events after `last_indexed_id` are indexed, unless the index does not belong to
        this log (its first or last indexed event differs from the log's, or the log ends before
        it): then it is emptied and the whole log indexed, and `rebuilds` counts it.
        """
        with self._lock:
            self._open_conn()
            start, reason = self._catch_up_point(events)
            if reason is not None:
                logger.warning("search index %s does not match the log (%s): rebuilding it", self._where(), reason)
                self.rebuilds += 1
                self.last_rebuild_reason = reason
            new = [event for event in (events[i] for i in range(start, len(events))) if event.id is not None]
            if reason is not None or new:
                self._write(new, start=reason is not None)
            return len(new)

    def _catch_up_point(self, events: Sequence[Event]) -> tuple[int, str | None]:
        """Where in `events` indexing resumes, and why the index must be rebuilt instead (None: it need not)."""
        state = self._state
        if state.last_id is None:
            return 0, ("the index is empty but held events" if state.rows else None)
        position = len(events)  # walk back over the new events only: this check costs O(new), not O(log)
        while position > 0:
            ident = events[position - 1].id
            if ident is not None and ident <= state.last_id:
                break
            position -= 1
        if position == 0 or events[position - 1].id != state.last_id:
            return 0, f"the log has no event {state.last_id}, the last one indexed"
        last = events[position - 1]
        if _fingerprint(last, event_text(last)) != state.last_hash:
            return 0, f"event {state.last_id} is not the one indexed"
        first = next(event for event in events if event.id is not None)
        if first.id != state.first_id or _fingerprint(first, event_text(first)) != state.first_hash:
            return 0, f"the log starts with event {first.id}, not the one indexed first ({state.first_id})"
        return position, None

    def _write(self, events: Iterable[Event], *, start: bool) -> None:
        """Index `events` in one transaction (after emptying the index when `start`); on failure, recover."""
        conn = self._open_conn()
        state = _State() if start else dataclasses.replace(self._state)
        rows: list[tuple[str, str, str]] = []
        for event in events:
            text = event_text(event)
            if event.id is None:
                continue
            digest = _fingerprint(event, text)
            if state.first_id is None:
                state.first_id, state.first_hash = event.id, digest
            state.last_id, state.last_hash = event.id, digest
            if text and not event.hidden and not (isinstance(event, Observation) and event.kind in _COPY_KINDS):
                rows.append((str(event.id), event.kind, _clean(text)))
        state.rows += len(rows)
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if start:
                    conn.execute("DELETE FROM events")
                conn.executemany("INSERT INTO events (event_id, kind, body) VALUES (?, ?, ?)", rows)
                conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", state.to_meta())
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            self._recover(exc)
            return
        self._state = state

    # -- reading ------------------------------------------------------------------------------------

    def search(self, query: str, *, limit: int = 5) -> list[SearchHit]:
        """The events best matching plain-text `query`, best first, at most `limit`; [] for a query with no word.

        Every word is searched as text (FTS5 operators in it are not syntax). The events that hold
        every whitespace-separated chunk of the query as written come first, ranked by BM25; only
        when there is none, the events holding any of its chunks or words, those matching more of
        them and rarer ones first.
        """
        chunks, terms = _query_terms(query)
        if not chunks or limit < 1:
            return []
        strict, loose = _fts_query(chunks, "AND"), _fts_query(terms, "OR")
        sql = "SELECT event_id, kind, body, rank FROM events WHERE events MATCH ? ORDER BY rank LIMIT ?"
        with self._lock:
            conn = self._open_conn()
            try:
                # Events holding every chunk as written, if any: precise, and cheap (BM25 scores every
                # match, so a few common words OR-ed over a long log cost far more); else any term.
                rows = conn.execute(sql, (strict, limit)).fetchall()
                if not rows and loose != strict:
                    rows = conn.execute(sql, (loose, limit)).fetchall()
            except sqlite3.Error as exc:
                self._recover(exc)
                return []
        return [SearchHit(int(ident), kind, _excerpt(body, terms), -rank) for ident, kind, body, rank in rows]

    # -- failures and closing -----------------------------------------------------------------------

    def _recover(self, exc: sqlite3.Error) -> None:
        """After a failed statement: start again empty, in a fresh sidecar if it was corrupt, else in memory.

        The next `sync` refills it from the log; until then a search finds nothing.
        """
        where = self._where()
        self.rebuilds += 1
        self.last_rebuild_reason = f"{_describe(exc)}"
        if self._conn is not None:
            self._conn.close()
        fresh: SearchIndex | None = None
        if self.path is not None and _is_corrupt(exc):
            logger.warning(
                "search index %s failed (%s): recreating it; the next sync re-indexes the log",
                where, _describe(exc),
            )
            try:
                _remove_sidecar(self.path)
                fresh = SearchIndex._open_file(self.path)
            except (sqlite3.Error, OSError, _SchemaMismatch) as again:
                exc = again  # type: ignore[assignment]
        if fresh is None:
            logger.warning(
                "search index %s failed (%s): indexing in memory; the next sync re-indexes the log",
                where, _describe(exc),
            )
            fresh = SearchIndex.in_memory()
            if self._path is not None:
                self.fallback_reason = _describe(exc)
        self._conn, self._state = fresh._conn, fresh._state
        fresh._conn = None

    def _where(self) -> str:
        return str(self._path) if self._path is not None else "(in memory)"

    def _open_conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreClosedError(self._path)
        return self._conn

    def close(self) -> None:
        """Close the index (the sidecar stays, for the next `for_log`); idempotent."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SearchIndex({self._where()}, {self._state.rows} events, last id {self._state.last_id})"


# -- the sidecar file -------------------------------------------------------------------------------

_SIDE_FILES = ("-wal", "-shm", "-journal")


def _connect(target: str) -> sqlite3.Connection:
    # Autocommit: transactions are explicit (BEGIN IMMEDIATE ... COMMIT) in `_write`.
    conn = sqlite3.connect(target, timeout=2.0, isolation_level=None, check_same_thread=False)
    return conn


def _prepare_sidecar(path: Path) -> None:
    """Create the sidecar owner-only before SQLite opens it (SQLite would use the umask), or make an existing one so."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    except FileExistsError:
        info = os.stat(path)
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            os.chmod(path, FILE_MODE)
        return
    try:
        # Exactly 0600 whatever the umask; SQLite gives its -wal and -shm files this file's mode.
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    # A new sidecar: a write-ahead log left by an old one would be replayed onto it.
    for suffix in _SIDE_FILES:
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _remove_sidecar(path: Path) -> None:
    for suffix in ("", *_SIDE_FILES):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _recreate_schema(conn: sqlite3.Connection) -> None:
    names = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    # The FTS5 shadow tables (events_data, ...) go with their virtual table; anything else is dropped by name.
    drops = "".join(
        f'DROP {kind.upper()} IF EXISTS "{name.replace(chr(34), chr(34) * 2)}";'
        for kind, name in names
        if not name.startswith("events_")
    )
    conn.executescript(f"BEGIN IMMEDIATE;{drops}{_SCHEMA}COMMIT;")


def _is_corrupt(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.DatabaseError) and getattr(exc, "sqlite_errorname", "") in _CORRUPT


def _is_schema_problem(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return text.startswith(("no such table", "no such column")) or "malformed" in text


def _describe(exc: BaseException) -> str:
    name = getattr(exc, "sqlite_errorname", None)
    text = str(exc) or type(exc).__name__
    return f"{text} ({name})" if name else text
