"""View surgery for condensers: drop, replace or slice a view's events without rebuilding it.

A `View` keeps OpenHands V0's standing summary apart from its other events (it moves with
`summary_offset` when later condensations forget events, and only a newer summary replaces it),
while a persisting summary (OpenHands SDK semantics) is an ordinary kept event that a condensation
removes by listing its `cause`. Views a condenser derives keep that distinction through the public
`View.standing_summary`, `View.kept_events`, `View.with_events` and `View.apply`. The incremental
scanners here cache what they found under `View.lineage` (views from one builder share it and show
prefixes of one sequence of kept events until the next condensation) and read only the kept events
that are new (`View.kept_count`, `View.kept_slice`), so a step costs what it added.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection

from openhands_memory.events import AgentCondensationObservation, CondensationAction, Event
from openhands_memory.view import View

__all__ = [
    "apply_condensation",
    "condensed_events",
    "is_summary",
    "map_events",
    "FirstIndexFinder",
    "IndexCollector",
    "PrefixMapper",
    "derive_view",
    "replace_at",
    "replace_before",
    "slice_events",
    "standing_summary_index",
    "without_events",
]


def is_summary(event: Event) -> bool:
    """True for a summary a condensation put in the view (an `AgentCondensationObservation` without id)."""
    return event.id is None and type(event) is AgentCondensationObservation


def _parts(view: View) -> tuple[list[Event], tuple[int, AgentCondensationObservation] | None]:
    """The view's kept events (standing summary excluded) and its standing summary slot."""
    return view.kept_events(), view.standing_summary


def _derive(
    view: View,
    kept: list[Event],
    summary: tuple[int, AgentCondensationObservation] | None,
) -> View:
    """A view showing `kept` and `summary` instead of `view`'s own events (flags and forgotten ids shared)."""
    return view.with_events(kept, summary)


def standing_summary_index(view: View) -> int | None:
    """The index in `view` of the OpenHands V0 summary, the one only a newer summary replaces; None if none."""
    summary = view.standing_summary
    return None if summary is None else summary[0]


def slice_events(view: View, start: int, stop: int) -> list[Event]:
    """`view[start:stop]` (0 <= start <= stop <= len(view)) without building the whole event list."""
    summary = view.standing_summary
    if summary is None:
        return view.kept_slice(start, stop)
    at = summary[0]
    if stop <= at:
        return view.kept_slice(start, stop)
    if start > at:
        return view.kept_slice(start - 1, stop - 1)
    return [*view.kept_slice(start, at), summary[1], *view.kept_slice(at, stop - 1)]


class FirstIndexFinder:
    """Finds the first event of a view that passes a test, scanning each stored event list once.

    Views of one lineage (`View.lineage`: one builder between two condensations) share their kept
    events, so step after step only the new events are looked at; a view of another lineage is
    scanned from its start.
    """

    __slots__ = ("_test", "_lineage", "_scanned", "_found")

    def __init__(self, test: Callable[[Event], bool]) -> None:
        self._test = test
        self._lineage: int | None = None
        self._scanned = 0
        self._found: int | None = None

    def find(self, view: View) -> int | None:
        """The view index of the first event that passes the test, or None."""
        lineage, length = view.lineage, view.kept_count
        if self._lineage != lineage or (self._found is None and self._scanned > length):
            self._lineage, self._scanned, self._found = lineage, 0, None
        if self._found is None:
            test, start = self._test, self._scanned
            # Lazily: the first match often comes early in a view of another lineage.
            for index, event in enumerate(view.iter_kept(start, length), start):
                if test(event):
                    self._found = index
                    break
            else:
                self._scanned = length
        found = self._found
        if found is None or found >= length:
            return None
        at = standing_summary_index(view)
        return found if at is None or found < at else found + 1


class IndexCollector:
    """Collects the view indexes of the events that pass a test, scanning each stored event list once.

    As `FirstIndexFinder`, step after step on views of one lineage only new events are tested.
    """

    __slots__ = ("_test", "_lineage", "_scanned", "_found")

    def __init__(self, test: Callable[[Event], bool]) -> None:
        self._test = test
        self._lineage: int | None = None
        self._scanned = 0
        self._found: list[int] = []

    def indexes(self, view: View) -> list[int]:
        """The view indexes of the passing events, in order (a new list)."""
        lineage, length = view.lineage, view.kept_count
        if self._lineage != lineage or self._scanned > length:
            self._lineage, self._scanned, self._found = lineage, 0, []
        test, found, start = self._test, self._found, self._scanned
        if start < length:
            for index, event in enumerate(view.kept_slice(start, length), start):
                if test(event):
                    found.append(index)
            self._scanned = length
        at = standing_summary_index(view)
        stop = bisect_left(found, length)
        if at is None:
            return found[:stop]
        split = bisect_left(found, at, 0, stop)
        return found[:split] + [i + 1 for i in found[split:stop]]


class PrefixMapper:
    """Replaces every event before an index by `replace(event)`, reusing the last result's prefix.

    `replace` must give the same answer for the same event every time (memoize it). Step after
    step on views of one lineage, only the events that newly fell before the index are replaced;
    the rest costs list copies, done in C.
    """

    __slots__ = ("_lineage", "_mapped")

    def __init__(self) -> None:
        self._lineage: int | None = None
        self._mapped: list[Event] = []

    def map_before(self, view: View, end: int, replace: Callable[[Event], Event]) -> View:
        """The view with the events at view indexes below `end` replaced (the standing summary untouched)."""
        if end <= 0:
            return view
        summary = view.standing_summary
        at = None if summary is None else summary[0]
        length = view.kept_count
        kept_end = min(end if at is None or end <= at else end - 1, length)
        lineage = view.lineage
        mapped = self._mapped
        if self._lineage == lineage and len(mapped) <= kept_end:
            mapped = mapped + list(map(replace, view.kept_slice(len(mapped), kept_end)))
        else:
            mapped = list(map(replace, view.iter_kept(0, kept_end)))
        self._lineage, self._mapped = lineage, mapped
        return _derive(view, mapped + view.kept_slice(kept_end, length), summary)


def derive_view(view: View, events: list[Event], summary_index: int | None) -> View:
    """A view of `events` (taken from `view`, in order) that keeps `view`'s request flag and forgotten ids.

    `summary_index` is where `view`'s standing summary sits in `events` (None when it is not there:
    the summary is then hidden).
    """
    summary = view.standing_summary
    if summary_index is None or summary is None:
        return _derive(view, events, None)
    assert events[summary_index] is summary[1]
    return _derive(view, events[:summary_index] + events[summary_index + 1 :], (summary_index, summary[1]))


def condensed_events(view: View, action: CondensationAction) -> list[Event]:
    """The events of the view after `action` (see `View.apply`)."""
    return view.apply(action).events


def apply_condensation(view: View, action: CondensationAction) -> View:
    """The view that appending `action` to the stream would give, computed from `view` alone (`View.apply`)."""
    return view.apply(action)


def without_events(view: View, drop: Collection[int]) -> View:
    """The view without the events at the given indexes (the standing summary moves with its offset).

    Nothing is marked forgotten: this is what a view-level strategy (`recent`) shows, not a
    condensation in the log.
    """
    if not drop:
        return view
    kept, summary = _parts(view)
    summary_at = standing_summary_index(view)
    drop_kept: set[int] = set()
    offset_shift = 0
    for index in drop:
        if summary_at is not None and index == summary_at:
            summary = None  # a view-level strategy may hide the summary too
            continue
        kept_index = index if summary_at is None or index < summary_at else index - 1
        drop_kept.add(kept_index)
        if summary_at is not None and index < summary_at:
            offset_shift += 1
    new_kept = [e for i, e in enumerate(kept) if i not in drop_kept]
    if summary is not None:
        summary = (max(0, min(summary[0], len(kept)) - offset_shift), summary[1])
    return _derive(view, new_kept, summary)


def replace_at(view: View, indexes: Collection[int], replace: Callable[[Event], Event]) -> View:
    """The view with the events at the given view indexes replaced by `replace(event)`.

    The standing summary is never passed to `replace`. Costs one copy of the event list (in C)
    plus one call per index.
    """
    if not indexes:
        return view
    summary = view.standing_summary
    summary_at = None if summary is None else summary[0]
    new_kept = view.kept_events()
    for index in indexes:
        if summary_at is not None and index >= summary_at:
            if index == summary_at:
                continue
            index -= 1
        new_kept[index] = replace(new_kept[index])
    return _derive(view, new_kept, summary)


def replace_before(view: View, end: int, replace: Callable[[Event], Event]) -> View:
    """The view with every event before view index `end` replaced by `replace(event)` (summary untouched)."""
    if end <= 0:
        return view
    summary = view.standing_summary
    summary_at = None if summary is None else summary[0]
    kept_end = end if summary_at is None or end <= summary_at else end - 1
    length = view.kept_count
    kept_end = min(kept_end, length)
    new_kept = list(map(replace, view.iter_kept(0, kept_end)))
    new_kept += view.kept_slice(kept_end, length)
    return _derive(view, new_kept, summary)


def map_events(view: View, replace: Callable[[int, Event], Event]) -> View:
    """The view with each event replaced by `replace(index, event)` (index in the view; the standing summary untouched).

    `replace` returns the event itself to keep it; a view with nothing replaced is returned as is.
    """
    kept, summary = _parts(view)
    summary_at = standing_summary_index(view)
    changed = False
    new_kept: list[Event] = []
    append = new_kept.append
    for index, event in enumerate(kept):
        new = replace(index if summary_at is None or index < summary_at else index + 1, event)
        if new is not event:
            changed = True
        append(new)
    if not changed:
        return view
    return _derive(view, new_kept, summary)
