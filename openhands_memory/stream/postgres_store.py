"""`PostgresEventStore`: one conversation's events in a PostgreSQL table that many processes share.

For agents run as a service: thousands of conversations in one table, workers on several machines
(any of them may pick up any conversation), dashboards reading live. Needs the `postgres` extra
(the `postgres` extra: psycopg 3). See `_postgres_schema` for the table.

What the database promises, and so this store:
- An append is one INSERT, committed before `append` returns: an acknowledged event survives the
  worker being killed (and, with PostgreSQL's default `synchronous_commit`, the server crashing).
  A worker killed mid-append leaves nothing: the transaction dies with its connection.
- Readers never see half an event: a row is there whole, or not at all.
- Two writers of one conversation cannot both take a position (or an id): the second append fails
  with `ConcurrentAppendError` and stores nothing, so no event is overwritten and no id skipped.
  `EventStream.catch_up()` reads what the other writer stored; adding the event again then gives
  it the next id.
- Listeners are told of new events: the table's trigger NOTIFYs on commit, and
  `wait_for_events()` blocks on LISTEN until an event of this conversation arrives (no polling).

The store reads lazily: opening reads the conversation's ids only; events are fetched by position
when first read and kept (the log is append-only, so a kept event never goes stale).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from openhands_memory._install import install_hint
from openhands_memory.errors import (
    ConcurrentAppendError,
    CorruptRecordError,
    MalformedEventError,
    StoreClosedError,
    StoreDatabaseError,
)
from openhands_memory.events import Event, event_to_json
from openhands_memory.events._codec import event_from_parsed
from openhands_memory.events._loaded import LoadedEvents
from openhands_memory.events._reading import ResponseSharer, gc_paused
from openhands_memory.stream._postgres_schema import (
    COLUMNS,
    SCHEMA_VERSION,
    advisory_key,
    parse_notification,
    table_ddl,
    table_ident,
)
from openhands_memory.stream._postgres_url import (
    DEFAULT_TABLE,
    DatabaseLocation,
    check_conversation_id,
    check_table_name,
    parse_database_url,
)
from openhands_memory.stream.store import check_next_id

logger = logging.getLogger(__name__)


_FETCH_CHUNK = 2000
"""Rows fetched from the server at a time while reading a range."""


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise ImportError(f"the PostgreSQL store needs psycopg 3: {install_hint('postgres')}") from exc
    return psycopg


class PostgresEventStore:
    """An `EventStore` over one conversation of a PostgreSQL events table (see the module).

    Open it by URL, `PostgresEventStore("postgresql://user@host/db", conversation="c1")` (or with
    `?conversation=c1` in the URL, as `EventStream.open` takes it), or over an existing psycopg
    `ConnectionPool` (`pool=`), whose connections it borrows one operation at a time. The table
    (default `openhands_events`, or `?table=schema.name`) is created on first use.

    Thread-safe. Errors from the database are `StoreDatabaseError`s naming the store (never its
    password); an append that lost the race is `ConcurrentAppendError`.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        conversation: str | None = None,
        pool: Any = None,
        table: str | None = None,
    ) -> None:
        """Open the conversation (it may be empty or new); creates the table if the database has none.

        Raises:
            ImportError: psycopg is not installed (the message says how to install it).
            StoreDatabaseError: the URL or conversation id is unusable, the database cannot be
                reached, or the table is not one of this library's.
            CorruptRecordError: the stored positions or ids are not a log's (a gap, ids out of order).
        """
        self._psycopg = _psycopg()
        if (url is None) == (pool is None):
            raise StoreDatabaseError("postgresql", "give either a URL or a connection pool")
        if url is not None:
            location = parse_database_url(url)
        else:
            location = DatabaseLocation(_pool_conninfo(pool), None, DEFAULT_TABLE)
        conversation = conversation if conversation is not None else location.conversation
        table = table if table is not None else location.table
        try:
            check_table_name(table)
            check_conversation_id(conversation)
        except ValueError as exc:
            raise StoreDatabaseError(DatabaseLocation(location.conninfo, None, DEFAULT_TABLE).display, str(exc)) from None
        assert conversation is not None
        self.conversation: str = conversation
        """The conversation this store reads and appends to."""
        self.table: str = table
        """The events table (shared by every conversation)."""
        self._location = DatabaseLocation(location.conninfo, conversation, table)
        self._pool = pool
        self._conn: Any = None
        self._listener: Any = None
        self._lock = threading.RLock()
        self._closed = False
        sql = self._psycopg.sql
        self._ident = table_ident(sql, table)
        self._insert = sql.SQL("INSERT INTO {table} ({columns}) VALUES ({values})").format(
            table=self._ident,
            columns=sql.SQL(", ").join(map(sql.Identifier, COLUMNS)),
            values=sql.SQL(", ").join([sql.Placeholder()] * (len(COLUMNS) - 1) + [sql.SQL("%b")]),
        )
        self._events: list[Event | None] = []
        self._types: list[type | None] = []
        self._hidden = bytearray()
        self._ids: list[int] = []
        self.notifications = 0
        """How many times a notification of new events in this conversation ended `wait_for_events`."""
        try:
            with self._database("open"):
                with self._connection() as conn:
                    self._ensure_table(conn)
                    self._ids = self._stored_ids(conn, 0)
        except BaseException:
            self.close()  # the connection it opened, if any
            raise
        self._grow(len(self._ids))

    @classmethod
    def from_url(cls, url: str) -> PostgresEventStore:
        """The store a URL names: `postgresql://user@host:port/db?conversation=ID[&table=NAME]` (see `__init__`)."""
        location = parse_database_url(url)
        if location.conversation is None:
            raise StoreDatabaseError(location.display, "the URL names no conversation: add ?conversation=ID")
        return cls(url)

    @property
    def location(self) -> str:
        """Where the events are, as a URL without the password: for messages and logs."""
        return self._location.display

    # -- the EventStore protocol ---------------------------------------------------------------------

    def append(self, event: Event) -> None:
        """Store one event after the others; when this returns, it is committed.

        Raises:
            StoreClosedError: the store was closed.
            MalformedEventError: the event has no id (or a negative one), or cannot be written as JSON.
            DuplicateEventError: its id is not greater than the last one this store knows.
            ConcurrentAppendError: another writer stored an event of this conversation at this
                position first; nothing was stored.
            StoreDatabaseError: the database failed; the event may be stored if the connection was
                lost at commit (`EventStream.catch_up()` tells).
        """
        with self._lock:
            self._check_open()
            index = len(self._ids)
            check_next_id(event, self._ids[-1] if self._ids else None, index)
            row = _row(self.conversation, index, event)
            with self._database("append", event_id=event.id, index=index):
                with self._connection() as conn:
                    # BEGIN, INSERT, COMMIT apart: a worker killed before it sent COMMIT leaves nothing.
                    with conn.transaction():
                        conn.execute(self._insert, row, prepare=True)
            self._remember(event)

    def read_events(self, start: int = 0, stop: int | None = None) -> Iterator[Event]:
        """The events at positions `start` to `stop` (excluded), in order; fetched once, then kept."""
        with self._lock:
            self._check_open()
            low, high, _ = slice(start, stop).indices(len(self._ids))
            if low >= high:
                return iter(())
            self._fill(low, high)
            return iter(self._events[low:high])  # type: ignore[arg-type]

    def snapshot(self) -> list[Event]:
        """Every event this store knows, as a new list that notes their classes, ids and hidden flags."""
        with self._lock:
            self._check_open()
            self._fill(0, len(self._ids))
            events: list[Event] = list(self._events)  # type: ignore[arg-type]
            return LoadedEvents.as_read(events, list(self._types), list(self._ids), bytearray(self._hidden))  # type: ignore[arg-type]

    def event_ids(self) -> list[int]:
        """The ids of every event this store knows, in order (read at opening, and since)."""
        with self._lock:
            self._check_open()
            return list(self._ids)

    def __len__(self) -> int:
        """How many events this store knows: those stored when it opened, its own appends, and what `refresh` found."""
        return len(self._ids)

    def close(self) -> None:
        """Close the connections this store opened (a pool's are the pool's); calling it again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for conn in (self._conn, self._listener):
                if conn is not None:
                    try:
                        conn.close()
                    except self._psycopg.Error:  # pragma: no cover - closing a dead connection
                        logger.debug("closing a connection of %s failed", self.location, exc_info=True)
            self._conn = self._listener = None
            self._events, self._types, self._hidden, self._ids = [], [], bytearray(), []

    # -- many writers and live readers -----------------------------------------------------------------

    def refresh(self) -> int:
        """Learn of the events other writers stored since this store last looked; returns how many.

        Their ids are read now, the events themselves when first read.

        Raises:
            StoreDatabaseError: the database failed.
            CorruptRecordError: what is stored after the known events is not a log's continuation.
        """
        with self._lock:
            self._check_open()
            with self._database("refresh"):
                with self._connection() as conn:
                    ids = self._stored_ids(conn, len(self._ids))
            self._ids.extend(ids)
            self._grow(len(ids))
            return len(ids)

    def stored_count(self) -> int:
        """How many events of this conversation the database holds now (other writers' included)."""
        with self._lock:
            self._check_open()
            query = self._psycopg.sql.SQL(
                "SELECT coalesce(max(position) + 1, 0) FROM {table} WHERE conversation_id = %s"
            ).format(table=self._ident)
            with self._database("count"):
                with self._connection() as conn:
                    return int(conn.execute(query, (self.conversation,)).fetchone()[0])

    def wait_for_events(self, timeout: float | None = None) -> bool:
        """Block until the database holds events of this conversation that this store does not know yet.

        Returns True as soon as a notification says there are some, False after `timeout` seconds
        without one (None: wait as long as it takes). The wait listens for the table's
        notifications (LISTEN on a connection of its own, opened by the first call), it does not
        poll. Then `EventStream.catch_up()` (or `refresh()`) reads the new events.

        Raises:
            StoreDatabaseError: the database failed.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        listener, fresh = self._listen()
        # Just started listening: what was stored before is counted once; later events all notify.
        if fresh and self.stored_count() > len(self._ids):
            return True
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            heard: int | None = None
            with self._database("wait for events"):
                for notice in listener.notifies(timeout=remaining, stop_after=1):
                    parsed = parse_notification(notice.payload)
                    if parsed is not None and parsed[1] == self.conversation:
                        heard = parsed[0]
            if heard is not None:
                with self._lock:
                    known = self._ids[-1] if self._ids else -1
                # Our own appends, and events read since, are heard of too: only a later id is news.
                if heard > known:
                    self.notifications += 1
                    return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A psycopg connection to the store's database for one block (the pool's, or the store's own).

        For projections kept in the same database (`PostgresSearchIndex`). The store's own
        connection is in autocommit mode; use `conn.transaction()`. Errors are psycopg's.
        """
        with self._lock:
            self._check_open()
            with self._connection() as conn:
                yield conn

    # -- bulk ---------------------------------------------------------------------------------------

    def append_all(self, events: Iterable[Event], *, replace: bool = False) -> int:
        """Store many events (ids already set, increasing) in one transaction: all of them or none.

        With `replace`, the conversation's stored events are deleted first, in the same
        transaction (what `openhands-memory convert --force` does); otherwise they are appended
        after the events this store knows. Returns how many were stored. Uses COPY: about ten
        times faster than appending one by one.

        Raises:
            MalformedEventError, DuplicateEventError: an event has no id, or ids do not increase
                (checked before anything is written).
            ConcurrentAppendError: another writer appended meanwhile; nothing was stored.
            StoreDatabaseError: the database failed; nothing was stored.
        """
        with self._lock:
            self._check_open()
            batch = list(events)
            start = 0 if replace else len(self._ids)
            last = None if replace or not self._ids else self._ids[-1]
            for offset, event in enumerate(batch):
                check_next_id(event, last, start + offset)
                last = event.id
            sql = self._psycopg.sql
            copy = sql.SQL("COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)").format(
                table=self._ident, columns=sql.SQL(", ").join(map(sql.Identifier, COLUMNS))
            )
            first_event = batch[0].id if batch else None
            with self._database("store events", event_id=first_event, index=start):
                with self._connection() as conn:
                    with conn.transaction():
                        if replace:
                            conn.execute(
                                sql.SQL("DELETE FROM {table} WHERE conversation_id = %s").format(table=self._ident),
                                (self.conversation,),
                            )
                        with conn.cursor() as cursor:
                            with cursor.copy(copy) as writer:
                                writer.set_types(["text", "int8", "int8", "text", "text", "text", "text", "int8", "bool", "bytea"])
                                for offset, event in enumerate(batch):  # serialized as sent: no second copy of the log
                                    writer.write_row(_row(self.conversation, start + offset, event))
            if replace:
                self._events, self._types, self._hidden, self._ids = [], [], bytearray(), []
            for event in batch:
                self._remember(event)
            return len(batch)

    # -- inside ---------------------------------------------------------------------------------------

    def _remember(self, event: Event) -> None:
        self._events.append(event)
        self._types.append(type(event))
        self._hidden.append(bool(event.hidden))
        self._ids.append(event.id)  # type: ignore[arg-type]

    def _grow(self, count: int) -> None:
        """Make room for `count` events known by id, not read yet."""
        self._events.extend([None] * count)
        self._types.extend([None] * count)
        self._hidden.extend(bytes(count))

    def _fill(self, low: int, high: int) -> None:
        """Fetch the events in positions `low` to `high` that were not read yet (one query for the span)."""
        events = self._events
        missing = [i for i in range(low, high) if events[i] is None]
        if not missing:
            return
        first, last = missing[0], missing[-1]
        sql = self._psycopg.sql
        query = sql.SQL(
            "SELECT position, event_id, body FROM {table} WHERE conversation_id = %s AND position >= %s AND position <= %s "
            "ORDER BY position"
        ).format(table=self._ident)
        loads = ResponseSharer().loads
        expected = first
        with self._database("read", index=first):
            with self._connection() as conn, conn.transaction():
                with conn.cursor(binary=True, name=None) as cursor, gc_paused():
                    cursor.execute(query, (self.conversation, first, last))
                    while rows := cursor.fetchmany(_FETCH_CHUNK):
                        for position, event_id, body in rows:
                            if position != expected:
                                raise CorruptRecordError(self.location, expected + 1, "the event at this position is gone")
                            expected += 1
                            if events[position] is not None:
                                continue
                            event = self._parse(bytes(body), position, event_id, loads)
                            events[position] = event
                            self._types[position] = type(event)
                            self._hidden[position] = bool(event.hidden)
        if expected != last + 1:
            raise CorruptRecordError(self.location, expected + 1, "the event at this position is gone")

    def _parse(self, body: bytes, position: int, event_id: int, loads: Any = None) -> Event:
        """The event a row holds, checked against its id column; errors name the position (from 1, as a line)."""
        try:
            value = (loads or orjson.loads)(body)
            event = event_from_parsed(value)
        except orjson.JSONDecodeError as exc:
            raise CorruptRecordError(self.location, position + 1, f"event {event_id}: invalid JSON: {exc}") from exc
        except MalformedEventError as exc:
            raise CorruptRecordError(self.location, position + 1, f"event {event_id}: {exc.reason}") from exc
        if event.id != event_id or self._ids[position] != event_id:
            raise CorruptRecordError(self.location, position + 1, f"the row of event {event_id} holds event {event.id}")
        return event

    def _stored_ids(self, conn: Any, start: int) -> list[int]:
        """The ids at positions from `start` on, checked: positions without a gap, ids increasing."""
        query = self._psycopg.sql.SQL(
            "SELECT position, event_id FROM {table} WHERE conversation_id = %s AND position >= %s ORDER BY position"
        ).format(table=self._ident)
        with conn.transaction():
            rows = conn.execute(query, (self.conversation, start)).fetchall()
        ids: list[int] = []
        last = self._ids[-1] if start and self._ids else None
        for offset, (position, event_id) in enumerate(rows):
            if position != start + offset:
                raise CorruptRecordError(self.location, start + offset + 1, f"no event at position {start + offset}")
            if last is not None and event_id <= last:
                raise CorruptRecordError(
                    self.location, position + 1, f"id {event_id} does not follow id {last} (ids must strictly increase)"
                )
            ids.append(event_id)
            last = event_id
        return ids

    def _ensure_table(self, conn: Any) -> None:
        """Create the table (under an advisory lock, so two processes do not race), or check it is ours."""
        psycopg = self._psycopg
        with conn.transaction():
            found = conn.execute(
                "SELECT obj_description(to_regclass(%s), 'pg_class'), to_regclass(%s) IS NOT NULL", (self.table, self.table)
            ).fetchone()
            if not found[1]:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(self.table),))
                found = conn.execute(
                    "SELECT obj_description(to_regclass(%s), 'pg_class'), to_regclass(%s) IS NOT NULL",
                    (self.table, self.table),
                ).fetchone()
                if not found[1]:
                    lz4 = conn.execute(
                        "SELECT coalesce('lz4' = ANY(enumvals), false) FROM pg_settings WHERE name = 'default_toast_compression'"
                    ).fetchone()
                    for statement in table_ddl(psycopg.sql, self.table, lz4=bool(lz4 and lz4[0])):
                        conn.execute(statement)
                    logger.info("created the events table %s", self.table)
                    return
        comment = found[0] or ""
        if comment != f"openhands-memory events, schema {SCHEMA_VERSION}":
            raise StoreDatabaseError(
                self.location,
                f"table {self.table!r} exists but is not an openhands-memory events table of schema {SCHEMA_VERSION} "
                f"(its comment: {comment!r}); name another with ?table=NAME",
            )

    def _listen(self) -> tuple[Any, bool]:
        """The connection that LISTENs to the table's channel, and whether it was opened just now."""
        with self._lock:
            self._check_open()
            if self._listener is not None and not self._listener.closed and not self._listener.broken:
                return self._listener, False
            # A pool cannot lend a connection for as long as a LISTEN lasts: open one as the pool would.
            options = {**(getattr(self._pool, "kwargs", None) or {}), "autocommit": True}
            with self._database("listen"):
                listener = self._psycopg.connect(self._location.conninfo, **options)
                listener.execute(self._psycopg.sql.SQL("LISTEN {}").format(self._psycopg.sql.Identifier(self.table)))
            self._listener = listener
            return listener, True

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """A connection for one operation: the pool's (returned after it), else this store's own."""
        if self._pool is not None:
            with self._pool.connection() as conn:
                yield conn
            return
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            conn = self._conn = self._psycopg.connect(self._location.conninfo, autocommit=True)
        yield conn

    @contextmanager
    def _database(self, what: str, *, event_id: int | None = None, index: int | None = None) -> Iterator[None]:
        """Turn psycopg's errors into ours: a taken position into `ConcurrentAppendError`, the rest `StoreDatabaseError`."""
        psycopg = self._psycopg
        try:
            yield
        except psycopg.errors.UniqueViolation as exc:
            if event_id is None or index is None:  # pragma: no cover - only writes insert
                raise StoreDatabaseError(self.location, f"{what}: {_first_line(exc)}") from exc
            raise ConcurrentAppendError(event_id, index, self.conversation) from exc
        except psycopg.Error as exc:
            raise StoreDatabaseError(self.location, f"{what} failed: {_first_line(exc)}") from exc

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(self.location)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._ids)} events"
        return f"PostgresEventStore({self.location!r}, {state})"


def _row(conversation: str, position: int, event: Event) -> tuple[Any, ...]:
    """The row an event is stored as: the filter columns, and its exact JSON."""
    body = event_to_json(event)
    cause = event.cause if isinstance(event.cause, int) and not isinstance(event.cause, bool) else None
    timestamp = event.timestamp if isinstance(event.timestamp, str) else None
    source = str(event.source.value if hasattr(event.source, "value") else event.source) if event.source is not None else None
    return (conversation, position, event.id, event.kind_key, str(event.kind), source, timestamp, cause, bool(event.hidden), body)


def _pool_conninfo(pool: Any) -> str:
    """The connection string of a psycopg pool (for the listening connection, which a pool cannot lend)."""
    conninfo = getattr(pool, "conninfo", None)
    if not isinstance(conninfo, str):
        raise StoreDatabaseError("postgresql", f"not a psycopg connection pool: {type(pool).__name__}")
    return conninfo


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def database_location(url: str | os.PathLike[str]) -> str:
    """How a database URL is shown in messages: without its password."""
    return parse_database_url(url).display
