"""`PostgresEventStore`: one conversation's events in a PostgreSQL table that many processes share.

For agents run as a service: thousands of conversations in one table, workers on several machines
(any of them may pick up any conversation), dashboards reading live. Needs the `postgres` extra
(the `postgres` extra: psycopg 3). See `_postgres_schema` for the table.

What the database promises, and so this store:
- An append is one statement (one round trip): the INSERT, the check that the event this store
  knows last is still there before it, and the check that its key is not stored yet; committed
  before `append` returns. An acknowledged event survives the worker being killed (and, with
  PostgreSQL's default `synchronous_commit`, the server crashing). A worker killed mid-append
  leaves nothing: the statement dies with its connection.
- An append carries a key (`append_key`: one the caller chose, or a new uuid): when the connection
  is lost before the reply came back, the store reconnects and sends it again (a few times, with
  backoff), and finds the event it stored instead of storing it twice. A caller that retries
  itself passes the same key (`EventStream.add_event(..., key=)`).
- An expected conflict is not an error on the server (`ON CONFLICT DO NOTHING`; a bulk store takes the
  conversation's turn alone and looks before it writes): it fills no log.
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

import hashlib
import logging
import os
import random
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
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
    StoreTimeoutError,
)
from openhands_memory.events import Event, event_to_json
from openhands_memory.events._codec import event_from_parsed
from openhands_memory.events._loaded import LoadedEvents
from openhands_memory.events._reading import ResponseSharer, gc_paused
from openhands_memory.stream._postgres_schema import (
    COLUMNS,
    KEY_COLUMN,
    SCHEMA_VERSION,
    advisory_key,
    parse_notification,
    regclass_name,
    schema_version,
    table_ddl,
    table_ident,
    upgrade_ddl,
)
from openhands_memory.stream._postgres_url import (
    DEFAULT_TABLE,
    DatabaseLocation,
    check_conversation_id,
    check_table_name,
    parse_database_url,
)
from openhands_memory.stream._watchdog import Guard, guarded
from openhands_memory.stream.store import check_next_id

logger = logging.getLogger(__name__)


_FETCH_CHUNK = 2000
"""Rows asked of the server at a time while reading a range (each reply comes within `REPLY_TIMEOUT`)."""

CONNECT_TIMEOUT = 10
"""Seconds to wait for the server to accept a connection, unless the URL (or `PGCONNECT_TIMEOUT`) says."""

SESSION_TIMEOUTS = {"lock_timeout": "30s", "statement_timeout": "300s"}
"""How long a statement may wait for a lock, and run, unless the URL's `options` (or `PGOPTIONS`) say."""

REPLY_TIMEOUT = 60.0
"""Seconds any call (open, append, read, refresh, search, a bulk store, the turn) waits for the server's reply, or
for the next part of a long one, before its connection is cut and it raises `StoreTimeoutError` (a server that is
frozen never answers, and its own timeouts never fire): longer than `lock_timeout`, so only a server that stopped
hits it."""

_BULK_UNKNOWN = "; the events may be stored (the server may commit them when it answers again): look before storing them again"
"""What a bulk store cut off by `REPLY_TIMEOUT` says: its COMMIT may have reached the server."""

APPEND_ATTEMPTS = 4
"""Times an append is sent when the connection is lost before its reply (the key makes a resend safe)."""

_BIGINT = (-(1 << 63), (1 << 63) - 1)
"""The range of PostgreSQL's bigint, which holds ids and causes."""

_COLUMN_TYPES = ("text", "int8", "int8", "text", "text", "text", "text", "int8", "bool", "bytea")
"""The SQL types of `COLUMNS`, in order (the statements cast to them: a None has no type of its own)."""


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
        self._guard: Guard | None = None  # the bound of the call running now (one at a time: the lock)
        self._closed = False
        sql = self._psycopg.sql
        self._ident = table_ident(sql, table)
        self._insert = _append_statement(sql, self._ident)
        digest = hashlib.blake2b(f"{table}\0{conversation}".encode(), digest_size=8).digest()
        self._turn_key = int.from_bytes(digest, "big", signed=True)
        self._events: list[Event | None] = []
        self._types: list[type | None] = []
        self._hidden = bytearray()
        self._ids: list[int] = []
        self.notifications = 0
        """How many times a notification of new events in this conversation ended `wait_for_events`."""
        try:
            with self._database("open"):
                with self._connection("open") as conn:
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
        """Store one event after the others; when this returns, it is committed (see `append_keyed`)."""
        self.append_keyed(event, None)

    def append_keyed(self, event: Event, key: str | None) -> int | None:
        """Store one event after the others under `key` (None: a new one), unless `key` is stored already.

        Returns None when `event` was stored now (by this call, or by its resend after a lost
        reply), else the id of the event an earlier append stored under `key` (`event` is not
        stored; the stream catches up to it: this store learns of it with `refresh`).

        Raises:
            StoreClosedError: the store was closed.
            MalformedEventError: the event has no id (or a negative one, or one past bigint), or
                cannot be written as JSON.
            DuplicateEventError: its id is not greater than the last one this store knows.
            ConcurrentAppendError: another writer stored an event of this conversation at this
                position first; nothing was stored.
            StoreDatabaseError: the conversation was replaced since this store read it (reopen
                it), or the database failed; after a lost connection, the event may be stored:
                adding it again with the same key stores it once.
            StoreTimeoutError: the database did not answer in time.
        """
        return self.append_batch([event], key)

    def append_batch(self, events: Sequence[Event], key: str | None = None) -> int | None:
        """Store events (an agent step's) after the others in one transaction, all or none, under `key` (see `append_keyed`).

        One event is one statement; several (`EventStream.add_events`) are two statements sent together and run
        as one transaction (a pipeline: one round trip too): the conversation's turn taken alone, so no other
        append is under way, then the insert of them all unless a position is taken. The key is stored with
        the first event. Returns None when they were stored now, else the
        id of the first event an earlier append stored under `key`. Raises as `append_keyed`.
        """
        with self._lock:
            self._check_open()
            if not events:
                return None
            index = len(self._ids)
            last = self._ids[-1] if self._ids else None
            previous = last
            for offset, event in enumerate(events):
                check_next_id(event, previous, index + offset)
                previous = event.id
            key = key if key is not None else uuid.uuid4().hex
            rows = [_row(self.conversation, index + offset, event) for offset, event in enumerate(events)]
            check = (self._turn_key, last, self.conversation, index - 1, last)
            if len(rows) == 1:
                statement, params = self._insert, (*rows[0], key, *check)
            else:
                statement = _append_statement(self._psycopg.sql, self._ident, rows=len(rows))
                values = tuple(value for number, row in enumerate(rows) for value in (*row, key if number == 0 else None))
                params = (*values, *check, self.conversation, index)
            psycopg = self._psycopg
            first = events[0]
            outcome: int | str | None = None
            # A frozen server: sending it again would wait as long; the timeout says the event may be stored.
            unknown = f"; event {first.id} may be stored: add it again with key {key!r} to store it once"
            for attempt in range(1, APPEND_ATTEMPTS + 1):
                try:
                    with self._connection("append", hint=unknown) as conn:
                        if len(rows) == 1:
                            inserted = conn.execute(statement, params, prepare=True).fetchall()
                        else:
                            inserted = self._insert_together(conn, statement, params)
                        if len(inserted) != len(rows):
                            outcome = self._why_not_stored(conn, index, key)  # a second round trip, only then
                            if attempt > 1 and outcome == first.id:
                                outcome = None  # what this call sent before its connection was lost
                    break
                except psycopg.Error as exc:
                    lost = is_connection_lost(exc)
                    if not lost or attempt == APPEND_ATTEMPTS:
                        hint = f" (event {first.id} may be stored: add it again with key {key!r} to store it once)" if lost else ""
                        raise self._translate(exc, "append", hint) from exc
                    logger.warning("%s: append of event %s lost its connection (%s): sending it again", self.location, first.id, _first_line(exc))
                    time.sleep(random.uniform(0.05, 0.25) * 2**attempt)
            if outcome == "conflict":
                raise ConcurrentAppendError(first.id, index, self.conversation)
            if outcome == "replaced":
                raise StoreDatabaseError(
                    self.location,
                    f"event {first.id} was not stored: the conversation was replaced since this store read it "
                    f"(position {index - 1} no longer holds event {last}; was it converted with --force?): reopen it",
                )
            if outcome is not None:
                return int(outcome)  # an earlier append with this key stored it
            for event in events:
                self._remember(event)
            return None

    def _insert_together(self, conn: Any, statement: Any, params: tuple[Any, ...]) -> list[Any]:
        """Run a batch's insert holding the conversation's turn alone, in one transaction: all its rows or none.

        Pipelined (one round trip): what is sent before the pipeline's sync is one implicit transaction,
        and the insert, a statement after the lock, sees every append that finished before it.
        """
        lock = ("SELECT pg_advisory_xact_lock(%s)", (self._turn_key,))
        if not self._psycopg.Pipeline.is_supported():  # a libpq before 14: the same in a transaction
            with conn.transaction():
                conn.execute(*lock)
                return conn.execute(statement, params).fetchall()
        with conn.pipeline():
            conn.execute(*lock, prepare=True)
            cursor = conn.execute(statement, params, prepare=True)
        return cursor.fetchall()

    @contextmanager
    def turn(self) -> Iterator[None]:
        """The conversation's turn: while a block holds it, other writers' appends wait (their own in it go on).

        For a writer that lost a race (`ConcurrentAppendError`): taken before it catches up and adds
        the event again, it makes the writer that keeps winning wait for that append, so writers take
        turns instead of one losing again and again (`History.add_event` does this). The turn is a
        session advisory lock, waited for in line (the first to ask gets it first); an append holds it
        shared. Over a pool (whose connections change between calls) it is not taken.

        Raises:
            StoreDatabaseError: the database failed; StoreTimeoutError: the turn did not come within `lock_timeout`.
        """
        with self._lock:
            self._check_open()
            if self._pool is not None:
                yield
                return
            with self._database("wait for the turn"):
                with self._connection("wait for the turn") as conn:
                    conn.execute("SELECT pg_advisory_lock(%s)", (self._turn_key,))
            try:
                yield
            finally:
                conn = self._conn
                if conn is not None and not conn.closed and not conn.broken:
                    try:
                        with self._guarded(conn, "release the turn"):
                            conn.execute("SELECT pg_advisory_unlock(%s)", (self._turn_key,))
                    except (self._psycopg.Error, StoreTimeoutError):  # the connection died: the lock went with it
                        logger.debug("releasing the turn of %s failed", self.location, exc_info=True)

    def _why_not_stored(self, conn: Any, index: int, key: str) -> int | str:
        """After an append inserted nothing: the id stored under `key`, else `replaced` or `conflict`."""
        query = self._psycopg.sql.SQL(
            "SELECT position, event_id, append_key FROM {table} WHERE conversation_id = %s "
            "AND (append_key = %s OR position = %s)"
        ).format(table=self._ident)
        before = None
        for position, event_id, stored_key in conn.execute(query, (self.conversation, key, index - 1)).fetchall():
            if stored_key == key:
                return int(event_id)  # stored before: by a resend of this append, or a caller's retry
            if position == index - 1:
                before = event_id
        if index > 0 and before != self._ids[-1]:
            return "replaced"
        return "conflict"

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

        All of them or none: they are read and checked (ids, positions, JSON) in one query before
        this store takes any in, so a refresh that fails halfway leaves the store as it was and the
        next one reads them again.

        Raises:
            StoreDatabaseError: the database failed.
            CorruptRecordError: what is stored after the known events is not a log's continuation.
        """
        with self._lock:
            self._check_open()
            start = len(self._ids)
            query = self._psycopg.sql.SQL(
                "SELECT position, event_id, body FROM {table} WHERE conversation_id = %s AND position >= %s ORDER BY position"
            ).format(table=self._ident)
            with self._database("refresh"):
                with self._connection("refresh") as conn:
                    rows = conn.execute(query, (self.conversation, start), binary=True).fetchall()
            ids = self._checked_ids([(position, event_id) for position, event_id, _ in rows], start)
            self._ids.extend(ids)
            try:
                events = [self._parse(bytes(body), start + offset, event_id) for offset, (_, event_id, body) in enumerate(rows)]
            except BaseException:
                del self._ids[start:]
                raise
            for event in events:
                self._events.append(event)
                self._types.append(type(event))
                self._hidden.append(bool(event.hidden))
            return len(ids)

    def stored_count(self) -> int:
        """How many events of this conversation the database holds now (other writers' included)."""
        with self._lock:
            self._check_open()
            query = self._psycopg.sql.SQL(
                "SELECT coalesce(max(position) + 1, 0) FROM {table} WHERE conversation_id = %s"
            ).format(table=self._ident)
            with self._database("count"):
                with self._connection("count") as conn:
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
    def connection(self, what: str = "use the database") -> Iterator[Any]:
        """A psycopg connection to the store's database for one block (the pool's, or the store's own).

        For projections kept in the same database (`PostgresSearchIndex`). The store's own
        connection is in autocommit mode; use `conn.transaction()`. Errors are psycopg's, except
        a server that does not answer within `REPLY_TIMEOUT`: `StoreTimeoutError` ("`what` failed: ...").
        """
        with self._lock:
            self._check_open()
            with self._connection(what) as conn:
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
                with self._connection("store events", hint=_BULK_UNKNOWN) as conn:
                    with conn.transaction():
                        # The conversation's turn, alone: appends (which hold it shared) wait until this commits, so
                        # a conflict is found by looking, never hit (a taken position would be an ERROR in the server's log).
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._turn_key,))
                        if replace:
                            conn.execute(
                                sql.SQL("DELETE FROM {table} WHERE conversation_id = %s").format(table=self._ident),
                                (self.conversation,),
                            )
                        elif batch:
                            if self._ids:
                                self._check_still_after(conn, start, batch[0])
                            self._check_free_from(conn, start, batch[0])
                        with conn.cursor() as cursor:
                            with cursor.copy(copy) as writer:
                                writer.set_types(list(_COLUMN_TYPES))
                                for offset, event in enumerate(batch):  # serialized as sent: no second copy of the log
                                    writer.write_row(_row(self.conversation, start + offset, event))
                                    if offset % _FETCH_CHUNK == 0:
                                        self._progressed()  # the server takes the rows as they come
                        if replace:
                            self._check_nothing_past(conn, len(batch))
            if replace:
                self._events, self._types, self._hidden, self._ids = [], [], bytearray(), []
            for event in batch:
                self._remember(event)
            return len(batch)

    def _check_still_after(self, conn: Any, index: int, event: Event) -> None:
        """Inside a write: the event this store knows last is still at `index - 1` (locked until the write ends), or raise."""
        query = self._psycopg.sql.SQL(
            "SELECT 1 FROM {table} WHERE conversation_id = %s AND position = %s AND event_id = %s FOR KEY SHARE"
        ).format(table=self._ident)
        if conn.execute(query, (self.conversation, index - 1, self._ids[-1])).fetchone() is None:
            raise StoreDatabaseError(
                self.location,
                f"event {event.id} was not stored: the conversation was replaced since this store read it "
                f"(position {index - 1} no longer holds event {self._ids[-1]}): reopen it",
            )

    def _check_free_from(self, conn: Any, index: int, event: Event) -> None:
        """Inside a write that holds the turn: no event is stored at `index` or after, or raise `ConcurrentAppendError`."""
        query = self._psycopg.sql.SQL("SELECT max(position) FROM {table} WHERE conversation_id = %s").format(table=self._ident)
        last = conn.execute(query, (self.conversation,)).fetchone()[0]
        if last is not None and last >= index:
            raise ConcurrentAppendError(event.id, index, self.conversation)

    def _check_nothing_past(self, conn: Any, count: int) -> None:
        """Inside a replacing write: no writer appended past the new events meanwhile (else it would follow a gap), or raise."""
        query = self._psycopg.sql.SQL("SELECT max(position) FROM {table} WHERE conversation_id = %s").format(table=self._ident)
        last = conn.execute(query, (self.conversation,)).fetchone()[0]
        if last is not None and last >= count:
            raise StoreDatabaseError(
                self.location,
                f"conversation {self.conversation!r} was not replaced: a writer appended to it meanwhile (event at position "
                f"{last}); stop its writers first, then replace it",
            )

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
        """Fetch the events in positions `low` to `high` that were not read yet (one transaction, a query per `_FETCH_CHUNK`)."""
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
            with self._connection("read") as conn, conn.transaction():
                with conn.cursor(binary=True, name=None) as cursor, gc_paused():
                    for chunk in range(first, last + 1, _FETCH_CHUNK):  # a reply of bounded size at a time
                        self._progressed()
                        cursor.execute(query, (self.conversation, chunk, min(last, chunk + _FETCH_CHUNK - 1)))
                        for position, event_id, body in cursor.fetchall():
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
        return self._checked_ids(rows, start)

    def _checked_ids(self, rows: list[tuple[int, int]], start: int) -> list[int]:
        """The ids of (position, id) rows read from `start` on, checked: positions without a gap, ids increasing."""
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
        """Create the table, or upgrade one of an older schema (under an advisory lock, so processes do not race), or check it is ours.

        Its own transaction, at opening: appends never run DDL (nor wait for its table locks).
        """
        psycopg = self._psycopg
        name = regclass_name(self.table)
        look = "SELECT obj_description(to_regclass(%s), 'pg_class'), to_regclass(%s) IS NOT NULL"
        comment, exists = conn.execute(look, (name, name)).fetchone()
        if exists and schema_version(comment) == SCHEMA_VERSION:
            return  # the common case: one read, no lock
        if not exists or (schema_version(comment) or SCHEMA_VERSION) < SCHEMA_VERSION:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(self.table),))
                comment, exists = conn.execute(look, (name, name)).fetchone()
                if not exists:
                    lz4 = conn.execute(
                        "SELECT coalesce('lz4' = ANY(enumvals), false) FROM pg_settings WHERE name = 'default_toast_compression'"
                    ).fetchone()
                    for statement in table_ddl(psycopg.sql, self.table, lz4=bool(lz4 and lz4[0])):
                        conn.execute(statement)
                    logger.info("created the events table %s", self.table)
                    return
                version = schema_version(comment)
                if version is not None and version < SCHEMA_VERSION:
                    for statement in upgrade_ddl(psycopg.sql, self.table, version):
                        conn.execute(statement)
                    logger.warning("upgraded the events table %s from schema %s to %s", self.table, version, SCHEMA_VERSION)
                    return
        if schema_version(comment) != SCHEMA_VERSION:
            raise StoreDatabaseError(
                self.location,
                f"table {self.table!r} exists but is not an openhands-memory events table of schema {SCHEMA_VERSION} "
                f"(its comment: {comment or ''!r}); name another with ?table=NAME",
            )

    def _listen(self) -> tuple[Any, bool]:
        """The connection that LISTENs to the table's channel, and whether it was opened just now."""
        with self._lock:
            self._check_open()
            if self._listener is not None and not self._listener.closed and not self._listener.broken:
                return self._listener, False
            # A pool cannot lend a connection for as long as a LISTEN lasts: open one as the pool would.
            options = {**session_options(self._location.conninfo), **(getattr(self._pool, "kwargs", None) or {}), "autocommit": True}
            with self._database("listen"):
                listener = self._psycopg.connect(self._location.conninfo, **options)
                try:
                    with self._guarded(listener, "listen"):
                        listener.execute(self._psycopg.sql.SQL("LISTEN {}").format(self._psycopg.sql.Identifier(self.table)))
                except BaseException:
                    listener.close()
                    raise
            self._listener = listener
            return listener, True

    @contextmanager
    def _connection(self, what: str, *, hint: str = "") -> Iterator[Any]:
        """A connection for one operation `what`: the pool's (returned after it), else this store's own; guarded (`_guarded`)."""
        if self._pool is not None:
            with self._pool.connection() as conn, self._guarded(conn, what, hint=hint):
                yield conn
            return
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            conninfo = self._location.conninfo
            conn = self._conn = self._psycopg.connect(conninfo, autocommit=True, **session_options(conninfo))
        with self._guarded(conn, what, hint=hint):
            yield conn

    @contextmanager
    def _guarded(self, conn: Any, what: str, *, hint: str = "") -> Iterator[None]:
        """While the block runs, the server answers within `REPLY_TIMEOUT` (of its start, or of `_progressed`), or the
        connection is cut and the block raises `StoreTimeoutError` (`what` failed ...`hint`)."""
        with guarded(conn, REPLY_TIMEOUT) as guard:
            outer, self._guard = self._guard, guard
            try:
                yield
            except self._psycopg.Error as exc:
                if guard.fired:
                    raise StoreTimeoutError(
                        self.location, f"{what} failed: no reply within {guard.seconds} s (is the server frozen?){hint}"
                    ) from exc
                raise
            finally:
                self._guard = outer

    def _progressed(self) -> None:
        """A long call got part of its answer: its bound starts again."""
        if self._guard is not None:
            self._guard.progressed()

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
            raise self._translate(exc, what) from exc

    def _translate(self, exc: BaseException, what: str, hint: str = "") -> StoreDatabaseError:
        """Our error for a psycopg one: a bound that passed is `StoreTimeoutError`."""
        timeout = timeout_passed(exc)
        if timeout is not None:
            return StoreTimeoutError(self.location, f"{what} failed: {timeout}{hint}")
        return StoreDatabaseError(self.location, f"{what} failed: {_first_line(exc)}{hint}")

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(self.location)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._ids)} events"
        return f"PostgresEventStore({self.location!r}, {state})"


def _append_statement(sql: Any, table: Any, *, rows: int = 1) -> Any:
    """The one statement of an append (see the module): insert the row unless its key is stored, or the
    event before it is not the one the writer knows (`FOR KEY SHARE`: a conversation replaced meanwhile
    is seen, never appended to past a gap); a taken position or key inserts nothing, with no error.

    It holds the conversation's turn lock shared (see `PostgresEventStore.turn`): a writer that lost
    races and waits for its turn goes before the next append of the writer that keeps winning.
    Several rows (run holding the turn alone) insert nothing when any position from the first is taken:
    all of them or none."""
    values = [sql.SQL("%s::{}").format(sql.SQL(kind)) for kind in _COLUMN_TYPES[:-1]] + [sql.SQL("%b::bytea"), sql.SQL("%s::text")]
    row = sql.SQL("({})").format(sql.SQL(", ").join(values))
    return sql.SQL(
        "INSERT INTO {table} ({columns}, {key}) SELECT incoming.* FROM (VALUES {rows}) AS incoming, "
        "(SELECT pg_advisory_xact_lock_shared(%s::bigint)) AS turn WHERE (%s::bigint IS NULL OR EXISTS (SELECT 1 FROM {table} WHERE conversation_id = %s "
        "AND position = %s AND event_id = %s FOR KEY SHARE)){free} ON CONFLICT DO NOTHING RETURNING event_id"
    ).format(
        free=sql.SQL(
            "" if rows == 1 else " AND NOT EXISTS (SELECT 1 FROM {table} WHERE conversation_id = %s AND position >= %s)"
        ).format(table=table),
        table=table,
        columns=sql.SQL(", ").join(map(sql.Identifier, COLUMNS)),
        key=sql.Identifier(KEY_COLUMN),
        rows=sql.SQL(", ").join([row] * rows),
    )


def is_connection_lost(exc: BaseException) -> bool:
    """Whether a psycopg error says the connection is gone (so a statement's outcome is unknown), not that it failed."""
    state = getattr(exc, "sqlstate", None)
    if state is None:
        return type(exc).__name__ in ("OperationalError", "InterfaceError")
    return state.startswith("08") or state in ("57P01", "57P02", "57P03")


def timeout_passed(exc: BaseException) -> str | None:
    """Which bound passed, when a psycopg error is a timeout (else None)."""
    state = getattr(exc, "sqlstate", None)
    if state == "55P03":
        return f"a lock was not granted within lock_timeout ({_first_line(exc)})"
    if state == "57014":
        return f"the statement ran past statement_timeout ({_first_line(exc)})"
    if state is None and "timeout expired" in str(exc):
        return f"the server did not accept the connection within connect_timeout ({_first_line(exc)})"
    return None


def session_options(conninfo: str) -> dict[str, Any]:
    """The connection keywords that add the default bounds (`CONNECT_TIMEOUT`, `SESSION_TIMEOUTS`) the URL leaves out."""
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(conninfo)
    extra: dict[str, Any] = {}
    if "connect_timeout" not in params and not os.environ.get("PGCONNECT_TIMEOUT"):
        extra["connect_timeout"] = CONNECT_TIMEOUT
    options = str(params.get("options") or os.environ.get("PGOPTIONS") or "")
    added = [f"-c {name}={value}" for name, value in SESSION_TIMEOUTS.items() if name not in options]
    if added:
        extra["options"] = " ".join([options, *added]).strip()
    return extra


def _row(conversation: str, position: int, event: Event) -> tuple[Any, ...]:
    """The row an event is stored as: the filter columns, and its exact JSON.

    Raises:
        MalformedEventError: its id or cause does not fit PostgreSQL's bigint.
    """
    cause = event.cause if isinstance(event.cause, int) and not isinstance(event.cause, bool) else None
    for name, value in (("id", event.id), ("cause", cause)):
        if value is not None and not _BIGINT[0] <= value <= _BIGINT[1]:
            raise MalformedEventError(
                f"{name} {value} is past what a PostgreSQL bigint holds (at most 2**63 - 1)", index=position, event_id=event.id
            )
    body = event_to_json(event)
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
