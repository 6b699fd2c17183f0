"""What the model may see of the history: `View`, `View.from_events` and the incremental `ViewBuilder`.

The rules are OpenHands V0's:

- every `CondensationAction` forgets its ids (a list, or an inclusive id range), and the forgetting
  adds up over the whole stream (a range also forgets events that arrive later with an id inside
  it); the condensation action itself and every `CondensationRequestAction` are forgotten too;
- the summary of the most recent condensation that has one is inserted as an
  `AgentCondensationObservation` at `summary_offset` of the kept events (appended if the offset is
  past the end);
- `unhandled_condensation_request` is true when a request comes after the last condensation.

A condensation with `summary_persists=True` (imported from an OpenHands SDK log, or written by a
condenser that leaves several summaries in place) follows the SDK instead: its summary is inserted
when the condensation is applied and stays until a later condensation lists the condensation's id
among the forgotten, so several summaries can stand. Which rule applies is recorded on each
condensation in the log (the flag, or its absence), never inferred.

`ViewBuilder` keeps the view up to date one event at a time: an append costs O(1) unless it is a
condensation, which costs in proportion to the current view, never to the whole history.

A range is never expanded into its ids: it is tested by its bounds against the ids of the events
at hand, so time and memory follow the number of events, whatever the width of a range (one
350-byte line may name 10**12 ids). The same holds for `summary_offset` (an offset past the end
appends) and for huge ids.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Container, Iterable, Iterator, Sequence
from itertools import compress, islice
from itertools import count as _counter
from operator import attrgetter, not_
from typing import NamedTuple, overload

from openhands_memory.events import (
    AgentCondensationObservation,
    CondensationAction,
    CondensationRequestAction,
    Event,
)
from openhands_memory.events._loaded import LoadedEvents
from openhands_memory.events.actions import IdRange
from openhands_memory.events.scopes import Scope, events_in_scope

__all__ = ["View", "ViewBuilder"]

_PLAIN, _CONDENSATION, _REQUEST = 0, 1, 2

_new_lineage = _counter().__next__
"""A lineage token never given before in this process (see `View.lineage`)."""


class View(Sequence[Event]):
    """The events the model may see, in order, with summaries in place of what was forgotten.

    A view is an immutable snapshot: later appends to the stream or the builder never change it.
    Implementations of condensers must treat it as read-only.

    Its events are the kept events (`kept_count` of them, read with `kept_slice` or `iter_kept`)
    with the standing summary, if any, inserted at its index (`standing_summary`). Views that share
    a `lineage` show prefixes of one append-only sequence of kept events, so a scanner that
    remembers the lineage and how many kept events it has looked at needs to look only at the new
    ones at the next step (see `lineage`).
    """

    __slots__ = (
        "_kept",
        "_length",
        "_lineage",
        "_summary",
        "_events",
        "_forgotten_log",
        "_forgotten",
        "unhandled_condensation_request",
        "condensation_focus",
    )

    unhandled_condensation_request: bool
    """A `CondensationRequestAction` came after the last `CondensationAction`."""
    condensation_focus: str | None
    """The focus of the newest request after the last condensation that has one (what its summary must keep), or None."""

    def __init__(
        self,
        events: Iterable[Event] = (),
        *,
        unhandled_condensation_request: bool = False,
        forgotten_event_ids: Iterable[int] = frozenset(),
        condensation_focus: str | None = None,
    ) -> None:
        kept = list(events)
        self._kept = kept
        self._length = len(kept)
        self._lineage = _new_lineage()
        self._summary: tuple[int, AgentCondensationObservation] | None = None
        self._events: list[Event] | None = kept
        self._forgotten: frozenset[int] | None = frozenset(forgotten_event_ids)
        self._forgotten_log: tuple[list[frozenset[int]], int] = ([], 0)
        self.unhandled_condensation_request = unhandled_condensation_request
        self.condensation_focus = condensation_focus if unhandled_condensation_request else None

    @classmethod
    def _snapshot(
        cls,
        kept: list[Event],
        length: int,
        summary: tuple[int, AgentCondensationObservation] | None,
        unhandled: bool,
        forgotten_log: tuple[list[frozenset[int]], int],
        lineage: int | None = None,
        focus: str | None = None,
    ) -> View:
        """A view of `kept[:length]` (plus `summary`) that shares the builder's lists, in O(1).

        `forgotten_log` is the builder's list of what each condensation forgot and how much of it
        this view has seen; the union is taken only if someone asks. `lineage` is the builder's
        token for `kept` (None: a new one, for a list no other view will grow).
        """
        view = cls.__new__(cls)
        view._kept = kept
        view._length = length
        view._lineage = _new_lineage() if lineage is None else lineage
        view._summary = summary
        view._events = None
        view._forgotten = None
        view._forgotten_log = forgotten_log
        view.unhandled_condensation_request = unhandled
        view.condensation_focus = focus if unhandled else None
        return view

    @property
    def forgotten_event_ids(self) -> frozenset[int]:
        """Every id the condensations (and condensation requests) in the stream forgot.

        That is the ids they list, their own ids, and of each id range only the ids of events in
        the stream (OpenHands adds every id of the range, but most name no event and a range may
        hold 10**12 of them). Built on first use, then kept; its size is bounded by the stream.
        """
        if self._forgotten is None:
            parts, count = self._forgotten_log
            self._forgotten = frozenset().union(*parts[:count])
        return self._forgotten

    @staticmethod
    def from_events(events: Iterable[Event], *, scope: Scope | None = None) -> View:
        """The view of a stream of events, condensations applied (see the module docstring).

        With `scope`, the view of what that agent sees of delegations (`events_in_scope`).
        """
        events = events if isinstance(events, list) else list(events)
        if scope is not None:
            events = events_in_scope(events, scope)
        view = _from_events_in_two_passes(events)
        if view is None:
            builder = ViewBuilder()
            builder.extend(events)
            view = builder.view
        return view

    @property
    def standing_summary(self) -> tuple[int, AgentCondensationObservation] | None:
        """The OpenHands V0 summary and its index in this view, or None.

        It is kept apart from the other events: only a newer summary replaces it, and it moves with
        `summary_offset` when later condensations forget events before it. (A persisting SDK
        summary is an ordinary event of the view instead.)
        """
        if self._summary is None:
            return None
        offset, summary = self._summary
        return min(offset, self._length), summary

    @property
    def lineage(self) -> int:
        """An opaque token: views with the same lineage show prefixes of one sequence of kept events.

        For two views `a` and `b` of one lineage with `a.kept_count <= b.kept_count`, the first
        `a.kept_count` kept events of `b` are those of `a` (the same objects). The views of one
        `ViewBuilder` share a lineage from one condensation to the next; a condensation, and every
        other way of making a view (`View(...)`, `from_events`, `apply`, `with_events`), starts a
        new one. A lineage is never reused within a process, so a scanner may cache what it learnt
        from the kept events under `(lineage, kept_count)` and, at the next view of that lineage,
        look only at `kept_slice(scanned, kept_count)`; any other lineage means starting over.
        Compare lineages with `==`; nothing else about the value is promised.
        """
        return self._lineage

    @property
    def kept_count(self) -> int:
        """How many kept events the view has: its length without the standing summary."""
        return self._length

    def kept_slice(self, start: int = 0, stop: int | None = None) -> list[Event]:
        """The kept events `start` to `stop` (excluded) as a new list, like `kept_events()[start:stop]`.

        It copies only that slice, so reading the new events of a long view costs what they do.
        Bounds follow slicing rules (negative ones count from `kept_count`; out of range clips).
        """
        length = self._length
        if start < 0 or stop is None or stop < 0 or stop > length:
            start, stop, _ = slice(start, stop).indices(length)
        return self._kept[start:stop]

    def iter_kept(self, start: int = 0, stop: int | None = None) -> Iterator[Event]:
        """An iterator over the kept events `start` to `stop` (excluded), in O(stop - start).

        Bounds as in `kept_slice`. A prefix (`start` 0) is read in place, without a copy (for a
        long one, cheaper than `kept_slice`); any other range is one slice copy.
        """
        length = self._length
        if start < 0 or stop is None or stop < 0 or stop > length:
            start, stop, _ = slice(start, stop).indices(length)
        # islice would step over the first `start` events one by one: a slice skips them for free.
        return islice(self._kept, stop) if start == 0 else iter(self._kept[start:stop])

    def kept_events(self) -> list[Event]:
        """The events without the standing summary, as a new list."""
        return self._kept[: self._length]

    def with_events(self, kept: list[Event], standing_summary: tuple[int, AgentCondensationObservation] | None) -> View:
        """A view of other events (usually derived from these) with this view's flags and forgotten ids.

        `kept` excludes the standing summary, which is given apart as `(index, observation)` (or
        None to show none). What a view-level strategy (masking, `recent`) returns: nothing in the
        stream changes, so nothing more is forgotten.
        """
        view = View._snapshot(
            kept, len(kept), standing_summary, self.unhandled_condensation_request, self._forgotten_log, focus=self.condensation_focus
        )
        view._forgotten = self._forgotten
        return view

    def apply(self, condensation: CondensationAction) -> View:
        """The view that appending `condensation` to the stream would give, computed from this view alone.

        Equal to `View.from_events(history + [condensation])` when this view is
        `View.from_events(history)`, except that ids forgotten before they arrive are not
        remembered for later appends (a view holds no future events).
        """
        kept, summary, dropped = _condense(self._kept[: self._length], self._summary, condensation)
        parts, count = self._forgotten_log
        if self._forgotten is not None:
            parts, count = [self._forgotten], 1
        return View._snapshot(kept, len(kept), summary, False, ([*parts[:count], frozenset(dropped)], count + 1))

    @property
    def events(self) -> list[Event]:
        """The events in order, as a list (built once per view; do not change it)."""
        if self._events is None:
            events = self._kept[: self._length]
            if self._summary is not None:
                offset, summary = self._summary
                events.insert(offset, summary)
            self._events = events
        return self._events

    def __len__(self) -> int:
        return self._length + (self._summary is not None)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            return self.events[index]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("view index out of range")
        if self._summary is None:
            return self._kept[index]
        offset, summary = self._summary
        offset = min(offset, self._length)  # an offset past the end appends
        if index < offset:
            return self._kept[index]
        return summary if index == offset else self._kept[index - 1]

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, View):
            return NotImplemented
        return (
            self.unhandled_condensation_request == other.unhandled_condensation_request
            and self.condensation_focus == other.condensation_focus
            and self.forgotten_event_ids == other.forgotten_event_ids
            and self.events == other.events
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"View({len(self)} events, forgotten={len(self.forgotten_event_ids)}, "
            f"unhandled_condensation_request={self.unhandled_condensation_request})"
        )


class ViewBuilder:
    """Keeps `View.from_events(all appended events)` up to date, one event at a time.

    `append` is O(1) for an ordinary event; a condensation costs O(len(view)). `view` is O(1): the
    snapshot shares the builder's list and reads only the prefix it was taken at.
    """

    __slots__ = (
        "_kept",
        "_lineage",
        "_summary",
        "_forgotten",
        "_forgotten_log",
        "_starts",
        "_ends",
        "_top",
        "_unhandled",
        "_focus",
        "_view",
        "_count",
        "_kinds",
    )

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self._kept: list[Event] = []
        # Views share `_kept` and show a prefix of it: their common lineage, until `_apply` replaces the list.
        self._lineage = _new_lineage()
        self._summary: tuple[int, AgentCondensationObservation] | None = None
        # Ids forgotten so far: listed ones, and of each range only the ids of appended events.
        self._forgotten: set[int] = set()
        # What each condensation (or request) added to `_forgotten`: views share this list and
        # union their prefix only when asked, so a condensation never copies the whole set.
        self._forgotten_log: list[frozenset[int]] = []
        # The ranges seen so far, merged, sorted and disjoint: a later event with an id inside one
        # is forgotten when it arrives. `_top` is the largest end, so the usual new event (an id
        # above every range) costs one comparison.
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._top: float = float("-inf")
        self._unhandled = False
        self._focus: str | None = None
        self._view: View | None = None
        self._count = 0
        self._kinds: dict[type, int] = {}
        state = _in_two_passes(events) if isinstance(events, list) else None
        if state is None:
            self.extend(events)
            return
        # The state `extend` would reach, computed in two passes (opening a long log: condensing
        # step by step re-reads the kept events at every condensation).
        self._kept, self._summary, self._unhandled, self._focus = state.kept, state.summary, state.unhandled, state.focus
        self._forgotten = state.forgotten
        self._forgotten_log = [frozenset(state.forgotten)] if state.forgotten else []
        self._starts = [start for start, _ in state.ranges]
        self._ends = [end for _, end in state.ranges]
        self._top = self._ends[-1] if self._ends else float("-inf")
        self._count = len(events)

    def __len__(self) -> int:
        """How many events were appended (condensations and forgotten ones included)."""
        return self._count

    @property
    def view(self) -> View:
        """The current view."""
        view = self._view
        if view is None:
            view = View._snapshot(
                self._kept,
                len(self._kept),
                self._summary,
                self._unhandled,
                (self._forgotten_log, len(self._forgotten_log)),
                self._lineage,
                self._focus,
            )
            self._view = view
        return view

    def append(self, event: Event) -> None:
        """Add the next event of the stream."""
        self._count += 1
        self._view = None
        kind = self._kinds.get(type(event))
        if kind is None:
            kind = self._classify(type(event))
        if kind == _PLAIN:
            event_id = event.id
            if event_id not in self._forgotten:
                if event_id is not None and event_id <= self._top and self._in_ranges(event_id):
                    self._forget({event_id})
                else:
                    self._kept.append(event)
        elif kind == _CONDENSATION:
            assert isinstance(event, CondensationAction)
            self._apply(event)
        else:
            self._unhandled = True
            focus = getattr(event, "focus", None)
            if focus:
                self._focus = focus
            if event.id is not None:
                self._forget({event.id})

    def extend(self, events: Iterable[Event]) -> None:
        """Add several events in order (the same as appending each)."""
        record = events.record() if type(events) is LoadedEvents else None
        if record is not None:
            # A loaded list knows each event's class and id: only the events kept are touched.
            self._extend(zip(events, record.types, record.ids))
        else:
            self._extend((event, type(event), event.id) for event in events)

    def _extend(self, items: Iterator[tuple[Event, type, int | None]]) -> None:
        kinds = self._kinds
        while True:
            # The common case, inlined: a kept event with a new id, above every range. Anything
            # else goes through `append`, and the state it may change is read again after it.
            keep, forgotten, top = self._kept.append, self._forgotten, self._top
            added = 0
            other = None
            for item in items:
                event, cls, event_id = item
                if kinds.get(cls) == _PLAIN and event_id not in forgotten and (event_id is None or event_id > top):
                    keep(event)
                    added += 1
                else:
                    other = event
                    break
            if added:
                self._count += added
                self._view = None
            if other is None:
                return
            self.append(other)

    def _classify(self, cls: type) -> int:
        if issubclass(cls, CondensationAction):
            kind = _CONDENSATION
        elif issubclass(cls, CondensationRequestAction):
            kind = _REQUEST
        else:
            kind = _PLAIN
        self._kinds[cls] = kind
        return kind

    def _forget(self, ids: set[int]) -> None:
        new = ids - self._forgotten
        if new:
            self._forgotten |= new
            self._forgotten_log.append(frozenset(new))

    def _apply(self, condensation: CondensationAction) -> None:
        self._unhandled = False
        self._focus = None
        # A new list, never an edit in place: earlier views share the old one.
        self._kept, self._summary, dropped = _condense(self._kept, self._summary, condensation)
        self._lineage = _new_lineage()
        self._forget(dropped)
        forgotten = condensation.forgotten
        if isinstance(forgotten, IdRange) and forgotten.width:
            self._add_range(forgotten.start, forgotten.end)

    def _add_range(self, start: int, end: int) -> None:
        """Merge `start..end` into the sorted, disjoint ranges (touching ranges join)."""
        starts, ends = self._starts, self._ends
        first = bisect_left(ends, start - 1)  # the first range that ends at or after start - 1
        stop = bisect_right(starts, end + 1)  # past the last range that starts at or before end + 1
        if first < stop:
            start = min(start, starts[first])
            end = max(end, ends[stop - 1])
        starts[first:stop] = [start]
        ends[first:stop] = [end]
        self._top = ends[-1]

    def _in_ranges(self, event_id: int) -> bool:
        index = bisect_right(self._starts, event_id) - 1
        return index >= 0 and event_id <= self._ends[index]


_Summary = tuple[int, AgentCondensationObservation]
"""The standing OpenHands V0 summary: (its `summary_offset`, the observation)."""


def _condense(
    kept: Sequence[Event], summary: _Summary | None, condensation: CondensationAction
) -> tuple[list[Event], _Summary | None, set[int]]:
    """Apply one condensation: the new kept events, the new standing summary, and the ids it forgets.

    The one place the condensation rules live (the builder and `View.apply` both call it). `kept`
    is not changed. A range is tested by its bounds: `dropped` holds the listed ids, or of a
    range only the ids of kept events, so the cost is O(len(kept)) whatever its width.
    """
    forgotten = condensation.forgotten
    cid = condensation.id
    if isinstance(forgotten, IdRange):
        ids = list(map(_get_id, kept))
        if _is_sorted(ids):
            # The usual case: the range is one slice of the kept events, found by bisection.
            low, high = bisect_left(ids, forgotten.start), bisect_right(ids, forgotten.end)  # type: ignore[arg-type]
            dropped: set[int] = set(ids[low:high])  # type: ignore[arg-type]
            new_kept = [*kept[:low], *kept[high:]]
            if cid is not None:
                dropped.add(cid)
                at = bisect_left(ids, cid)  # type: ignore[arg-type]
                if at < len(ids) and ids[at] == cid:  # an event with the condensation's id (a broken log)
                    new_kept = [e for e in new_kept if e.id != cid]
            return new_kept, _with_summary(new_kept, summary, condensation), dropped
        dropped = {i for i in ids if i in forgotten}  # type: ignore[misc]
        listed: Container[int | None] = forgotten
    else:
        listed = frozenset(forgotten)
        dropped = set(listed)
    if cid is not None:
        dropped.add(cid)
    new_kept = [e for e in kept if e.id not in dropped and not (e.id is None and _is_summary(e) and e.cause in listed)]
    return new_kept, _with_summary(new_kept, summary, condensation), dropped


def _with_summary(new_kept: list[Event], summary: _Summary | None, condensation: CondensationAction) -> _Summary | None:
    """The standing summary after `condensation`; a persisting summary is inserted into `new_kept` instead."""
    if condensation.summary is not None and condensation.summary_offset is not None:
        new_summary = AgentCondensationObservation(content=condensation.summary, cause=condensation.id)
        if condensation.summary_persists:
            new_kept.insert(condensation.summary_offset, new_summary)
        else:
            summary = (condensation.summary_offset, new_summary)
    return summary


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The inclusive ranges merged into sorted, disjoint ones."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1] + 1:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _is_sorted(ids: list[int | None]) -> bool:
    """The ids are in order and none is None (as a stream's always are)."""
    try:
        return ids == sorted(ids)  # type: ignore[type-var]
    except TypeError:  # None among ints
        return False


def _is_summary(event: Event) -> bool:
    return type(event) is AgentCondensationObservation


class _TwoPasses(NamedTuple):
    """What the events amount to: the view's parts, and the ranges a builder goes on forgetting."""

    kept: list[Event]
    summary: tuple[int, AgentCondensationObservation] | None
    unhandled: bool
    forgotten: set[int]
    ranges: list[tuple[int, int]]
    """The id ranges of the condensations, merged, sorted and disjoint."""
    focus: str | None = None
    """The newest focus of the requests after the last condensation."""


def _from_events_in_two_passes(events: list[Event]) -> View | None:
    """`View.from_events` for the common case, in two passes; None when the builder must do it."""
    state = _in_two_passes(events)
    if state is None:
        return None
    # `forgotten` is ours alone and never changed again: the view may hold it without a copy.
    return View._snapshot(state.kept, len(state.kept), state.summary, state.unhandled, ([state.forgotten], 1), focus=state.focus)  # type: ignore[list-item]


def _in_two_passes(events: list[Event]) -> _TwoPasses | None:
    """What `events` amount to, for the common case, in two passes; None when the builder must do it.

    Pass one finds the condensations and requests, pass two keeps what they did not forget; both
    run as C-level iterator chains (this is the hot path of rebuilding a long history). It gives up
    (None) on what only the step-by-step rules describe: a persisting (SDK) summary, or a
    condensation or request with no id; and on id ranges when the ids are not sorted.
    """
    # A list as `load_events` gave it knows its events' classes and ids without reading the events.
    # It picks events by position, so that only the events it takes are touched (in a cold cache,
    # `compress` over the events themselves cost a memory miss per event).
    record = events.record() if type(events) is LoadedEvents else None
    if record is None:
        special = list(compress(events, map(_condensation_types().__contains__, map(type, events))))
    else:
        positions = compress(range(len(events)), map(_condensation_types().__contains__, record.types))
        special = list(map(events.__getitem__, positions))
    if not special:
        return _TwoPasses(list(events), None, False, set(), [])
    forgotten: set[int] = set()
    ranges: list[tuple[int, int]] = []
    newest_summary: CondensationAction | None = None
    for event in special:
        if event.id is None:
            return None
        forgotten.add(event.id)
        if isinstance(event, CondensationAction):
            if event.summary_persists:
                return None
            listed = event.forgotten
            if isinstance(listed, IdRange):
                if listed.width:
                    ranges.append((listed.start, listed.end))
            else:
                forgotten.update(listed)
            if event.summary is not None and event.summary_offset is not None:
                newest_summary = event
    ids: Iterable[int | None]
    ranges = _merged(ranges)
    if ranges:
        # Only the ids of these events count, found by bisection: never one per id of the range.
        if record is None:
            ids = list(map(_get_id, events))
            if not _is_sorted(ids):
                return None  # the builder handles ranges over unsorted ids
        elif record.ascending:
            ids = record.ids.tolist()
        else:
            return None
        for start, end in ranges:
            forgotten.update(ids[bisect_left(ids, start) : bisect_right(ids, end)])  # type: ignore[arg-type]
    else:
        ids = map(_get_id, events) if record is None else record.ids
    summary: tuple[int, AgentCondensationObservation] | None = None
    if newest_summary is not None:
        assert newest_summary.summary is not None and newest_summary.summary_offset is not None
        summary = (
            newest_summary.summary_offset,
            AgentCondensationObservation(content=newest_summary.summary, cause=newest_summary.id),
        )
    if record is None:
        kept = list(compress(events, map(not_, map(forgotten.__contains__, ids))))
    else:
        kept = list(map(events.__getitem__, compress(range(len(events)), map(not_, map(forgotten.__contains__, ids)))))
    unhandled = isinstance(special[-1], CondensationRequestAction)
    return _TwoPasses(kept, summary, unhandled, forgotten, ranges, _newest_focus(special) if unhandled else None)


def _newest_focus(special: list[Event]) -> str | None:
    """The focus of the newest request after the last condensation that has one."""
    for event in reversed(special):
        if isinstance(event, CondensationAction):
            return None
        focus = getattr(event, "focus", None)
        if focus:
            return focus
    return None


_get_id = attrgetter("id")


def _condensation_types() -> frozenset[type]:
    """CondensationAction, CondensationRequestAction and every subclass of them defined so far."""
    found: set[type] = set()
    pending: list[type] = [CondensationAction, CondensationRequestAction]
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.add(cls)
            pending.extend(cls.__subclasses__())
    return frozenset(found)
