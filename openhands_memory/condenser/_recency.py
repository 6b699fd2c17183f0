"""Recency cuts and agent rounds: what QitOS' history strategies keep, on the units of `_boundaries`.

- `recency_cut`: where a window of the newest events starts, at a safe cut (never inside a tool
  call and its result), and never past the newest unit (kept whole even when it alone is larger).
- `plan_before`: forget every forgettable event before a cut (whole units; the head, the system
  prompt, the first user message and the standing summary stay), with the progress rule for a
  pending condensation request, as a `ForgettingPlan`.
- `round_starts`: the agent's rounds (QitOS groups messages by agent step): a round starts at
  each safe cut before an action (a model response, or a user message); the observations that
  answer an action belong to its round.
"""

from __future__ import annotations

from openhands_memory.condenser._boundaries import ViewStructure, analyze
from openhands_memory.condenser.forgetting import ForgettingPlan
from openhands_memory.events import Action
from openhands_memory.view import View

__all__ = ["plan_before", "recency_cut", "round_starts"]


def recency_cut(structure: ViewStructure, keep: int) -> int:
    """The safe cut after which at most `keep` events remain (more only when the newest unit is larger)."""
    n = len(structure)
    if n == 0:
        return 0
    cut = structure.safe_cut_at_or_after(max(0, n - keep))
    newest = structure.safe_cut_at_or_before(n - 1)
    return min(cut, newest)


def round_starts(structure: ViewStructure) -> list[int]:
    """The index where each round of the view starts, in order (0 first when the view is not empty)."""
    events = structure.events
    safe = structure.safe
    starts = [0] if events else []
    for index in range(1, len(events)):
        if safe[index] and isinstance(events[index], Action):
            starts.append(index)
    return starts


def plan_before(
    view: View,
    cut: int,
    *,
    keep_first: int = 0,
    structure: ViewStructure | None = None,
    keep_open: bool = True,
) -> ForgettingPlan:
    """Plan to forget every forgettable event before view index `cut` (a safe cut).

    With nothing to forget and a pending condensation request, the oldest forgettable unit is
    forgotten (`ForgettingPlan.forced`), as `plan_forgetting` does. A new summary goes after the head.
    """
    st = structure if structure is not None else analyze(view)
    ok = st.forgettable(st.pinned_units(keep_first), keep_open=keep_open)
    forgotten = [i for i in range(min(cut, len(st))) if ok[i]]
    forced = False
    if not forgotten and view.unhandled_condensation_request:
        first = next((i for i, forgettable in enumerate(ok) if forgettable), None)
        if first is not None:
            unit = st.unit_of[first]
            low, high = st.spans[unit]
            forgotten = [i for i in range(low, high + 1) if st.unit_of[i] == unit]
            forced = True
    head_end = st.head_end(keep_first)
    summary_offset = head_end - (1 if st.summary_index is not None and st.summary_index < head_end else 0)
    return ForgettingPlan(view, st, tuple(forgotten), head_end, summary_offset, forced)
