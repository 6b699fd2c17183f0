"""Planning what to forget, and the base classes of the strategies that forget old events.

`plan_forgetting` decides, for one view, which events a condensation forgets: it keeps the head
(`keep_first` events, the system prompt, the first user message), keeps the newest events that fit
the budget (events and tokens), and forgets whole units in between, cutting only at safe points
(`_boundaries`). It never forgets the most recent unit to meet a budget.

The progress rule: when the view has an unhandled condensation request and the budget asks for
nothing, the oldest forgettable unit is forgotten anyway (the agent asked for room; the request
must not loop). When nothing at all may be forgotten, the condensation forgets nothing and has no
summary: it only marks the request handled (a summary would replace the standing one).

`ForgettingCondenser` (amortized forgetting) and `SummarizingCondenser` (the base of the
model-backed summarizers) trigger on size, tokens, or a request, and share the plan.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass

from openhands_memory.condenser._boundaries import ViewStructure, analyze, condensation_action, forget_id
from openhands_memory.condenser._text import truncate
from openhands_memory.condenser._views import is_summary
from openhands_memory.condenser.base import Condensation, CondensationReason, RollingCondenser
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.errors import NoCondensationAvailable
from openhands_memory.events import CondensationAction, Event
from openhands_memory.view import View

__all__ = [
    "ForgettingCondenser",
    "ForgettingPlan",
    "SummarizingCondenser",
    "check_sizes",
    "plan_forgetting",
    "plan_keeping",
]


def check_sizes(keep_first: int, max_size: int) -> None:
    """OpenHands' rule for rolling condensers: `keep_first < max_size // 2`, both non-negative.

    Raises:
        ValueError: the sizes break it (the message names both).
    """
    if keep_first < 0:
        raise ValueError(f"keep_first ({keep_first}) cannot be negative")
    if max_size < 2:
        raise ValueError(f"max_size ({max_size}) must be at least 2")
    if keep_first >= max_size // 2:
        raise ValueError(f"keep_first ({keep_first}) must be less than half of max_size ({max_size})")


@dataclass(frozen=True, slots=True)
class ForgettingPlan:
    """Which events of a view one condensation forgets, and where a new summary would go."""

    view: View
    """The view planned for."""
    structure: ViewStructure
    """Its units and safe cut points."""
    forgotten: tuple[int, ...]
    """Indexes (in the view) of the events to forget, in order."""
    head_end: int
    """Events before this index are the kept head."""
    summary_offset: int
    """Where a new summary goes among the kept events (right after the head)."""
    forced: bool
    """The progress rule chose what to forget (a request with nothing over budget)."""

    @property
    def forgotten_events(self) -> list[Event]:
        """The events to forget, in order (summaries included)."""
        events = self.structure.events
        return [events[i] for i in self.forgotten]

    @property
    def forgotten_ids(self) -> list[int]:
        """The ids to list: event ids, and a summary's `cause`."""
        ids = (forget_id(e) for e in self.forgotten_events)
        return [i for i in ids if i is not None]

    @property
    def previous_summary(self) -> Event | None:
        """The standing summary a new summary would replace, if any."""
        index = self.structure.summary_index
        return self.structure.events[index] if index is not None else None

    def action(self, *, summary: str | None = None) -> CondensationAction:
        """The condensation that carries out the plan, with `summary` after the head if given."""
        return condensation_action(
            self.structure.events,
            self.forgotten_ids,
            summary=summary,
            summary_offset=self.summary_offset if summary is not None else None,
        )


def plan_forgetting(
    view: View,
    *,
    keep_first: int = 0,
    max_events: int | None = None,
    max_tokens: int | None = None,
    token_counter: TokenCounter | None = None,
    new_summary: bool = False,
    pinned: Iterable[int] = (),
    structure: ViewStructure | None = None,
    keep_open: bool = True,
) -> ForgettingPlan:
    """Plan the forgetting that brings `view` within `max_events` and `max_tokens` (see the module docstring).

    Args:
        view: the view to condense.
        keep_first: the head to keep (extended to the next safe cut).
        max_events: the most events the condensed view may keep (a new summary counts as one).
        max_tokens: the most tokens it may keep, by `token_counter` (required with it).
        new_summary: a summary will replace the standing one (counts for `max_events`).
        pinned: indexes of further events to keep for good, with their units.
        structure: `analyze(view)`, if already computed.
        keep_open: keep calls that still wait for their result (False only to hide events from a
            view: forgetting such a call in the log would orphan its result when it arrives).
    """
    st = structure if structure is not None else analyze(view)
    events = st.events
    n = len(events)
    ok = st.forgettable(st.pinned_units(keep_first, pinned), keep_open=keep_open)
    head_end = st.head_end(keep_first)

    # The newest unit stays: cut at the last safe point before the end, at the latest.
    last = st.safe_cut_at_or_before(n - 1) if n else 0
    cuts = [c for c in range(head_end, max(last, head_end) + 1) if st.safe[c]]
    prefix = [0] * (n + 1)
    for i, forgettable in enumerate(ok):
        prefix[i + 1] = prefix[i] + forgettable
    summary_change = (1 - (st.summary_index is not None)) if new_summary else 0

    cut_index = 0
    if max_events is not None:
        base = n + summary_change + prefix[head_end]
        cut_index = next((k for k, c in enumerate(cuts) if base - prefix[c] <= max_events), len(cuts) - 1)
    if max_tokens is not None:
        if token_counter is None:
            raise ValueError("max_tokens needs a token_counter")

        def tokens(k: int) -> int:
            c = cuts[k]
            return token_counter([e for i, e in enumerate(events) if not (head_end <= i < c and ok[i])])

        if tokens(cut_index) > max_tokens:
            # Tokens kept fall as the cut moves on: binary search the first cut within budget.
            low, high = cut_index + 1, len(cuts) - 1
            while low < high:
                mid = (low + high) // 2
                if tokens(mid) <= max_tokens:
                    high = mid
                else:
                    low = mid + 1
            cut_index = max(cut_index, min(low, len(cuts) - 1))
    cut = cuts[cut_index]
    forgotten = [i for i in range(head_end, cut) if ok[i]]

    forced = False
    if not forgotten and view.unhandled_condensation_request:
        first = next((i for i in range(n) if ok[i]), None)
        if first is not None:
            unit = st.unit_of[first]
            low_index, high_index = st.spans[unit]
            forgotten = [i for i in range(low_index, high_index + 1) if st.unit_of[i] == unit]
            forced = True

    summary_offset = head_end - (1 if st.summary_index is not None and st.summary_index < head_end else 0)
    return ForgettingPlan(view, st, tuple(forgotten), head_end, summary_offset, forced)


def plan_keeping(
    view: View,
    keep_ids: Iterable[int],
    *,
    keep_first: int = 0,
    structure: ViewStructure | None = None,
) -> ForgettingPlan:
    """Plan to forget every forgettable unit of `view` that holds none of `keep_ids`.

    For strategies that pick what to keep (a model ranking events, say): a unit with one kept
    event is kept whole, and what is kept for good stays whatever the pick. The progress rule
    applies as in `plan_forgetting`. A new summary would go right after the head.
    """
    st = structure if structure is not None else analyze(view)
    n = len(st.events)
    ok = st.forgettable(st.pinned_units(keep_first))
    wanted = set(keep_ids)
    keep_units = {st.unit_of[i] for i, e in enumerate(st.events) if e.id is not None and e.id in wanted}
    forgotten = [i for i in range(n) if ok[i] and st.unit_of[i] not in keep_units]
    forced = False
    if not forgotten and view.unhandled_condensation_request:
        first = next((i for i in range(n) if ok[i]), None)
        if first is not None:
            unit = st.unit_of[first]
            forgotten = [i for i in range(n) if st.unit_of[i] == unit]
            forced = True
    head_end = st.head_end(keep_first)
    summary_offset = head_end - (1 if st.summary_index is not None and st.summary_index < head_end else 0)
    return ForgettingPlan(view, st, tuple(forgotten), head_end, summary_offset, forced)


class ForgettingCondenser(RollingCondenser):
    """Forgets old events in bulk when the view grows past its budget (or the agent asks).

    When the view has more than `max_size` events, more than `max_tokens` tokens, or an unhandled
    condensation request, it forgets the oldest events after the head until the view is at most
    half of each budget, so it condenses rarely (amortized). Subclasses add a summary.
    """

    def __init__(
        self,
        max_size: int = 100,
        keep_first: int = 1,
        *,
        max_tokens: int | None = None,
        token_counter: TokenCounter | None = None,
    ) -> None:
        """Set the budgets.

        Args:
            max_size: condense when the view has more events than this; keep about half.
            keep_first: the first events of the view, kept for good.
            max_tokens: condense when the view has more tokens than this; keep about half.
            token_counter: counts tokens (default: `ApproximateTokenCounter`).

        Raises:
            ValueError: `keep_first` is negative or not less than `max_size // 2`, `max_size` < 2,
                or `max_tokens` < 1.
        """
        super().__init__(token_counter=token_counter)
        check_sizes(keep_first, max_size)
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens ({max_tokens}) must be at least 1")
        self.max_size = max_size
        self.keep_first = keep_first
        self.max_tokens = max_tokens

    def condensation_reason(self, view: View) -> CondensationReason | None:
        if view.unhandled_condensation_request:
            return "request"
        if len(view) > self.max_size:
            return "size"
        if self.max_tokens is not None and self.token_counter(view) > self.max_tokens:
            return "tokens"
        return None

    def plan(self, view: View, *, new_summary: bool = False) -> ForgettingPlan:
        """What a condensation of `view` would forget now."""
        return plan_forgetting(
            view,
            keep_first=self.keep_first,
            max_events=self.max_size // 2,
            max_tokens=self.max_tokens // 2 if self.max_tokens is not None else None,
            token_counter=self.token_counter,
            new_summary=new_summary,
        )

    def get_condensation(self, view: View) -> Condensation:
        plan = self.plan(view)
        if not plan.forgotten:
            if view.unhandled_condensation_request:
                return Condensation(plan.action())  # forgets nothing: only marks the request handled
            raise NoCondensationAvailable(self.name, "every event in view is kept for good")
        return Condensation(plan.action())


class SummarizingCondenser(ForgettingCondenser):
    """Forgets like `ForgettingCondenser` and puts a summary of what it forgot right after the head.

    The base of the model-backed summarizers: a subclass implements `summarize(plan)`, and calls
    `record_llm_usage(metrics)` when a model was used. The new summary replaces the standing one,
    which `summarize` should fold in (`plan.previous_summary`).
    """

    def __init__(
        self,
        max_size: int = 100,
        keep_first: int = 1,
        *,
        max_tokens: int | None = None,
        max_event_length: int = 10_000,
        summary_prompt: str | None = None,
        token_counter: TokenCounter | None = None,
    ) -> None:
        """Set the budgets and the prompt.

        Args:
            max_size, keep_first, max_tokens, token_counter: as for `ForgettingCondenser`.
            max_event_length: cut each event's text to this many characters in the prompt.
            summary_prompt: instructions that replace the strategy's default prompt.
        """
        super().__init__(max_size, keep_first, max_tokens=max_tokens, token_counter=token_counter)
        self.max_event_length = max_event_length
        self.summary_prompt = summary_prompt

    def plan(self, view: View, *, new_summary: bool = True) -> ForgettingPlan:
        return super().plan(view, new_summary=new_summary)

    def truncate(self, text: str) -> str:
        """`text` cut in the middle to `max_event_length` characters."""
        return truncate(text, self.max_event_length)

    @staticmethod
    def summaries_in(plan: ForgettingPlan) -> list[str]:
        """The text of the standing summary and of the persisting summaries being forgotten, oldest first."""
        texts = [e.content for e in plan.forgotten_events if is_summary(e)]  # type: ignore[attr-defined]
        previous = plan.previous_summary
        if previous is not None:
            texts.insert(0, previous.content)  # type: ignore[attr-defined]
        return texts

    @abstractmethod
    def summarize(self, plan: ForgettingPlan) -> str:
        """The summary that stands for `plan.forgotten_events` (and the previous summaries)."""

    def get_condensation(self, view: View) -> Condensation:
        plan = self.plan(view)
        if not plan.forgotten:
            if view.unhandled_condensation_request:
                return Condensation(plan.action())  # nothing to summarize: only mark the request handled
            raise NoCondensationAvailable(self.name, "every event in view is kept for good")
        return Condensation(plan.action(summary=self.summarize(plan)))

