"""Check a replay's prompts, prompt cache and dollars against what the provider billed (the log's recorded usage).

OpenHands logs record, on the action each model response produced, what the provider reported for
the request (`llm_metrics.token_usages[]`: `model`, `prompt_tokens`, `cache_read_tokens`,
`cache_write_tokens`, `completion_tokens`, `response_id`). `calibrate_log(path)` replays the log
with its own condensations (`replay --recorded`: the prompt the agent was sent at each step),
matches each recorded request to the step whose action it produced, prices our prompt in a
`PromptCache` with the recorded model's prices and cache rules, and compares, per request and summed:
prompt tokens, cache reads and writes, and prompt dollars (the prompt side only, reads, writes and
plain input; completion tokens are the model's, not the prompt's, and are left out of both).

**Recorded prompt tokens.** OpenAI's `prompt_tokens` include the cached ones; Anthropic's (and
litellm's proxies of it, in the logs we have) leave the tokens written to the cache out. A log in
which any request reports `cache_read_tokens + cache_write_tokens > prompt_tokens` is read the
second way: the prompt sent is `prompt_tokens + cache_write_tokens` (`RecordedUsage.sent_tokens`).

**Reconstruction** (`reconstruct=True`, the default; or the names of `RECONSTRUCTIONS` to make):
what the agent really sent, where the log does not hold it, each one said in
`LogCalibration.reconstructions`:

- `token_ratio`: our tokenizer is not the provider's (Claude counted with an OpenAI tokenizer), and
  our count of a chat is not the provider's (it bills tool calls and messages with less framing than
  we count): our prompt tokens are scaled by the ratio learned from recorded logs (`TOKEN_RATIOS`).
- `system_prompt`: a log that holds no system prompt was still sent one, with tools: its size is
  inferred from the first matched request (the recorded prompt minus ours, scaled) and put before
  every prompt as one unchanging block.
- `warm_start`: when the first request already read from the cache (a previous conversation with
  the same system prompt left it there), the cache starts holding that fixed prefix.
- `message_chars`: OpenHands V0 cut every observation's text to `OPENHANDS_MAX_MESSAGE_CHARS` (its
  `max_message_chars` default) in the middle before sending it, and the log keeps the whole text: for a
  log with a longer observation the replay is run both ways, and the one nearer the recorded prompt
  tokens is kept.
- `browser_masking`: an agent that masks older browser outputs (OpenHands' `browser_output_masking`,
  attention window 1) shows the model only its newest page; for a log with browser outputs the
  replay is run both ways, and the one nearer the recorded prompt tokens is kept.
- `browser_pages`: for a `browse_interactive` output OpenHands sends the page's accessibility tree,
  which the log leaves out (it holds the page as text): a page shown whole counts at `PAGE_RATIOS`.
- `content_blocks`: Anthropic looks a cached prefix up at most 20 content blocks back, and an
  assistant turn is one block for its text and one per tool call: each message is split into as
  many blocks before the cache sees it (our blocks are otherwise messages).

**Causes** (`LogCalibration.causes`): each difference that remains, named with its figures:
`tokenizer` (prompt tokens still apart after reconstruction), `minimum prefix` (requests one side
cached and the other could not, the prompt being shorter than the shortest cached prefix),
`lifetime` (requests after an idle gap longer than the cache lives), `provider miss` (requests
that read less than the previous one left cached though nothing changed before it: a best-effort
cache routed elsewhere), `unmatched` (recorded requests no step matches, steps no request matches),
and the reconstructions. A log some of whose steps carry no recorded usage is not `complete`: its
sums are over the matched requests only.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openhands_memory.condenser.impl.browser_output_condenser import BrowserOutputCondenser
from openhands_memory.events import (
    Action,
    BrowserOutputObservation,
    Event,
    EventSource,
    Observation,
    SystemMessageAction,
    UnknownObservation,
    load_events,
)
from openhands_memory.llm._model_map import model_entry, model_map
from openhands_memory.llm.message import Message
from openhands_memory.llm.prompt_cache import PromptBlock, PromptCache, PromptPricing, RequestCost, resolve_pricing
from openhands_memory.pipeline import Pipeline
from openhands_memory.prompt_tokens import APPROXIMATE, DEFAULT_TOKENIZER
from openhands_memory.replay.costs import RequestClock
from openhands_memory.replay.driver import AgentStep, Replayer
from openhands_memory.replay.replayer import _condenser_for, _Measure

__all__ = [
    "PAGE_RATIOS",
    "TOKEN_RATIOS",
    "RECONSTRUCTIONS",
    "TOLERANCE",
    "CalibratedRequest",
    "LogCalibration",
    "RecordedUsage",
    "TokenRatio",
    "calibrate_events",
    "calibrate_log",
    "pricing_model_for",
    "recorded_usages",
    "summarize_calibrations",
    "token_ratio_for",
]

RECONSTRUCTIONS = (
    "token_ratio", "system_prompt", "warm_start", "message_chars", "browser_pages", "browser_masking", "content_blocks",
)  # fmt: skip

OPENHANDS_MAX_MESSAGE_CHARS = 30_000
"""OpenHands V0's `LLMConfig.max_message_chars` default (openhands/core/config/llm_config.py): an observation's
text longer than this was cut in the middle before it was sent (the log keeps it whole)."""
"""The reconstructions `calibrate_events` may make (see the module docstring), by name."""

TOLERANCE = 0.05
"""How far (a share of the recorded figure) our summed cache reads and dollars may be from the recorded ones."""


@dataclass(frozen=True, slots=True)
class TokenRatio:
    """Provider tokens per token we count, for one provider family counted with one tokenizer."""

    ratio: float
    """Multiply our count by this to get the provider's."""
    source: str
    """Where it was measured."""


# Learned by `python benchmarks/calibration_held_out.py FOLDER --ship` on the OpenAgentSafety trajectories of
# xli04/Multi_Round_OpenAgentSafety at ab3ebd5 (evaluation/{claude-sonnet,gpt-4o}/traj_*.json, 527 that record
# their usage), less the three in ../shared/fixtures/openhands-logs/ (the README and the tests compare those with
# their bills, so they stay out of sample): 524 logs.
# - tokens: the recorded prompt's growth from the first request to the last, summed over the logs that show no
#   browser page and no output over OPENHANDS_MAX_MESSAGE_CHARS, over ours counted with gpt-4o's tokenizer (each
#   log's `measured_token_ratio`, pooled): claude (Anthropic's tokenizer) 1.1586 on 184 logs; openai 0.9009 on 264
#   (the same tokenizer: the ratio is our chat framing, more tokens per tool call and result than OpenAI bills).
# - The method, checked out of sample (`calibration_held_out.py FOLDER`: learned on the half of the 527 the MD5 of
#   the file name puts in `train`, 270 logs, checked on the other 257): cache reads and prompt dollars are both
#   within 5% of the recorded ones on 86% of the held-out claude logs (106) and 80% of the openai ones (151); with
#   ratios learned on one log each (1.0426, 0.8545), 55% and 69%.
TOKEN_RATIOS: dict[tuple[str, str], TokenRatio] = {
    ("claude", "gpt-4o"): TokenRatio(1.1586, "184 OpenAgentSafety claude-3-7-sonnet logs, benchmarks/calibration_held_out.py --ship"),
    ("openai", "gpt-4o"): TokenRatio(0.9009, "264 OpenAgentSafety gpt-4o logs, benchmarks/calibration_held_out.py --ship"),
}
"""(provider family, our tokenizer) -> the learned ratio, with its source (see the comment above)."""

# The browser pages an agent was shown are not the text the log holds: for a `browse_interactive`
# output OpenHands sends the page's accessibility tree (which the log leaves out: extras hold no
# axtree) where the log holds the page as Markdown. Learned with TOKEN_RATIOS (same command, same 524 logs):
# the median of each log's `measured_page_ratio` (the recorded prompt, less the fixed prefix and the rest of the
# prompt at TOKEN_RATIOS, over our count of the page shown whole, summed over the requests that show one), on the
# logs with browser pages: claude 2.7504 on 14 logs (few logs, a wide spread: a rough figure), openai 2.3104 on 47.
# (Learned on the train half alone: 2.2926 on 6 and 2.3962 on 21.)
PAGE_RATIOS: dict[tuple[str, str], TokenRatio] = {
    ("claude", "gpt-4o"): TokenRatio(2.7504, "14 OpenAgentSafety claude-3-7-sonnet logs with browser pages, benchmarks/calibration_held_out.py --ship"),
    ("openai", "gpt-4o"): TokenRatio(2.3104, "47 OpenAgentSafety gpt-4o logs with browser pages, benchmarks/calibration_held_out.py --ship"),
}
"""(provider family, our tokenizer) -> provider tokens of a shown `browse_interactive` page per token of its logged text."""


def _family(model: str) -> str:
    name = model.lower()
    if "claude" in name:
        return "claude"
    if "gemini" in name:
        return "gemini"
    if any(part in name for part in ("gpt", "o1", "o3", "o4")):
        return "openai"
    return name.split("/")[-1]


def token_ratio_for(model: str, tokenizer: str | None) -> TokenRatio | None:
    """The learned ratio for `model`'s provider counted with `tokenizer`; None when none was learned."""
    return TOKEN_RATIOS.get((_family(model), str(tokenizer)))


def pricing_model_for(model: str) -> str:
    """The name litellm's map prices `model` under: the name, or it with leading `provider/` parts dropped
    (`openai/neulab/gpt-4o` -> `gpt-4o`), or else the shortest priced name that contains its last part
    (`claude-3-7-sonnet-20250219`, retired from the map, -> `anthropic.claude-3-7-sonnet-20250219-v1:0`, Bedrock's,
    at the same prices); the name itself if none is known."""
    parts = model.split("/")
    for start in range(len(parts)):
        candidate = "/".join(parts[start:])
        if _priced(model_entry(candidate)):
            return candidate
    table = model_map() or {}
    last = parts[-1]
    known = sorted((name for name in table if last in name and _priced(model_entry(name))), key=lambda name: (len(name), name))
    return known[0] if known and last else model


def _priced(entry: Mapping[str, Any] | None) -> bool:
    return entry is not None and entry.get("input_cost_per_token") is not None


@dataclass(frozen=True, slots=True)
class RecordedUsage:
    """What the provider reported for one request, as the log recorded it."""

    event_id: int | None
    """The log's id of the event that first carries it (the action the response produced)."""
    model: str
    """The model named in the record."""
    prompt_tokens: int
    """`prompt_tokens` as recorded."""
    completion_tokens: int
    """`completion_tokens` as recorded."""
    cache_read_tokens: int
    """Prompt tokens read from the cache."""
    cache_write_tokens: int
    """Prompt tokens written to the cache."""
    response_id: str
    """The provider's id of the response."""
    writes_excluded: bool = False
    """`prompt_tokens` leaves the written tokens out (Anthropic's convention, see the module docstring)."""

    @property
    def sent_tokens(self) -> int:
        """The prompt's tokens as sent: `prompt_tokens`, plus the written ones where those are left out."""
        return self.prompt_tokens + (self.cache_write_tokens if self.writes_excluded else 0)

    @property
    def uncached_tokens(self) -> int:
        """Prompt tokens neither read from nor written to the cache."""
        return max(self.sent_tokens - self.cache_read_tokens - self.cache_write_tokens, 0)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {**{name: getattr(self, name) for name in self.__slots__}, "sent_tokens": self.sent_tokens}


def recorded_usages(events: Iterable[Event]) -> list[RecordedUsage]:
    """Every request the log records usage for, once each (by `response_id`), in log order.

    - OpenHands (V0): an event's `llm_metrics.token_usages` may hold earlier requests too (OpenHands
      copies the running metrics): only the records not seen before count.
    - OpenHands SDK (V1): a `ConversationStateUpdateEvent` with key `stats` holds each LLM's metrics
      (`usage_to_metrics`): its `token_usages`, when kept, are read as above; else the growth of its
      `accumulated_token_usage` since the previous one is one request, the one that produced the
      next action (the SDK writes the stats just before it); growth no action follows (a title or a
      summarizer call, the `condenser` LLM's) stays on the stats event and matches no step.

    A record is then put on the action whose model response has its `response_id`, where one does.
    """
    seen: set[str] = set()
    found: list[RecordedUsage] = []
    totals: dict[str, tuple[int, int, int, int]] = {}
    pending: int | None = None  # the SDK request whose action has not come yet
    responses: dict[str, int] = {}
    for event in events:
        if isinstance(event, Action) and event.source == EventSource.AGENT:
            response = event.response_id
            if response is not None and event.id is not None:
                responses.setdefault(response, event.id)
            if pending is not None and response is not None and event.id is not None:
                found[pending] = _with(found[pending], event_id=event.id)
                pending = None
        metrics = event.llm_metrics
        usages = metrics.get("token_usages") if isinstance(metrics, Mapping) else None
        if isinstance(usages, list):
            found.extend(_new_records(event.id, usages, seen))
        for name, llm in _sdk_stats(event).items():
            usages = llm.get("token_usages")
            if isinstance(usages, list) and usages:
                found.extend(_new_records(event.id, usages, seen))
                continue
            total = llm.get("accumulated_token_usage")
            if not isinstance(total, Mapping):
                continue
            now = tuple(_int(total.get(key)) for key in ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens"))
            before = totals.get(name, (0, 0, 0, 0))
            totals[name] = now  # type: ignore[assignment]
            grown = [a - b for a, b in zip(now, before)]
            if grown[0] <= 0 or min(grown) < 0:
                continue
            found.append(
                RecordedUsage(
                    event_id=event.id,
                    model=str(total.get("model") or llm.get("model_name") or ""),
                    prompt_tokens=grown[0],
                    completion_tokens=grown[1],
                    cache_read_tokens=grown[2],
                    cache_write_tokens=grown[3],
                    response_id=f"stats:{event.id}:{name}",
                )
            )
            if name != "condenser":
                pending = len(found) - 1
    found = [_with(u, event_id=responses[u.response_id]) if u.response_id in responses else u for u in found]
    excluded = any(u.cache_read_tokens + u.cache_write_tokens > u.prompt_tokens for u in found)
    if excluded:
        found = [_with(u, writes_excluded=True) for u in found]
    return found


def _new_records(event_id: int | None, usages: list[Any], seen: set[str]) -> list[RecordedUsage]:
    records = []
    for index, usage in enumerate(usages):
        if not isinstance(usage, Mapping):
            continue
        response_id = str(usage.get("response_id") or f"{event_id}:{index}")
        if response_id in seen:
            continue
        seen.add(response_id)
        records.append(
            RecordedUsage(
                event_id=event_id,
                model=str(usage.get("model") or ""),
                prompt_tokens=_int(usage.get("prompt_tokens")),
                completion_tokens=_int(usage.get("completion_tokens")),
                cache_read_tokens=_int(usage.get("cache_read_tokens")),
                cache_write_tokens=_int(usage.get("cache_write_tokens")),
                response_id=response_id,
            )
        )
    return records


def _sdk_stats(event: Event) -> dict[str, Mapping[str, Any]]:
    """An SDK stats update's metrics per LLM (`usage_to_metrics`); empty for any other event."""
    if not isinstance(event, UnknownObservation) or event.observation != "ConversationStateUpdateEvent":
        return {}
    extra = event.model_extra or {}
    value = extra.get("value") if extra.get("key") == "stats" else None
    metrics = value.get("usage_to_metrics") if isinstance(value, Mapping) else None
    if not isinstance(metrics, Mapping):
        return {}
    return {str(name): llm for name, llm in metrics.items() if isinstance(llm, Mapping)}


def _with(usage: RecordedUsage, **changes: Any) -> RecordedUsage:
    values = {name: getattr(usage, name) for name in usage.__slots__}
    values.update(changes)
    return RecordedUsage(**values)


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) and value >= 0 else 0


@dataclass(frozen=True, slots=True)
class CalibratedRequest:
    """One recorded request next to our step: prompt tokens, cache and prompt dollars, both sides."""

    step: int
    """The replay's step (1 = first)."""
    event_id: int | None
    """The log's id of the step's action."""
    recorded: RecordedUsage
    """What the provider reported."""
    counted_tokens: int
    """Our prompt tokens as our tokenizer counts them (the replay's)."""
    ours: RequestCost
    """Our prompt, reconstructed, through our prompt cache."""
    recorded_cost: float
    """USD of the recorded prompt (reads, writes, plain input) at the pricing's prices."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "step": self.step,
            "event_id": self.event_id,
            "recorded": self.recorded.to_dict(),
            "counted_tokens": self.counted_tokens,
            "ours": self.ours.to_dict(),
            "recorded_cost": self.recorded_cost,
        }


_FIGURES = ("prompt_tokens", "cache_read_tokens", "cache_write_tokens", "cost")


@dataclass(slots=True)
class LogCalibration:
    """One log's requests, ours against the provider's, summed, with the causes of the differences."""

    source: str
    """Where the log came from."""
    model: str | None = None
    """The model the requests went to (the most common in the records); None: none recorded."""
    pricing: str | None = None
    """The pricing the dollars are at."""
    tokenizer: str | None = None
    """Our tokenizer."""
    steps: int = 0
    """The replay's steps (each a request the agent made)."""
    requests: list[CalibratedRequest] = field(default_factory=list)
    """The matched requests, in order."""
    unmatched_records: list[RecordedUsage] = field(default_factory=list)
    """Recorded requests no step matches (a summarizer's call, a request whose action the log lacks)."""
    unmatched_steps: list[int] = field(default_factory=list)
    """Steps no recorded request matches."""
    reconstructions: list[str] = field(default_factory=list)
    """What was reconstructed of what the agent sent, each said in one line."""
    causes: list[str] = field(default_factory=list)
    """The differences that remain, each named with its figures."""
    reason: str | None = None
    """Why nothing could be compared (no recorded usage), if so."""
    measured_token_ratio: float | None = None
    """The recorded prompt's growth over ours (unscaled) from the first matched request to the last: what `TOKEN_RATIOS` is learned from."""
    measured_page_ratio: float | None = None
    """With the token ratio and browser pages reconstructed: the recorded prompt, less the fixed prefix and the
    rest of the prompt at the token ratio, over our count of the page shown whole, summed over the requests
    that show one: what `PAGE_RATIOS` is learned from."""
    seconds: float = 0.0
    """Wall time."""

    @property
    def complete(self) -> bool:
        """Every step carries recorded usage and every record a step."""
        return bool(self.requests) and not self.unmatched_steps and not self.unmatched_records

    def totals(self) -> dict[str, dict[str, float]]:
        """Per figure (`prompt_tokens`, `cache_read_tokens`, `cache_write_tokens`, `cost`): ours, recorded, and their relative difference."""
        ours = {
            "prompt_tokens": sum(r.ours.prompt_tokens for r in self.requests),
            "cache_read_tokens": sum(r.ours.cache_read_tokens for r in self.requests),
            "cache_write_tokens": sum(r.ours.cache_write_tokens for r in self.requests),
            "cost": sum(r.ours.cost for r in self.requests),
        }
        recorded = {
            "prompt_tokens": sum(r.recorded.sent_tokens for r in self.requests),
            "cache_read_tokens": sum(r.recorded.cache_read_tokens for r in self.requests),
            "cache_write_tokens": sum(r.recorded.cache_write_tokens for r in self.requests),
            "cost": sum(r.recorded_cost for r in self.requests),
        }
        return {key: _compared(ours[key], recorded[key]) for key in _FIGURES}

    @property
    def is_within_tolerance(self) -> bool:
        """Summed cache reads and dollars are both within `TOLERANCE` of the recorded ones."""
        if not self.requests:
            return False
        totals = self.totals()
        return all(
            totals[key]["difference"] is not None and abs(totals[key]["difference"]) <= TOLERANCE
            for key in ("cache_read_tokens", "cost")
        )

    def summary(self) -> dict[str, Any]:
        """The headline figures, JSON-ready."""
        return {
            "source": self.source,
            "model": self.model,
            "pricing": self.pricing,
            "tokenizer": self.tokenizer,
            "steps": self.steps,
            "requests": len(self.requests),
            "unmatched_records": len(self.unmatched_records),
            "unmatched_steps": len(self.unmatched_steps),
            "complete": self.complete,
            "within_tolerance": self.is_within_tolerance,
            "totals": self.totals() if self.requests else None,
            "reconstructions": list(self.reconstructions),
            "causes": list(self.causes),
            "reason": self.reason,
            "measured_token_ratio": self.measured_token_ratio,
            "measured_page_ratio": self.measured_page_ratio,
        }

    def to_dict(self) -> dict[str, Any]:
        """The summary and every request, JSON-ready."""
        return {
            **self.summary(),
            "request_list": [r.to_dict() for r in self.requests],
            "unmatched_record_list": [u.to_dict() for u in self.unmatched_records],
            "unmatched_step_list": list(self.unmatched_steps),
        }


def _compared(ours: float, recorded: float) -> dict[str, float]:
    difference = (ours - recorded) / recorded if recorded else (0.0 if not ours else None)
    return {"ours": ours, "recorded": recorded, "difference": difference}  # type: ignore[dict-item]


def summarize_calibrations(calibrations: Iterable[LogCalibration]) -> dict[str, dict[str, Any]]:
    """Per model: logs, requests, and ours against recorded summed over its logs (as `LogCalibration.totals`)."""
    sums: dict[str, dict[str, Any]] = {}
    for calibration in calibrations:
        if not calibration.requests:
            continue
        entry = sums.setdefault(
            calibration.model or "?",
            {"logs": 0, "requests": 0, **{key: {"ours": 0.0, "recorded": 0.0} for key in _FIGURES}},
        )
        entry["logs"] += 1
        entry["requests"] += len(calibration.requests)
        for key, figures in calibration.totals().items():
            entry[key]["ours"] += figures["ours"]
            entry[key]["recorded"] += figures["recorded"]
    for entry in sums.values():
        for key in _FIGURES:
            entry[key] = _compared(entry[key]["ours"], entry[key]["recorded"])
    return sums


# ---------------------------------------------------------------------------------------------- the run


@dataclass(frozen=True, slots=True)
class _Step:
    number: int
    event_id: int | None
    tokens: int
    blocks: tuple[PromptBlock, ...]
    static: int
    at: float
    pages: frozenset[int] = frozenset()
    """Indexes of `blocks` that are a browse_interactive page shown whole."""
    parts: tuple[int, ...] = ()
    """For each of `blocks`, how many content blocks it is sent as (Anthropic counts its cache lookback in them)."""


def _content_blocks(message: Message) -> int:
    if message.role == "assistant":
        return max((1 if message.text.strip() else 0) + len(message.tool_calls or ()), 1)
    return max(len(message.content), 1)


def _replayed_steps(
    events: Sequence[Event], masked: bool, tokenizer: str | None, max_message_chars: int | None = None
) -> list[_Step]:
    """Every step of `events` replayed with their own condensations (and older browser outputs masked, observations
    cut to `max_message_chars`): tokens, blocks, time."""
    recorded = _condenser_for(BrowserOutputCondenser(attention_window=1) if masked else None, True)
    pipeline = Pipeline(recorded.condenser, recorded.description, recorded.history_policy, max_message_chars=max_message_chars)
    measure = _Measure(tokenizer, pipeline)
    replayer = Replayer(measure.pipeline, keep_recorded=True)
    clock = RequestClock()
    logged = {
        event.tool_call_metadata.tool_call_id: event.content
        for event in events
        if isinstance(event, BrowserOutputObservation)
        and event.trigger_by_action == "browse_interactive"
        and event.tool_call_metadata is not None
    }
    steps: list[_Step] = []
    for item in replayer.replay(clock.track(events)):
        if isinstance(item, AgentStep):
            messages = measure.messages(item.shown, replayer.initial_user_action)
            tokens = measure.tokens(item.shown)
            blocks, static = measure.blocks()
            first = len(blocks) - len(messages)  # the tool definitions come first, as one block
            whole = {
                event.tool_call_metadata.tool_call_id
                for event in item.shown
                if isinstance(event, BrowserOutputObservation)
                and event.tool_call_metadata is not None
                and logged.get(event.tool_call_metadata.tool_call_id) == event.content
            }
            pages = frozenset(first + i for i, message in enumerate(messages) if message.tool_call_id in whole)
            parts = (1,) * first + tuple(_content_blocks(message) for message in messages)
            steps.append(
                _Step(item.number, item.event.id, tokens, tuple(blocks), static, clock.now(item.event), pages, parts)
            )
    return steps


def calibrate_events(
    events: Sequence[Event],
    *,
    source: str = "<events>",
    tokenizer: str | None = DEFAULT_TOKENIZER,
    pricing: str | Mapping[str, Any] | PromptPricing | None = None,
    reconstruct: bool | Iterable[str] = True,
) -> LogCalibration:
    """Compare every recorded request of `events` (a whole log) with our replay of it (see the module docstring).

    Args:
        events: the log's events, in order.
        source: names the log in the report.
        tokenizer: the model whose tokenizer counts our prompts (None: four characters a token).
        pricing: the prices and cache rules (a model name, table or file, see `resolve_pricing`);
            None: the recorded model's (`pricing_model_for`).
        reconstruct: reconstruct what the agent sent where the log lacks it (see the module docstring):
            True for all of `RECONSTRUCTIONS`, False for none, or the names of those to make.

    Raises:
        UnknownPriceError: the pricing (given, or the recorded model's) has no known price.
        CondensationStalledError: a recorded condensation made no progress.
        ValueError: `reconstruct` names an unknown reconstruction.
    """
    started = time.perf_counter()
    wanted = set(RECONSTRUCTIONS if reconstruct is True else () if reconstruct is False else reconstruct)
    unknown = wanted - set(RECONSTRUCTIONS)
    if unknown:
        raise ValueError(f"unknown reconstruction(s) {', '.join(sorted(unknown))}: one of {', '.join(RECONSTRUCTIONS)}")
    events = list(events)
    report = LogCalibration(source=source, tokenizer=tokenizer)
    usages = recorded_usages(events)
    if not usages:
        report.reason = "no recorded usage (no llm_metrics.token_usages, no SDK stats, in the log)"
        report.steps = len(_replayed_steps(events, False, tokenizer))
        report.unmatched_steps = list(range(1, report.steps + 1))
        report.seconds = time.perf_counter() - started
        return report
    model = Counter(u.model for u in usages).most_common(1)[0][0]
    report.model = model
    prices = resolve_pricing(pricing) if pricing is not None else PromptPricing.for_model(pricing_model_for(model))
    report.pricing = prices.name

    steps = _replayed_steps(events, False, tokenizer)
    cut_at: int | None = None
    ratio = page_ratio = 1.0
    if wanted:
        learned = token_ratio_for(model, tokenizer or APPROXIMATE) if "token_ratio" in wanted else None
        if learned is not None:
            ratio = learned.ratio
            report.reconstructions.append(
                f"token ratio: our prompt tokens x {ratio} ({_family(model)} counted with {tokenizer or APPROXIMATE}; learned from {learned.source})"
            )
        elif "token_ratio" in wanted:
            report.causes.append(f"tokenizer: no learned ratio for {_family(model)} counted with {tokenizer or APPROXIMATE}: counted as is")
        page_ratio = ratio
        if "message_chars" in wanted and any(
            isinstance(event, Observation) and len(event.content) > OPENHANDS_MAX_MESSAGE_CHARS for event in events
        ):
            cut = _replayed_steps(events, False, tokenizer, OPENHANDS_MAX_MESSAGE_CHARS)
            if _error(cut, usages, ratio, page_ratio) < _error(steps, usages, ratio, page_ratio):
                steps, cut_at = cut, OPENHANDS_MAX_MESSAGE_CHARS
                report.reconstructions.append(
                    f"long outputs: the agent cut every observation to {cut_at:,} characters (OpenHands' max_message_chars "
                    "default; the log keeps them whole): nearer the recorded prompt tokens than every output in full"
                )
        if any(isinstance(event, BrowserOutputObservation) for event in events):
            learned_page = PAGE_RATIOS.get((_family(model), tokenizer or APPROXIMATE)) if "browser_pages" in wanted else None
            if learned_page is not None and any(step.pages for step in steps):
                page_ratio = learned_page.ratio
                report.reconstructions.append(
                    f"browser pages: a browse_interactive page shown whole counts x {page_ratio} of our count of its "
                    f"logged text (the agent sent its accessibility tree, which the log leaves out; learned from {learned_page.source})"
                )
            masked = _replayed_steps(events, True, tokenizer, cut_at) if "browser_masking" in wanted else steps
            if masked is not steps and _error(masked, usages, ratio, page_ratio) < _error(steps, usages, ratio, page_ratio):
                steps = masked
                report.reconstructions.append(
                    "browser output: the agent showed only its newest browser output (older ones masked, "
                    "browser_output_masking with attention window 1): nearer the recorded prompt tokens than every page in full"
                )
    report.steps = len(steps)
    by_event = {u.event_id: u for u in _last_per_event(usages)}
    matched = [(step, by_event.get(step.event_id)) for step in steps]
    matched_ids = {step.event_id for step, usage in matched if usage is not None}
    report.unmatched_steps = [step.number for step, usage in matched if usage is None]
    report.unmatched_records = [u for u in usages if u.event_id not in matched_ids or by_event.get(u.event_id) is not u]
    pairs = [(step, usage) for step, usage in matched if usage is not None]
    if len(pairs) >= 2 and pairs[-1][0].tokens > pairs[0][0].tokens:
        report.measured_token_ratio = round(
            (pairs[-1][1].sent_tokens - pairs[0][1].sent_tokens) / (pairs[-1][0].tokens - pairs[0][0].tokens), 4
        )

    if pairs and page_ratio != ratio:
        first_step, first_usage = pairs[0]
        fixed = first_usage.sent_tokens - ratio * first_step.tokens
        shown = [
            (usage.sent_tokens - fixed - ratio * (step.tokens - page), page)
            for step, usage in pairs
            for page in [sum(step.blocks[i].tokens for i in step.pages)]
            if page
        ]
        if shown:
            report.measured_page_ratio = round(sum(t for t, _ in shown) / sum(p for _, p in shown), 4)

    prefix, warm = 0, False
    if pairs:
        has_system = any(isinstance(event, SystemMessageAction) for event in events)
        first_step, first_usage = pairs[0]
        first_tokens = _scaled_tokens(first_step, ratio, page_ratio)
        missing = first_usage.sent_tokens - first_tokens
        if "system_prompt" in wanted and not has_system and missing > 0:
            prefix = missing
            report.reconstructions.append(
                f"missing system prompt and tool definitions: the log holds none; {prefix:,} tokens inferred "
                f"from the first request ({first_usage.sent_tokens:,} recorded, {first_tokens:,} ours)"
            )
        if "warm_start" in wanted and first_usage.cache_read_tokens > 0:
            warm = True
            report.reconstructions.append(
                f"warm start: the first request read {first_usage.cache_read_tokens:,} cached tokens (a previous "
                "conversation's prompt): the cache starts holding the fixed prefix"
            )

    cache = PromptCache(prices)
    # Anthropic looks a cached prefix up at most 20 *content blocks* back (an assistant turn's text and each
    # tool call are one each): our blocks are messages, so each is split into as many.
    split = "content_blocks" in wanted and prices.rules.matching == "breakpoints"
    if split and any(part > 1 for step in steps for part in step.parts):
        report.reconstructions.append(
            "content blocks: the cache lookback counts content blocks (text, each tool call), not messages"
        )
    expired = 0
    for index, (step, usage) in enumerate(matched):
        blocks, static = _reconstructed(step, ratio, page_ratio, prefix, split=split)
        if warm and index == 0:
            fixed = blocks[:static] if static else blocks[:1]
            cache.request(fixed, at=step.at, static_blocks=len(fixed))
        cost = cache.request(blocks, at=step.at, static_blocks=static)
        if cost.kind == "expired":
            expired += 1
        if usage is None:
            continue
        recorded_cost = prices.cost(
            read=usage.cache_read_tokens, written=usage.cache_write_tokens, uncached=usage.uncached_tokens
        )
        report.requests.append(CalibratedRequest(step.number, step.event_id, usage, step.tokens, cost, recorded_cost))
    report.causes.extend(_causes(report, prices, expired))
    report.seconds = time.perf_counter() - started
    return report


def _last_per_event(usages: list[RecordedUsage]) -> list[RecordedUsage]:
    last: dict[int | None, RecordedUsage] = {}
    for usage in usages:
        last[usage.event_id] = usage
    return list(last.values())


def _scaled_tokens(step: _Step, ratio: float, page_ratio: float) -> int:
    return sum(round(block.tokens * (page_ratio if i in step.pages else ratio)) for i, block in enumerate(step.blocks))


def _reconstructed(
    step: _Step, ratio: float, page_ratio: float, prefix: int, *, split: bool
) -> tuple[list[PromptBlock], int]:
    """The step's prompt as the provider saw it (as far as reconstructed): blocks, and how many lead it unchanged."""
    blocks: list[PromptBlock] = []
    static = step.static
    for i, block in enumerate(step.blocks):
        tokens = round(block.tokens * (page_ratio if i in step.pages else ratio))
        parts = step.parts[i] if split and i < len(step.parts) else 1
        if parts <= 1:
            blocks.append(PromptBlock(block.key, tokens))
            continue
        share = tokens // parts
        for part in range(parts):
            blocks.append(PromptBlock((block.key, part), share if part < parts - 1 else tokens - share * (parts - 1)))
        if i < step.static:
            static += parts - 1
    if prefix:
        blocks.insert(0, PromptBlock(("reconstructed fixed prefix", prefix), prefix))
        static += 1
    return blocks, static


def _error(steps: list[_Step], usages: list[RecordedUsage], ratio: float, page_ratio: float) -> float:
    """How far the steps' prompts, scaled, are from the recorded ones, the fixed prefix set by the first (summed absolute differences)."""
    by_event = {u.event_id: u for u in _last_per_event(usages)}
    pairs = [(_scaled_tokens(s, ratio, page_ratio), by_event[s.event_id].sent_tokens) for s in steps if s.event_id in by_event]
    if not pairs:
        return 0.0
    ours0, recorded0 = pairs[0]
    return float(sum(abs((r - recorded0) - (o - ours0)) for o, r in pairs))


def _causes(report: LogCalibration, prices: PromptPricing, expired: int) -> list[str]:
    causes: list[str] = []
    requests = report.requests
    if not requests:
        return causes
    totals = report.totals()
    prompt = totals["prompt_tokens"]
    if prompt["difference"] is not None and abs(prompt["difference"]) > 0.005:
        causes.append(
            f"tokenizer: our prompts hold {prompt['ours']:,.0f} tokens against {prompt['recorded']:,.0f} recorded "
            f"({prompt['difference']:+.1%})"
        )
    reads, writes = totals["cache_read_tokens"], totals["cache_write_tokens"]
    if not writes["recorded"] and writes["ours"]:
        causes.append(
            f"writes: the provider reports no cache writes (it bills none extra); our {writes['ours']:,.0f} written tokens "
            "are priced as it prices them"
        )
    elif writes["difference"] is not None and abs(writes["difference"]) > 0.005:
        causes.append(
            f"cache writes: ours {writes['ours']:,.0f} against {writes['recorded']:,.0f} recorded ({writes['difference']:+.1%}): "
            "where our cache model's prefixes end differs from the provider's"
        )
    if reads["difference"] is not None and abs(reads["difference"]) > 0.005:
        causes.append(
            f"cache reads: ours {reads['ours']:,.0f} against {reads['recorded']:,.0f} recorded ({reads['difference']:+.1%})"
        )
    if not prices.caches and reads["recorded"]:
        causes.append(
            f"pricing: litellm's map gives {prices.name} no cache-read price, so nothing is cached in our model; "
            f"the provider read {reads['recorded']:,.0f} tokens from its cache"
        )
    minimum = prices.min_cache_tokens
    below = [
        r
        for r in requests
        if (r.ours.cache_read_tokens == 0) != (r.recorded.cache_read_tokens == 0)
        and min(r.ours.prompt_tokens, r.recorded.sent_tokens) < max(minimum, 1) * 2
    ]
    if below:
        causes.append(
            f"minimum prefix: {len(below)} request(s) near the {minimum:,}-token minimum cacheable prefix cached on one side only"
        )
    if expired:
        causes.append(
            f"lifetime: {expired} request(s) came after an idle gap longer than the cache's "
            f"{prices.lifetime_seconds:,.0f} s lifetime (cold in our model)"
        )
    misses = 0
    missed_tokens = 0
    for before, after in zip(requests, requests[1:]):
        expected = min(before.recorded.sent_tokens, after.ours.cache_read_tokens)
        if after.recorded.cache_read_tokens + 1024 < expected and after.ours.kind == "warm":
            misses += 1
            missed_tokens += expected - after.recorded.cache_read_tokens
    if misses:
        causes.append(
            f"provider miss: {misses} request(s) read {missed_tokens:,} tokens less than the previous request left cached "
            "while our cache served them (a best-effort cache routed elsewhere; not modelled)"
        )
    if report.unmatched_records:
        causes.append(f"unmatched: {len(report.unmatched_records)} recorded request(s) match no step")
    if report.unmatched_steps:
        causes.append(f"unmatched: {len(report.unmatched_steps)} step(s) carry no recorded usage (not summed)")
    return causes


def calibrate_log(path: str | os.PathLike[str], **options: Any) -> LogCalibration:
    """Load a log (any layout `load_events` reads) and calibrate it; `options` are `calibrate_events`'.

    Raises:
        FileNotFoundError: no log at `path`.
        MalformedEventError: the log cannot be read.
        UnknownPriceError: the pricing has no known price.
    """
    return calibrate_events(load_events(path), source=str(path), **options)
