"""The search index of a conversation stored in PostgreSQL: full-text search in the same database.

Why there and not in a SQLite sidecar per conversation (as for a JSONL log): the events of such a
conversation are written and read by workers on several machines. A sidecar would live on one
machine's disk, so every other worker that picks the conversation up would index the whole log
again, and a dashboard could not search it at all. In the database, one index serves every worker
and reader, it is kept current by whoever appends, and it is as durable as the log. It is still a
projection: `sync(events)` checks it against the log and rebuilds it when it is missing (tables
dropped, a conversation never indexed) or does not match (a conversation replaced).

Semantics follow `SearchIndex` (same text per event, same events left out, same plain-text
queries: every chunk as a phrase, all chunks first, then any chunk or word; same snippets), with
two differences: ranking is PostgreSQL's `ts_rank` (normalized by the log of the document length),
not BM25, so matches may come in another order (the same best hit for 37 of 48 test queries); and an event's words past the first million
characters of its text are not indexed (a `tsvector` holds at most 1 MB).

Two tables beside the events table `T`: `T_search` (conversation, event id, kind, the words as a
`tsvector` with a GIN index) and `T_search_state` (per conversation: the first and last indexed
events and their fingerprints, as `SearchIndex` keeps them in its meta table).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from openhands_memory.errors import StoreClosedError, StoreDatabaseError
from openhands_memory.events import Event, Observation, event_from_json
from openhands_memory.recall.index import (
    _COPY_KINDS,
    _WORD,
    SearchHit,
    _clean,
    _excerpt,
    _fingerprint,
    _query_terms,
    event_text,
)
from openhands_memory.stream.postgres_store import PostgresEventStore

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


@dataclass(slots=True)
class _State:
    first_id: int | None = None
    first_hash: str = ""
    last_id: int | None = None
    last_hash: str = ""
    rows: int = 0


def _words(text: str) -> str:
    """The words of `text`, split as the FTS5 tokenizer splits them (letters and digits), one space apart."""
    return " ".join(_WORD.findall(_clean(text)[:_MAX_TEXT]))


class PostgresSearchIndex:
    """The full-text index of one conversation of a `PostgresEventStore`, in the store's database.

    The same methods as `SearchIndex`: `add`, `sync`, `search`, `last_indexed_id`, `close`.
    Several processes may keep it current at once: each update locks the conversation's state row.
    """

    def __init__(self, store: PostgresEventStore) -> None:
        """Use `for_store` or `for_url`."""
        import psycopg

        self._psycopg = psycopg
        self._store = store
        self._owns_store = False
        self.conversation = store.conversation
        """The conversation indexed."""
        sql = psycopg.sql
        schema, _, name = store.table.rpartition(".")
        prefix = [schema] if schema else []
        self._rows = sql.Identifier(*prefix, f"{name}_search")
        self._state_table = sql.Identifier(*prefix, f"{name}_search_state")
        self._events = sql.Identifier(*prefix, name)
        self._index_name = sql.Identifier(f"{name}_search_words")
        self._lock_key = f"openhands-memory-search:{store.table}"
        self._state = _State()
        self._closed = False
        self.fallback_reason: str | None = None
        """Always None: this index has no sidecar to fall back from (kept for `SearchIndex`'s callers)."""
        self.rebuilds = 0
        """How many times the conversation's index was emptied and rebuilt from the log."""
        self.last_rebuild_reason: str | None = None
        """Why it was last rebuilt."""
        self._tables_checked = False
        with self._database("open the search index"):
            with store.connection() as conn:
                self._ensure_tables(conn)
                self._state = self._read_state(conn, lock=False)

    @classmethod
    def for_store(cls, store: PostgresEventStore) -> PostgresSearchIndex:
        """The index of the store's conversation (the store stays the caller's to close)."""
        return cls(store)

    @classmethod
    def for_url(cls, url: str) -> PostgresSearchIndex:
        """The index of the conversation a URL names; it opens (and closes with it) a store of its own."""
        store = PostgresEventStore.from_url(url)
        try:
            index = cls(store)
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
    def last_indexed_id(self) -> int | None:
        """The id of the last event indexed (or looked at and found without text); None when empty."""
        return self._state.last_id

    def __len__(self) -> int:
        """How many events the index holds (events without searchable text are not held)."""
        return self._state.rows

    # -- writing ------------------------------------------------------------------------------------

    def add(self, event: Event) -> None:
        """Index one event that has an id; one at or below the last indexed id is ignored."""
        event_id = event.id
        if event_id is None:
            return

        def plan(state: _State) -> tuple[list[Event], bool, None]:
            fresh = state.last_id is None or event_id > state.last_id
            return ([event] if fresh else []), False, None

        self._update(plan)

    def sync(self, events: Sequence[Event]) -> int:
        """Catch up with the log `events` (in id order), or rebuild from it when it does not match; returns how many were gone through."""
        return self._update(lambda state: _catch_up(state, events))

    def _update(self, plan: Any) -> int:
        """Under the conversation's lock: read the state, let `plan(state)` say what to index, write it."""
        self._check_open()
        with self._database("update the search index"):
            with self._store.connection() as conn, conn.transaction():
                if not self._tables_checked:
                    self._ensure_tables(conn)
                state = self._read_state(conn, lock=True)
                new, rebuild, reason = plan(state)
                if reason is not None:
                    logger.warning("search index of %s does not match the log (%s): rebuilding it", self._store.location, reason)
                    self.rebuilds += 1
                    self.last_rebuild_reason = reason
                if not new and not rebuild:
                    self._state = state
                    return 0
                self._state = self._write(conn, state, new, rebuild)
                return len(new)

    def _write(self, conn: Any, state: _State, events: Sequence[Event], rebuild: bool) -> _State:
        sql = self._psycopg.sql
        if rebuild:
            conn.execute(sql.SQL("DELETE FROM {} WHERE conversation_id = %s").format(self._rows), (self.conversation,))
            state = _State()
        rows: list[tuple[str, int, str, str]] = []
        for event in events:
            if event.id is None:
                continue
            text = event_text(event)
            digest = _fingerprint(event, text)
            if state.first_id is None:
                state.first_id, state.first_hash = event.id, digest
            state.last_id, state.last_hash = event.id, digest
            if text and not event.hidden and not (isinstance(event, Observation) and event.kind in _COPY_KINDS):
                rows.append((self.conversation, event.id, event.kind, _words(text)))
        if rows:
            with conn.cursor() as cursor:
                cursor.executemany(
                    sql.SQL(
                        "INSERT INTO {} (conversation_id, event_id, kind, words) VALUES (%s, %s, %s, to_tsvector({}, %s)) "
                        "ON CONFLICT (conversation_id, event_id) DO NOTHING"
                    ).format(self._rows, sql.Literal(_CONFIG)),
                    rows,
                )
        state.rows += len(rows)
        conn.execute(
            sql.SQL(
                "INSERT INTO {} (conversation_id, first_id, first_hash, last_id, last_hash, rows) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (conversation_id) DO UPDATE SET first_id = excluded.first_id, first_hash = excluded.first_hash, "
                "last_id = excluded.last_id, last_hash = excluded.last_hash, rows = excluded.rows"
            ).format(self._state_table),
            (self.conversation, state.first_id, state.first_hash, state.last_id, state.last_hash, state.rows),
        )
        return state

    # -- reading ------------------------------------------------------------------------------------

    def search(self, query: str, *, limit: int = 5) -> list[SearchHit]:
        """The events best matching plain-text `query`, best first, at most `limit` (see the module and `SearchIndex.search`)."""
        self._check_open()
        chunks, terms = _query_terms(query)
        if not chunks or limit < 1:
            return []
        strict = [" ".join(_WORD.findall(chunk)) for chunk in chunks]
        loose = [" ".join(_WORD.findall(term)) for term in terms]
        rows: list[tuple[int, str, bytes, float]] = []
        with self._database("search"):
            with self._store.connection() as conn, conn.transaction():
                rows = self._query(conn, strict, "&&", limit)
                # As SearchIndex: the OR query differs from the AND one unless the query is one term.
                if not rows and (len(loose) > 1 or loose != strict):
                    rows = self._query(conn, loose, "||", limit)
        hits: list[SearchHit] = []
        for event_id, kind, body, score in rows:
            try:
                snippet = _excerpt(_clean(event_text(event_from_json(bytes(body)))), terms)
            except ValueError:  # the log is checked when it is read; a search shows what it can
                snippet = ""
            hits.append(SearchHit(int(event_id), kind, snippet, float(score)))
        return hits

    def _query(self, conn: Any, phrases: list[str], operator: str, limit: int) -> list[Any]:
        sql = self._psycopg.sql
        tsquery = sql.SQL(f" {operator} ").join(
            [sql.SQL("phraseto_tsquery({}, {})").format(sql.Literal(_CONFIG), sql.Placeholder())] * len(phrases)
        )
        statement = sql.SQL(
            "WITH q AS (SELECT {tsquery} AS q) "
            "SELECT s.event_id, s.kind, e.body, ts_rank(s.words, q.q, {norm}) AS score "
            "FROM {rows} s CROSS JOIN q JOIN {events} e ON e.conversation_id = s.conversation_id AND e.event_id = s.event_id "
            "WHERE s.conversation_id = %s AND s.words @@ q.q ORDER BY score DESC, s.event_id LIMIT %s"
        ).format(tsquery=tsquery, rows=self._rows, events=self._events, norm=sql.Literal(_NORM))
        with conn.cursor(binary=True) as cursor:
            cursor.execute(statement, [*phrases, self.conversation, limit])
            return cursor.fetchall()

    # -- the tables -----------------------------------------------------------------------------------

    def _ensure_tables(self, conn: Any) -> None:
        """Create the index's tables if they are missing (a projection: dropping them only costs a rebuild)."""
        sql = self._psycopg.sql
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self._lock_key,))
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} (conversation_id text NOT NULL, event_id bigint NOT NULL, "
                    "kind text NOT NULL, words tsvector NOT NULL, PRIMARY KEY (conversation_id, event_id))"
                ).format(self._rows)
            )
            conn.execute(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} USING gin (words)").format(self._index_name, self._rows))
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} (conversation_id text PRIMARY KEY, first_id bigint, first_hash text NOT NULL, "
                    "last_id bigint, last_hash text NOT NULL, rows bigint NOT NULL)"
                ).format(self._state_table)
            )
        self._tables_checked = True

    def _read_state(self, conn: Any, *, lock: bool) -> _State:
        sql = self._psycopg.sql
        if lock:
            # A state row to lock, so two workers indexing one conversation take turns.
            conn.execute(
                sql.SQL(
                    "INSERT INTO {} (conversation_id, first_hash, last_hash, rows) VALUES (%s, '', '', 0) ON CONFLICT DO NOTHING"
                ).format(self._state_table),
                (self.conversation,),
            )
        row = conn.execute(
            sql.SQL("SELECT first_id, first_hash, last_id, last_hash, rows FROM {} WHERE conversation_id = %s{}").format(
                self._state_table, sql.SQL(" FOR UPDATE" if lock else "")
            ),
            (self.conversation,),
        ).fetchone()
        return _State(*row) if row is not None else _State()

    @contextmanager
    def _database(self, what: str) -> Iterator[None]:
        try:
            yield
        except self._psycopg.Error as exc:
            # The tables may be gone: check them again next time, and rebuild from the log then.
            self._tables_checked = False
            self._state = _State()
            raise StoreDatabaseError(self._store.location, f"{what} failed: {str(exc).strip().splitlines()[0]}") from exc

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(self._store.location)

    def close(self) -> None:
        """Stop using the index (it stays in the database); closes the store only if `for_url` opened it."""
        if not self._closed:
            self._closed = True
            if self._owns_store:
                self._store.close()

    def __enter__(self) -> PostgresSearchIndex:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresSearchIndex({self._store.location!r}, {self._state.rows} events, last id {self._state.last_id})"


def _catch_up(state: _State, events: Sequence[Event]) -> tuple[list[Event], bool, str | None]:
    """What to index to bring `state` up to the log `events`: (events, rebuild first, why rebuild)."""
    if state.last_id is None:
        reason = "the index is empty but held events" if state.rows else None
        return [e for e in events if e.id is not None], bool(state.rows), reason
    position = len(events)
    while position > 0:
        ident = events[position - 1].id
        if ident is not None and ident <= state.last_id:
            break
        position -= 1
    reason: str | None = None
    if position == 0 or events[position - 1].id != state.last_id:
        reason = f"the log has no event {state.last_id}, the last one indexed"
    else:
        last = events[position - 1]
        first = next(event for event in events if event.id is not None)
        if _fingerprint(last, event_text(last)) != state.last_hash:
            reason = f"event {state.last_id} is not the one indexed"
        elif first.id != state.first_id or _fingerprint(first, event_text(first)) != state.first_hash:
            reason = f"the log starts with event {first.id}, not the one indexed first ({state.first_id})"
    if reason is not None:
        return [e for e in events if e.id is not None], True, reason
    return [e for e in events[position:] if e.id is not None], False, None
