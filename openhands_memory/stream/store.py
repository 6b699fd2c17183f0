"""The `EventStore` protocol: the narrow interface every event store implements."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from openhands_memory.errors import DuplicateEventError, MalformedEventError
from openhands_memory.events import Event


@runtime_checkable
class EventStore(Protocol):
    """Keeps a stream's events, in order, by position; a store needs not inherit from anything.

    The stream assigns ids; a store only checks that each appended id is greater than the last
    one (ids may have gaps), and never rewrites or drops what it has stored. A store need not be
    thread-safe: the stream serializes appends.

    A store may also offer `snapshot() -> list[Event]` (every event, as a new list) and
    `event_ids() -> list[int]` (their ids, in order), when it can give them faster than reading
    every event; the stream uses them if they are there (the JSONL store's come from what it noted
    while loading the log). A store that other processes write too (PostgreSQL) offers `refresh()`,
    which learns of their events (all of them or none); `EventStream.catch_up()` calls it. Such a
    store may also offer `append_keyed(event, key)` and `append_batch(events, key)`, which keep the
    caller's key with the event and return the id stored under it before instead of storing it twice
    (`EventStream.add_event(key=)`, `add_events`), and `turn()` (`History.add_event` takes it after
    lost races). Without them the stream remembers keys itself while it is open.
    """

    def append(self, event: Event) -> None:
        """Store one event after the others; when this returns, the event is stored.

        Raises:
            MalformedEventError: the event has no id, or a negative one.
            DuplicateEventError: its id is not greater than the last stored id.
            StoreClosedError: the store was closed.
        """
        ...

    def read_events(self, start: int = 0, stop: int | None = None) -> Iterator[Event]:
        """The events at positions `start` (included) to `stop` (excluded; None: the end), in order.

        Like `list[start:stop]` with `start >= 0`: out-of-range bounds give fewer events, never an
        error. Implementations may return the same instances on every read; callers must treat
        them as read-only.
        """
        ...

    def __len__(self) -> int:
        """How many events are stored."""
        ...

    def close(self) -> None:
        """Release what the store holds (files, locks); calling it again does nothing."""
        ...


def check_next_id(event: Event, last_id: int | None, index: int) -> None:
    """Check that `event` may be stored at `index`, after the event with `last_id` (every store does).

    Raises:
        MalformedEventError: the event has no id.
        DuplicateEventError: its id is not greater than `last_id`.
    """
    event_id = event.id
    if event_id is None:
        raise MalformedEventError("an event in a store needs an id (add it through an EventStream)", index=index)
    if event_id < 0:
        # The same rule as `validate_events`, which `load_events` applies: every reader agrees.
        raise MalformedEventError(f"negative id {event_id} (ids name events and start at 0)", index=index, event_id=event_id)
    if last_id is not None and event_id <= last_id:
        raise DuplicateEventError(event_id, index, f"cannot follow id {last_id} (ids must strictly increase)")
