"""`cache_aware`: a scheduler around any strategy (or pipeline) that condenses when it must, or when it pays with the prompt cache.

Providers bill a prompt's cached prefix at a fraction of the input price (see
`openhands_memory.llm.prompt_cache`), and a condensation rewrites the prefix: everything after the
first changed event is written again, at the write price. So condensing at every chance can cost
more than it saves. This wrapper decides *when* its strategy acts; the strategy still decides *what*
it forgets, masks or offloads.

It condenses when it must:
- the view is over `hard_limit` tokens (by the condenser's token counter);
- the agent asked (an unhandled `CondensationRequestAction`; `History` appends one after a
  context-window error too);

and otherwise only when it pays, by the provider's prices and cache rules (`pricing`):
- the cut (tokens before minus tokens after) is at least `min_cut` (like Anthropic's
  `clear_at_least`: small cuts are never worth a rewrite), and
- over a horizon of `h` steps, condensing now costs less than not: `now(after) + h * read * after`
  against `now(before) + h * read * before`, where `now(x)` is what the next request would cost
  with the cache as it is (a `PromptCache` of the scheduler's own, fed with every view it returned)
  and `read` the cache-read price. When the cache is cold anyway (idle longer than its lifetime),
  `now(before)` writes everything too, and any cut of `min_cut` pays.

The horizon is `horizon_steps`, or by default half the steps the cut lasts at the recent growth of
the prompt (`cut / (2 * growth per step)`): for a prompt that grows `g` tokens a step and is cut
from `T` to `K` (of which `H`, the head, stays cached), this condenses when
`(T - K)^2 > 2 (K - H) (write - read) g / read`, which is the saw-tooth of least cost per step.

What each kind of member does:
- a rolling strategy (`amortized`, `llm`, ...) condenses through `condense_now` when the scheduler
  says so. Its own trigger is not used; its budget still says how much a condensation keeps (half
  of `max_size` events, half of `max_tokens` tokens for the forgetting ones). The cut is estimated
  before any model is called: from the strategy's plan (forgetting strategies, the standing summary
  counted as the new one's size), or by making the condensation (other strategies without a model);
  a strategy with a model and no plan condenses only when it must, or when the cache is cold and its
  own trigger fires.
- a view transform (`observation_masking`, `browser_output_masking`, `large_output_offload`) acts in
  batches: it applies only to events before a frontier, which moves (to the end) when the scheduler
  says so, not one message per step. A move is recorded as a condensation that forgets nothing.
- a pipeline: each member is scheduled so, in order, all sharing the scheduler's cache and clock.

If the view is still over `hard_limit` after every member, or a request is still unhandled, the
scheduler forgets old events itself (keeping `keep_first`, the system prompt and the first user
message; no summary) down to half of `hard_limit`. When forgetting cannot bring the view under the
limit (a tool output larger than everything that may be forgotten, such as the newest one; a user's
pasted log in the first message), the largest tool outputs are cut, biggest first, then the largest
messages (the user's or the agent's), until it fits: each is shown as its first
`CUT_PREVIEW_CHARS` characters and the line `[... N characters offloaded; call context_reload with
event_id=<id> to see all of it]`, as `large_output_offload` shows them. An event cut stays cut
while it is in view (the prefix stays cacheable), the log keeps it whole. So no step goes over the
limit while anything may be forgotten or cut: only a system prompt, tool calls (the newest model
response's own actions) and images larger than the limit can be.

Whose prices decide is `pricing`; left out, the agent's model's (`Condenser.from_config(model=...)`,
`--model`, `History(model=...)` or its LLM, the SDK agent's LLM, through `use_agent_model`), and for
no model, or a model litellm knows no price for, `FALLBACK_PRICING`'s (the fallback is said in one
line: `pricing_note`, and a warning for a model without prices).

Every decision that changes the prompt is recorded in its condensation's metadata
(`extra["cache_decision"]`): the reason (`hard_limit`, `request`, `cold_cache`, `pays`,
`hard_limit_fallback`), the cache state and idle time, tokens before and after, the horizon, the
next request's cost and the expected cost over the horizon, before and after. `inspect` shows it.

Time is the newest timestamp of the view (the log's; live, when the latest event was appended),
else `step_seconds` after the previous step.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from openhands_memory.condenser.kit import FROM_CONFIG, CONFIG, condensed_events, map_events, replace_at, sized
from openhands_memory.condenser.base import Condensation, CondensationMetadata, CondensationReason, Condenser, RollingCondenser
from openhands_memory.condenser.forgetting import ForgettingCondenser, SummarizingCondenser, plan_forgetting
from openhands_memory.condenser.impl.large_output_offload_condenser import LargeOutputOffloadCondenser, offload_notice
from openhands_memory.condenser.impl.pipeline import PipelineCondenser
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.errors import CondenserConfigError, UnknownPriceError
from openhands_memory.events import AgentCondensationObservation, CondensationAction, Event, MessageAction, SystemMessageAction
from openhands_memory.llm.prompt_cache import PromptBlock, PromptCache, PromptPricing, resolve_pricing, timestamp_seconds
from openhands_memory.view import View

if TYPE_CHECKING:
    from openhands_memory.condenser.config import CondenserContext, PipelineMember

logger = logging.getLogger(__name__)
__all__ = [
    "CACHE_DECISION_KEY",
    "CUT_PREVIEW_CHARS",
    "FALLBACK_PRICING",
    "CacheAwareCondenser",
    "CacheAwareCondenserConfig",
    "DecisionReason",
    "agent_pricing",
]

CACHE_DECISION_KEY = "cache_decision"
"""The key of a condensation's `CondensationMetadata.extra` that holds the scheduler's decision."""

DecisionReason = Literal["hard_limit", "request", "cold_cache", "pays", "hard_limit_fallback"]
"""Why the scheduler let a condensation happen (see the module docstring)."""

FALLBACK_PRICING = "claude-sonnet-4-5"
"""Whose prices and cache rules decide for a scheduler left to the agent's model when there is no model, or
litellm knows no price for it: Anthropic's cache bills a rewritten prefix at 1.25x the input price (the
dearest rewrite of the providers in `CACHE_RULES`), so priced so the scheduler condenses no more often than
any provider's cache pays for."""

CUT_PREVIEW_CHARS = 200
"""The characters of a tool output cut to fit `hard_limit` that are still shown (its beginning)."""

DEFAULT_HORIZON_STEPS = 10.0
"""The horizon before the prompt's growth is known (the first steps)."""

_MAX_HORIZON_STEPS = 1000.0
_GROWTH_WEIGHT = 0.3  # of the newest step, in the moving average of the growth per step
_CORE_REASON: dict[str, CondensationReason] = {"hard_limit": "tokens", "request": "request", "hard_limit_fallback": "tokens"}


class CacheAwareCondenserConfig(BaseModel):
    """`cache_aware`: condense with `condenser` only when it must, or when it pays with the prompt cache."""

    model_config = CONFIG
    type: Literal["cache_aware"] = "cache_aware"
    """The condenser type."""
    # Any registered config, a pipeline included (completed by the registry, as `pipeline`'s members).
    condenser: PipelineMember
    """The strategy (or pipeline) scheduled: it decides what to forget, mask or offload."""
    pricing: str | dict[str, Any] | None = None
    """Whose prices and prompt cache decide: a model litellm knows, or a table (`model`, `extended`,
    and fields to override such as `lifetime_seconds`; see `openhands_memory.llm.prompt_cache`).
    None: the agent's model's (`--model`, `History(model=...)` or its LLM, the SDK agent's LLM);
    without one, or for a model litellm knows no price for, `claude-sonnet-4-5`'s (`FALLBACK_PRICING`)."""
    hard_limit: int = sized("tokens", default=100_000, ge=1)
    """Condense whenever the view has more tokens than this (by the token counter)."""
    min_cut: int = Field(default=8_000, ge=0)
    """Unless it must, condense only when it removes at least this many tokens."""
    horizon_steps: float | None = Field(default=None, gt=0)
    """The steps over which savings are weighed against a rewrite; None: half the steps the cut lasts."""
    step_seconds: float = Field(default=10.0, ge=0)
    """Seconds between steps when the view has no timestamps."""
    keep_first: int = sized("first", default=1, ge=0)
    """The first events the hard-limit fallback never forgets (the system prompt and the first user
    message are kept anyway)."""


class CacheAwareCondenser(Condenser):
    """Schedules a strategy's condensations by the provider's prompt-cache prices (see the module docstring)."""

    config_cls = CacheAwareCondenserConfig
    exports = ("CACHE_DECISION_KEY",)

    def __init__(
        self,
        condenser: Condenser,
        pricing: PromptPricing,
        *,
        hard_limit: int = FROM_CONFIG,
        min_cut: int = FROM_CONFIG,
        horizon_steps: float | None = FROM_CONFIG,
        step_seconds: float = FROM_CONFIG,
        keep_first: int = FROM_CONFIG,
        token_counter: TokenCounter | None = None,
        pricing_note: str | None = None,
        priced_for_agent: bool = False,
    ) -> None:
        """Wrap `condenser` (a rolling strategy, a view transform, or a pipeline of them).

        `priced_for_agent`: `pricing` stands for the agent's model until `use_agent_model` names it
        (a config without `pricing`); `pricing_note` says whose prices these are, for people.

        Raises:
            ValueError: `hard_limit` < 1, `min_cut` < 0, `horizon_steps` <= 0, `step_seconds` < 0
                or `keep_first` < 0.
        """
        super().__init__(token_counter=token_counter)
        if hard_limit < 1 or min_cut < 0 or keep_first < 0 or not step_seconds >= 0:
            raise ValueError("hard_limit must be at least 1; min_cut, keep_first and step_seconds at least 0")
        if horizon_steps is not None and not horizon_steps > 0:
            raise ValueError(f"horizon_steps must be above 0, got {horizon_steps}")
        self.inner = condenser
        """The strategy scheduled."""
        self.pricing = pricing
        """Whose prices and cache rules decide."""
        self.pricing_note = pricing_note if pricing_note is not None else f"priced as {pricing.name}"
        """Whose prices decide and why, in one line (`priced as gpt-5 (the agent's model)`, or the fallback)."""
        self.priced_for_agent = priced_for_agent
        self._agent_model: str | None = None
        self.hard_limit = hard_limit
        self.min_cut = min_cut
        self.horizon_steps = horizon_steps
        self.step_seconds = step_seconds
        self.keep_first = keep_first
        self.decisions: list[dict[str, Any]] = []
        """Every decision that changed the prompt, in order (each also in its condensation's metadata)."""
        self.deferred = 0
        """Steps at which a condensation was possible and did not pay, in all."""
        self.dropped = 0
        """Condensations the strategy made that did not shrink the prompt, so were not returned (each logged)."""
        self._gates = [_gate(member) for member in _members(condenser)]
        self._cache = PromptCache(pricing)
        self._last_time: float | None = None
        self._last_tokens: int | None = None
        self._growth: float | None = None
        self._changed = False
        self._deferred_since = 0
        self.condensed_this_step = 0
        """Condensations made since the scheduler last returned a view."""
        self._blocks: dict[int, PromptBlock] = {}
        self._view_size = 0
        self.cut_ids: set[int] = set()
        """The ids of the tool outputs and messages shown cut to fit `hard_limit` (they stay cut while in view)."""
        self._cutter = FitCutter(CUT_PREVIEW_CHARS)

    @classmethod
    def build(cls, config: CacheAwareCondenserConfig, context: CondenserContext) -> CacheAwareCondenser:  # type: ignore[override]
        """The scheduler around the condenser its config describes (built with the same context); the pricing resolved now.

        Raises:
            CondenserConfigError: the wrapped config is not valid, or the pricing cannot be made out.
        """
        inner = context.build(config.condenser)
        note: str | None = None
        if config.pricing is None:
            pricing, note = agent_pricing(context.model)
        else:
            try:
                pricing = resolve_pricing(config.pricing)
            except UnknownPriceError as exc:
                raise CondenserConfigError(exc.reason, condenser_type="cache_aware", field="pricing") from None
        built = cls(
            inner,
            pricing,
            hard_limit=config.hard_limit,
            min_cut=config.min_cut,
            horizon_steps=config.horizon_steps,
            step_seconds=config.step_seconds,
            keep_first=config.keep_first,
            token_counter=context.token_counter,
            pricing_note=note,
            priced_for_agent=config.pricing is None,
        )
        if config.pricing is None and context.model:
            built._agent_model = context.model
        return built

    @property
    def handles_requests(self) -> bool:
        # A request is always answered: by a member, else by the scheduler's own fallback.
        return True

    @property
    def name(self) -> str:
        return f"cache_aware({self.inner.name})"

    def members(self) -> tuple[Condenser, ...]:
        return (self.inner,)

    def use_agent_model(self, model: str) -> None:
        """Priced for `model` from now on, when `pricing` was left to the agent's model (else nothing changes)."""
        super().use_agent_model(model)
        if not self.priced_for_agent or not model or model == self._agent_model:
            return
        self._agent_model = model
        self.pricing, self.pricing_note = agent_pricing(model)
        self._cache.pricing = self.pricing  # what it cached so far stays; the prices and rules are the model's

    # ------------------------------------------------------------------ the step

    def condense(self, view: View) -> View | Condensation:
        started = time.perf_counter()
        now = self._now(view)
        pending: list[dict[str, Any]] = []
        result = self._with_cuts(view)
        if not result.unhandled_condensation_request:
            # Before the members, so that each ask of a step sees the same view.
            tokens = self.token_counter(result)
            if tokens > self.hard_limit:
                result, tokens = self._cut_to_fit(result, tokens)
        for gate in self._gates:
            outcome = gate.run(result, self, now, pending)
            if isinstance(outcome, Condensation):
                return self._recorded(outcome, pending)
            result = outcome
        tokens = self.token_counter(result)
        if tokens > self.hard_limit or result.unhandled_condensation_request:
            fallback = self._fallback(result, tokens, now, started)
            if fallback is not None:
                return self._recorded(fallback, pending)
        if pending:
            return self._recorded(self._frontier_mark(view, pending, started), [])
        self._observe(result, now)
        return result

    def _recorded(self, condensation: Condensation, pending: list[dict[str, Any]]) -> Condensation:
        """`condensation` with the decisions made for it (the transforms' batches first) in its metadata and its action's record."""
        self._changed = True
        self.condensed_this_step += 1
        metadata = condensation.metadata
        own = metadata.extra.get(CACHE_DECISION_KEY) if metadata is not None else None
        decisions = [*pending, *([own] if own is not None else [])]
        self.decisions.extend(decisions)
        if metadata is None or not decisions:
            return condensation
        decision = decisions[-1] if len(decisions) == 1 else {**decisions[-1], "also": decisions[:-1]}
        metadata = replace(metadata, extra={**metadata.extra, CACHE_DECISION_KEY: decision})
        condensation.metadata = metadata
        condensation.action.condenser_metadata = metadata.to_dict()
        self._last = metadata
        return condensation

    def _now(self, view: View) -> float:
        for index in range(len(view) - 1, max(len(view) - 6, -1), -1):
            moment = timestamp_seconds(view[index].timestamp)
            if moment is not None:
                return moment if self._last_time is None else max(moment, self._last_time)
        return 0.0 if self._last_time is None else self._last_time + self.step_seconds

    def _observe(self, shown: View, now: float) -> None:
        """The view returned is the prompt the provider sees next: the scheduler's cache takes it, and the growth is measured."""
        blocks, static = self.blocks(shown)
        self._cache.request(blocks, at=now, static_blocks=static)
        tokens = self.token_counter(shown)
        if self._last_tokens is not None and not self._changed and tokens >= self._last_tokens:
            step = float(tokens - self._last_tokens)
            self._growth = step if self._growth is None else (1 - _GROWTH_WEIGHT) * self._growth + _GROWTH_WEIGHT * step
        self._last_tokens = tokens
        self._last_time = now
        self._changed = False
        self.condensed_this_step = 0

    # ------------------------------------------------------------------ the economics

    def event_tokens(self, event: Event) -> int:
        """The tokens of one event, by the token counter."""
        counter = self.token_counter
        each = getattr(counter, "event_tokens", None)
        return int(each(event)) if each is not None else counter([event])

    def block(self, event: Event) -> PromptBlock:
        """`event` as a prompt block for the scheduler's cache (made once per event: it holds the event, so its id names it)."""
        known = self._blocks.get(id(event))
        if known is not None and known.source is event:
            return known
        if len(self._blocks) > 2 * (self._view_size + 512):
            self._blocks = {}  # events that left the view go; the next steps make their blocks again
        block = self._blocks[id(event)] = PromptBlock(id(event), self.event_tokens(event), source=event)
        return block

    def blocks(self, events: Sequence[Event]) -> tuple[list[PromptBlock], int]:
        """`events` as prompt blocks (one per event) for the scheduler's cache, and how many lead unchanged (the system prompt)."""
        self._view_size = max(self._view_size, len(events))
        blocks = list(map(self.block, events))
        static = 1 if events and isinstance(events[0], SystemMessageAction) else 0
        return blocks, static

    def may_cut(self, blocks: Sequence[PromptBlock]) -> bool:
        """Whether forgetting everything but the first block (the system prompt, always kept) would cut `min_cut` tokens: else no plan is worth making."""
        return sum(block.tokens for block in blocks[1:]) >= max(self.min_cut, 1)

    def horizon(self, cut: int) -> float:
        """The steps over which a cut of `cut` tokens is weighed (see the module docstring)."""
        if self.horizon_steps is not None:
            return self.horizon_steps
        growth = self._growth
        if growth is None or growth <= 0:
            return DEFAULT_HORIZON_STEPS
        return min(max(cut / (2 * growth), 1.0), _MAX_HORIZON_STEPS)

    def decide(
        self,
        before: Sequence[PromptBlock],
        after: Sequence[PromptBlock],
        *,
        static: int,
        now: float,
        must: DecisionReason | None = None,
        extra_cost: float = 0.0,
    ) -> tuple[bool, dict[str, Any]]:
        """Whether to go from the prompt `before` to `after` now, and the record of the decision.

        `extra_cost` is what making `after` costs besides the request (a summarizer's call).
        """
        pricing = self.pricing
        tokens_before = sum(block.tokens for block in before)
        tokens_after = sum(block.tokens for block in after)
        cut = tokens_before - tokens_after
        cold = self._cache.is_cold(now)
        now_before = self._cache.peek(before, at=now, static_blocks=static).cost
        now_after = self._cache.peek(after, at=now, static_blocks=static).cost + extra_cost
        horizon = self.horizon(max(cut, 0))
        read = pricing.cache_read_cost_per_token if pricing.caches else pricing.input_cost_per_token
        expected_before = now_before + horizon * tokens_before * read
        expected_after = now_after + horizon * tokens_after * read
        if must is not None:
            go, reason = True, must
        else:
            go = cut >= max(self.min_cut, 1) and expected_after < expected_before
            reason = "cold_cache" if cold else "pays"
        record = {
            "reason": reason,
            "pricing": pricing.name,
            "cache": "cold" if cold else "warm",
            "idle_seconds": None if self._last_time is None else now - self._last_time,
            "tokens_before": tokens_before,
            "tokens_after": tokens_after,
            "horizon_steps": round(horizon, 2),
            "growth_per_step": None if self._growth is None else round(self._growth, 1),
            "cost_now_before": now_before,
            "cost_now_after": now_after,
            "expected_cost_before": expected_before,
            "expected_cost_after": expected_after,
            "deferred_steps": self._deferred_since,
        }
        if go:
            self._deferred_since = 0
        elif cut > 0:
            self._deferred_since += 1
            self.deferred += 1
        return go, record

    # ------------------------------------------------------------------ what only the scheduler does

    def _fallback(self, view: View, tokens: int, now: float, started: float) -> Condensation | None:
        """Forget old events down to half of `hard_limit` (or half of the view, for a request); None when nothing may go."""
        target = min(self.hard_limit, tokens) // 2
        plan = plan_forgetting(view, keep_first=self.keep_first, max_tokens=max(target, 1), token_counter=self.token_counter)
        if not plan.forgotten and not view.unhandled_condensation_request:
            return None
        action = plan.action()
        blocks, static = self.blocks(view)
        kept, _ = self.blocks(condensed_events(view, action))
        # A pending request is answered as one (recorded so), whatever the size.
        must: DecisionReason = "request" if view.unhandled_condensation_request else "hard_limit_fallback"
        _, record = self.decide(blocks, kept, static=static, now=now, must=must)

        def make() -> CondensationAction:
            self.add_metadata(CACHE_DECISION_KEY, record)  # into this condensation's record
            return action

        return self.record_condensation(view, make, reason=_CORE_REASON[must], started=started)

    def _frontier_mark(self, view: View, pending: list[dict[str, Any]], started: float) -> Condensation:
        """A condensation that forgets nothing and records the batches of the view transforms (their frontiers moved)."""
        action = CondensationAction(forgotten_event_ids=[])
        first = pending[0]
        metadata = CondensationMetadata(
            condenser=self.name,
            # Appended while a request is pending, it answers that request, and says so.
            reason="request"
            if view.unhandled_condensation_request
            else "custom" if first["reason"] in ("cold_cache", "pays") else _CORE_REASON[first["reason"]],
            events_before=len(view),
            events_after=len(view),
            tokens_before=first["tokens_before"],
            tokens_after=pending[-1]["tokens_after"],
            forgotten=0,
            seconds=time.perf_counter() - started,
            extra={CACHE_DECISION_KEY: pending[-1] if len(pending) == 1 else {**pending[-1], "also": pending[:-1]}},
        )
        self.decisions.extend(pending)
        self._changed = True
        return self.record_condensation(view, lambda: Condensation(action, metadata), reason=metadata.reason, started=started)

    def _with_cuts(self, view: View) -> View:
        """`view` with the outputs cut before shown cut again (the same copies: the prefix stays as it was)."""
        cut = self.cut_ids
        if not cut:
            return view
        indexes = [index for index, event in enumerate(view) if event.id in cut]
        return replace_at(view, indexes, self._cutter.cut) if indexes else view

    def _cut_to_fit(self, view: View, tokens: int) -> tuple[View, int]:
        """`view` with its largest tool outputs, then messages, cut until it fits `hard_limit`, when forgetting cannot make it fit.

        Returns the view and its tokens (`view` itself when forgetting can do it, or nothing can be cut).
        """
        limit = self.hard_limit
        plan = plan_forgetting(view, keep_first=self.keep_first, max_tokens=max(limit // 2, 1), token_counter=self.token_counter)
        if plan.forgotten and self.token_counter(condensed_events(view, plan.action())) <= limit:
            return view, tokens  # forgetting is enough: the fallback forgets
        ranks = {index: rank for index, event in enumerate(view) if (rank := self._cutter.rank(event)) is not None}
        candidates = sorted(ranks, key=lambda index: (ranks[index], -self.event_tokens(view[index]), index))
        cut: list[int] = []
        shown = view
        for index in candidates:
            cut.append(index)
            shown = replace_at(view, cut, self._cutter.cut)
            tokens = self.token_counter(shown)
            if tokens <= limit:
                break
        if not cut:
            return view, tokens
        ids = [view[index].id for index in cut]
        self.cut_ids.update(event_id for event_id in ids if event_id is not None)
        logger.info("cache_aware: events %s cut to fit hard_limit %d (now %d tokens)", ids, limit, tokens)
        return shown, tokens

    def is_cold(self, now: float) -> bool:
        """The provider's cache holds nothing of the previous prompt at `now` (by the scheduler's own cache)."""
        return self._cache.is_cold(now)


# -- the members ------------------------------------------------------------------------------------


def _members(condenser: Condenser) -> list[Condenser]:
    """The strategies the scheduler gates one by one: a pipeline's members (nested pipelines flattened), else the condenser."""
    if isinstance(condenser, PipelineCondenser):
        return [member for inner in condenser.members() for member in _members(inner)]
    return [condenser]


class _Gate:
    def run(self, view: View, scheduler: CacheAwareCondenser, now: float, pending: list[dict[str, Any]]) -> View | Condensation:
        raise NotImplementedError


def _gate(member: Condenser) -> _Gate:
    if isinstance(member, RollingCondenser):
        return _RollingGate(member)
    return _TransformGate(member)


def _has_model(member: Condenser) -> bool:
    return getattr(member, "llm", None) is not None


class _RollingGate(_Gate):
    """Lets a rolling strategy condense when the scheduler says so."""

    def __init__(self, member: RollingCondenser) -> None:
        self.member = member
        self._summary_tokens = 0  # of the last summary this member wrote

    def run(self, view: View, scheduler: CacheAwareCondenser, now: float, pending: list[dict[str, Any]]) -> View | Condensation:
        member = self.member
        tokens = scheduler.token_counter(view)
        must: DecisionReason | None = None
        if view.unhandled_condensation_request:
            must = "request"
        elif tokens > scheduler.hard_limit:
            must = "hard_limit"
        if must == "hard_limit" and scheduler.condensed_this_step:
            return view  # the strategy already condensed at this step and it was not enough: the fallback forgets
        before, static = scheduler.blocks(view)
        if must is None and not scheduler.may_cut(before):
            return view
        made: Condensation | None = None
        if isinstance(member, ForgettingCondenser):
            after, extra = self._planned(view, scheduler)
            if must == "hard_limit" and after is not None and sum(b.tokens for b in after) > scheduler.hard_limit:
                return view  # its plan would not bring the prompt under the limit: the fallback forgets
        elif not _has_model(member):
            # Made first to weigh it; recorded as what it answers ("custom" unless it must).
            outcome = member.condense_now(view, reason=_CORE_REASON.get(must or "", "custom"))
            if not isinstance(outcome, Condensation):
                return view if must is None else outcome
            made = outcome
            after, _ = scheduler.blocks(condensed_events(view, outcome.action))
            extra = 0.0
        else:
            # A model and no plan: nothing to weigh without calling it; only when it must, or when the
            # cache is cold and the strategy's own trigger fires.
            if must is None:
                if not (scheduler.is_cold(now) and member.should_condense(view)):
                    return view
                must = "cold_cache"
            after, extra = before, 0.0
        if after is None:
            if must is None:
                return view
            after = before
        go, record = scheduler.decide(before, after, static=static, now=now, must=must, extra_cost=extra)
        if not go:
            return view
        if made is None:
            outcome = member.condense_now(view, reason=_CORE_REASON.get(record["reason"], "custom"))
            if not isinstance(outcome, Condensation):
                return outcome
            made = outcome
        made_tokens = made.metadata.tokens_after if made.metadata is not None else None
        if must != "request" and made_tokens is not None and made_tokens >= tokens:
            # It did not shrink the prompt (a summary longer than what it replaced): dropped, so
            # that nothing condenses again at this step without progress; the fallback acts if it must.
            scheduler.dropped += 1
            logger.warning(
                "cache_aware: a condensation by %s did not shrink the prompt (%d -> %d tokens); dropped",
                member.name, tokens, made_tokens,
            )
            return view
        summary = made.action.summary
        if summary:
            self._summary_tokens = scheduler.token_counter([AgentCondensationObservation(content=summary)])
        if made.metadata is not None:
            record["tokens_after_made"] = made.metadata.tokens_after
        return _with_decision(made, record)

    def _planned(self, view: View, scheduler: CacheAwareCondenser) -> tuple[list[PromptBlock] | None, float]:
        """The prompt after the member's planned condensation (a summary of the size of the last one), and a summarizer's cost."""
        member = self.member
        assert isinstance(member, ForgettingCondenser)
        plan = member.plan(view)
        if not plan.forgotten:
            return None, 0.0
        forgotten = set(plan.forgotten)
        events = plan.structure.events
        summarizes = isinstance(member, SummarizingCondenser)
        previous = plan.previous_summary
        summary_tokens = 0
        if summarizes:
            summary_tokens = max(self._summary_tokens, scheduler.event_tokens(previous) if previous is not None else 0)
        blocks: list[PromptBlock] = []
        for index, event in enumerate(events):
            if index == plan.head_end and summarizes:
                blocks.append(PromptBlock(("summary", id(view)), summary_tokens))
            if index in forgotten or (summarizes and event is previous):
                continue
            blocks.append(PromptBlock(id(event), scheduler.event_tokens(event), source=event))
        extra = 0.0
        if summarizes and _has_model(member):
            read = sum(scheduler.event_tokens(events[i]) for i in plan.forgotten)
            extra = scheduler.pricing.cost(uncached=read, output=max(summary_tokens, 500))
        return blocks, extra


def _with_decision(condensation: Condensation, record: dict[str, Any]) -> Condensation:
    metadata = condensation.metadata
    if metadata is None:
        return condensation
    condensation.metadata = replace(metadata, extra={**metadata.extra, CACHE_DECISION_KEY: record})
    return condensation


class _TransformGate(_Gate):
    """Applies a view transform (masking, offload) only before a frontier, which moves in batches."""

    def __init__(self, member: Condenser) -> None:
        self.member = member
        self.frontier = 0
        """Events with a smaller id are shown as the member transforms them."""

    def run(self, view: View, scheduler: CacheAwareCondenser, now: float, pending: list[dict[str, Any]]) -> View | Condensation:
        derived = self.member.condense(view)
        if isinstance(derived, Condensation) or len(derived) != len(view):
            return derived  # not a one-for-one transform: nothing to batch
        frontier = self.frontier

        def shown(index: int, event: Event) -> Event:
            return derived[index] if event.id is not None and event.id < frontier else event

        current = map_events(view, shown)
        if all(a is b for a, b in zip(current, derived)):
            return current
        tokens = scheduler.token_counter(current)
        must: DecisionReason | None = "hard_limit" if tokens > scheduler.hard_limit else None
        before, static = scheduler.blocks(current)
        after, _ = scheduler.blocks(derived)
        go, record = scheduler.decide(before, after, static=static, now=now, must=must)
        if not go:
            return current
        # Up to the newest event transformed now: those that leave the member's window later wait for the next batch.
        changed = [event.id for event, new in zip(view, derived) if new is not event and event.id is not None]
        self.frontier = max(changed, default=frontier - 1) + 1
        record["transform"] = self.member.name
        record["frontier"] = self.frontier
        pending.append(record)
        return derived


def agent_pricing(model: str | None) -> tuple[PromptPricing, str]:
    """The pricing for the agent's `model`, and a line saying whose it is: the model's, else `FALLBACK_PRICING`'s.

    A model litellm knows no price for is said in a warning (once per model).
    """
    if model:
        try:
            return resolve_pricing(model), f"priced as {model} (the agent's model)"
        except UnknownPriceError:
            note = f"no known prices for {model!r}: priced as {FALLBACK_PRICING} (the fallback)"
            if model not in _WARNED:
                _WARNED.add(model)
                logger.warning("cache_aware: %s", note)
            return resolve_pricing(FALLBACK_PRICING), note
    return resolve_pricing(FALLBACK_PRICING), f"priced as {FALLBACK_PRICING} (no agent model given: the fallback)"


_WARNED: set[str] = set()


# -- what is cut to fit hard_limit -------------------------------------------------------------------


class FitCutter:
    """What the scheduler cuts when forgetting cannot bring a view under `hard_limit` (the log keeps every event whole).

    Cuts the events shown over `preview_chars`: tool outputs, then messages; each cut once, the copy reused."""

    def __init__(self, preview_chars: int) -> None:
        self.preview_chars = preview_chars
        self._outputs = LargeOutputOffloadCondenser(large_payload_threshold=preview_chars + 1, preview_chars=preview_chars)
        self._messages: dict[int, tuple[Event, Event]] = {}  # id(event) -> (event, its cut copy)

    def rank(self, event: Event) -> int | None:
        """When `event` is cut, among those that may be: 0 a tool output, 1 a message; None: never cut."""
        if self._outputs.is_large(event):
            return 0
        if self._is_long_message(event):
            return 1
        return None

    def cut(self, event: Event) -> Event:
        """The cut copy of `event` (the event itself when it is not cut)."""
        if not self._is_long_message(event):
            return self._outputs.offload_if_large(event)
        kept = self._messages.get(id(event))
        if kept is not None and kept[0] is event:
            return kept[1]
        assert isinstance(event, MessageAction) and event.id is not None
        notice = offload_notice(len(event.content), event.id)
        copy = event.model_copy(update={"content": f"{event.content[: self.preview_chars]}\n{notice}"})
        self._messages[id(event)] = (event, copy)
        return copy

    def _is_long_message(self, event: Event) -> bool:
        return (
            isinstance(event, MessageAction)
            and event.id is not None
            and not event.hidden
            and len(event.content) > self.preview_chars + 1
        )
