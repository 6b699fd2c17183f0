"""Turn captured runs into the compact, JSON-ready data one report page embeds.

Consecutive prompts share most of their messages (a prompt grows by a step's action and
observation; a condensation rewrites it once), and several pipelines replay the same events. So:

- every distinct message is stored once (`messages`), and each step's prompt is its predecessor's
  first `keep` messages followed by new references: `[keep, ref, ref, ...]` (`prompt_refs` undoes it);
- every distinct event text is stored once (`texts`), and each run's replayed history is a list of
  `[id, kind, text]` rows the page greys out once a condensation forgets them (`forgets_from`: the
  first step that no longer shows them).

The page marks the memory tools' calls and answers (`memory_tools`: `search_history`, `context_reload`) as
recall. The numbers are the replay's own: per step the prompt tokens and, per pricing, the tokens read from
the cache, written to it and sent uncached, the dollars, and how the request met the cache
(`hit`, `cold`, `expired`, `break`, as `PromptCache` names it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from openhands_memory.llm.prompt_cache import PromptPricing
from openhands_memory.recall.memory_tools import MEMORY_TOOL_NAMES
from openhands_memory.replay.costs import SUMMED_FIGURES, summarizer_cost
from openhands_memory.report.capture import RunCapture

__all__ = ["EVENT_TEXT_LIMIT", "pack_runs", "prompt_refs"]

EVENT_TEXT_LIMIT = 600
"""Characters of an event's text kept for the history column (the prompt's messages are kept whole)."""

_TOTALS = (
    "steps",
    "events",
    "replayed_events",
    "condensations",
    "peak_tokens",
    "peak_step",
    "final_tokens",
    "total_prompt_tokens",
    "tokens_estimated",
    "tool_call_repairs",
)
_COST_TOTALS = ("model", *SUMMED_FIGURES)  # a pricing's name, then the figures that add up


class _Table:
    """Distinct values, each stored once, by the JSON text that keys it."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._index: dict[bytes, int] = {}

    def ref(self, value: Any) -> int:
        key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        found = self._index.get(key)
        if found is None:
            found = self._index[key] = len(self.values)
            self.values.append(value)
        return found


def _delta(previous: Sequence[int], current: Sequence[int]) -> list[int]:
    keep = 0
    for before, now in zip(previous, current):
        if before != now:
            break
        keep += 1
    return [keep, *current[keep:]]


def prompt_refs(packed: Sequence[Sequence[int]]) -> list[list[int]]:
    """Every step's message references, from the `[keep, ref, ...]` rows `pack_runs` writes (what the page does)."""
    steps: list[list[int]] = []
    previous: list[int] = []
    for row in packed:
        previous = previous[: row[0]] + list(row[1:])
        steps.append(previous)
    return steps


def _forgets_from(capture: RunCapture) -> dict[int, int]:
    """Replayed event id -> the first step whose prompt no longer shows it (a pipeline's condensation applies at its step)."""
    first: dict[int, int] = {}
    for condensation in capture.report.condensations:
        applies = condensation.step + 1 if condensation.recorded else condensation.step
        for event_id in condensation.forgotten_ids:
            first.setdefault(event_id, applies)
    return first


def _run(capture: RunCapture, pricings: Sequence[PromptPricing], messages: _Table, texts: _Table) -> dict[str, Any]:
    report = capture.report
    packed: list[list[int]] = []
    previous: list[int] = []
    for sent in capture.messages:
        refs = [messages.ref(message) for message in sent]
        packed.append(_delta(previous, refs))
        previous = refs
    per_pricing = []
    for index, _ in enumerate(pricings):
        costs = [step[index] for step in capture.requests]
        per_pricing.append(
            {
                "read": [c.cache_read_tokens for c in costs],
                "write": [c.cache_write_tokens for c in costs],
                "uncached": [c.uncached_tokens for c in costs],
                "dollars": [round(c.cost, 8) for c in costs],
                "kind": [c.kind for c in costs],
                "penalty": [round(c.penalty, 8) for c in costs],
                "rewritten": [c.rewritten_tokens for c in costs],
            }
        )
    forgets = _forgets_from(capture)
    history = [
        [event.id, event.kind, texts.ref(event.message[:EVENT_TEXT_LIMIT]), forgets.get(event.id)]  # type: ignore[arg-type]
        for event in report.history
    ]
    condensations = [
        {
            "id": c.id,
            "step": c.step + 1 if c.recorded else c.step,
            "recorded": c.recorded,
            "forgotten": list(c.forgotten_ids),
            "events_before": c.events_before,
            "events_after": c.events_after,
            "summary": c.summary,
            "condenser": (c.metadata or {}).get("condenser"),
            "reason": (c.metadata or {}).get("reason"),
            "tokens_before": (c.metadata or {}).get("tokens_before"),
            "tokens_after": (c.metadata or {}).get("tokens_after"),
            "summarizer_cost": [summarizer_cost(c.metadata, pricing) for pricing in pricings],
        }
        for c in report.condensations
    ]
    summary = report.summary()
    return {
        "name": capture.name,
        "description": report.pipeline,
        "totals": {key: summary.get(key) for key in _TOTALS},
        "costs": [
            {key: (report.costs.get(p.name) or {}).get(key) for key in _COST_TOTALS} for p in pricings
        ],
        "tokens": [s.tokens for s in report.steps],
        "view_events": [s.view_events for s in report.steps],
        "event_ids": [s.event_id for s in report.steps],
        "replayed_ids": [s.replayed_id for s in report.steps],
        "prompts": packed,
        "pricing": per_pricing,
        "history": history,
        "condensations": condensations,
    }


def pack_runs(
    captures: Sequence[RunCapture],
    *,
    source: str,
    tokenizer: str,
    context_limit: int,
    pricings: Sequence[PromptPricing],
) -> dict[str, Any]:
    """The data of one report page: the runs of one log side by side, messages and texts stored once."""
    messages, texts = _Table(), _Table()
    runs = [_run(capture, pricings, messages, texts) for capture in captures]
    return {
        "source": source,
        "tokenizer": tokenizer,
        "context_limit": context_limit,
        "pricings": [p.name for p in pricings],
        "memory_tools": sorted(MEMORY_TOOL_NAMES),
        "runs": runs,
        "messages": messages.values,
        "texts": texts.values,
    }
