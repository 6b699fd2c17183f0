"""`CondensationGuard`: stops a condense-append-ask loop that makes no progress.

Every loop that appends a condenser's condensations and asks it again (`History`, the replay
driver, a controller of your own) keeps one guard per conversation: progress is the prompt getting
smaller, so a condenser that cannot shrink it raises `CondensationStalledError` instead of flooding
the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from openhands_memory.condenser.tokens import ApproximateTokenCounter, TokenCounter
from openhands_memory.errors import CondensationStalledError, EventSize
from openhands_memory.events import Event
from openhands_memory.view import View

__all__ = ["MAX_CONDENSATIONS_PER_STEP", "CondensationGuard"]

MAX_CONDENSATIONS_PER_STEP: Final = 8
"""How many condensations one step may append before condensing is taken to be stuck."""

_LARGEST_NAMED: Final = 3
"""How many of the largest events in view a `CondensationStalledError` names."""


class CondensationGuard:
    """Stops a condense-append-ask loop that makes no progress.

    Call `condensed(view)` each time the condenser returns a `Condensation` for `view`, and
    `reset()` when the step is over (the condenser returned a view, or another event came).
    Progress is measured on the prompt: its tokens by `token_counter`, or its events when there is
    none. It raises when the condenser asks again after a condensation that left the view unchanged
    or no smaller (more tokens, or as many in as many events: a deterministic condenser would ask
    forever), or after `limit` condensations in
    one step. Handling a pending condensation request counts as progress once, even if nothing was
    forgotten.
    """

    __slots__ = ("condenser", "limit", "token_counter", "_count", "_last", "_last_size", "_sizer")

    def __init__(
        self, condenser: str, *, limit: int = MAX_CONDENSATIONS_PER_STEP, token_counter: TokenCounter | None = None
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.condenser = condenser
        """The condenser's name, for the error."""
        self.limit = limit
        """The most condensations one step may make."""
        self.token_counter = token_counter
        """Measures the prompt in tokens (None: in events)."""
        self._count = 0
        self._last: View | None = None
        self._last_size = 0
        self._sizer: TokenCounter | None = None

    @property
    def count(self) -> int:
        """Condensations made since the last `reset`."""
        return self._count

    @property
    def unit(self) -> str:
        """What `size` counts: `tokens` or `events`."""
        return "tokens" if self.token_counter is not None else "events"

    def size(self, events: Sequence[Event]) -> int:
        """The size of the prompt `events` make: tokens by `token_counter`, or the number of events without one."""
        counter = self.token_counter
        return counter(events) if counter is not None else len(events)

    def largest_events(self, events: Sequence[Event], *, count: int = _LARGEST_NAMED) -> list[EventSize]:
        """The `count` largest of `events` in prompt tokens, largest first (estimated when there is no counter)."""
        counter = self.token_counter
        if counter is None:
            counter = self._sizer
            if counter is None:
                counter = self._sizer = ApproximateTokenCounter()
        sizes = [EventSize(e.id, f"{e.kind} {e.kind_key}", counter([e])) for e in events]
        sizes.sort(key=lambda size: size.tokens, reverse=True)
        return sizes[:count]

    def stalled(self, reason: str, events: Sequence[Event], *, size: int | None = None) -> CondensationStalledError:
        """The error for a condensation that made no progress, naming the largest of `events` (the view in question)."""
        tokens = None
        if self.token_counter is not None:
            tokens = size if size is not None else self.token_counter(events)
        return CondensationStalledError(
            self.condenser,
            reason,
            view_events=len(events),
            tokens=tokens,
            largest_events=self.largest_events(events),
        )

    def condensed(self, view: View) -> None:
        """Record that the condenser asked to condense `view`.

        Raises:
            CondensationStalledError: the previous condensation left the view unchanged or no
                smaller, or this is condensation number `limit + 1` of the step.
        """
        last = self._last
        size = self.size(view)
        if last is not None:
            if _same_view(last, view):
                raise self.stalled(
                    "it asked to condense again after a condensation that left the view unchanged", view, size=size
                )
            handled_request = last.unhandled_condensation_request and not view.unhandled_condensation_request
            # Fewer events at the same size is progress too: a prompt counter's events that render to
            # nothing (a state change) cost no tokens, and forgetting them still shrinks the view.
            no_smaller = size > self._last_size or (size == self._last_size and len(view) >= len(last))
            if no_smaller and not handled_request:
                raise self.stalled(
                    "it asked to condense again after a condensation that did not make the prompt smaller "
                    f"({self._last_size} -> {size} {self.unit})",
                    view,
                    size=size,
                )
        self._count += 1
        if self._count > self.limit:
            raise self.stalled(f"still condensing after {self.limit} condensations at one step", view, size=size)
        self._last = view
        self._last_size = size

    def reset(self) -> None:
        """Start a new step."""
        self._count = 0
        self._last = None


def _same_view(a: View, b: View) -> bool:
    # The condensation action itself is always forgotten, so compare what the model would see,
    # not the forgotten ids. Lists compare by identity first: unchanged events cost nothing.
    return a.unhandled_condensation_request == b.unhandled_condensation_request and a.events == b.events
