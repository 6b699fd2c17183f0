"""The full-text search index of a log's events: SQLite FTS5 with BM25 ranking, a projection of the log.

`SearchIndex.for_log(path)` keeps the index in a sidecar file beside a file-backed log,
`<log>.search.sqlite` (mode 0600); `SearchIndex.in_memory()` keeps it in memory. Either way the
index is derived from the log and rebuildable from it, never trusted over it:

- every event looked at is recorded with a digest of its searchable text (kind and text, secrets
  hidden). `sync(events)` checks the first event and the last one the index and the log share; a
  log that was replaced, or starts elsewhere, is re-indexed. `is_current(event)` checks one event:
  a hit whose event no longer holds what was indexed (an event edited in the middle of the log)
  tells the caller to `rebuild` (`recall.search_log` does it);
- it never moves backwards: events given by an older snapshot of the log (another process that
  read the log earlier) are checked, never removed, and ids only added or replaced. Every
  decision is taken inside the write transaction from what the file holds then, so processes and
  threads sharing one sidecar agree;
- the secrets in force (a `Redactor`) are hidden in everything indexed; the sidecar records a
  salted fingerprint of them (never the secrets), and one built with other secrets is rebuilt, by
  a caller that holds at least as much of the log (never by one that knows no secret: that one
  indexes in memory);
- the sidecar is one this library created (an SQLite file with its application id) or it is
  refused, left untouched, for an index in memory: a text file, another program's database or a
  symbolic link at that path is never written, emptied or chmod-ed. A sidecar of ours that is
  corrupt (SQLITE_CORRUPT, SQLITE_CORRUPT_VTAB, ...) is recreated, logged at WARNING and counted
  in `rebuilds`; one that cannot be written falls back to memory (`fallback_reason`); another
  process writing it makes a write wait, then be deferred to the next call (`deferred`). No
  sidecar problem is ever an exception to the caller; what cannot be recovered is a
  `SearchIndexError`, never a raw `sqlite3.Error`.

Queries are plain text: each whitespace-separated chunk and each word in it is quoted, so FTS5
syntax in it (`AND`, `*`, `:`, quotes, parentheses, `-`) is searched for as text and never an
error. A query is cut to its first `MAX_QUERY_CHARS` characters. The events holding every chunk
as written are the answer when there are any (ranked by BM25); otherwise the events holding any
chunk or word, BM25 ranking those that match more of them, and rarer ones, first. The memory
tools' own events (a search's query, its answer, a reloaded copy) are never indexed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import sqlite3
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from openhands_memory._files import FILE_MODE, refuse_inputs
from openhands_memory.errors import OutputIsInputError, SearchIndexError, StoreClosedError
from openhands_memory.events import Event
from openhands_memory.recall._search_text import (
    MAX_QUERY_CHARS,
    SearchHit,
    differing_digests,
    event_text,
    excerpt_around,
    is_indexed_kind,
    query_terms,
    sqlite_text,
    sync_start,
    text_digest,
)
from openhands_memory.stream import Redactor

__all__ = ["MAX_QUERY_CHARS", "SIDECAR_SUFFIX", "SearchHit", "SearchIndex", "event_text", "sidecar_path"]

logger = logging.getLogger(__name__)

SIDECAR_SUFFIX = ".search.sqlite"
"""What `SearchIndex.for_log` appends to the log's file name to name its sidecar."""

_SCHEMA_VERSION = "2"
_APPLICATION_ID = 0x4F484D53
"""SQLite's application id of every sidecar this library creates ("OHMS"): how it knows its own files."""
def sidecar_path(log_path: str | os.PathLike[str]) -> Path:
    """Where `SearchIndex.for_log(log_path)` keeps its index: `<log>.search.sqlite` beside the log."""
    log = Path(log_path)
    return log.with_name(log.name + SIDECAR_SUFFIX)


def _fts_query(terms: Sequence[str], operator: str) -> str:
    """The FTS5 query for `terms`: each quoted (so nothing in it is syntax), joined by `operator` (AND, OR)."""
    return f" {operator} ".join('"' + term.replace('"', '""') + '"' for term in terms)


_FTS = "CREATE VIRTUAL TABLE events USING fts5(kind UNINDEXED, body, tokenize = 'unicode61 remove_diacritics 2')"
_SCHEMA = f"""
PRAGMA application_id = {_APPLICATION_ID};
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE seen (event_id INTEGER PRIMARY KEY, digest BLOB NOT NULL);
{_FTS};
INSERT INTO meta (key, value) VALUES ('schema', '{_SCHEMA_VERSION}');
"""
"""`seen`: every event looked at and the digest of its text; `events`: those with text, the FTS rowid being the event id."""

_OWN_TABLES = frozenset({"meta", "events", "seen"})
_SQLITE_MAGIC = b"SQLite format 3\x00"

# SQLite result codes (extended ones included: SQLITE_CORRUPT_VTAB, ...) for a file that is not,
# or no longer, a database we can trust: recreate it. FTS5 reports some damage as plain errors.
_CORRUPT = ("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_FORMAT", "SQLITE_SCHEMA")
_CORRUPT_TEXT = ("malformed", "invalid fts5 file format", "vtable constructor failed", "fts5: corrupt")
# Another connection holds the write lock: wait (the connection's timeout), then defer to the next call.
_BUSY = ("SQLITE_BUSY", "SQLITE_LOCKED")

_T = TypeVar("_T")


class _Refused(Exception):
    """The file at the sidecar's path is not one this library created: it is never written."""


class _Recreate(Exception):
    """The sidecar is ours but of another version or shape: recreate it."""


@dataclass(frozen=True, slots=True)
class _LogBytes:
    """What `SearchIndex._log_bytes` read: the meta it compared against, the digests it computed."""

    recorded: tuple[str | None, str | None]
    """(log_bytes, log_digest) as the meta table held them when the file was read."""
    prefix: str | None
    """The digest of the file's first `log_bytes` bytes (None when it is shorter, or nothing was recorded)."""
    size: int
    digest: str

    def changed(self, conn: sqlite3.Connection) -> str | None:
        """Why the log's first bytes are not those last synced (None: they are, or another writer moved on)."""
        size, digest = self.recorded
        if size is None or digest is None or (_meta(conn, "log_bytes"), _meta(conn, "log_digest")) != self.recorded:
            return None
        if self.prefix != digest:
            return f"the log's first {size} bytes changed since they were indexed (an event edited or removed)"
        return None


class SearchIndex:
    """A full-text index of a log's events: a projection, rebuildable from the log, never the source of truth.

    Keep it current with `add(event)` on every append, or `sync(events)` with the log (which also
    checks that the index still belongs to that log); `is_current(event)` checks one hit. Search
    results are as fresh as the last of those calls, and may name events past the end of the
    events a caller gave (another user of the sidecar indexed more of the log): check hits against
    the log, as `recall.search_log` does. Safe to share between threads and processes.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        path: Path | None,
        redactor: Redactor | None = None,
        fallback_reason: str | None = None,
    ) -> None:
        """Use `for_log` or `in_memory`; this takes an open connection with the schema in place."""
        self._conn: sqlite3.Connection | None = conn
        self._path = path
        self._redactor = redactor if redactor is not None else Redactor()
        self._lock = threading.RLock()
        self._fingerprint: str | None = None
        """The fingerprint of `_redactor`'s secrets under this sidecar's salt (computed once)."""
        self._log_path: Path | None = None
        """The log file of a sidecar: `sync` checks that the bytes it had when last synced are still its first ones."""
        self.fallback_reason = fallback_reason
        """Why a `for_log` index lives in memory instead of its sidecar (None when it does not)."""
        self.rebuilds = 0
        """How many times this index was emptied and re-indexed from the log, or its sidecar recreated."""
        self.last_rebuild_reason: str | None = None
        """Why the index was last rebuilt, or recreated: a corrupt sidecar, a log that does not match."""
        self.deferred = 0
        """How many writes were put off because another connection was writing the sidecar (each logged)."""
        self.needs_sync = False
        """True when a write was deferred or the index started again (recreated, in memory): give it the whole
        log with `sync` before trusting it again. `sync` sets it back."""

    # -- opening ------------------------------------------------------------------------------------

    @classmethod
    def for_log(cls, log_path: str | os.PathLike[str], *, redactor: Redactor | None = None) -> SearchIndex:
        """The index of the log at `log_path`, kept in the sidecar `<log>.search.sqlite` (created owner-only, 0600).

        `redactor` holds the secrets in force: hidden in everything indexed (see the module).
        Never raises for a sidecar problem: a corrupt sidecar of ours is recreated (WARNING); a
        file this library did not create (or a link) is left untouched, and one that cannot be
        written makes the index live in memory (WARNING, `fallback_reason`). Either way the next
        `sync(events)` fills it from the log.

        Raises:
            SearchIndexError: not even an index in memory can be made (SQLite without FTS5).
        """
        path = sidecar_path(log_path)
        try:
            refuse_inputs(path, [log_path])
        except OutputIsInputError as exc:  # a link that makes the sidecar the log itself: never write there
            return cls._memory_fallback(path, str(exc), redactor)
        try:
            index = cls._open_file(path, redactor)
            index._log_path = Path(log_path)
            return index
        except _Refused as exc:
            return cls._memory_fallback(path, str(exc), redactor)
        except (sqlite3.Error, OSError, _Recreate) as exc:
            if not _is_corrupt(exc):
                return cls._memory_fallback(path, _describe(exc), redactor)
            if not _has_our_id(path):  # a damaged database we cannot tell is ours: never removed
                return cls._memory_fallback(path, f"{path} is a damaged SQLite database this library may not have "
                                            f"created ({_describe(exc)}); it is left untouched", redactor)
            logger.warning("search index %s is corrupt (%s): recreating it from the log", path, _describe(exc))
            try:
                _remove_sidecar(path)
                index = cls._open_file(path, redactor)
            except (sqlite3.Error, OSError, _Recreate, _Refused) as again:
                return cls._memory_fallback(path, _describe(again), redactor)
            index._count_rebuild(f"corrupt sidecar: {_describe(exc)}")
            index._log_path = Path(log_path)
            return index

    @classmethod
    def in_memory(cls, *, redactor: Redactor | None = None) -> SearchIndex:
        """An empty index in memory, for an in-memory stream (or when no sidecar can be written).

        Raises:
            SearchIndexError: SQLite cannot make it (built without FTS5).
        """
        try:
            conn = _connect(":memory:")
            conn.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise SearchIndexError(None, f"cannot create an index in memory: {_describe(exc)}") from exc
        return cls(conn, path=None, redactor=redactor)

    @classmethod
    def _memory_fallback(cls, path: Path, reason: str, redactor: Redactor | None) -> SearchIndex:
        logger.warning("search index %s cannot be used (%s): indexing in memory instead", path, reason)
        index = cls.in_memory(redactor=redactor)
        index._path = path
        index.fallback_reason = reason
        return index

    @classmethod
    def _open_file(cls, path: Path, redactor: Redactor | None) -> SearchIndex:
        created = _prepare_sidecar(path)
        conn = _connect(str(path))
        try:
            if created:
                _create_schema(conn)
                return cls(conn, path=path, redactor=redactor)
            try:
                _check_own(conn, path)
            except _Recreate as exc:
                logger.warning("search index %s is not one this version reads (%s): recreating it", path, exc)
                _recreate_schema(conn)
                index = cls(conn, path=path, redactor=redactor)
                index._count_rebuild(f"unreadable sidecar: {exc}")
                return index
            return cls(conn, path=path, redactor=redactor)
        except BaseException:
            conn.close()
            raise

    # -- state --------------------------------------------------------------------------------------

    @property
    def path(self) -> Path | None:
        """The sidecar file, or None for an index in memory."""
        return None if self.fallback_reason is not None else self._path

    @property
    def redactor(self) -> Redactor:
        """The secrets hidden in everything this index holds."""
        return self._redactor

    @property
    def last_indexed_id(self) -> int | None:
        """The id of the last event indexed (or looked at and found without text); None when empty."""
        return self._read(lambda conn: conn.execute("SELECT max(event_id) FROM seen").fetchone()[0])

    def __len__(self) -> int:
        """How many events the index holds (events without searchable text are not held)."""
        return int(self._read(lambda conn: conn.execute("SELECT count(*) FROM events").fetchone()[0]) or 0)

    # -- writing ------------------------------------------------------------------------------------

    def add(self, event: Event) -> None:
        """Index one event that has an id (an event without one is ignored).

        An id already indexed with the same text is left as it is; with another text (the log was
        cut and grew again) it is replaced. A write that finds the sidecar busy is deferred
        (`needs_sync`); one that finds it built with other secrets sets `needs_sync` too.
        """
        if event.id is None:
            return
        with self._lock:
            self._open_conn()
            entry = self._entry(event)

            def write(conn: sqlite3.Connection) -> None:
                if self._secrets_differ(conn):
                    self.needs_sync = True  # built with other secrets: only the whole log can rebuild it
                    return
                _put(conn, [entry], known=True)

            self._write(write)

    def sync(self, events: Sequence[Event], *, verify: bool = False) -> int:
        """Catch up with the log `events` (in id order, the whole log or an older snapshot of it); returns how many
        of its events were indexed.

        Only the events after the index's last one are indexed when the index belongs to this log:
        its first event, and the last event both hold, have the same digest; with `verify`, every
        event both hold (an event edited or scrubbed in the middle is found; it costs a digest of
        every event's text). Otherwise the events given are re-indexed from scratch, and
        `rebuilds` counts it. Events the index holds past the end of `events` are kept: the index
        never moves backwards.
        """
        with self._lock:
            self._open_conn()
            self.needs_sync = False
            deferred = self.deferred
            log = self._log_bytes()
            outcome = self._write(lambda conn: self._sync(conn, events, verify, log))
            if outcome is None and self.deferred == deferred:  # recreated or moved to memory: fill it now
                self.needs_sync = False
                outcome = self._write(lambda conn: self._sync(conn, events, verify, log))
            if outcome is None:
                return 0
            count, reason, to_memory = outcome
            if to_memory is not None:
                self._move_to_memory(to_memory)
                return self.sync(events)
            if reason is not None:
                self._count_rebuild(reason)
                logger.warning("search index %s does not match the log (%s): rebuilt it", self._where(), reason)
                self._checkpoint()
            return count

    def rebuild(self, events: Sequence[Event], *, reason: str) -> int:
        """Index `events` again from scratch (their ids; events past their end are kept); returns how many.

        For a caller that found the index stale (`is_current` was false for a hit).
        """
        with self._lock:
            self._open_conn()
            self.needs_sync = False
            count = self._write(lambda conn: _replace(conn, [self._entry(e) for e in events if e.id is not None]))
            if count is None:
                return 0
            self._count_rebuild(reason)
            logger.warning("search index %s is stale (%s): rebuilt it from the log", self._where(), reason)
            self._checkpoint()
            return count

    def _checkpoint(self) -> None:
        """After a rebuild: fold the write-ahead log into the file and empty it, so no old page lingers there."""
        if self.path is not None:
            self._read(lambda conn: conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())

    def _log_bytes(self) -> _LogBytes | None:
        """The log file's digest now, and that of its first bytes as long as when last synced (None: no file to read).

        One pass over the file: what a whole-log check costs (about 5 ms a MB), paid when a sidecar
        is synced (opened), never at an append.
        """
        if self._log_path is None or self.path is None:
            return None
        recorded = self._read(lambda conn: (_meta(conn, "log_bytes"), _meta(conn, "log_digest")))
        if recorded is None:
            return None
        size = int(recorded[0]) if recorded[0] and recorded[0].isdigit() else None
        digest = hashlib.blake2b(digest_size=16)
        prefix: str | None = None
        done = 0
        try:
            with open(self._log_path, "rb") as file:
                while chunk := file.read(1 << 20):
                    if size is not None and done <= size < done + len(chunk):
                        head = digest.copy()
                        head.update(chunk[: size - done])
                        prefix = head.hexdigest()
                    digest.update(chunk)
                    done += len(chunk)
        except OSError:
            return None
        if size == done:
            prefix = digest.hexdigest()
        return _LogBytes(recorded, prefix, done, digest.hexdigest())

    def _sync(
        self, conn: sqlite3.Connection, events: Sequence[Event], verify: bool, log: _LogBytes | None
    ) -> tuple[int, str | None, str | None]:
        """Inside the write transaction: (events indexed, why it was rebuilt or None, why to move to memory or None)."""
        result = self._sync_events(conn, events, verify, log)
        if log is not None and result[2] is None:
            _set_meta(conn, "log_bytes", str(log.size))
            _set_meta(conn, "log_digest", log.digest)
        return result

    def _sync_events(
        self, conn: sqlite3.Connection, events: Sequence[Event], verify: bool, log: _LogBytes | None
    ) -> tuple[int, str | None, str | None]:
        last = conn.execute("SELECT max(event_id) FROM seen").fetchone()[0]
        mine = self._secrets_fingerprint(conn)
        start = sync_start(events, last, _meta(conn, "secrets") or "", mine, where="beside the log")
        if start.refused is not None:
            return 0, None, start.refused
        position, given_last, reason = start.position, start.given_last, start.rebuild
        if last is not None and reason is None:
            reason = self._mismatch(conn, events, position)
            if reason is None and log is not None:
                reason = log.changed(conn)
            if reason is None and verify:
                reason = self._differing(conn, events[:position])
            if reason is None:
                new = [self._entry(e) for e in events[position:] if e.id is not None]
                _put(conn, new, known=False)
                return len(new), None, None
        entries = [self._entry(e) for e in events if e.id is not None]
        if reason is None or given_last is None or given_last >= last:
            _start_over(conn)
        _replace(conn, entries)
        _set_meta(conn, "secrets", mine)
        return len(entries), reason, None

    def _mismatch(self, conn: sqlite3.Connection, events: Sequence[Event], position: int) -> str | None:
        """Why the index is not an index of `events` (its first event or the last both hold differs), or None."""
        first = next((e for e in events if e.id is not None), None)
        if first is None:
            return None  # an empty log: nothing to compare, nothing to remove
        first_indexed = conn.execute("SELECT min(event_id) FROM seen").fetchone()[0]
        if first.id != first_indexed or _stored_digest(conn, first.id) != self._entry(first)[3]:
            return f"the log starts with event {first.id}, not the one indexed first ({first_indexed})"
        if position == 0:
            return None
        shared = events[position - 1]
        if _stored_digest(conn, shared.id) != self._entry(shared)[3]:
            return f"event {shared.id} is not the one indexed"
        return None

    def _differing(self, conn: sqlite3.Connection, events: Sequence[Event]) -> str | None:
        """Why the index does not hold `events` (those up to its last one) as they are, or None: every digest compared."""
        if not events:
            return None
        last = events[-1].id
        stored = dict(conn.execute("SELECT event_id, digest FROM seen WHERE event_id <= ?", (last,)).fetchall())
        return differing_digests(events, stored, lambda event: self._entry(event)[3])

    def _entry(self, event: Event) -> tuple[int, str, str | None, bytes]:
        """(id, kind, text to index or None, digest) of a stored event, its secrets hidden."""
        assert event.id is not None
        text = self._redactor.redact_text(event_text(event))
        body = sqlite_text(text) if text and is_indexed_kind(event) else None
        return event.id, event.kind, body, text_digest(event.kind, text)

    def _secrets_fingerprint(self, conn: sqlite3.Connection) -> str:
        if self._fingerprint is None:
            salt = _meta(conn, "salt")
            if salt is None:
                salt = secrets.token_hex(16)
                _set_meta(conn, "salt", salt)
            self._fingerprint = self._redactor.fingerprint(bytes.fromhex(salt))
        return self._fingerprint

    def _secrets_differ(self, conn: sqlite3.Connection) -> bool:
        stored = _meta(conn, "secrets")
        mine = self._secrets_fingerprint(conn)
        if stored is None:
            _set_meta(conn, "secrets", mine)
            return False
        return stored != mine

    def _write(self, work: Callable[[sqlite3.Connection], _T]) -> _T | None:
        """Run `work` in one write transaction; on failure, recover (see `_recover`) and return None."""
        conn = self._open_conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            self._recover(exc)
            return None
        return result

    def _read(self, work: Callable[[sqlite3.Connection], _T]) -> _T | None:
        with self._lock:
            conn = self._open_conn()
            try:
                return work(conn)
            except sqlite3.Error as exc:
                self._recover(exc)
                return None

    # -- reading ------------------------------------------------------------------------------------

    def search(self, query: str, *, limit: int = 5, before: int | None = None) -> list[SearchHit]:
        """The events best matching plain-text `query`, best first, at most `limit`; [] for a query with no word.

        `before`: only the events whose id is lower (None: all).

        Every word is searched as text (FTS5 operators in it are not syntax); only the first
        `MAX_QUERY_CHARS` characters of `query` count. The events that hold every
        whitespace-separated chunk of the query as written come first, ranked by BM25; only when
        there is none, the events holding any of its chunks or words, those matching more of them
        and rarer ones first.
        """
        chunks, terms = query_terms(query[:MAX_QUERY_CHARS])
        if not chunks or limit < 1:
            return []
        strict, loose = _fts_query(chunks, "AND"), _fts_query(terms, "OR")
        below = "" if before is None else " AND rowid < ?"
        sql = f"SELECT rowid, kind, body, rank FROM events WHERE events MATCH ?{below} ORDER BY rank LIMIT ?"
        bound = () if before is None else (before,)

        def run(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            # Events holding every chunk as written, if any: precise, and cheap (BM25 scores every
            # match, so a few common words OR-ed over a long log cost far more); else any term.
            rows = conn.execute(sql, (strict, *bound, limit)).fetchall()
            if not rows and loose != strict:
                rows = conn.execute(sql, (loose, *bound, limit)).fetchall()
            return rows

        rows = self._read(run) or []
        return [SearchHit(int(ident), kind, excerpt_around(body, terms), -rank) for ident, kind, body, rank in rows]

    def is_current(self, event: Event) -> bool:
        """Whether the index holds `event` as the log holds it now (the digest of its text, secrets hidden, agrees).

        False for an event the index never saw, or saw with another text: the index is stale.
        """
        if event.id is None:
            return False
        digest = self._entry(event)[3]
        return self._read(lambda conn: _stored_digest(conn, event.id)) == digest

    # -- failures and closing -----------------------------------------------------------------------

    def _recover(self, exc: sqlite3.Error) -> None:
        """After a failed statement: wait for a busy sidecar, recreate a corrupt one, else go on in memory.

        Whatever happened, `needs_sync` asks the caller for the log again.
        """
        self.needs_sync = True
        where = self._where()
        if _is_busy(exc):
            self.deferred += 1
            logger.info("search index %s is busy (%s): this write waits for the next sync", where, _describe(exc))
            return
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._count_rebuild(_describe(exc))
        if self.path is not None and _is_corrupt(exc):
            logger.warning(
                "search index %s failed (%s): recreating it; the next sync re-indexes the log", where, _describe(exc)
            )
            try:
                _remove_sidecar(self.path)
                fresh = SearchIndex._open_file(self.path, self._redactor)
            except (sqlite3.Error, OSError, _Recreate, _Refused) as again:
                self._move_to_memory(_describe(again))
                return
            self._conn, fresh._conn = fresh._conn, None
            self._fingerprint = None
            return
        self._move_to_memory(_describe(exc))

    def _move_to_memory(self, reason: str) -> None:
        logger.warning(
            "search index %s cannot be used (%s): indexing in memory; the next sync re-indexes the log",
            self._where(), reason,
        )
        if self._conn is not None:
            self._conn.close()
        fresh = SearchIndex.in_memory(redactor=self._redactor)
        self._conn, fresh._conn = fresh._conn, None
        self._fingerprint = None
        self.needs_sync = True
        if self._path is not None:
            self.fallback_reason = reason

    def _count_rebuild(self, reason: str) -> None:
        self.rebuilds += 1
        self.last_rebuild_reason = reason

    def _where(self) -> str:
        return str(self._path) if self._path is not None else "(in memory)"

    def _open_conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreClosedError(self._path)
        return self._conn

    def close(self) -> None:
        """Close the index (the sidecar stays, for the next `for_log`); idempotent."""
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                try:
                    conn.close()
                except sqlite3.Error as exc:
                    raise SearchIndexError(self._path, f"closing failed: {_describe(exc)}") from exc

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._conn is None else f"last id {self.last_indexed_id}"
        return f"SearchIndex({self._where()}, {state})"


# -- the tables -------------------------------------------------------------------------------------


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def _stored_digest(conn: sqlite3.Connection, event_id: int | None) -> bytes | None:
    row = conn.execute("SELECT digest FROM seen WHERE event_id = ?", (event_id,)).fetchone()
    return None if row is None else bytes(row[0])


def _put(conn: sqlite3.Connection, entries: Sequence[tuple[int, str, str | None, bytes]], *, known: bool) -> None:
    """Index `entries`; with `known`, an id may be there already: kept when its digest agrees, else replaced."""
    if known:
        fresh = []
        for entry in entries:
            stored = _stored_digest(conn, entry[0])
            if stored == entry[3]:
                continue
            if stored is not None:
                conn.execute("DELETE FROM events WHERE rowid = ?", (entry[0],))
            fresh.append(entry)
        entries = fresh
    conn.executemany("INSERT OR REPLACE INTO seen (event_id, digest) VALUES (?, ?)", [(e[0], e[3]) for e in entries])
    conn.executemany(
        "INSERT INTO events (rowid, kind, body) VALUES (?, ?, ?)", [(e[0], e[1], e[2]) for e in entries if e[2]]
    )


def _replace(conn: sqlite3.Connection, entries: Sequence[tuple[int, str, str | None, bytes]]) -> int:
    """Index `entries` afresh: what the index held for their ids (and between them) is dropped first."""
    if entries:
        first, last = entries[0][0], entries[-1][0]
        conn.execute("DELETE FROM events WHERE rowid BETWEEN ? AND ?", (first, last))
        conn.execute("DELETE FROM seen WHERE event_id BETWEEN ? AND ?", (first, last))
    _put(conn, entries, known=False)
    return len(entries)


def _start_over(conn: sqlite3.Connection) -> None:
    """Empty the index (the FTS table is dropped and made again: far faster than deleting its rows)."""
    conn.execute("DROP TABLE events")
    conn.execute(_FTS)
    conn.execute("DELETE FROM seen")


# -- the sidecar file -------------------------------------------------------------------------------

_SIDE_FILES = ("-wal", "-shm", "-journal")


def _connect(target: str) -> sqlite3.Connection:
    # Autocommit: transactions are explicit (BEGIN IMMEDIATE ... COMMIT) in `_write`. A writer
    # waits up to 2 s for another one, then defers (see `_recover`).
    conn = sqlite3.connect(target, timeout=2.0, isolation_level=None, check_same_thread=False)
    # What is deleted is overwritten: a rebuild for new secrets leaves none of the old text in free pages.
    conn.execute("PRAGMA secure_delete = ON")
    return conn


def _prepare_sidecar(path: Path) -> bool:
    """Create the sidecar owner-only before SQLite opens it, or check that the file there is ours; True when created.

    Raises:
        _Refused: the path is a link, not a regular file, or a file this library did not create.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    except FileExistsError:
        _check_foreign(path)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))  # the file checked, never a link's target
        try:
            info = os.fstat(fd)
            if info.st_mode & 0o077 and info.st_uid == os.getuid():
                os.fchmod(fd, FILE_MODE)
        finally:
            os.close(fd)
        return info.st_size == 0  # an empty file: one we created and never got to fill
    try:
        # Exactly 0600 whatever the umask; SQLite gives its -wal and -shm files this file's mode.
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    # A new sidecar: a write-ahead log left by an old one would be replayed onto it.
    for suffix in _SIDE_FILES:
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return True


def _check_foreign(path: Path) -> None:
    """Refuse a link, a folder, a device, or a regular file that is not an SQLite file with our application id.

    An SQLite file without an application id is accepted when it has this index's tables (a
    sidecar written before the id was set); SQLite's own files beside it must not be links either.
    """
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise _Refused(f"{path} is a symbolic link; a search index is never written through one")
    if not stat.S_ISREG(info.st_mode):
        raise _Refused(f"{path} is not a regular file")
    for suffix in _SIDE_FILES:
        try:
            if not stat.S_ISREG(os.lstat(f"{path}{suffix}").st_mode):
                raise _Refused(f"{path}{suffix} is not a regular file (a link?); a search index is never written through one")
        except FileNotFoundError:
            pass
    if info.st_size == 0:
        return
    with open(path, "rb") as file:
        header = file.read(100)
    if not header.startswith(_SQLITE_MAGIC) or len(header) < 100:
        raise _Refused(
            f"{path} exists and is not a search index this library created (not an SQLite database); it is left "
            "untouched: move it away to keep an index beside the log"
        )
    application_id = int.from_bytes(header[68:72], "big")
    if application_id not in (0, _APPLICATION_ID):
        raise _Refused(
            f"{path} is another program's SQLite database (application id {application_id:#x}); it is left untouched"
        )


def _check_own(conn: sqlite3.Connection, path: Path) -> None:
    """Check the open sidecar is an index of this version.

    Raises:
        _Refused: a database without our application id and with tables of its own (another program's).
        _Recreate: ours, but of another version or damaged in its schema.
        sqlite3.Error: the file cannot be read (corrupt: see `_is_corrupt`).
    """
    # WAL with synchronous=NORMAL: a commit costs no fsync, and a crash or power loss loses at most
    # the last commits (the next sync re-indexes them), never the file's consistency.
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    own = {name for name in tables if name in _OWN_TABLES or name.startswith(("events_", "sqlite_"))}
    if application_id != _APPLICATION_ID:
        if not tables:
            return _create_schema(conn)  # an empty database: what a crash between creating and filling leaves
        if tables != own or "meta" not in tables or "events" not in tables:
            raise _Refused(
                f"{path} is an SQLite database this library did not create (tables {sorted(tables - own)[:5]}); "
                "it is left untouched: move it away to keep an index beside the log"
            )
        raise _Recreate("a sidecar of an earlier version")
    try:
        if _meta(conn, "schema") != _SCHEMA_VERSION:
            raise _Recreate(f"schema {_meta(conn, 'schema')!r}, expected {_SCHEMA_VERSION!r}")
        conn.execute("SELECT event_id, digest FROM seen LIMIT 0")
        conn.execute("SELECT rowid, kind, body FROM events LIMIT 0")
    except sqlite3.OperationalError as exc:
        if _is_corrupt(exc):
            raise
        raise _Recreate(_describe(exc)) from None
    return None


def _create_schema(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}COMMIT;")


def _recreate_schema(conn: sqlite3.Connection) -> None:
    """Replace the tables of a sidecar of ours (an earlier version's) with this version's."""
    names = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    # The FTS5 shadow tables (events_data, ...) go with their virtual table.
    drops = "".join(
        f'DROP {kind.upper()} IF EXISTS "{name.replace(chr(34), chr(34) * 2)}";'
        for kind, name in names
        if not name.startswith("events_")
    )
    conn.executescript(f"BEGIN IMMEDIATE;{drops}{_SCHEMA}COMMIT;")


def _has_our_id(path: Path) -> bool:
    """Whether the file's SQLite header carries this library's application id (read without SQLite)."""
    try:
        with open(path, "rb") as file:
            header = file.read(100)
    except OSError:
        return False
    return header.startswith(_SQLITE_MAGIC) and int.from_bytes(header[68:72], "big") == _APPLICATION_ID


def _remove_sidecar(path: Path) -> None:
    for suffix in ("", *_SIDE_FILES):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _is_corrupt(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(_CORRUPT) or any(text in str(exc) for text in _CORRUPT_TEXT)


def _is_busy(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(_BUSY) or "database is locked" in str(exc)


def _describe(exc: BaseException) -> str:
    name = getattr(exc, "sqlite_errorname", None)
    text = str(exc) or type(exc).__name__
    return f"{text} ({name})" if name else text
