"""A read-only `EventStore` over an OpenHands SDK conversation's own event log, imported by the one V1 import.

The SDK keeps a conversation's events in its `EventLog`: one file per event,
`<persistence_dir>/<conversation id>/events/event-<n>-<uuid>.json` (in memory when the conversation
has no persistence dir). This store reads them through that log (`conversation.state.events`), as
the JSON the SDK writes to those files (`model_dump_json(exclude_none=True)`), and imports them with
`openhands_memory.events._sdk_import`: event `n` of the SDK's log is our event `n`, its UUID kept in
`original_id`. The SDK appends; `refresh()` (which `EventStream.catch_up` calls) takes in what it
appended since. Nothing here imports the SDK: the log is any sequence of its events.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from openhands_memory.errors import StoreClosedError, StoreError
from openhands_memory.events import Event
from openhands_memory.events._sdk_import import import_sdk_events

__all__ = ["SdkEventLogStore"]


class SdkEventLogStore:
    """The events of an SDK conversation's log as ours (ids 0, 1, 2, ... in the log's order), read-only.

    Events already read are never changed: the import of a longer log gives the same events for
    the same records (ids are positions), and what a later record could add to an earlier event
    (the tool calls of a batch still being written) is not searchable text.
    """

    def __init__(self, events: Sequence[Any], *, where: str | None = None) -> None:
        """A store over `events`, the SDK's `EventLog` (each item an SDK event); `where` names it in errors.

        It holds no event until `refresh()` reads the log (`EventStream.catch_up` calls it).
        """
        self._source = events
        self._where = where
        self._records: list[dict[str, Any]] = []
        self._events: list[Event] = []
        self._positions: dict[str, int] = {}
        self._closed = False

    def refresh(self) -> None:
        """Take in the events the SDK appended to its log since the last look.

        Raises:
            MalformedEventError: a new event is not one the V1 import reads (nothing is taken in).
            StoreClosedError: the store was closed.
        """
        if self._closed:
            raise StoreClosedError(self._where)
        known = len(self._records)
        total = len(self._source)
        if total <= known:
            return
        new = [orjson.loads(event.model_dump_json(exclude_none=True)) for event in self._source[known:total]]
        records = self._records + new
        # The import needs the whole log (an observation names its action, a condensation the
        # events it forgets); the events it gives for the records already read are those read then.
        imported = import_sdk_events(records, path=self._where)
        for position in range(known, total):
            self._positions.setdefault(records[position]["id"], position)
        self._records = records
        self._events.extend(imported[known:])

    def position_of(self, uuid: str) -> int | None:
        """Our id of the SDK event with this UUID, or None when the log (as last refreshed) has none."""
        return self._positions.get(uuid)

    # -- the EventStore protocol ----------------------------------------------------------------------

    def append(self, event: Event) -> None:
        """Refused: only the SDK appends to its log.

        Raises:
            StoreError: always.
        """
        raise StoreError(f"{self._where or 'an SDK conversation log'}: only the OpenHands SDK appends to its log")

    def read_events(self, start: int = 0, stop: int | None = None) -> Iterator[Event]:
        """The events at positions `start` to `stop` (excluded), as last refreshed."""
        return iter(self._events[start:stop])

    def snapshot(self) -> list[Event]:
        """Every event, as last refreshed, as a new list."""
        return list(self._events)

    def event_ids(self) -> list[int]:
        """The ids of the events, in order (their positions)."""
        return [event.id for event in self._events]  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self._events)

    def close(self) -> None:
        """Forget the imported events (the SDK's log is the SDK's: nothing of it is closed)."""
        self._closed = True
        self._records, self._events, self._positions = [], [], {}
