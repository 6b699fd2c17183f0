"""What the benchmark measures at every step of a replay, and how runs add up per pipeline.

Per run (one log through one pipeline):

- **prompt tokens** of a step: the length of the step's prompt as a token sequence (the tool
  definitions, then every message, see `openhands_memory.prompt_tokens`). `total_prompt_tokens`
  sums them over the steps (what the run pays for before any prompt caching), `peak_context_tokens`
  is the largest, `mean_context_tokens` the mean, `steps_over_limit` counts the steps above the
  context limit.
- **cached prefix** of step i: how many leading tokens of its prompt are identical to step i-1's
  (0 at the first step): what a provider's prefix cache could have served. `cache_share` is
  the sum of the cached prefixes over the sum of the prompt tokens.
- **condensations** the pipeline made (asked at every step, and once after the last event),
  `events_forgotten` by them (events of the log; condensation actions and requests aside).
- **summarizer** usage, from each condensation's record (`CondensationMetadata.llm_usage`):
  calls, prompt and completion tokens, and cost in USD (the config's prices, else litellm's cost
  map; `summarizer_cost_known` is False when some call had no price).
- **compressions**: the steps of a progressive strategy (`auto_context`), from each condensation's
  compression record (`openhands_memory.condenser.compression`), counted by type:
  `{"TOOL_INVOCATION_COMPRESS": 3, "LARGE_MESSAGE_OFFLOAD": 1}` (types that never acted left out).
- **condenser time**: wall time spent inside the pipeline's `condense`, every step included.
- **recall**: the replayed log indexed once for search (`recall_indexed_events`,
  `recall_index_seconds`) and the forgotten facts searched for (`recall_searches`,
  `recall_search_seconds`); what the facts found are is in `openhands_memory.bench.retention`.

`PromptMeter` (the pipeline's one prompt counter, `openhands_memory.prompt_tokens`, which replay's
report counts with too) tokenizes the prompts step after step and finds each cached prefix.

- **history policy** (a pipeline file's `[history_policy]`): `history_policy_dropped`, the messages
  it dropped summed over the steps; `history_policy_trimmed_steps`, the steps where it dropped any;
  `history_policy_over_limit_steps`, the steps whose newest unit alone was over a limit (kept all
  the same); `history_policy_hidden_events`, the events of the final view it left out of the final
  chat (counted as forgotten by the retention check).
- **tool-call repairs**: at each step, the tool calls and results the message layer left out to
  keep the chat valid (`ConversationMemory.last_repairs`), summed. A view a condenser made should
  need none: a pipeline with some splits actions from their observations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openhands_memory.condenser import (
    CompressionEventType,
    CondensationMetadata,
    compression_record,
)
from openhands_memory.prompt_tokens import PromptMeter, common_prefix_length

__all__ = ["PromptMeter", "RunMetrics", "common_prefix_length", "summarize_runs"]


@dataclass(slots=True)
class RunMetrics:
    """Adds up one run, step by step and condensation by condensation (see the module docstring)."""

    context_limit: int
    """Steps whose prompt has more tokens than this are counted in `steps_over_limit`."""
    tokens: list[int] = field(default_factory=list)
    """Prompt tokens, one per step."""
    cached: list[int] = field(default_factory=list)
    """Cached prefix tokens, one per step."""
    condensations: int = 0
    """Condensations the pipeline made."""
    summarizer_calls: int = 0
    """Model calls the condensations made."""
    summarizer_prompt_tokens: int = 0
    """Prompt tokens of those calls (as the model, or the stand-in, reported them)."""
    summarizer_completion_tokens: int = 0
    """Completion tokens of those calls."""
    summarizer_cost: float = 0.0
    """USD of those calls with a known price."""
    summarizer_cost_known: bool = True
    """Every call had a price."""
    condensed_by: dict[str, int] = field(default_factory=dict)
    """Condensations by the condenser that made them (`amortized`, `llm`, ...)."""
    compressions: dict[str, int] = field(default_factory=dict)
    """Compression records by type (`TOOL_INVOCATION_COMPRESS`, ...), for a progressive strategy."""

    def add_step(self, tokens: int, cached: int) -> None:
        """Record one step's prompt tokens and cached prefix."""
        self.tokens.append(tokens)
        self.cached.append(cached)

    def add_condensation(
        self, metadata: CondensationMetadata | Mapping[str, Any] | None, *, event_id: int | None = None
    ) -> None:
        """Record one condensation, the model usage its record holds and its compression record (None: nothing recorded).

        Raises:
            MalformedEventError: its compression record is malformed (the message names `event_id`).
        """
        self.condensations += 1
        record = metadata.to_dict() if isinstance(metadata, CondensationMetadata) else dict(metadata or {})
        name = str(record.get("condenser") or "unknown")
        self.condensed_by[name] = self.condensed_by.get(name, 0) + 1
        compression = compression_record(record, event_id=event_id)
        if compression is not None:
            kind = compression.event_type.value
            self.compressions[kind] = self.compressions.get(kind, 0) + 1
        usage = record.get("llm_usage")
        if not isinstance(usage, Mapping):
            return
        calls = len(usage.get("token_usages") or ())
        self.summarizer_calls += calls
        totals = usage.get("accumulated_token_usage") or {}
        self.summarizer_prompt_tokens += int(totals.get("prompt_tokens") or 0)
        self.summarizer_completion_tokens += int(totals.get("completion_tokens") or 0)
        self.summarizer_cost += float(usage.get("accumulated_cost") or 0.0)
        if len(usage.get("costs") or ()) < calls:
            self.summarizer_cost_known = False

    def to_dict(self) -> dict[str, Any]:
        """The run's numbers, JSON-ready (`per_step` holds the token lists)."""
        steps = len(self.tokens)
        total = sum(self.tokens)
        cached = sum(self.cached)
        peak = max(self.tokens, default=0)
        return {
            "steps": steps,
            "total_prompt_tokens": total,
            "peak_context_tokens": peak,
            "peak_step": self.tokens.index(peak) + 1 if steps else None,
            "mean_context_tokens": total / steps if steps else 0.0,
            "final_context_tokens": self.tokens[-1] if steps else 0,
            "steps_over_limit": sum(1 for t in self.tokens if t > self.context_limit),
            "cached_prefix_tokens": cached,
            "cache_share": cached / total if total else None,
            "condensations": self.condensations,
            "condensed_by": dict(self.condensed_by),
            "compressions": ordered_compressions(self.compressions),
            "summarizer_calls": self.summarizer_calls,
            "summarizer_prompt_tokens": self.summarizer_prompt_tokens,
            "summarizer_completion_tokens": self.summarizer_completion_tokens,
            "summarizer_cost": self.summarizer_cost,
            "summarizer_cost_known": self.summarizer_cost_known,
            "per_step": {"tokens": list(self.tokens), "cached": list(self.cached)},
        }


_SUMMED = (
    "steps",
    "total_prompt_tokens",
    "steps_over_limit",
    "cached_prefix_tokens",
    "condensations",
    "events_forgotten",
    "tool_call_repairs",
    "history_policy_dropped",
    "history_policy_trimmed_steps",
    "history_policy_over_limit_steps",
    "history_policy_hidden_events",
    "summarizer_calls",
    "summarizer_prompt_tokens",
    "summarizer_completion_tokens",
    "summarizer_cost",
    "condenser_seconds",
    "facts",
    "facts_forgotten",
    "facts_retained",
    "facts_recoverable",
    "recall_indexed_events",
    "recall_index_seconds",
    "recall_searches",
    "recall_search_seconds",
)


def ordered_compressions(counts: Mapping[str, int]) -> dict[str, int]:
    """Compression counts by type, lightest type first (AgentScope's order), unknown types after, zeros left out."""
    order = {kind.value: index for index, kind in enumerate(CompressionEventType)}
    return {kind: counts[kind] for kind in sorted(counts, key=lambda k: (order.get(k, len(order)), k)) if counts[kind]}


def summarize_runs(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One pipeline's totals over its runs (runs with an `error` left out and counted).

    Counts, tokens, cost and time are summed (`compressions` type by type); `peak_context_tokens`
    is the largest of any run; `mean_context_tokens` is over every step of every run; `cache_share`,
    `retention` and `recoverability` are ratios of the sums (None when the denominator is 0, and
    `recoverability` also when some run did not search).
    """
    ok = [run for run in runs if not run.get("error")]
    totals: dict[str, Any] = {name: sum(run.get(name) or 0 for run in ok) for name in _SUMMED}
    searched = all(run.get("facts_recoverable") is not None for run in ok)
    if not searched:
        totals["facts_recoverable"] = None  # a sum over some runs only would read as a count over all
    compressions: dict[str, int] = {}
    for run in ok:
        for kind, count in (run.get("compressions") or {}).items():
            compressions[kind] = compressions.get(kind, 0) + count
    totals["compressions"] = ordered_compressions(compressions)
    steps, tokens = totals["steps"], totals["total_prompt_tokens"]
    totals.update(
        logs=len(ok),
        errors=len(runs) - len(ok),
        peak_context_tokens=max((run["peak_context_tokens"] for run in ok), default=0),
        mean_context_tokens=tokens / steps if steps else 0.0,
        cache_share=totals["cached_prefix_tokens"] / tokens if tokens else None,
        retention=totals["facts_retained"] / totals["facts_forgotten"] if totals["facts_forgotten"] else None,
        recoverability=(
            totals["facts_recoverable"] / totals["facts_forgotten"] if searched and totals["facts_forgotten"] else None
        ),
        summarizer_cost_known=all(run.get("summarizer_cost_known", True) for run in ok),
    )
    return totals
