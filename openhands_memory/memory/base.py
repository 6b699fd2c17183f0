"""`Memory`: QitOS' memory interface (`append`, `retrieve`, `summarize`, `evict`, `reset`) as a read model of the log.

QitOS' engine appends a record each time something happens in a run. Here the stream is where
things happen, so an adapter is fed from it: `append_event` turns an event into a `MemoryRecord`
and appends it, `from_events` rebuilds an adapter from a log, and `attach` keeps one up to date
with a live `EventStream`. Every record names its event, and records arrive in log order, so an
adapter built live and one rebuilt from the log hold the same records: nothing enters memory that
is not in the log.

A record appended in QitOS' form (no event id) goes into the log first, as an event of its own
(`records.record_event`), in the stream the adapter follows, or in an in-memory stream of its own
when it follows none (`stream`); the record held is the one read back from that event.
"""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, MutableSequence, Sequence
from dataclasses import dataclass
from itertools import count
from typing import Any, Self

from openhands_memory.errors import DuplicateEventError, MemoryAdapterError
from openhands_memory.events import Event, EventSource
from openhands_memory.memory.records import QITOS_ROLES, MemoryRecord, StepCounter, is_remembered, record_event, record_text
from openhands_memory.stream import EventStream

__all__ = ["Memory", "MemoryQuery", "estimate_tokens", "format_records", "select"]

_QUERY_KEYS = ("roles", "step_min", "step_max", "max_items", "max_tokens", "text", "top_k")
_QITOS_NAMES: dict[str, frozenset[str]] = {
    ours: frozenset(qitos for qitos, same in QITOS_ROLES.items() if same == ours) for ours in set(QITOS_ROLES.values())
}
"""Our role -> QitOS' roles for the same records (`tool` -> `observation`, `action_result`)."""
_subscriber_names = count()


@dataclass(frozen=True, slots=True)
class MemoryQuery:
    """QitOS' query keys, checked: `roles`, `step_min`, `step_max`, `max_items`, `max_tokens`, `text`, `top_k`."""

    roles: frozenset[str] | None = None
    """Only records with one of these roles; a QitOS role also names ours for the same records (`QITOS_ROLES`)."""
    step_min: int | None = None
    """Only records of this step or later."""
    step_max: int | None = None
    """Only records of this step or earlier (QitOS' history query key)."""
    max_items: int | None = None
    """At most this many records (the most recent, or the best ranked when `text` is given)."""
    max_tokens: int | None = None
    """At most this many tokens of content, counted as QitOS estimates them (4 characters a token, at
    least 1 a record): the most recent (or best ranked) records that fit."""
    text: str | None = None
    """Vector memory ranks records by similarity to it; the others keep records that contain it (any case)."""
    top_k: int | None = None
    """At most this many records, like `max_items` (QitOS' vector memory calls it so)."""

    @classmethod
    def parse(cls, query: Mapping[str, Any] | MemoryQuery | None) -> MemoryQuery:
        """Check a QitOS query dict; an unknown key or a value of the wrong type is an error, not ignored.

        Raises:
            MemoryAdapterError: an unknown key (with the closest known one), or a value of the wrong type.
        """
        if query is None:
            return cls()
        if isinstance(query, MemoryQuery):
            return query
        for key in query:
            if key not in _QUERY_KEYS:
                close = difflib.get_close_matches(str(key), _QUERY_KEYS, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else f" Known keys: {', '.join(_QUERY_KEYS)}."
                raise MemoryAdapterError(f"unknown memory query key {key!r}.{hint}")
        roles = query.get("roles")
        if roles is not None and (isinstance(roles, str) or not all(isinstance(r, str) for r in roles)):
            raise MemoryAdapterError(f"query 'roles' must be a list of role names, not {roles!r}")
        text = query.get("text")
        if text is not None and not isinstance(text, str):
            raise MemoryAdapterError(f"query 'text' must be a string, not {text!r}")
        return cls(
            roles=frozenset(roles) if roles is not None else None,
            step_min=_count_or_none(query, "step_min"),
            step_max=_count_or_none(query, "step_max"),
            max_items=_count_or_none(query, "max_items"),
            max_tokens=_count_or_none(query, "max_tokens"),
            text=text or None,
            top_k=_count_or_none(query, "top_k"),
        )

    def limit(self, default: int | None) -> int | None:
        """How many records to return at most: the smaller of `max_items` and `top_k`, else `default`."""
        given = [n for n in (self.max_items, self.top_k) if n is not None]
        return min(given) if given else default

    def matches(self, record: MemoryRecord) -> bool:
        """Whether `record` passes the role and step filters."""
        roles = self.roles
        if roles is not None and record.role not in roles and roles.isdisjoint(_QITOS_NAMES.get(record.role, ())):
            return False
        if self.step_max is not None and record.step_id > self.step_max:
            return False
        return self.step_min is None or record.step_id >= self.step_min

    def fit_tokens(self, records: list[MemoryRecord], *, newest_last: bool = True) -> list[MemoryRecord]:
        """`records` cut to `max_tokens`: the newest that fit (or, with `newest_last=False`, the first, best ranked)."""
        if self.max_tokens is None:
            return records
        ordered = reversed(records) if newest_last else iter(records)
        kept: list[MemoryRecord] = []
        total = 0
        for record in ordered:
            total += estimate_tokens(record.content)
            if total > self.max_tokens:
                break
            kept.append(record)
        return kept[::-1] if newest_last else kept


def estimate_tokens(content: Any) -> int:
    """QitOS' estimate of a text's tokens: a quarter of its characters, at least 1 (0 for an empty text)."""
    text = record_text(content)
    return max(1, len(text) // 4) if text else 0


def _count_or_none(query: Mapping[str, Any], key: str) -> int | None:
    value = query.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MemoryAdapterError(f"query {key!r} must be a non-negative integer, not {value!r}")
    return value


def format_records(records: Sequence[MemoryRecord], *, width: int = 120) -> str:
    """One line per record, `[step] role: content`, the content cut to `width` characters."""
    return "\n".join(f"[{r.step_id}] {r.role}: {_one_line(r.content, width)}" for r in records)


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def check_size(name: str, value: int, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise MemoryAdapterError(f"{name} must be an integer >= {minimum}, not {value!r}")
    return value


class Memory(ABC):
    """A QitOS memory adapter whose records are projected from the event stream.

    Subclasses store records (`_add`) and choose what to return (`retrieve`), what to drop
    (`evict`) and how to summarize. Adapters are not thread-safe: feed one from one thread (a
    stream delivers events to its subscribers one at a time).
    """

    def __init__(self) -> None:
        self._records: MutableSequence[MemoryRecord] = []
        """The records held, oldest first (an adapter bounded in RAM may hold a deque instead)."""
        self._steps = StepCounter()
        self._last_event_id: int | None = None
        self._attached: tuple[EventStream, str] | None = None

    # -- QitOS' interface ------------------------------------------------------------------

    def append(self, record: MemoryRecord) -> None:
        """Append one record: one from the log, after the records already appended, or one in QitOS' form.

        A record in QitOS' form (`event_id` None) is written to the log first, as an event of its own,
        in the stream this memory follows (or its own, see `stream`), and the record read back from
        that event is appended: a memory rebuilt from the log holds it too.

        Raises:
            DuplicateEventError: the record's event is not after the last one appended (its event is
                already in memory, or the record is out of log order).
            MemoryAdapterError: a record in QitOS' form has no role, a bad step, or metadata that is
                not JSON (nothing is written); a record from the log holds no text.
        """
        if record.event_id is None:
            self._append_to_log(record)
            return
        if not isinstance(record.content, str):
            raise MemoryAdapterError(f"the record of event {record.event_id} must hold text, not {type(record.content).__name__}")
        last = self._last_event_id
        if last is not None and record.event_id <= last:
            raise DuplicateEventError(record.event_id, len(self), f"is not after event {last}, the last one in memory")
        self._add(record)  # first: an adapter that fails to store it (an embedder's error) has not seen it
        self._last_event_id = record.event_id

    @abstractmethod
    def retrieve(
        self, query: Mapping[str, Any] | MemoryQuery | None = None, state: Any = None, observation: Any = None
    ) -> list[MemoryRecord]:
        """The records the query asks for, oldest first (best first when ranked by `text`).

        `state` and `observation` are QitOS' arguments; these adapters do not use them.

        Raises:
            MemoryAdapterError: the query has an unknown key or a value of the wrong type.
        """

    @abstractmethod
    def summarize(self, max_items: int = 5) -> str:
        """A short text of what this memory holds (at most `max_items` records' worth)."""

    @abstractmethod
    def evict(self) -> int:
        """Apply the retention rule now; returns how many records were dropped (from memory, never from the log)."""

    def reset(self, run_id: str | None = None) -> None:
        """Forget every record, as at the start of a new run; the log is untouched.

        Events already seen are not projected again (an attached adapter continues with the next
        event); build a new adapter with `from_events` to start over from the log.
        """
        self._clear()

    def _append_to_log(self, record: MemoryRecord) -> None:
        event = record_event(record)  # checked before anything is written
        stream = self.stream
        if stream is None:
            stream = EventStream()
            self.attach(stream)
        event_id = stream.add_event(event, EventSource.AGENT)
        # A subscriber's error is only logged by the stream: project it here too (a no-op once projected).
        self.append_event(stream.get_event(event_id))

    # -- the read model ----------------------------------------------------------------------

    @property
    def stream(self) -> EventStream | None:
        """The stream this memory follows (`attach`): where records given in QitOS' form are written.

        None until it follows one; appending a record in QitOS' form then makes it follow an in-memory
        stream of its own (so `from_events(memory.stream.get_events())` rebuilds it).
        """
        return self._attached[0] if self._attached is not None else None

    @property
    def last_event_id(self) -> int | None:
        """The id of the last event this memory has seen (None before the first)."""
        return self._last_event_id

    def append_event(self, event: Event) -> MemoryRecord | None:
        """Project one stored event: append its record and return it, or None for an event memory skips.

        Skipped: events the agent never sees and condensation bookkeeping (see `is_remembered`), and
        events at or before `last_event_id`, which are already in memory.

        Raises:
            MemoryAdapterError: the event has no id (it was never stored).
        """
        if event.id is None:
            raise MemoryAdapterError(f"memory is fed from the log; this {event.kind} event has no id (it was never stored)")
        if self._last_event_id is not None and event.id <= self._last_event_id:
            return None
        if not is_remembered(event):
            self._last_event_id = event.id
            return None
        record = self._steps.record_for(event)
        self.append(record)
        return record

    def extend(self, events: Iterable[Event]) -> int:
        """Project events in log order; returns how many records were appended."""
        return sum(self.append_event(event) is not None for event in events)

    @classmethod
    def from_events(cls, events: Iterable[Event], **options: Any) -> Self:
        """Build this adapter (with `options`) from a log's events: the rebuild of a lost or stale memory."""
        memory = cls(**options)
        memory.extend(events)
        return memory

    def attach(self, stream: EventStream) -> None:
        """Follow `stream`: project the events it holds that this memory has not seen, then every new one.

        Raises:
            MemoryAdapterError: this memory already follows a stream.
        """
        if self._attached is not None:
            raise MemoryAdapterError("this memory already follows a stream; detach() it first")
        name = f"memory-{type(self).__name__}-{next(_subscriber_names)}"
        # Subscribe first, then catch up: an event added meanwhile arrives twice and is skipped once.
        stream.subscribe(self.append_event, name)
        self._attached = (stream, name)
        start = 0 if self._last_event_id is None else self._last_event_id + 1
        self.extend(stream.get_events(start_id=start))

    def detach(self) -> None:
        """Stop following the stream (nothing happens if this memory follows none)."""
        if self._attached is not None:
            stream, name = self._attached
            self._attached = None
            stream.unsubscribe(name)

    @property
    def records(self) -> list[MemoryRecord]:
        """The records held now, oldest first (a copy)."""
        return list(self._records)

    def __len__(self) -> int:
        return len(self.records)

    def _add(self, record: MemoryRecord) -> None:
        """Store a record that `append` has checked (an adapter that derives more from it extends this)."""
        self._records.append(record)

    def _clear(self) -> None:
        """Drop every record (an adapter that derived more from them extends this)."""
        self._records.clear()


def select(records: Iterable[MemoryRecord], query: MemoryQuery, *, default_limit: int | None) -> list[MemoryRecord]:
    """The most recent records that pass the query's filters, at most its limit and `max_tokens` (shared by the adapters)."""
    needle = query.text.casefold() if query.text else None
    chosen = [r for r in records if query.matches(r) and (needle is None or needle in r.content.casefold())]
    limit = query.limit(default_limit)
    if limit is not None:
        chosen = chosen[max(0, len(chosen) - limit) :] if limit else []
    return query.fit_tokens(chosen)
