"""Where a view may be cut, what in it may be forgotten, and how to say so in a `CondensationAction`.

Every strategy that forgets goes through here, so the rules live in one place:

- **Units.** Events that must be kept or forgotten together form a unit: the actions of one model
  response (parallel tool calls share `tool_call_metadata.model_response["id"]`), the
  observations that answer them (same `tool_call_id`), and any observation with the action it
  answers (`cause`). Forgetting a set of whole units never leaves a tool call without its result
  or a result without its call, so `ConversationMemory` never has to repair anything
  (DESIGN.md invariant 5).
- **Safe cut points.** Index `c` (0..len) is safe when no unit has events on both sides of it; a
  unit may be interleaved with other events (a user message between a call and its result), and
  no cut inside its span is safe.
- **Kept for good.** The first `keep_first` events (extended to the next safe cut), the system
  prompt, the first user message, and the units they belong to are never forgotten. Neither is a
  unit whose tool call still waits for its result (forgetting the call now would orphan the
  result when it arrives), nor the standing OpenHands V0 summary (only a newer summary replaces
  it; listing its cause does nothing in V0), nor an event without an id that is no summary.
- **Forgetting a summary.** Summaries have no id; a persisting one (SDK semantics) is forgotten by
  listing its `cause`, the id of the condensation that wrote it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from openhands_memory.condenser._views import is_summary, standing_summary_index
from openhands_memory.events import (
    Action,
    CondensationAction,
    Event,
    EventSource,
    MessageAction,
    Observation,
    SystemMessageAction,
)
from openhands_memory.view import View

__all__ = [
    "ViewStructure",
    "analyze",
    "condensation_action",
    "first_user_message_index",
    "forget_id",
    "forgettable_ids",
]


def forget_id(event: Event) -> int | None:
    """The id to list to forget `event`: its own id, a summary's `cause`, or None if it has neither."""
    if event.id is not None:
        return event.id
    if is_summary(event):
        return event.cause
    return None


def first_user_message_index(events: Sequence[Event]) -> int | None:
    """The index of the first `MessageAction` from the user, or None."""
    for index, event in enumerate(events):
        if isinstance(event, MessageAction) and event.source == EventSource.USER:
            return index
    return None


@dataclass(slots=True)
class ViewStructure:
    """The units of a view and its safe cut points (see the module docstring)."""

    events: list[Event]
    """The view's events, in order."""
    unit_of: list[int]
    """The unit of each event, by index."""
    spans: list[tuple[int, int]]
    """The first and last index of each unit."""
    safe: list[bool]
    """`safe[c]`: cutting before index `c` splits no unit (`len(events) + 1` entries)."""
    open_units: frozenset[int]
    """Units with a tool call that has no result in the view yet."""
    summary_index: int | None
    """The index of the standing (V0) summary, if any."""

    def __len__(self) -> int:
        return len(self.events)

    def units_at(self, indexes: Iterable[int]) -> set[int]:
        """The units the events at `indexes` belong to."""
        unit_of = self.unit_of
        return {unit_of[i] for i in indexes}

    def safe_cut_at_or_after(self, index: int) -> int:
        """The smallest safe cut point >= `index` (`len(events)` is always safe)."""
        safe = self.safe
        index = max(0, index)
        while not safe[index]:
            index += 1
        return index

    def safe_cut_at_or_before(self, index: int) -> int:
        """The largest safe cut point <= `index` (0 is always safe)."""
        safe = self.safe
        index = min(index, len(self.events))
        while not safe[index]:
            index -= 1
        return index

    def head_end(self, keep_first: int) -> int:
        """Where the kept head ends: the first safe cut at or after `keep_first`."""
        return self.safe_cut_at_or_after(min(max(keep_first, 0), len(self.events)))

    def forgettable(self, pinned_units: Collection[int], *, keep_open: bool = True) -> list[bool]:
        """Which events may be forgotten, by index, when `pinned_units` are kept for good.

        Whole units only: a unit is forgettable when none of its events is kept for good. With
        `keep_open=False`, calls still waiting for their result and events without id may go too
        (to hide them from a view, not to forget them in the log: a condensation names ids).
        """
        events = self.events
        blocked = set(pinned_units)
        if keep_open:
            blocked |= self.open_units
        summary_index = self.summary_index
        for index, event in enumerate(events):
            if index == summary_index or keep_open and forget_id(event) is None:
                blocked.add(self.unit_of[index])
        return [unit not in blocked for unit in self.unit_of]

    def pinned_units(self, keep_first: int, extra: Iterable[int] = ()) -> set[int]:
        """The units kept for good: the head, the system prompt, the first user message, `extra` indexes."""
        events = self.events
        indexes = set(range(self.head_end(keep_first)))
        indexes.update(extra)
        system = next((i for i, e in enumerate(events) if isinstance(e, SystemMessageAction)), None)
        if system is not None:
            indexes.add(system)
        first_user = first_user_message_index(events)
        if first_user is not None:
            indexes.add(first_user)
        return self.units_at(indexes)


def analyze(events: Sequence[Event] | View) -> ViewStructure:
    """Find the units, the safe cut points and the standing summary of a view (O(len(view)))."""
    summary_index = standing_summary_index(events) if isinstance(events, View) else None
    events = list(events)
    n = len(events)
    parent = list(range(n))

    def find(i: int) -> int:
        root = i
        while parent[root] != root:
            root = parent[root]
        while parent[i] != root:  # path compression
            parent[i], i = root, parent[i]
        return root

    def union(i: int, j: int) -> None:
        ri, rj = find(i), find(j)
        if ri != rj:
            if ri < rj:
                parent[rj] = ri
            else:
                parent[ri] = rj

    by_id: dict[int, int] = {}
    by_response: dict[str, int] = {}
    by_call: dict[str, int] = {}
    calls: list[tuple[int, str]] = []  # (index, tool_call_id) of tool-call actions
    answered: set[str] = set()
    for index, event in enumerate(events):
        metadata = event.tool_call_metadata
        if isinstance(event, Action):
            if event.id is not None:
                by_id[event.id] = index
            if metadata is not None:
                response_id = metadata.response_id
                if response_id is not None:
                    first = by_response.setdefault(response_id, index)
                    if first != index:
                        union(index, first)
                call = metadata.tool_call_id
                other = by_call.setdefault(call, index)
                if other != index:
                    union(index, other)
                calls.append((index, call))
        elif isinstance(event, Observation):
            if metadata is not None:
                call = metadata.tool_call_id
                answered.add(call)
                other = by_call.setdefault(call, index)
                if other != index:
                    union(index, other)
            cause = event.cause
            if cause is not None and not is_summary(event):
                action = by_id.get(cause)
                if action is not None:
                    union(index, action)

    roots: dict[int, int] = {}
    unit_of = [0] * n
    spans: list[tuple[int, int]] = []
    for index in range(n):
        root = find(index)
        unit = roots.get(root)
        if unit is None:
            unit = roots[root] = len(spans)
            spans.append((index, index))
        else:
            spans[unit] = (spans[unit][0], index)
        unit_of[index] = unit

    # A cut before c is unsafe when some unit has first < c <= last.
    depth = [0] * (n + 2)
    for first, last in spans:
        if first < last:
            depth[first + 1] += 1
            depth[last + 1] -= 1
    safe = [True] * (n + 1)
    running = 0
    for c in range(n + 1):
        running += depth[c]
        safe[c] = running == 0

    open_units = frozenset(unit_of[index] for index, call in calls if call not in answered)
    return ViewStructure(events, unit_of, spans, safe, open_units, summary_index)


def forgettable_ids(view: View | Sequence[Event], *, keep_first: int = 0) -> list[int]:
    """The ids a condensation of `view` may list: every event not kept for good, a persisting
    summary by its `cause` (see the module docstring), in view order."""
    structure = analyze(view)
    ok = structure.forgettable(structure.pinned_units(keep_first))
    ids = (forget_id(e) for e, forgettable in zip(structure.events, ok, strict=True) if forgettable)
    return [i for i in ids if i is not None]


def condensation_action(
    view: Sequence[Event],
    forgotten_ids: Iterable[int],
    *,
    summary: str | None = None,
    summary_offset: int | None = None,
) -> CondensationAction:
    """A `CondensationAction` that forgets exactly `forgotten_ids` of `view`.

    It uses OpenHands' own range form (`forgotten_events_start_id`/`end_id`) when the ids are
    contiguous in the stream, that is when no event the view keeps (nor a persisting summary's
    condensation) has an id inside the range; otherwise the list form. One id or none: a list.
    """
    ids = sorted(set(forgotten_ids))
    fields: dict[str, object] = {"summary": summary, "summary_offset": summary_offset}
    if len(ids) > 1:
        low, high = ids[0], ids[-1]
        chosen = set(ids)
        contiguous = True
        for event in view:
            key = event.id if event.id is not None else (event.cause if is_summary(event) else None)
            if key is not None and low <= key <= high and key not in chosen:
                contiguous = False
                break
        if contiguous:
            return CondensationAction(forgotten_events_start_id=low, forgotten_events_end_id=high, **fields)  # type: ignore[arg-type]
    return CondensationAction(forgotten_event_ids=ids, **fields)  # type: ignore[arg-type]
