"""What a replayed run's requests cost under each pricing: the agent's prompts with and without the cache, and the summarizer's calls.

`RunCosts(pricings)` follows one replay: at every agent step `add_step(blocks, ...)` prices the
prompt the model is sent (its messages as `PromptBlock`s) in one `PromptCache` per pricing, and
`add_condensation(record)` prices the summarizer calls a condensation recorded. `to_dict()` gives,
per pricing name:

- `prompt_cost`: USD for the agent's prompts with the provider's cache; `prompt_cost_without_cache`:
  the same prompts all at the input price; `summarizer_cost`: the summarizer's calls at this
  pricing's prices (their own prompt cache aside: each call is priced as plain input and output);
  `total_cost`: prompts with the cache plus the summarizer.
- `cache_read_tokens`, `cache_write_tokens`, `uncached_tokens`: the prompt tokens by how they were billed.
- `cache_breaks` / `cache_break_cost`: requests that read less than the previous request left
  cached while the cache was warm (the prefix was rewritten), and what that cost over reading it;
  `cold_starts` / `cold_start_cost`: the same for requests after the cache expired in an idle gap.
  `breaks` lists each of both: step, kind, tokens rewritten, penalty.
- `per_step_cost`: each step's prompt cost.

**Time.** A step's request is made when the event before its action was recorded (the
observation or message the agent answers): `RequestClock` reads that event's timestamp, so the
idle gaps of the log (a user away for hours) expire the cache as they would have. A step whose
event has no readable timestamp (or one earlier than the step before) comes `step_seconds` after
the previous step; `timed_steps` counts the steps that had their own time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openhands_memory.errors import UnknownPriceError
from openhands_memory.events import Event, recorded_model
from openhands_memory.llm.prompt_cache import PromptBlock, PromptCache, PromptPricing, RequestCost, resolve_pricing, timestamp_seconds

__all__ = ["DEFAULT_STEP_SECONDS", "RECORDED_MODEL", "RequestClock", "RunCosts", "priced_recorded_model", "summarizer_cost", "summarize_costs"]

RECORDED_MODEL = "the model the log records"
"""How a pricing note names an agent's model read from another agent's log (`priced_recorded_model`)."""


def priced_recorded_model(events: Sequence[Event]) -> tuple[str | None, str | None]:
    """The agent's model another agent's log records (`events.recorded_model`), to price it for when no model is
    given (`replay`, `view`, `bench`, `report`), and a note when the log records one whose prices are not known.

    Returns `(model, None)`, `(None, note)` (the fallback's prices stand), or `(None, None)` (an OpenHands log,
    or no model recorded: as before).
    """
    model = recorded_model(events)
    if model is None:
        return None, None
    try:
        resolve_pricing(model)
    except UnknownPriceError:
        return None, f"the log records the model {model!r}, which has no known prices: the fallback's prices stand"
    return model, None

DEFAULT_STEP_SECONDS = 10.0
"""Seconds between two requests when the log gives no time."""


class RequestClock:
    """When each agent step's request was made, from the log's timestamps (see the module docstring).

    `track(events)` passes the events through and notes each one's predecessor; at a step,
    `now(step_event)` is the time of the event before it.
    """

    def __init__(self, step_seconds: float = DEFAULT_STEP_SECONDS) -> None:
        if not step_seconds >= 0:
            raise ValueError(f"step_seconds must be at least 0, got {step_seconds}")
        self.step_seconds = step_seconds
        """Seconds between steps without a time of their own."""
        self.timed_steps = 0
        """Steps whose time came from the log."""
        self._before: Event | None = None
        self._last: float | None = None

    def track(self, events: Iterable[Event]) -> Iterator[Event]:
        """The events, in order, each noted as the predecessor of the next."""
        before: Event | None = None
        for event in events:
            self._before = before
            yield event
            before = event

    def now(self, step_event: Event) -> float:
        """The time of the request for the step whose action is `step_event` (the event just yielded by `track`)."""
        source = self._before if self._before is not None else step_event
        moment = timestamp_seconds(source.timestamp)
        if moment is None:
            moment = timestamp_seconds(step_event.timestamp)
        last = self._last
        if moment is not None and (last is None or moment >= last):
            self.timed_steps += 1
        else:
            moment = 0.0 if last is None else last + self.step_seconds
        self._last = moment
        return moment


@dataclass(slots=True)
class _Ledger:
    pricing: PromptPricing
    cache: PromptCache
    prompt_cost: float = 0.0
    prompt_cost_without_cache: float = 0.0
    summarizer_cost: float = 0.0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    uncached_tokens: int = 0
    cache_breaks: int = 0
    cache_break_cost: float = 0.0
    cold_starts: int = 0
    cold_start_cost: float = 0.0
    breaks: list[dict[str, Any]] = field(default_factory=list)
    per_step_cost: list[float] = field(default_factory=list)

    def add(self, step: int, cost: RequestCost) -> None:
        self.prompt_cost += cost.cost
        self.prompt_cost_without_cache += cost.cost_without_cache
        self.cache_read_tokens += cost.cache_read_tokens
        self.cache_write_tokens += cost.cache_write_tokens
        self.uncached_tokens += cost.uncached_tokens
        self.per_step_cost.append(cost.cost)
        if cost.kind == "break":
            self.cache_breaks += 1
            self.cache_break_cost += cost.penalty
        elif cost.kind == "expired":
            self.cold_starts += 1
            self.cold_start_cost += cost.penalty
        else:
            return
        self.breaks.append(
            {"step": step, "kind": cost.kind, "rewritten_tokens": cost.rewritten_tokens, "penalty": cost.penalty}
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.pricing.model,
            "prompt_cost": self.prompt_cost,
            "prompt_cost_without_cache": self.prompt_cost_without_cache,
            "summarizer_cost": self.summarizer_cost,
            "total_cost": self.prompt_cost + self.summarizer_cost,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "uncached_tokens": self.uncached_tokens,
            "cache_breaks": self.cache_breaks,
            "cache_break_cost": self.cache_break_cost,
            "cold_starts": self.cold_starts,
            "cold_start_cost": self.cold_start_cost,
            "breaks": list(self.breaks),
            "per_step_cost": list(self.per_step_cost),
        }


def summarizer_cost(record: Mapping[str, Any] | None, pricing: PromptPricing) -> float:
    """USD at `pricing`'s prices for the model calls a condensation recorded (`CondensationMetadata.to_dict()`; 0 for none)."""
    usage = (record or {}).get("llm_usage")
    if not isinstance(usage, Mapping):
        return 0.0
    totals = usage.get("accumulated_token_usage") or {}
    prompt = int(totals.get("prompt_tokens") or 0)
    read = min(int(totals.get("cache_read_tokens") or 0), prompt)
    written = min(int(totals.get("cache_write_tokens") or 0), prompt - read)
    completion = int(totals.get("completion_tokens") or 0)
    return pricing.cost(read=read, written=written, uncached=prompt - read - written, output=completion)


class RunCosts:
    """Prices every request of one run under each pricing (see the module docstring)."""

    def __init__(self, pricings: Sequence[PromptPricing]) -> None:
        self._ledgers = [_Ledger(pricing, PromptCache(pricing)) for pricing in pricings]

    def __bool__(self) -> bool:
        return bool(self._ledgers)

    def add_step(self, step: int, blocks: Sequence[PromptBlock], *, at: float, static_blocks: int) -> list[RequestCost]:
        """Price step `step`'s prompt (`blocks`, the first `static_blocks` of them the tools and system prompt) made at `at`.

        Returns what it cost under each pricing, in their order.
        """
        priced = []
        for ledger in self._ledgers:
            cost = ledger.cache.request(blocks, at=at, static_blocks=static_blocks)
            ledger.add(step, cost)
            priced.append(cost)
        return priced

    def add_condensation(self, record: Mapping[str, Any] | None) -> None:
        """Price the summarizer calls one condensation recorded."""
        for ledger in self._ledgers:
            ledger.summarizer_cost += summarizer_cost(record, ledger.pricing)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Per pricing name, its figures (see the module docstring), JSON-ready."""
        return {ledger.pricing.name: ledger.to_dict() for ledger in self._ledgers}


SUMMED_FIGURES = (
    "prompt_cost",
    "prompt_cost_without_cache",
    "summarizer_cost",
    "total_cost",
    "cache_read_tokens",
    "cache_write_tokens",
    "uncached_tokens",
    "cache_breaks",
    "cache_break_cost",
    "cold_starts",
    "cold_start_cost",
)
"""The figures of a pricing that add up over runs and logs (the report's totals, the bench's columns)."""


def summarize_costs(runs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per pricing name, the figures of `runs` (each a run's `costs`, as `RunCosts.to_dict` gives) summed; lists left out."""
    totals: dict[str, dict[str, Any]] = {}
    for costs in runs:
        for name, figures in costs.items():
            sums = totals.setdefault(name, {"model": figures.get("model", name), **{key: 0 for key in SUMMED_FIGURES}})
            for key in SUMMED_FIGURES:
                sums[key] += figures.get(key) or 0
    return totals
