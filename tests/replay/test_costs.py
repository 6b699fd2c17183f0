"""Request times from a log's timestamps, and a run's costs summed per pricing."""

from __future__ import annotations

import re

import pytest

from openhands_memory.events import EventSource, MessageAction
from openhands_memory.llm.prompt_cache import CACHE_RULES, PromptBlock, PromptPricing
from openhands_memory.replay.costs import RequestClock, RunCosts, summarize_costs, summarizer_cost

PRICING = PromptPricing(
    model="m",
    rules_name="openai",
    input_cost_per_token=2.0,
    output_cost_per_token=8.0,
    cache_read_cost_per_token=0.5,
    cache_write_cost_per_token=2.0,
    min_cache_tokens=0,
    rules=CACHE_RULES["openai"].model_copy(update={"block_tokens": 1}),
)


def message(text: str, timestamp: str | None) -> MessageAction:
    event = MessageAction(content=text, timestamp=timestamp)
    event.source = EventSource.AGENT
    return event


def test_a_request_is_made_when_the_event_before_its_action_was_recorded() -> None:
    events = [
        message("task", "2025-01-01T00:00:00"),
        message("step 1", "2025-01-01T00:00:30"),
        message("output", "2025-01-01T00:10:00"),
        message("step 2", "2025-01-01T00:10:40"),
    ]
    clock = RequestClock()
    times = {}
    for event in clock.track(events):
        if event.content.startswith("step"):
            times[event.content] = clock.now(event)
    assert times["step 2"] - times["step 1"] == 600.0  # from `task` to `output`
    assert clock.timed_steps == 2


def test_steps_without_a_readable_time_come_step_seconds_after_the_previous_one() -> None:
    events = [
        message("a", None),
        message("b", "not a time"),
        message("c", "2025-01-01T00:00:00"),
        message("d", "2024-01-01T00:00:00"),
        message("e", None),
    ]
    clock = RequestClock(step_seconds=7.0)
    seen = [clock.now(event) for event in clock.track(events)]
    # a: no time at all (0); b: a has none and b's does not parse (+7); c: its own; d: c's (the
    # event before it); e: d's, which is earlier than the step before (+7).
    assert seen[:2] == [0.0, 7.0]
    assert seen[2] == seen[3] and seen[4] == seen[3] + 7.0
    assert clock.timed_steps == 2
    with pytest.raises(ValueError, match=re.escape("step_seconds must be at least 0, got -1")):
        RequestClock(step_seconds=-1)


def test_a_runs_costs_are_summed_per_pricing_and_the_lists_left_out() -> None:
    costs = RunCosts([PRICING])
    costs.add_step(1, [PromptBlock("a", 10)], at=0.0, static_blocks=0)
    costs.add_step(2, [PromptBlock("a", 10), PromptBlock("b", 5)], at=1.0, static_blocks=0)
    one = costs.to_dict()["m"]
    assert one["per_step_cost"] == pytest.approx([20.0, 10 * 0.5 + 5 * 2.0])
    assert (one["cache_read_tokens"], one["cache_write_tokens"]) == (10, 15)
    total = summarize_costs([costs.to_dict(), costs.to_dict()])["m"]
    assert total["prompt_cost"] == pytest.approx(2 * 35.0)
    assert total["prompt_cost_without_cache"] == pytest.approx(2 * 50.0)
    assert "breaks" not in total and "per_step_cost" not in total


def test_the_summarizers_recorded_calls_are_priced_with_what_their_provider_cached() -> None:
    usage = {"accumulated_token_usage": {"prompt_tokens": 100, "completion_tokens": 10, "cache_read_tokens": 40}}
    assert summarizer_cost({"llm_usage": usage}, PRICING) == pytest.approx(40 * 0.5 + 60 * 2.0 + 10 * 8.0)
    assert summarizer_cost({"llm_usage": None}, PRICING) == 0.0
    assert summarizer_cost(None, PRICING) == 0.0
