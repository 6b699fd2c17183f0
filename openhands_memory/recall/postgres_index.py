"""The search index of a conversation stored in PostgreSQL: full-text search in the same database.

Why there and not in a SQLite sidecar per conversation (as for a JSONL log): the events of such a
conversation are written and read by workers on several machines. A sidecar would live on one
machine's disk, so every other worker that picks the conversation up would index the whole log
again, and a dashboard could not search it at all. In the database, one index serves every worker
and reader, it is kept current by whoever appends, and it is as durable as the log. It is still a
projection: `sync(events)` checks it against the log and rebuilds it when it is missing (tables
dropped, a conversation never indexed) or does not match (a conversation replaced).

Semantics follow `SearchIndex` (the same text per event with the secrets in force hidden, the same
events left out, the same digests for `is_current`, the same plain-text queries: every chunk as a
phrase, all chunks first, then any chunk or word; the same snippets; it never moves backwards; one
built with other secrets is rebuilt only by a caller that holds them and as much of the log, and a
caller that knows no secret indexes in memory instead), with two differences: ranking is
PostgreSQL's `ts_rank` (normalized by the log of the document length), not BM25, so matches may come
in another order (the same best hit for 37 of 48 test queries); and an event's words past the first
million characters of its text are not indexed (a `tsvector` holds at most 1 MB).

Two tables beside the events table `T`: `T_search` (conversation, event id, kind, the digest of its
text, its words as a `tsvector` with a GIN index; no words for an event left out) and
`T_search_state` (per conversation: a salt, and the salted fingerprint of the secrets it was built
with). Every write locks the conversation's state row, so workers indexing one conversation take
turns and agree; workers of other conversations never wait for it.

The tables are made once, when an index is opened and finds them missing, in a transaction of
their own (under an advisory lock): never in a write, where `CREATE INDEX` (a lock on the whole
table) would make writers deadlock. A lost connection (a server restart) is retried once on a new
one; the index stays usable.

A role that may only read (a dashboard; found at opening from its privileges, or from a write the
server refused) searches the shared index and never writes it: `sync` only checks, in one read
transaction, that the index holds the log it is given (the writers keep it current). When it is
stale or absent (behind the log, built from another log or with other secrets, never made), the
search runs on an index of the log in memory, said at WARNING and counted in `fallbacks`, and the
next `sync` checks the shared one again.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, TypeVar

from openhands_memory.errors import StoreClosedError, StoreDatabaseError
from openhands_memory.events import Event, event_from_json
from openhands_memory.recall._search_text import (
    MAX_QUERY_CHARS,
    WORD,
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
from openhands_memory.recall.index import SearchIndex
from openhands_memory.stream import Redactor
from openhands_memory.stream._postgres_schema import regclass_name
from openhands_memory.stream.postgres_store import PostgresEventStore, is_connection_lost

__all__ = ["PostgresSearchIndex"]

logger = logging.getLogger(__name__)

_MAX_TEXT = 1_000_000
"""Characters of an event's words indexed: a tsvector holds at most 1 MB."""

_CONFIG = "simple"
"""The text search configuration: lower-cased words, no stemming, no stop words (as FTS5's unicode61)."""

_NORM = 1
"""`ts_rank` normalization: divide by 1 + log(document length). Of the normalizations, the closest to the
SQLite index's BM25: on 15 queries over 5 real logs, the same best hit for 37 of 48 queries with hits
(0, none: 23; 2, length: 33), and 85% of the top 5 in common."""

_T = TypeVar("_T")

_READ_ONLY = object()
"""What `_write` returns when the server refused the write: this role may only read the index from then on."""


class _ReadOnly(Exception):
    """The database refused a write of the index: the role may only read."""

_Entry = tuple[int, str, str | None, bytes]
"""(event id, kind, words to index or None, digest of its text)."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _words(text: str) -> str:
    """The words of `text`, split as the FTS5 tokenizer splits them (letters and digits), one space apart."""
    return " ".join(WORD.findall(text[:_MAX_TEXT]))


class PostgresSearchIndex:
    """The full-text index of one conversation of a `PostgresEventStore`, in the store's database.

    The same methods as `SearchIndex` (`add`, `sync`, `rebuild`, `search`, `is_current`,
    `last_indexed_id`, `needs_sync`, `close`), so `History` and `recall.search_log` use either.
    Several processes may keep it current at once.
    """

    def __init__(self, store: PostgresEventStore, *, redactor: Redactor | None = None) -> None:
        """Use `for_store` or `for_url`."""
        import psycopg

        self._psycopg = psycopg
        self._store = store
        self._owns_store = False
        self._redactor = redactor if redactor is not None else Redactor()
        self.conversation = store.conversation
        """The conversation indexed."""
        sql = psycopg.sql
        schema, _, name = store.table.rpartition(".")
        prefix = [schema] if schema else []
        self._schema = schema
        self._rows_name, self._state_name, self._gin_name = f"{name}_search", f"{name}_search_state", f"{name}_search_words"
        self._rows = sql.Identifier(*prefix, self._rows_name)
        self._state = sql.Identifier(*prefix, self._state_name)
        self._events = sql.Identifier(*prefix, name)
        self._gin = sql.Identifier(self._gin_name)
        self._lock_key = f"openhands-memory-search:{store.table}"
        self._fingerprint: str | None = None
        self._memory: SearchIndex | None = None
        self._closed = False
        self.fallback_reason: str | None = None
        """Why this index is in memory instead of the database (a caller without the secrets it was built with)."""
        self.rebuilds = 0
        """How many times the conversation's index was emptied and rebuilt from the log."""
        self.last_rebuild_reason: str | None = None
        """Why it was last rebuilt."""
        self.deferred = 0
        """Always 0: a write waits for the conversation's lock, it is never put off (kept for `SearchIndex`'s callers)."""
        self.needs_sync = False
        """True when `add` found the index built with other secrets, or the tables were lost, or this role may only
        read (it learns of new events only by checking): give it the whole log with `sync` before trusting it
        again. `sync` sets it back."""
        self.read_only = False
        """True when this role may not write the index in the database (see the module): it searches the shared
        index while that holds the log, never writes it, and searches one in memory while it does not."""
        self.fallbacks = 0
        """How many times a read-only `sync` (or `rebuild`) found the shared index stale or absent and used one in memory."""
        self._spare: SearchIndex | None = None  # a read-only index's memory index, kept between fallbacks
        try:
            self._run("open the search index", self._ensure_tables)  # the tables, now, on their own
        except StoreDatabaseError as exc:
            if not isinstance(exc.__cause__, (psycopg.errors.InsufficientPrivilege, psycopg.errors.ReadOnlySqlTransaction)):
                raise
            self._become_read_only(f"it may not make the search index's tables ({_first_line(exc.__cause__)})")

    @classmethod
    def for_store(cls, store: PostgresEventStore, *, redactor: Redactor | None = None) -> PostgresSearchIndex:
        """The index of the store's conversation (the store stays the caller's to close); `redactor`: the secrets in force."""
        return cls(store, redactor=redactor)

    @classmethod
    def for_url(cls, url: str, *, redactor: Redactor | None = None) -> PostgresSearchIndex:
        """The index of the conversation a URL names; it opens (and closes with it) a store of its own."""
        store = PostgresEventStore.from_url(url)
        try:
            index = cls(store, redactor=redactor)
        except BaseException:
            store.close()
            raise
        index._owns_store = True
        return index

    @property
    def path(self) -> None:
        """None: the index is in the database (kept for `SearchIndex`'s callers)."""
        return None

    @property
    def redactor(self) -> Redactor:
        """The secrets hidden in everything this index holds."""
        return self._redactor

    @property
    def last_indexed_id(self) -> int | None:
        """The id of the last event indexed (or looked at and found without text); None when empty."""
        if self._memory is not None:
            return self._memory.last_indexed_id
        query = self._psycopg.sql.SQL("SELECT max(event_id) FROM {} WHERE conversation_id = %s").format(self._rows)
        return self._read(lambda conn: conn.execute(query, (self.conversation,)).fetchone()[0])

    def __len__(self) -> int:
        """How many events the index holds (events without searchable text are not held)."""
        if self._memory is not None:
            return len(self._memory)
        query = self._psycopg.sql.SQL(
            "SELECT count(*) FROM {} WHERE conversation_id = %s AND words IS NOT NULL"
        ).format(self._rows)
        return int(self._read(lambda conn: conn.execute(query, (self.conversation,)).fetchone()[0]))

    # -- writing ------------------------------------------------------------------------------------

    def add(self, event: Event) -> None:
        """Index one event that has an id; one indexed with the same text is left, with another text replaced.

        Built with other secrets, the index is left as it is and `needs_sync` set.
        """
        if event.id is None:
            return
        if self.read_only:  # the writers index it; the next sync checks they did
            self.needs_sync = True
            if self._memory is not None:
                self._memory.add(event)
            return
        if self._memory is not None:
            self._memory.add(event)
            return
        entry = self._entry(event)

        def write(conn: Any) -> None:
            if self._secrets_differ(conn):
                self.needs_sync = True  # built with other secrets: only the whole log can rebuild it
                return
            self._put(conn, [entry])

        if self._write(write) is _READ_ONLY:
            self.needs_sync = True  # only the whole log tells whether the shared index holds it

    def sync(self, events: Sequence[Event], *, verify: bool = False) -> int:
        """Catch up with the log `events` (the whole log or an older snapshot of it); returns how many were indexed.

        As `SearchIndex.sync`: only the events after the index's last one when it belongs to this
        log (its first event and the last one both hold have the same digest; with `verify`, every
        one both hold), otherwise all of them again, counted in `rebuilds`. Events the index holds
        past the end of `events` are kept.
        """
        if self.read_only:
            return self._sync_read_only(events, verify)
        if self._memory is not None:
            return self._memory.sync(events, verify=verify)
        self.needs_sync = False
        outcome = self._write(lambda conn: self._sync(conn, events, verify))
        if outcome is _READ_ONLY:
            return self._sync_read_only(events, verify)
        count, reason, to_memory = outcome
        if to_memory is not None:
            self._move_to_memory(to_memory)
            return self._memory.sync(events, verify=verify)  # type: ignore[union-attr]
        if reason is not None:
            self._count_rebuild(reason)
            logger.warning("search index of %s does not match the log (%s): rebuilt it", self._store.location, reason)
        return count

    def rebuild(self, events: Sequence[Event], *, reason: str) -> int:
        """Index `events` again from scratch (events past their end are kept); returns how many."""
        if self.read_only:
            self._fall_back(f"stale: {reason}")
            return self._memory.rebuild(events, reason=reason)  # type: ignore[union-attr]
        if self._memory is not None:
            return self._memory.rebuild(events, reason=reason)
        self.needs_sync = False
        entries = [self._entry(e) for e in events if e.id is not None]

        def write(conn: Any) -> int | str:
            stored, mine = self._stored_secrets(conn), self._secrets_fingerprint(conn)
            if stored and stored != mine and not mine:
                return "the index in the database hides secrets this caller was not given"
            self._replace(conn, entries)
            self._set_secrets(conn, mine)
            return len(entries)

        done = self._write(write)
        if done is _READ_ONLY:
            return self.rebuild(events, reason=reason)
        if isinstance(done, str):
            self._move_to_memory(done)
            return self._memory.rebuild(events, reason=reason)  # type: ignore[union-attr]
        self._count_rebuild(reason)
        logger.warning("search index of %s is stale (%s): rebuilt it from the log", self._store.location, reason)
        return done

    def _sync_read_only(self, events: Sequence[Event], verify: bool) -> int:
        """A read-only role's sync: search the shared index if it holds `events`, else one in memory (see the module)."""
        self.needs_sync = False
        stale = self._read(lambda conn: self._staleness(conn, events, verify))
        if stale is None:
            if self._memory is not None:
                logger.warning("search index of %s in the database holds the log again: searching it", self._store.location)
            self._memory, self.fallback_reason = None, None
            return 0
        self._fall_back(stale)
        return self._memory.sync(events, verify=verify)  # type: ignore[union-attr]

    def _staleness(self, conn: Any, events: Sequence[Event], verify: bool) -> str | None:
        """Why the shared index does not hold `events` as they are (read only: nothing is written), or None."""
        if not self._tables_present(conn):
            return "absent: its tables are missing"
        sql = self._psycopg.sql
        given_last = next((e.id for e in reversed(events) if e.id is not None), None)
        if given_last is None:
            return None  # nothing to index
        state = conn.execute(
            sql.SQL("SELECT salt, secrets FROM {} WHERE conversation_id = %s").format(self._state), (self.conversation,)
        ).fetchone()
        last = conn.execute(
            sql.SQL("SELECT max(event_id) FROM {} WHERE conversation_id = %s").format(self._rows), (self.conversation,)
        ).fetchone()[0]
        if state is None or state[1] is None or last is None:
            return "absent: this conversation was never indexed there"
        start = sync_start(events, last, state[1], self._redactor.fingerprint(bytes.fromhex(state[0])), where="in the database")
        if start.refused is not None or start.rebuild is not None:
            return f"built with other secrets ({start.refused or start.rebuild})"
        if given_last > last:
            return f"behind the log: it holds events up to {last}, the log goes to {given_last}"
        reason = self._mismatch(conn, events, start.position)
        if reason is None and verify:
            reason = self._differing(conn, events[: start.position])
        return None if reason is None else f"built from another log ({reason})"

    def _fall_back(self, why: str) -> None:
        """A read-only role's shared index is stale or absent: search one in memory (said and counted)."""
        self.fallbacks += 1
        self.fallback_reason = f"the search index in the database is {why}, and this role may only read it"
        logger.warning("search index of %s: %s: searching an index of the log in memory", self._store.location, self.fallback_reason)
        if self._spare is None:
            self._spare = SearchIndex.in_memory(redactor=self._redactor)
        self._memory = self._spare

    def _become_read_only(self, why: str) -> None:
        """From now on, never write the index in the database (see the module)."""
        if not self.read_only:
            logger.info("search index of %s: this role may only read it (%s)", self._store.location, why)
        self.read_only = True
        self.needs_sync = True

    def _sync(self, conn: Any, events: Sequence[Event], verify: bool) -> tuple[int, str | None, str | None]:
        """Inside the write transaction: (events indexed, why it was rebuilt or None, why to move to memory or None)."""
        sql = self._psycopg.sql
        last = conn.execute(
            sql.SQL("SELECT max(event_id) FROM {} WHERE conversation_id = %s").format(self._rows), (self.conversation,)
        ).fetchone()[0]
        mine = self._secrets_fingerprint(conn)
        start = sync_start(events, last, self._stored_secrets(conn), mine, where="in the database")
        if start.refused is not None:
            return 0, None, start.refused
        position, given_last, reason = start.position, start.given_last, start.rebuild
        if last is not None and reason is None:
            reason = self._mismatch(conn, events, position)
            if reason is None and verify:
                reason = self._differing(conn, events[:position])
            if reason is None:
                new = [self._entry(e) for e in events[position:] if e.id is not None]
                self._put(conn, new)
                self._set_secrets(conn, mine)
                return len(new), None, None
        entries = [self._entry(e) for e in events if e.id is not None]
        if reason is None or given_last is None or given_last >= last:
            conn.execute(sql.SQL("DELETE FROM {} WHERE conversation_id = %s").format(self._rows), (self.conversation,))
        self._replace(conn, entries)
        self._set_secrets(conn, mine)
        return len(entries), reason, None

    def _mismatch(self, conn: Any, events: Sequence[Event], position: int) -> str | None:
        """Why the index is not an index of `events` (its first event or the last both hold differs), or None."""
        first = next((e for e in events if e.id is not None), None)
        if first is None:
            return None
        first_indexed = conn.execute(
            self._psycopg.sql.SQL("SELECT min(event_id) FROM {} WHERE conversation_id = %s").format(self._rows),
            (self.conversation,),
        ).fetchone()[0]
        if first.id != first_indexed or self._stored_digest(conn, first.id) != self._entry(first)[3]:
            return f"the log starts with event {first.id}, not the one indexed first ({first_indexed})"
        if position == 0:
            return None
        shared = events[position - 1]
        if self._stored_digest(conn, shared.id) != self._entry(shared)[3]:  # type: ignore[arg-type]
            return f"event {shared.id} is not the one indexed"
        return None

    def _differing(self, conn: Any, events: Sequence[Event]) -> str | None:
        """Why the index does not hold `events` (those up to its last one) as they are, or None."""
        if not events:
            return None
        rows = conn.execute(
            self._psycopg.sql.SQL("SELECT event_id, digest FROM {} WHERE conversation_id = %s AND event_id <= %s").format(
                self._rows
            ),
            (self.conversation, events[-1].id),
        ).fetchall()
        stored = {ident: bytes(digest) for ident, digest in rows}
        return differing_digests(events, stored, lambda event: self._entry(event)[3])

    def _entry(self, event: Event) -> _Entry:
        """(id, kind, words to index or None, digest) of a stored event, its secrets hidden (as `SearchIndex`)."""
        assert event.id is not None
        text = self._redactor.redact_text(event_text(event))
        words = _words(sqlite_text(text)) if text and is_indexed_kind(event) else None
        return event.id, event.kind, words, text_digest(event.kind, text)

    def _put(self, conn: Any, entries: Sequence[_Entry]) -> None:
        """Add entries; an id held with another digest is replaced, one with the same digest left."""
        if not entries:
            return
        sql = self._psycopg.sql
        with conn.cursor() as cursor:
            cursor.executemany(
                sql.SQL(
                    "INSERT INTO {rows} (conversation_id, event_id, kind, digest, words) "
                    "VALUES (%s, %s, %s, %s, CASE WHEN %s::text IS NULL THEN NULL ELSE to_tsvector({config}, %s::text) END) "
                    "ON CONFLICT (conversation_id, event_id) DO UPDATE SET kind = excluded.kind, digest = excluded.digest, "
                    "words = excluded.words WHERE {rows}.digest <> excluded.digest"
                ).format(rows=self._rows, config=sql.Literal(_CONFIG)),
                [(self.conversation, ident, kind, digest, words, words) for ident, kind, words, digest in entries],
            )

    def _replace(self, conn: Any, entries: Sequence[_Entry]) -> None:
        """Index `entries` anew: each id given is replaced whatever it held."""
        conn.execute(
            self._psycopg.sql.SQL("DELETE FROM {} WHERE conversation_id = %s AND event_id = ANY(%s)").format(self._rows),
            (self.conversation, [entry[0] for entry in entries]),
        )
        self._put(conn, entries)

    # -- secrets --------------------------------------------------------------------------------------

    def _secrets_fingerprint(self, conn: Any) -> str:
        if self._fingerprint is None:
            salt = conn.execute(
                self._psycopg.sql.SQL("SELECT salt FROM {} WHERE conversation_id = %s").format(self._state),
                (self.conversation,),
            ).fetchone()[0]
            self._fingerprint = self._redactor.fingerprint(bytes.fromhex(salt))
        return self._fingerprint

    def _stored_secrets(self, conn: Any) -> str | None:
        return conn.execute(
            self._psycopg.sql.SQL("SELECT secrets FROM {} WHERE conversation_id = %s").format(self._state),
            (self.conversation,),
        ).fetchone()[0]

    def _set_secrets(self, conn: Any, fingerprint: str) -> None:
        conn.execute(
            self._psycopg.sql.SQL("UPDATE {} SET secrets = %s WHERE conversation_id = %s").format(self._state),
            (fingerprint, self.conversation),
        )

    def _secrets_differ(self, conn: Any) -> bool:
        stored, mine = self._stored_secrets(conn), self._secrets_fingerprint(conn)
        if stored is None:
            self._set_secrets(conn, mine)
            return False
        return stored != mine

    # -- reading ------------------------------------------------------------------------------------

    def search(self, query: str, *, limit: int = 5, before: int | None = None) -> list[SearchHit]:
        """The events best matching plain-text `query`, best first, at most `limit`, only those whose id is below `before`
        when it is given (see the module and `SearchIndex.search`)."""
        if self._memory is not None:
            return self._memory.search(query, limit=limit, before=before)
        chunks, terms = query_terms(query[:MAX_QUERY_CHARS])
        if not chunks or limit < 1:
            return []
        strict = [" ".join(WORD.findall(chunk)) for chunk in chunks]
        loose = [" ".join(WORD.findall(term)) for term in terms]

        def run(conn: Any) -> list[Any]:
            rows = self._query(conn, strict, "&&", limit, before)
            # As SearchIndex: the OR query differs from the AND one unless the query is one term.
            if not rows and (len(loose) > 1 or loose != strict):
                rows = self._query(conn, loose, "||", limit, before)
            return rows

        hits: list[SearchHit] = []
        for event_id, kind, body, score in self._read(run):
            try:
                text = self._redactor.redact_text(event_text(event_from_json(bytes(body))))
            except ValueError:  # the log is checked when it is read; a search shows what it can
                text = ""
            hits.append(SearchHit(int(event_id), kind, excerpt_around(sqlite_text(text), terms), float(score)))
        return hits

    def _query(self, conn: Any, phrases: list[str], operator: str, limit: int, before: int | None) -> list[Any]:
        sql = self._psycopg.sql
        tsquery = sql.SQL(f" {operator} ").join(
            [sql.SQL("phraseto_tsquery({}, {})").format(sql.Literal(_CONFIG), sql.Placeholder())] * len(phrases)
        )
        statement = sql.SQL(
            "WITH q AS (SELECT {tsquery} AS q) "
            "SELECT s.event_id, s.kind, e.body, ts_rank(s.words, q.q, {norm}) AS score "
            "FROM {rows} s CROSS JOIN q JOIN {events} e ON e.conversation_id = s.conversation_id AND e.event_id = s.event_id "
            "WHERE s.conversation_id = %s AND s.words @@ q.q{below} ORDER BY score DESC, s.event_id LIMIT %s"
        ).format(
            tsquery=tsquery,
            rows=self._rows,
            events=self._events,
            norm=sql.Literal(_NORM),
            below=sql.SQL("" if before is None else " AND s.event_id < %s"),
        )
        bound = [] if before is None else [before]
        with conn.cursor(binary=True) as cursor:
            cursor.execute(statement, [*phrases, self.conversation, *bound, limit])
            return cursor.fetchall()

    def is_current(self, event: Event) -> bool:
        """Whether the index holds `event` as the log holds it now (the digest of its text, secrets hidden, agrees)."""
        if self._memory is not None:
            return self._memory.is_current(event)
        if event.id is None:
            return False
        digest = self._entry(event)[3]
        return self._read(lambda conn: self._stored_digest(conn, event.id)) == digest

    def _stored_digest(self, conn: Any, event_id: int | None) -> bytes | None:
        row = conn.execute(
            self._psycopg.sql.SQL("SELECT digest FROM {} WHERE conversation_id = %s AND event_id = %s").format(self._rows),
            (self.conversation, event_id),
        ).fetchone()
        return bytes(row[0]) if row is not None else None

    # -- the database ---------------------------------------------------------------------------------

    def _ensure_tables(self, conn: Any) -> None:
        """Create the index's tables if they are missing (a projection: dropping them only costs a rebuild).

        Run on its own (never inside a write: see the module); when all are there it only reads,
        so a role that may only read opens the index.
        """
        sql = self._psycopg.sql
        if self._tables_present(conn):
            rows, state = self._qualified(self._rows_name), self._qualified(self._state_name)
            writable = conn.execute(
                "SELECT NOT current_setting('transaction_read_only')::bool AND has_table_privilege(%s, 'INSERT') "
                "AND has_table_privilege(%s, 'UPDATE') AND has_table_privilege(%s, 'DELETE') "
                "AND has_table_privilege(%s, 'INSERT') AND has_table_privilege(%s, 'UPDATE')",
                (rows, rows, rows, state, state),
            ).fetchone()[0]
            if not writable:
                self._become_read_only("its privileges on the search index's tables do not include writing")
            return
        may_create = conn.execute(
            "SELECT NOT current_setting('transaction_read_only')::bool AND coalesce(has_schema_privilege(s, 'CREATE'), false) "
            "FROM (SELECT coalesce(nullif(%s, ''), current_schema()) AS s) AS target",
            (self._schema,),
        ).fetchone()[0]
        if not may_create:
            self._become_read_only("the search index's tables are missing and it may not make them")
            return
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self._lock_key,))
        conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (conversation_id text NOT NULL, event_id bigint NOT NULL, "
                "kind text NOT NULL, digest bytea NOT NULL, words tsvector, PRIMARY KEY (conversation_id, event_id))"
            ).format(self._rows)
        )
        conn.execute(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} USING gin (words)").format(self._gin, self._rows))
        conn.execute(
            sql.SQL("CREATE TABLE IF NOT EXISTS {} (conversation_id text PRIMARY KEY, salt text NOT NULL, secrets text)").format(
                self._state
            )
        )

    def _tables_present(self, conn: Any) -> bool:
        names = [self._qualified(self._rows_name), self._qualified(self._state_name), self._qualified(self._gin_name)]
        present = conn.execute("SELECT to_regclass(%s), to_regclass(%s), to_regclass(%s)", names).fetchone()
        return all(found is not None for found in present)

    def _qualified(self, name: str) -> str:
        return regclass_name(f"{self._schema}.{name}" if self._schema else name)

    def _write(self, work: Callable[[Any], _T]) -> _T | object:
        """Run `work` in one transaction holding the conversation's state row (created with a salt if missing).

        Returns `_READ_ONLY` (and only reads the index from then on) when the server refused the write.
        """
        sql = self._psycopg.sql

        def locked(conn: Any) -> _T:
            conn.execute(
                sql.SQL("INSERT INTO {} (conversation_id, salt) VALUES (%s, %s) ON CONFLICT DO NOTHING").format(self._state),
                (self.conversation, secrets.token_hex(16)),
            )
            conn.execute(
                sql.SQL("SELECT 1 FROM {} WHERE conversation_id = %s FOR UPDATE").format(self._state), (self.conversation,)
            )
            return work(conn)

        try:
            return self._run("update the search index", locked)
        except _ReadOnly as exc:
            self._become_read_only(f"the server refused a write: {_first_line(exc.__cause__ or exc)}")
            return _READ_ONLY

    def _read(self, work: Callable[[Any], _T]) -> _T:
        return self._run("search", work)

    def _run(self, what: str, work: Callable[[Any], _T]) -> _T:
        """Run `work` in one transaction; tables found missing are made again (empty: `needs_sync`), and a lost
        connection opened again, and `work` run once more."""
        if self._closed:
            raise StoreClosedError(self._store.location)
        psycopg = self._psycopg
        for attempt in (1, 2):
            try:
                with self._store.connection(f"search index: {what}") as conn, conn.transaction():
                    return work(conn)
            except psycopg.errors.UndefinedTable as exc:
                if attempt == 2 or self.read_only:  # a read-only role never makes them: its next sync finds them absent
                    self.needs_sync = True
                    raise StoreDatabaseError(self._store.location, f"{what} failed: {_first_line(exc)}") from exc
                logger.warning("search index of %s: its tables are gone, made again; the next sync refills them", self._store.location)
                self._fingerprint = None
                self.needs_sync = True
                self._run("make the search index's tables", self._ensure_tables)
            except (psycopg.errors.InsufficientPrivilege, psycopg.errors.ReadOnlySqlTransaction) as exc:
                if what == "update the search index":
                    raise _ReadOnly from exc
                raise StoreDatabaseError(self._store.location, f"{what} failed: {_first_line(exc)}") from exc
            except psycopg.Error as exc:
                self._fingerprint = None
                if attempt == 1 and is_connection_lost(exc):
                    logger.warning("search index of %s: connection lost (%s): trying on a new one", self._store.location, _first_line(exc))
                    continue
                self.needs_sync = True
                raise StoreDatabaseError(self._store.location, f"{what} failed: {_first_line(exc)}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _move_to_memory(self, reason: str) -> None:
        logger.warning("search index of %s cannot be used (%s): indexing in memory", self._store.location, reason)
        self._memory = SearchIndex.in_memory(redactor=self._redactor)
        self.fallback_reason = reason

    def _count_rebuild(self, reason: str) -> None:
        self.rebuilds += 1
        self.last_rebuild_reason = reason

    def close(self) -> None:
        """Stop using the index (it stays in the database); closes the store only if `for_url` opened it."""
        if not self._closed:
            self._closed = True
            for memory in {id(m): m for m in (self._memory, self._spare) if m is not None}.values():
                memory.close()
            if self._owns_store:
                self._store.close()

    def __enter__(self) -> PostgresSearchIndex:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        where = "in memory" if self._memory is not None else self._store.location
        return f"PostgresSearchIndex({where!r})"
