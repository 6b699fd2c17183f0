"""`token_budget_summary`: QitOS' token-budget summary history, a model summary of all but the newest events once over budget."""

from __future__ import annotations

import sys
from typing import Any, ClassVar, Literal

from openhands_memory.condenser.kit import (
    FROM_CONFIG,
    ModelSummarizingCondenser,
    TokenTriggeredConfig,
    analyze,
    condenser_llm,
    plan_before,
    recency_cut,
    sized,
)
from openhands_memory.condenser.base import Condensation, CondensationReason
from openhands_memory.condenser.forgetting import ForgettingPlan
from openhands_memory.condenser.impl.llm_summarizing_condenser import SUMMARY_PROMPT
from openhands_memory.condenser.thresholds import ContextWindowShare, resolve_token_limit
from openhands_memory.errors import CondenserConfigError
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import LLM
from openhands_memory.view import View

__all__ = ["TokenBudgetSummaryCondenser", "TokenBudgetSummaryCondenserConfig"]

_TYPE = "token_budget_summary"
_NO_SIZE_TRIGGER = sys.maxsize
"""The event count the rolling base is given: this strategy triggers on tokens (or a request) only."""


class TokenBudgetSummaryCondenserConfig(TokenTriggeredConfig):
    """`token_budget_summary`: past `max_tokens`, a model summarizes all but the newest `keep_last` events."""

    type: Literal["token_budget_summary"] = "token_budget_summary"
    """The condenser type."""
    keep_last: int = sized("newest", default=8, ge=1)
    """The newest events kept as they are (QitOS' default: 8; fewer rather than split a tool call from its result)."""


class TokenBudgetSummaryCondenser(ModelSummarizingCondenser):
    """Once the prompt has more than `max_tokens` tokens, forgets every event but the kept head and
    the newest `keep_last`, and puts a model's summary of them (the previous summary folded in)
    right after the head.

    QitOS' `TokenBudgetSummaryHistory`: within budget, nothing changes; over it, the older messages
    become one summary and the newest `keep_last` stay. Here the cut before the newest events is a
    safe one (a tool call and its result stay together), the system prompt and the first user
    message are kept, and the summary is asked of the model the way `llm` asks it (OpenHands'
    sections, event ids cited, cut to `max_summary_share` of what it replaces, `on_model_error`).
    With `keep_last` events or fewer before the head, nothing is forgotten and the view is shown as
    it is (QitOS' `keep_last_floor`).

    `max_tokens` may be a share of the context window (`ContextWindowShare`); it is resolved when
    the condenser is built, and each condensation records how (`threshold` in its metadata).
    """

    config_cls = TokenBudgetSummaryCondenserConfig
    default_prompt: ClassVar[str] = SUMMARY_PROMPT
    closing: ClassVar[str] = "Now summarize the events using the rules above."

    def __init__(
        self,
        llm: LLM | LLMConfig | None = None,
        keep_last: int = FROM_CONFIG,
        keep_first: int = FROM_CONFIG,
        *,
        max_tokens: int | ContextWindowShare = FROM_CONFIG,
        summary_prompt: str | None = FROM_CONFIG,
        max_summary_share: float = FROM_CONFIG,
        **options: Any,
    ) -> None:
        """Set the model, the budget and the tail kept.

        Args:
            llm: the model that summarizes (an `LLMConfig` is wrapped by `condenser_llm`).
            keep_last: the newest events kept as they are.
            keep_first: the first events of the view, kept for good.
            max_tokens: the prompt tokens that trigger a condensation, or a share of the context window.
            summary_prompt, max_summary_share: as for `llm`.
            options: `max_event_length`, `on_model_error`, `token_counter` (see `ModelBacked`).

        Raises:
            CondenserConfigError: `keep_last` < 1, or a share of a context window nobody knows.
            ValueError: see `ModelSummarizingCondenser`.
        """
        if keep_last < 1:
            raise CondenserConfigError(f"must be at least 1, got {keep_last}", condenser_type=_TYPE, field="keep_last")
        llm = condenser_llm(llm) if isinstance(llm, LLMConfig) else llm
        limit, self.threshold = resolve_token_limit(max_tokens, llm=llm, condenser_type=_TYPE)
        self.keep_last = keep_last
        super().__init__(
            llm,
            _NO_SIZE_TRIGGER,
            keep_first,
            max_tokens=limit,
            summary_prompt=summary_prompt,
            max_summary_share=max_summary_share,
            **options,
        )


    def condensation_reason(self, view: View) -> CondensationReason | None:
        if view.unhandled_condensation_request:
            return "request"
        if self.max_tokens is not None and self.token_counter(view) > self.max_tokens:
            return "tokens"
        return None

    def plan(self, view: View, *, new_summary: bool = True) -> ForgettingPlan:
        """Forget everything before the newest `keep_last` events (at a safe cut), the head kept."""
        structure = analyze(view)
        return plan_before(view, recency_cut(structure, self.keep_last), keep_first=self.keep_first, structure=structure)

    def get_condensation(self, view: View) -> Condensation:
        if self.threshold is not None:
            self.add_metadata("threshold", self.threshold)
        self.add_metadata("max_tokens", self.max_tokens)
        return super().get_condensation(view)
