"""`window_history`: QitOS' window history, a fixed window of the newest events and no summary."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from openhands_memory.condenser.kit import FROM_CONFIG, CONFIG, analyze, plan_before, recency_cut, sized, without_events
from openhands_memory.condenser.base import Condensation, Condenser
from openhands_memory.condenser.forgetting import ForgettingPlan
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.errors import CondenserConfigError
from openhands_memory.view import View

__all__ = ["WindowHistoryCondenser", "WindowHistoryCondenserConfig"]


class WindowHistoryCondenserConfig(BaseModel):
    """`window_history`: show the newest `window_size` events (QitOS' `WindowHistory`), no summary."""

    model_config = CONFIG
    type: Literal["window_history"] = "window_history"
    """The condenser type."""
    window_size: int = sized("newest", default=24, ge=1)
    """The newest events shown (QitOS' default: 24), besides the events kept for good."""


class WindowHistoryCondenser(Condenser):
    """Shows the newest `window_size` events, plus the system prompt, the first user message and
    the standing summary; the log itself is not condensed.

    QitOS' `WindowHistory` keeps the last `window_size` messages; here the window starts at a safe
    cut, so a tool call is never shown without its result nor a result without its call (the
    window may hold a few events less; the newest unit stays whole even when larger). What is
    hidden is hidden from the view only: nothing is summarized.

    When the agent asks for a condensation, it condenses the log for real: the condensation forgets
    what the window hides (at least the oldest forgettable unit), without a summary.
    """

    config_cls = WindowHistoryCondenserConfig

    def __init__(self, window_size: int = FROM_CONFIG, *, token_counter: TokenCounter | None = None) -> None:
        """Show the newest `window_size` events.

        Raises:
            CondenserConfigError: `window_size` < 1.
        """
        super().__init__(token_counter=token_counter)
        if window_size < 1:
            raise CondenserConfigError(f"must be at least 1, got {window_size}", condenser_type="window_history", field="window_size")
        self.window_size = window_size

    def condense(self, view: View) -> View | Condensation:
        if view.unhandled_condensation_request:
            return self.record_condensation(view, lambda: self._window_plan(view, keep_open=True).action(), reason="request")
        if len(view) <= self.window_size:
            return view
        return without_events(view, self._window_plan(view, keep_open=False).forgotten)

    def _window_plan(self, view: View, *, keep_open: bool) -> ForgettingPlan:
        """Forget what lies before the newest `window_size` events (at a safe cut)."""
        structure = analyze(view)
        return plan_before(view, recency_cut(structure, self.window_size), structure=structure, keep_open=keep_open)

    @property
    def handles_requests(self) -> bool:
        return True
