"""`amortized`: forget the oldest half of the view when it outgrows its budget."""

from __future__ import annotations

from typing import Literal

from openhands_memory.condenser.kit import CONFIG, SizeChecked, sized
from openhands_memory.condenser.forgetting import ForgettingCondenser

__all__ = ["AmortizedForgettingCondenser", "AmortizedForgettingCondenserConfig"]


class AmortizedForgettingCondenserConfig(SizeChecked):
    """`amortized`: forget the older half of the view when it outgrows its budget."""

    model_config = CONFIG
    type: Literal["amortized"] = "amortized"
    """The condenser type."""
    max_size: int = sized("events", default=100, ge=2)
    """Condense when the view has more events than this; about half are kept."""
    keep_first: int = sized("first", default=1, ge=0)
    """The number of initial events always kept; less than half of `max_size`."""
    max_tokens: int | None = sized("tokens", default=None, ge=1)
    """Condense when the view has more prompt tokens than this; about half are kept (None: never)."""


class AmortizedForgettingCondenser(ForgettingCondenser):
    """Forgets old events, with no summary, when the view has more than `max_size` events (or
    `max_tokens` tokens) or the agent asks; it keeps the head and the newest half of each budget.

    Fixes over OpenHands: a request on a view with nothing over budget forgets the oldest
    forgettable unit instead of crashing on an empty set; tool calls are never split from their
    results; the system prompt and the first user message are kept whatever `keep_first` is.
    """

    config_cls = AmortizedForgettingCondenserConfig
