"""`EventStream`: the append-only history of one conversation, with ids, subscribers and reads."""

from __future__ import annotations

import logging
import os
import threading
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Self

from openhands_memory.errors import EventAlreadyAddedError, EventNotFoundError, StoreClosedError, StoreDatabaseError
from openhands_memory.events import Event, EventSource
from openhands_memory.events._loaded import LoadedEvents, LoadedRecord
from openhands_memory._locations import mistyped_url
from openhands_memory.stream._postgres_url import display_url, is_database_url
from openhands_memory.stream._redact import Redactor, secret_values
from openhands_memory.stream.file_store import JsonlEventStore
from openhands_memory.stream.filter import EventFilter, EventPredicate
from openhands_memory.stream.memory_store import InMemoryEventStore
from openhands_memory.stream.store import EventStore

logger = logging.getLogger(__name__)

Subscriber = Callable[[Event], object]
"""A function called with every event after it is stored; what it returns is ignored."""

_REVERSE_CHUNK = 256
"""How many events a reverse read fetches from the store at a time."""


class EventStream:
    """The history of one conversation: events in id order, never rewritten.

    The stream assigns each added event its id (the last id plus one; the first is 0), its
    timestamp and its source, stores it, then calls every subscriber with it. Ids may have gaps
    in a log imported from elsewhere, so ids are looked up, never taken for positions.

    `add_event` is thread-safe. Subscribers see events one at a time, in id order: an event a
    subscriber adds is delivered after every subscriber has seen the current one.

    With secrets set, every event is stored with their values hidden (`<secret_hidden>`, in keys
    too), and subscribers and reads get that stored event: so what a live session shows a model
    is what a session resumed from the log shows it. Reads hide the secrets in force now in the
    events stored before (a log written without them, or with others): such an event is read as
    a redacted copy, the log itself is never rewritten.
    """

    def __init__(self, store: EventStore | None = None, *, secrets: Mapping[str, str] | None = None) -> None:
        """A stream over `store` (in memory by default); `secrets` (name: value) are hidden in what is stored.

        Raises:
            InvalidSecretError: a secret value is shorter than 6 characters (`MIN_SECRET_LENGTH`) or not a string.
        """
        self._redactor = Redactor(secrets)
        self._store: EventStore = store if store is not None else InMemoryEventStore()
        # A store that noted the ids as it loaded them gives them without reading every event again.
        noted_ids = getattr(self._store, "event_ids", None)
        self._ids: list[int] = noted_ids() if noted_ids is not None else [event.id for event in self._store.read_events()]  # type: ignore[misc]
        self._next_id = self._ids[-1] + 1 if self._ids else 0
        self._lock = threading.Lock()
        self._subscribers: dict[str, Subscriber] = {}
        # A tuple rebuilt on (un)subscribe, so delivering an event needs no copy and no lock.
        self._subscriber_list: tuple[tuple[str, Subscriber], ...] = ()
        self._pending: deque[Event] = deque()
        self._delivery_lock = threading.Lock()
        self._delivering_thread: int | None = None
        self._closed = False
        # Reads hide the secrets in force in events stored before them: per position, 0 = not
        # checked yet, 1 = holds none, 2 = read as its redacted copy in `_copies`. Unused (empty)
        # while no secret is set.
        self._checked = bytearray()
        self._copies: dict[int, Event] = {}
        # Keys given to `add_event`, for a store that does not keep them (PostgreSQL does): for this stream's life.
        self._keys: dict[str, int] = {}
        if self._redactor:
            self._checked = bytearray(len(self._ids))

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, fsync: bool = False, secrets: Mapping[str, str] | None = None
    ) -> EventStream:
        """Open (or create) the stream stored in the JSONL file at `path`, or in the database a URL names.

        With `fsync`, every added event is on disk before `add_event` returns; without it, an
        added event survives the process being killed, not the machine losing power.

        A `postgresql://user@host/db?conversation=ID` URL opens that conversation in PostgreSQL
        (`PostgresEventStore`; the `postgres` extra), where every added event is committed before
        `add_event` returns (`fsync` changes nothing there).

        Raises:
            InvalidSecretError: a secret value is too short (the file is not opened).
            StoreLockedError: another stream has the file open.
            CorruptRecordError: a line is not an event; the error names `file:line`.
            StoreDatabaseError: the database cannot be reached, the URL names no conversation, or
                `path` is a string that looks like a URL of another kind (`mysql://`, `postgresq://`).
        """
        secret_values(secrets or {})  # refuse a bad secret before the file is opened and locked
        problem = mistyped_url(path)
        if problem is not None:
            raise StoreDatabaseError(display_url(os.fspath(path)), problem)
        if is_database_url(path):
            from openhands_memory.stream.postgres_store import PostgresEventStore

            return cls(PostgresEventStore.from_url(path), secrets=secrets)  # type: ignore[arg-type]
        return cls(JsonlEventStore(path, fsync=fsync), secrets=secrets)

    @classmethod
    def from_events(
        cls, events: Iterable[Event], path: str | os.PathLike[str] | None = None, *, fsync: bool = False
    ) -> EventStream:
        """A stream seeded with events that already have ids (a loaded log), keeping ids, times and sources.

        The stream is in memory, or in the JSONL file (or the database conversation) at `path`, after
        the events it already holds; a database stores them in one transaction. The events are
        stored as they are, not copied: treat them as read-only afterwards.

        Raises:
            MalformedEventError: an event has no id.
            DuplicateEventError: the ids do not strictly increase.
        """
        stream = cls.open(path, fsync=fsync) if path is not None else cls()
        try:
            bulk = getattr(stream._store, "append_all", None)
            if bulk is not None:  # a database store: one transaction (COPY), all of them or none
                batch = list(events)
                with stream._lock:
                    bulk(batch)
                    stream._ids.extend(event.id for event in batch)  # type: ignore[misc]
                    if stream._redactor:
                        stream._checked.extend(bytes(len(batch)))  # stored as given: checked when read
                    if stream._ids:
                        stream._next_id = stream._ids[-1] + 1
            else:
                for event in events:
                    stream._append_stored(event)
        except BaseException:
            stream.close()
            raise
        return stream

    @property
    def store(self) -> EventStore:
        """The store the events are kept in."""
        return self._store

    @property
    def hides_secrets(self) -> bool:
        """Whether secrets are set: an added event is then stored (and read back) as a copy when it holds one."""
        return bool(self._redactor)

    @property
    def redactor(self) -> Redactor:
        """The secrets in force, for projections of this stream to hide them too (falsy when none is set)."""
        return self._redactor

    def set_secrets(self, secrets: Mapping[str, str]) -> None:
        """Replace the secrets: their values are hidden in every event stored from now on, and in every read.

        Events already stored are not rewritten (the log is append-only): reads give a redacted
        copy of those that hold one of the new secrets.

        Raises:
            InvalidSecretError: a secret value is too short or not a string (the secrets are unchanged).
        """
        redactor = Redactor(secrets)
        with self._lock:
            self._redactor = redactor
            self._copies = {}
            self._checked = bytearray(len(self._ids)) if redactor else bytearray()

    def add_event(self, event: Event, source: EventSource | str, *, key: str | None = None) -> int:
        """Give a new event its id, timestamp and source (set on `event` itself), store it, tell subscribers.

        Returns the id. When secrets are set and `event` holds one, a copy with them hidden is
        stored, and subscribers and reads get that copy (`get_event(id)`), never `event`: use it
        for anything shown to a model. Otherwise `event` itself is stored.

        `key` (a string the caller chooses, a uuid say) makes retrying safe when an append's
        outcome is unknown (a database connection lost before its reply): when an event was
        already stored under `key`, nothing is stored, `event` is left as given, and that event's
        id is returned (the stream catches up to it). A PostgreSQL store keeps the keys with the
        events (every writer and every later session sees them); other stores are written by this
        process only, so the stream remembers the keys given to it while it is open.

        Raises:
            EventAlreadyAddedError: `event` already has an id.
            ValueError: `source` is not an `EventSource` value.
            StoreClosedError: the stream was closed.
            StoreReplacedError: the log file was replaced, moved or deleted since it was opened;
                nothing was written (the error names where the acknowledged events are).
            OSError: the store could not write the event; `event` is left as it was given.
        """
        if event.id is not None:
            raise EventAlreadyAddedError(event.id)
        source = EventSource(source)
        old_timestamp, old_source = event.timestamp, event.source
        keyed = getattr(self._store, "append_keyed", None)
        with self._lock:
            if self._closed:
                raise StoreClosedError()
            if key is not None and key in self._keys:
                return self._keys[key]
            event_id = self._next_id
            event.id = event_id
            # Stamped under the lock, so timestamps never go backwards as ids go forwards.
            event.timestamp = datetime.now().isoformat()
            event.source = source
            try:
                stored = self._redactor.redact_event(event) if self._redactor else event
                if keyed is not None:
                    earlier = keyed(stored, key)
                else:
                    self._store.append(stored)
                    earlier = None
            except BaseException:
                event.id, event.timestamp, event.source = None, old_timestamp, old_source
                raise
            if earlier is None:
                if key is not None and keyed is None:
                    self._keys[key] = event_id
                if self._redactor:
                    self._checked.append(1)  # stored with the secrets in force hidden
                self._ids.append(event_id)
                self._next_id = event_id + 1
                if self._subscriber_list:
                    self._pending.append(stored)
            else:  # stored before under this key: nothing new here
                event.id, event.timestamp, event.source = None, old_timestamp, old_source
        if earlier is not None:
            self.catch_up()
            return earlier
        if self._pending:
            self._deliver()
        return event_id

    def add_events(self, events: Sequence[Event], source: EventSource | str, *, key: str | None = None) -> list[int]:
        """Add several events (an agent step's: an action and its observation, say) as `add_event` would, together.

        They get consecutive ids. A store that can (PostgreSQL) stores them in one transaction and
        one round trip: all of them or none, and no other writer's event between them. Others are
        given them one by one. `key` works as for `add_event` (it stands for the whole batch);
        when it was stored before, the ids of the events stored under it then are returned.

        Raises:
            As `add_event`. With PostgreSQL nothing is stored then; with a store given them one by
            one, those stored before the failure keep their ids (and are delivered), the rest not.
        """
        batch = list(events)
        for event in batch:
            if event.id is not None:
                raise EventAlreadyAddedError(event.id)
        if len(batch) == 1:
            return [self.add_event(batch[0], source, key=key)]
        source = EventSource(source)
        olds = [(event.timestamp, event.source) for event in batch]
        together = getattr(self._store, "append_batch", None)
        with self._lock:
            if self._closed:
                raise StoreClosedError()
            if key is not None and key in self._keys:
                first = self._keys[key]
                return list(range(first, first + len(batch)))
            first_id = self._next_id
            now = datetime.now().isoformat()
            stored_events: list[Event] = []
            try:
                for offset, event in enumerate(batch):
                    event.id, event.timestamp, event.source = first_id + offset, now, source
                    stored_events.append(self._redactor.redact_event(event) if self._redactor else event)
                if together is not None:
                    earlier = together(stored_events, key)
                else:
                    earlier = None
                    for done, stored in enumerate(stored_events):
                        self._store.append(stored)
                        self._ids.append(first_id + done)  # stored: it keeps its place whatever follows
                        self._next_id = first_id + done + 1
                        if self._redactor:
                            self._checked.append(1)
                        if self._subscriber_list:
                            self._pending.append(stored)
            except BaseException:
                for event, (timestamp, old_source) in zip(batch, olds, strict=True):
                    if event.id is not None and event.id not in self._ids[-len(batch):]:
                        event.id, event.timestamp, event.source = None, timestamp, old_source
                raise
            if earlier is None and together is not None:
                for stored in stored_events:
                    if self._redactor:
                        self._checked.append(1)
                    self._ids.append(stored.id)  # type: ignore[arg-type]
                    if self._subscriber_list:
                        self._pending.append(stored)
                self._next_id = first_id + len(batch)
            if earlier is None and key is not None and together is None:
                self._keys[key] = first_id
            if earlier is not None:
                for event, (timestamp, old_source) in zip(batch, olds, strict=True):
                    event.id, event.timestamp, event.source = None, timestamp, old_source
        if earlier is not None:
            self.catch_up()
            return list(range(earlier, earlier + len(batch)))
        if self._pending:
            self._deliver()
        return [first_id + offset for offset in range(len(batch))]

    def catch_up(self) -> list[Event]:
        """Take in the events other writers stored since this stream last looked; returns them, in id order.

        For a store that several processes write (PostgreSQL): the new events get their place in
        the stream (`get_events`, `get_event`, the next id) and are given to the subscribers, as
        if added here. Call it after `ConcurrentAppendError` before adding the event again, or
        when `store.wait_for_events()` says there are new ones. With any other store it returns [].

        Raises:
            StoreClosedError: the stream was closed.
            StoreDatabaseError: the database failed.
        """
        refresh = getattr(self._store, "refresh", None)
        with self._lock:
            if self._closed:
                raise StoreClosedError()
            if refresh is not None:
                refresh()
            start = len(self._ids)
            new = list(self._store.read_events(start))
            for event in new:
                assert event.id is not None
                self._ids.append(event.id)
            if self._redactor:  # as stored by the other writer: the secrets in force are hidden when read
                self._checked.extend(bytes(len(new)))
                new = list(self._shown_range(new, start))
            if new:
                self._next_id = self._ids[-1] + 1
                if self._subscriber_list:
                    self._pending.extend(new)
        if self._pending:
            self._deliver()
        return new

    def _append_stored(self, event: Event) -> None:
        """Store an event that already has its id, as it is (seeding a stream from a log)."""
        with self._lock:
            self._store.append(event)
            assert event.id is not None
            if self._redactor:
                self._checked.append(0)  # stored as given: checked when read
            self._ids.append(event.id)
            self._next_id = event.id + 1

    def _shown(self, position: int, event: Event) -> Event:
        """The event at `position` as reads give it: its redacted copy when it holds a secret in force."""
        checked = self._checked
        if position >= len(checked):  # no secret set (or one appended meanwhile, already checked)
            return event
        state = checked[position]
        if state == 1:
            return event
        if state == 2:
            copy = self._copies.get(position)
            if copy is not None:
                return copy
        shown = self._redactor.redact_event(event)
        if shown is not event:
            self._copies[position] = shown
        checked[position] = 1 if shown is event else 2
        return shown

    def _shown_range(self, events: Iterable[Event], start: int) -> Iterator[Event]:
        for position, event in enumerate(events, start):
            yield self._shown(position, event)

    def _deliver(self) -> None:
        """Call the subscribers with each pending event, in id order, one event at a time."""
        if self._delivering_thread == threading.get_ident():
            return  # a subscriber added an event: the loop below, further up this thread, delivers it
        with self._delivery_lock:
            self._delivering_thread = threading.get_ident()
            try:
                while True:
                    with self._lock:
                        if not self._pending:
                            return
                        event = self._pending.popleft()
                    for name, callback in self._subscriber_list:
                        try:
                            callback(event)
                        except Exception:
                            logger.exception("subscriber %r failed on event %s; the event stays stored", name, event.id)
            finally:
                self._delivering_thread = None

    def subscribe(self, callback: Subscriber, name: str) -> None:
        """Call `callback` with every event added from now on, after it is stored.

        Raises:
            ValueError: a subscriber with this name exists.
        """
        with self._lock:
            if name in self._subscribers:
                raise ValueError(f"a subscriber named {name!r} exists; unsubscribe it first")
            self._subscribers[name] = callback
            self._subscriber_list = tuple(self._subscribers.items())

    def unsubscribe(self, name: str) -> None:
        """Stop calling the subscriber `name`.

        Raises:
            KeyError: no subscriber has this name.
        """
        with self._lock:
            if name not in self._subscribers:
                raise KeyError(f"no subscriber named {name!r}")
            del self._subscribers[name]
            self._subscriber_list = tuple(self._subscribers.items())

    def get_events(
        self,
        start_id: int = 0,
        end_id: int | None = None,
        *,
        reverse: bool = False,
        filter: EventFilter | EventPredicate | None = None,
        limit: int | None = None,
    ) -> Iterator[Event]:
        """The stored events with `start_id <= id <= end_id` (None: to the last), in id order or `reverse`d.

        Only events `filter` keeps are returned, at most `limit` of them. The range is fixed when
        this is called: events added while iterating are not returned. The events are the stored
        instances (secrets hidden); treat them as read-only.
        """
        if self._closed:
            raise StoreClosedError()
        ids = self._ids
        start = bisect_left(ids, start_id)
        stop = len(ids) if end_id is None else bisect_right(ids, end_id)
        return self._iter_range(start, stop, reverse, filter, limit)

    def _iter_range(
        self, start: int, stop: int, reverse: bool, keep: EventPredicate | None, limit: int | None
    ) -> Iterator[Event]:
        if limit is not None and limit <= 0:
            return
        if reverse:
            events = self._read_reversed(start, stop)
        else:
            events = self._store.read_events(start, stop)
            if self._checked:
                events = self._shown_range(events, start)
        count = 0
        for event in events:
            if keep is not None and not keep(event):
                continue
            yield event
            count += 1
            if count == limit:
                return

    def _read_reversed(self, start: int, stop: int) -> Iterator[Event]:
        # In chunks from the end, so "the last few matching events" reads little of a long log.
        while stop > start:
            chunk_start = max(start, stop - _REVERSE_CHUNK)
            chunk = list(self._store.read_events(chunk_start, stop))
            if self._checked:
                chunk = [self._shown(chunk_start + offset, event) for offset, event in enumerate(chunk)]
            yield from reversed(chunk)
            stop = chunk_start

    def get_event(self, event_id: int) -> Event:
        """The stored event with this id.

        Raises:
            EventNotFoundError: no event has this id.
        """
        if self._closed:
            raise StoreClosedError()
        ids = self._ids
        position = bisect_left(ids, event_id)
        if position == len(ids) or ids[position] != event_id:
            raise EventNotFoundError(event_id)
        event = next(self._store.read_events(position, position + 1))
        return self._shown(position, event) if self._checked else event

    def snapshot(self) -> list[Event]:
        """Every stored event, in id order, as a new list: what `list(get_events())` gives, faster.

        The events are the stored instances; treat them as read-only. A list from a JSONL log
        keeps what loading noted of each event (class, id, hidden flag), which `agent_history`,
        `View.from_events` and `ViewBuilder` then use instead of reading every event again.
        """
        if self._closed:
            raise StoreClosedError()
        noted = getattr(self._store, "snapshot", None)
        events = noted() if noted is not None else list(self._store.read_events())
        if not self._checked:
            return events
        return _with_copies(events, [self._shown(position, event) for position, event in enumerate(events)])

    def get_latest_event_id(self) -> int:
        """The id of the last stored event; -1 when there is none (as OpenHands)."""
        ids = self._ids
        return ids[-1] if ids else -1

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[Event]:
        return self.get_events()

    def close(self) -> None:
        """Drop the subscribers and close the store; calling it again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._subscribers.clear()
            self._subscriber_list = ()
            self._pending.clear()
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._ids)} events"
        return f"EventStream({self._store!r}, {state})"


def _with_copies(events: list[Event], shown: list[Event]) -> list[Event]:
    """`shown` (`events` with some replaced by redacted copies), keeping what loading noted of `events`.

    A redacted copy has the class, id and hidden flag of the event it replaces, so the record of
    the loaded list still describes the new one.
    """
    record = events.record() if isinstance(events, LoadedEvents) else None
    if record is None:
        return shown
    if all(a is b for a, b in zip(events, shown, strict=True)):
        return events
    if any(type(a) is not type(b) or a.hidden != b.hidden for a, b in zip(events, shown, strict=True)):
        return shown
    noted = LoadedRecord(shown, record.types, record.ids, record.ascending, record.writes, record.hidden)
    return LoadedEvents.with_record(shown, noted)
