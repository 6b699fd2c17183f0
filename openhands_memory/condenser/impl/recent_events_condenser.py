"""`recent`: show the head and the most recent events only."""

from __future__ import annotations

from itertools import compress
from operator import is_not
from typing import Literal

from pydantic import BaseModel

from openhands_memory.condenser.kit import (
    FROM_CONFIG,
    CONFIG,
    FirstIndexFinder,
    analyze,
    derive_view,
    is_summary,
    sized,
    slice_events,
    standing_summary_index,
    without_events,
)
from openhands_memory.condenser.base import Condensation, Condenser
from openhands_memory.condenser.forgetting import plan_forgetting
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.events import Action, Event, EventSource, MessageAction, Observation, SystemMessageAction
from openhands_memory.view import View

__all__ = ["RecentEventsCondenser", "RecentEventsCondenserConfig"]

_SLACK = 32
"""Events looked at beyond the head and the newest `max_events`, to find safe cuts."""


class RecentEventsCondenserConfig(BaseModel):
    """`recent`: show the first events and the most recent ones."""

    model_config = CONFIG
    type: Literal["recent"] = "recent"
    """The condenser type."""
    keep_first: int = sized("first", default=1, ge=0)
    """The number of initial events always shown (the best guess is that the first is the task)."""
    max_events: int = sized("events", default=100, ge=1)
    """The most events shown."""
    max_tokens: int | None = sized("tokens", default=None, ge=1)
    """The most prompt tokens shown (None: no token budget)."""


class RecentEventsCondenser(Condenser):
    """Shows the first `keep_first` events and the newest ones, at most `max_events` (and
    `max_tokens`) in all; the log itself is not condensed.

    When the agent asks for a condensation, it condenses the log for real: the condensation
    forgets what the view would have hidden (at least the oldest forgettable unit).

    Fixes over OpenHands: no event is shown twice when the view is shorter than `max_events` or
    `max_events <= keep_first`; the cut never splits a tool call from its result; the system
    prompt and the first user message stay; the standing summary stays.

    Cost: a long view is trimmed from its head and its newest `max_events + 32` events, with an
    index of which events are tied together (a call and its result, parallel calls) kept up to date
    as the view grows. On the views of one builder a step costs O(max_events + new events), not
    O(history); a view that shares no list with the previous one is scanned once. What it shows is
    exactly what the full plan shows; when that depends on the events in between (a unit of the
    head reaching past its first `keep_first + 32` events, the standing summary past the head),
    the full plan is made. Events without id (built in code, not yet in a stream) are hidden like
    any other, as OpenHands does; only a request's condensation, which names ids, cannot forget them.
    """

    config_cls = RecentEventsCondenserConfig

    def __init__(
        self,
        keep_first: int = FROM_CONFIG,
        max_events: int = FROM_CONFIG,
        *,
        max_tokens: int | None = FROM_CONFIG,
        token_counter: TokenCounter | None = None,
    ) -> None:
        """Set the budget.

        Args:
            keep_first: the first events of the view, always shown.
            max_events: the most events shown (the kept head and pinned events included; more
                only when the head itself is larger, or the newest unit is).
            max_tokens: the most tokens shown, by `token_counter`.
            token_counter: counts tokens (default: `ApproximateTokenCounter`).

        Raises:
            ValueError: `keep_first` < 0, `max_events` < 1 or `max_tokens` < 1.
        """
        super().__init__(token_counter=token_counter)
        if keep_first < 0:
            raise ValueError(f"keep_first ({keep_first}) cannot be negative")
        if max_events < 1:
            raise ValueError(f"max_events ({max_events}) must be at least 1")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens ({max_tokens}) must be at least 1")
        self.keep_first = keep_first
        self.max_events = max_events
        self.max_tokens = max_tokens
        self._system = FirstIndexFinder(lambda e: isinstance(e, SystemMessageAction))
        self._first_user = FirstIndexFinder(lambda e: isinstance(e, MessageAction) and e.source == EventSource.USER)
        self._links = _Links()

    @property
    def handles_requests(self) -> bool:
        return True

    def condense(self, view: View) -> View | Condensation:
        request = view.unhandled_condensation_request
        if request:
            return self.record_condensation(
                view,
                lambda: plan_forgetting(
                    view,
                    keep_first=self.keep_first,
                    max_events=self.max_events,
                    max_tokens=self.max_tokens,
                    token_counter=self.token_counter,
                ).action(),
                reason="request",
            )
        if len(view) <= self.max_events and (self.max_tokens is None or self.token_counter(view) <= self.max_tokens):
            return view
        if self.max_tokens is None:
            trimmed = self._trim_long_view(view)
            if trimmed is not None:
                return trimmed
        plan = plan_forgetting(
            view,
            keep_first=self.keep_first,
            max_events=self.max_events,
            max_tokens=self.max_tokens,
            token_counter=self.token_counter,
            keep_open=False,
        )
        return without_events(view, plan.forgotten)

    def _trim_long_view(self, view: View) -> View | None:
        """What the full plan (`plan_forgetting(..., keep_open=False)`) shows, found from the head and
        the newest events alone; None when only the full plan can tell.

        The head and the window are analyzed on their own; `_Links` says which of their events are
        tied to events outside them, so both analyses agree with the analysis of the whole view.
        """
        n = len(view)
        head_size = min(n, self.keep_first + _SLACK)
        window_start = n - self.max_events - _SLACK
        if window_start <= head_size:
            return None
        summary_at = standing_summary_index(view)
        if summary_at is not None and summary_at >= head_size:
            return None

        head = slice_events(view, 0, head_size)
        head_structure = analyze(head)
        head_end = head_structure.head_end(self.keep_first)
        if head_end >= head_size or summary_at is not None and summary_at >= head_end:
            return None
        pinned = [i for i in (self._system.find(view), self._first_user.find(view)) if i is not None and i >= head_end]
        if any(i >= head_size for i in pinned):
            return None  # the system prompt or the first user message is not near the start
        pinned_indexes = sorted(
            i for unit in head_structure.units_at(pinned) for i in range(head_size) if head_structure.unit_of[i] == unit
        )

        links = self._links
        links.update(view)

        def stored(index: int) -> int:
            # Links are indexed by position among the stored events, which skip the standing summary.
            return index - 1 if summary_at is not None and index > summary_at else index

        # What the head keeps must be whole units of the view: nothing after the head slice joins them.
        after_head = stored(head_size)
        latest_link_to = links.latest_link_to
        for index in (*range(head_end), *pinned_indexes):
            if index != summary_at and latest_link_to[stored(index)] >= after_head:
                return None

        window = slice_events(view, window_start, n)
        structure = analyze(window)
        # An event of the window tied to one before it shares a unit that no cut up to it may split.
        first_stored = stored(window_start)
        earliest_link = links.earliest_link
        floor = next(
            (i + 1 for i in range(len(window) - 1, -1, -1) if earliest_link[first_stored + i] < first_stored), 0
        )
        last = structure.safe_cut_at_or_before(len(window) - 1)
        cuts = [c for c in range(max(floor, 1), last + 1) if structure.safe[c]]
        if not cuts:
            return None
        fixed = head_end + len(pinned_indexes)
        cut = next((c for c in cuts if fixed + len(window) - c <= self.max_events), cuts[-1])
        kept = head[:head_end] + [head[i] for i in pinned_indexes] + window[cut:]
        return derive_view(view, kept, summary_at)


class _Links:
    """For each stored event of a view, the events it is tied to (the ties `_boundaries.analyze`
    unites into units), kept up to date as the view grows.

    By index among the stored events (`View.kept_slice`: the standing summary, which has no ties, is not
    one of them): `earliest_link[i]` is the earliest event that event `i` is tied to (`i` when none),
    `latest_link_to[i]` the latest event tied to event `i` (-1 when none).

    Views of one lineage (`View.lineage`: one builder between two condensations) share their stored
    events, so step after step only the new events are scanned; any other view is scanned from its
    start, unless it holds events with the same ties (`_has_same_ties`). The ties must
    stay exactly those of `analyze` (the fast path's property test compares both).
    """

    __slots__ = (
        "_lineage", "_source", "_scanned", "_by_id", "_by_call", "_by_response", "earliest_link", "latest_link_to",
    )  # fmt: skip

    def __init__(self) -> None:
        self._reset(None)

    def _reset(self, view: View | None) -> None:
        self._lineage = None if view is None else view.lineage
        self._source = view  # a view whose first `_scanned` stored events are the ones scanned
        self._scanned = 0
        self._by_id: dict[int, int] = {}
        self._by_call: dict[str, int] = {}
        self._by_response: dict[str, int] = {}
        self.earliest_link: list[int] = []
        self.latest_link_to: list[int] = []

    def update(self, view: View) -> None:
        """Scan the stored events of `view` not scanned yet."""
        lineage, length = view.lineage, view.kept_count
        if self._lineage != lineage and self._has_same_ties(view):
            self._lineage = lineage
        elif self._lineage != lineage or self._scanned > length:
            self._reset(view)
        self._source = view
        start = self._scanned
        by_id, by_call, by_response = self._by_id, self._by_call, self._by_response
        earliest, latest = self.earliest_link, self.latest_link_to
        earliest.extend(range(start, length))
        latest.extend([-1] * (length - start))
        # One pass, inlined: it runs over the whole history whenever the stored list is new.
        for index, event in enumerate(view.kept_slice(start, length), start):
            metadata = event.tool_call_metadata
            ties: tuple[int, ...] = ()
            if isinstance(event, Action):
                if event.id is not None:
                    by_id[event.id] = index
                if metadata is not None:
                    call = by_call.setdefault(metadata.tool_call_id, index)
                    response_id = metadata.response_id
                    ties = (call,) if response_id is None else (call, by_response.setdefault(response_id, index))
            elif isinstance(event, Observation):
                if metadata is not None:
                    ties = (by_call.setdefault(metadata.tool_call_id, index),)
                cause = event.cause
                if cause is not None and not is_summary(event):
                    action = by_id.get(cause)
                    if action is not None:
                        ties = (*ties, action)
            for other in ties:
                if other != index:
                    latest[other] = index
                    if other < earliest[index]:
                        earliest[index] = other
        self._scanned = length

    def _has_same_ties(self, view: View) -> bool:
        """`view` (of another lineage) holds, where the scanned events were other events, events with the same ties.

        So a view-level strategy's copies (masked observations) keep the index: only the positions
        whose event is not the same object are compared, and finding them is one C-level pass.
        """
        scanned, previous = self._scanned, self._source
        if previous is None or view.kept_count < scanned:
            return False
        replaced = compress(range(scanned), map(is_not, view.iter_kept(0, scanned), previous.iter_kept(0, scanned)))
        return all(_ties_of(_kept_at(view, i)) == _ties_of(_kept_at(previous, i)) for i in replaced)


def _kept_at(view: View, index: int) -> Event:
    """The stored event at `index` of `view` (standing summary excluded)."""
    return view.kept_slice(index, index + 1)[0]


def _ties_of(event: Event) -> tuple[object, ...]:
    """What decides an event's ties (equal for a masked copy and its original)."""
    metadata = event.tool_call_metadata
    call = None if metadata is None else (metadata.tool_call_id, metadata.response_id)
    return isinstance(event, Action), isinstance(event, Observation), event.id, event.cause, is_summary(event), call
