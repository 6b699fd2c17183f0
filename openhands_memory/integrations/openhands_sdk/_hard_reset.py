"""The summary of a hard context reset: everything after the system prompt, by our summarizer, within a token budget.

The summarizer is the strategy's own (the first `SummarizingCondenser` in it: itself, a pipeline's
member, `cache_aware`'s strategy, `inkeep`'s compressor), so a model-backed strategy summarizes
with its model, its prompt shrinking when the model's context overflows (a bounded number of
calls, `SHRINK_TRIES`); a strategy with no summarizer, or a model that fails, gives the offline
structured summary (`offline_summary`), no model called. The text is then cut to the budget.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from openhands_memory.condenser import Condenser, SummarizingCondenser, offline_summary, walk_condensers
from openhands_memory.condenser._boundaries import analyze
from openhands_memory.condenser._text import truncate
from openhands_memory.condenser.forgetting import ForgettingPlan
from openhands_memory.errors import LLMError
from openhands_memory.events import AgentCondensationObservation
from openhands_memory.view import View

__all__ = ["hard_reset_summary"]

logger = logging.getLogger(__name__)

_MIN_CHARS = 64


def hard_reset_summary(strategy: Condenser, view: View, keep: int, *, max_tokens: int) -> str:
    """A summary of `view[keep:]` (all but the kept head) of at most `max_tokens` by the strategy's token counter."""
    counter = strategy.token_counter

    def fits(text: str) -> bool:
        return counter([AgentCondensationObservation(content=text)]) <= max_tokens

    events = list(view)
    summary: str | None = None
    summarizer = next(_summarizers(strategy), None)
    if summarizer is not None:
        plan = ForgettingPlan(view, analyze(view), tuple(range(keep, len(events))), keep, keep, True)
        try:
            summary = summarizer.summarize(plan)
        except LLMError as error:
            logger.warning("hard context reset: the summarizer failed (%s); writing the offline summary", error)
    if summary is None:
        forgotten = events[keep:]
        previous = [e.content for e in forgotten if isinstance(e, AgentCondensationObservation) and e.id is None]
        summary = offline_summary(forgotten, previous=previous, fits=fits)
    limit = len(summary)
    while not fits(summary) and limit > _MIN_CHARS:
        limit = limit * 3 // 4
        summary = truncate(summary, limit)
    return summary


def _summarizers(condenser: Condenser) -> Iterator[SummarizingCondenser]:
    """The summarizing strategies in `condenser`, depth first: itself, then what it wraps."""
    for member in walk_condensers(condenser):
        if isinstance(member, SummarizingCondenser):
            yield member
