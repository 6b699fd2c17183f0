"""`cache_aware`: when it lets its strategy condense (must, cold cache, pays), what it records, and masking in batches."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openhands_memory.condenser import (
    CACHE_DECISION_KEY,
    ApproximateTokenCounter,
    CacheAwareCondenser,
    Condenser,
    load_condenser_config,
)
from openhands_memory.condenser.forgetting import plan_forgetting
from openhands_memory.errors import CondenserConfigError
from openhands_memory.condenser import Condensation
from openhands_memory.events import CmdOutputObservation, Event
from openhands_memory.view import View
from openhands_memory.llm.prompt_cache import PromptBlock, PromptCache, PromptPricing
from openhands_memory.replay import AgentStep, Replayer
from openhands_memory.replay.driver import CondensationMade
from openhands_memory.testing.sessions import SessionBuilder
from openhands_memory.testing.strategies import agent_sessions

# Anthropic's ratios in round numbers, and no minimum: every cost below is arithmetic on token counts.
PRICING = {
    "model": "anthropic-like",
    "rules_name": "anthropic",
    "input_cost_per_token": 3.0,
    "cache_read_cost_per_token": 0.3,
    "cache_write_cost_per_token": 3.75,
    "min_cache_tokens": 0,
}
OUTPUT = "x" * 400  # 100 tokens at four characters a token


def stamp(event: Event, seconds: int) -> None:
    event.timestamp = f"2025-01-01T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def session(turns: int, *, gap_after: int | None = None, gap_seconds: int = 600) -> list[Event]:
    """System prompt, task, recall, then `turns` tool calls each answered by 100 tokens of output, 10 s apart.

    With `gap_after`, the output of that turn (from 0) comes `gap_seconds` after its call (a long
    command): the request that answers it, step `gap_after + 2`, is the first after the idle gap.
    """
    builder = SessionBuilder()
    builder.header()
    for event in builder.events:
        stamp(event, 0)
    seconds = 0
    for number in range(turns):
        action, observation = builder.turn(f"step {number}", OUTPUT)
        seconds += 5
        stamp(action, seconds)
        seconds += gap_seconds if number == gap_after else 5
        stamp(observation, seconds)
    return builder.events


def scheduler(inner: dict[str, Any], **options: Any) -> CacheAwareCondenser:
    config = {"type": "cache_aware", "pricing": PRICING, "condenser": inner, **options}
    condenser = Condenser.from_config(config)
    assert isinstance(condenser, CacheAwareCondenser)
    return condenser


def replay(events: list[Event], condenser: Condenser, *, keep_recorded: bool = False) -> tuple[list[CondensationMade], list[AgentStep]]:
    made: list[CondensationMade] = []
    steps: list[AgentStep] = []
    for item in Replayer(condenser, keep_recorded=keep_recorded).replay(events):
        if isinstance(item, CondensationMade):
            made.append(item)
        elif isinstance(item, AgentStep):
            steps.append(item)
    return made, steps


def decision(item: CondensationMade) -> dict[str, Any]:
    metadata = item.condensation.metadata
    assert metadata is not None
    record = metadata.extra[CACHE_DECISION_KEY]
    assert item.action.condenser_metadata is not None
    assert item.action.condenser_metadata["extra"][CACHE_DECISION_KEY] == record  # in the log too
    return record


AMORTIZED = {"type": "amortized", "max_size": 10_000, "max_tokens": 1_000, "keep_first": 4}
"""Forgets down to 500 tokens (half of `max_tokens`) whenever it is let; never by itself here."""


def test_a_warm_cache_defers_a_cut_whose_savings_over_the_horizon_do_not_pay_for_the_rewrite() -> None:
    # Horizon 1: a cut of T - K tokens saves reading them twice (0.3 a token), and rewrites the
    # K - H tokens kept after the head (3.45 a token more): with K about 500, not before T is about 2,400.
    condenser = scheduler(AMORTIZED, horizon_steps=1, min_cut=0)
    made, steps = replay(session(14), condenser)
    assert made == []
    assert condenser.deferred > 0
    assert condenser.token_counter(steps[-1].shown) > 1_500


def test_a_long_enough_horizon_condenses_when_the_expected_cost_after_is_lower() -> None:
    condenser = scheduler(AMORTIZED, horizon_steps=20, min_cut=0)
    made, _ = replay(session(30), condenser)
    assert made
    record = decision(made[0])
    assert (record["reason"], record["cache"], record["pricing"]) == ("pays", "warm", "anthropic-like")
    assert record["expected_cost_after"] < record["expected_cost_before"]
    # The expectation is the next request as the cache is now, then 20 steps of reading the prompt.
    assert record["expected_cost_before"] == pytest.approx(record["cost_now_before"] + 20 * record["tokens_before"] * 0.3)
    assert record["expected_cost_after"] == pytest.approx(record["cost_now_after"] + 20 * record["tokens_after"] * 0.3)
    assert made[0].condensation.metadata.condenser == "amortized"  # type: ignore[union-attr]


def test_the_next_requests_cost_is_priced_by_the_schedulers_own_cache() -> None:
    condenser = scheduler(AMORTIZED, horizon_steps=20, min_cut=0)
    events = session(30)
    made, _ = replay(events, condenser)
    record = decision(made[0])
    # Warm, and the prompt only grew since the last request: the next one reads all but the newest turn.
    view = made[0].view
    blocks = [PromptBlock(id(e), condenser.event_tokens(e), source=e) for e in view]
    newest = sum(block.tokens for block in blocks[-2:])
    assert record["cost_now_before"] == pytest.approx((record["tokens_before"] - newest) * 0.3 + newest * 3.75)


def test_an_idle_gap_longer_than_the_cache_lifetime_is_a_free_moment_to_condense() -> None:
    # The same schedule that defers while warm (horizon 1) condenses after 10 idle minutes: everything is rewritten anyway.
    condenser = scheduler(AMORTIZED, horizon_steps=1, min_cut=0)
    made, _ = replay(session(14, gap_after=9), condenser)
    assert len(made) == 1
    record = decision(made[0])
    assert (record["reason"], record["cache"]) == ("cold_cache", "cold")
    assert record["idle_seconds"] == pytest.approx(605.0)  # from the request before, answering the previous output
    assert made[0].step == 11
    assert record["cost_now_before"] == pytest.approx(record["tokens_before"] * 3.75)


def test_a_cut_smaller_than_min_cut_waits_even_when_the_cache_is_cold() -> None:
    condenser = scheduler(AMORTIZED, horizon_steps=1, min_cut=100_000)
    made, _ = replay(session(14, gap_after=9), condenser)
    assert made == []


def test_over_the_hard_limit_it_must_condense_and_says_so() -> None:
    condenser = scheduler(AMORTIZED, horizon_steps=1, min_cut=100_000, hard_limit=2_000)
    made, steps = replay(session(30), condenser)
    assert made
    assert {decision(item)["reason"] for item in made} == {"hard_limit"}
    assert made[0].condensation.metadata.reason == "tokens"  # type: ignore[union-attr]
    assert all(condenser.token_counter(step.shown) <= 2_000 for step in steps)


def test_an_agents_request_is_always_served() -> None:
    builder = SessionBuilder()
    builder.header()
    for number in range(6):
        builder.turn(f"step {number}", OUTPUT)
    builder.request()
    builder.turn("after", OUTPUT)
    condenser = scheduler(AMORTIZED, horizon_steps=1, min_cut=100_000)
    made, steps = replay(builder.events, condenser, keep_recorded=True)  # the log's request is kept
    assert [decision(item)["reason"] for item in made] == ["request"]
    assert not steps[-1].shown.unhandled_condensation_request


def test_a_strategy_that_cannot_cut_enough_is_backed_by_forgetting_down_to_half_the_limit() -> None:
    condenser = scheduler({"type": "noop"}, hard_limit=1_500)
    made, steps = replay(session(20), condenser)
    assert made and {decision(item)["reason"] for item in made} == {"hard_limit_fallback"}
    assert all(condenser.token_counter(step.shown) <= 1_500 for step in steps)
    assert made[0].condensation.metadata.condenser == "cache_aware(noop)"  # type: ignore[union-attr]


def prompt_breaks(steps: list[AgentStep]) -> int:
    """How many steps' prompts (events as blocks) do not extend the previous step's."""
    cache = PromptCache(PromptPricing.for_model("anthropic-like", overrides=PRICING))
    breaks = 0
    for number, step in enumerate(steps):
        blocks = [PromptBlock(id(e), 10, source=e) for e in step.shown]
        breaks += cache.request(blocks, at=float(number), static_blocks=1).kind == "break"
    return breaks


def test_masking_acts_in_batches_not_one_message_per_step() -> None:
    events = session(40)
    masked_every_step = replay(events, Condenser.from_config({"type": "observation_masking", "attention_window": 6}))[1]
    made, steps = replay(events, scheduler({"type": "observation_masking", "attention_window": 6}, min_cut=400))
    # Plain masking rewrites an old output at nearly every step; batched, a few times, recorded as
    # condensations that forget nothing.
    assert prompt_breaks(masked_every_step) >= 30
    assert 1 <= prompt_breaks(steps) <= 5
    assert [item.action.forgotten_event_ids for item in made] == [[]] * len(made)
    record = decision(made[0])
    assert (record["transform"], record["reason"]) == ("observation_masking", "pays")
    assert record["tokens_before"] - record["tokens_after"] >= 400
    # Between two batches the masked prefix does not move.
    masked = [sum(isinstance(e, CmdOutputObservation) and e.content == "<MASKED>" for e in step.shown) for step in steps]
    assert len(set(masked)) == prompt_breaks(steps) + 1


def test_offload_acts_in_batches_too() -> None:
    builder = SessionBuilder()
    builder.header()
    for number in range(40):
        builder.turn(f"cat {number}", "y" * 8_000)  # each output over the 5,120-character threshold
    offload = {"type": "large_output_offload", "last_keep": 6}
    every_step = replay(builder.events, Condenser.from_config(offload))[1]
    made, steps = replay(builder.events, scheduler(offload, min_cut=3_000))
    assert prompt_breaks(every_step) >= 30
    assert 1 <= prompt_breaks(steps) <= 5
    assert {decision(item)["transform"] for item in made} == {"large_output_offload"}


def test_a_pipeline_is_scheduled_member_by_member_and_keeps_its_strategies_names() -> None:
    inner = {"type": "pipeline", "condensers": [{"type": "observation_masking", "attention_window": 6}, AMORTIZED]}
    condenser = scheduler(inner, min_cut=400, hard_limit=2_500)
    made, steps = replay(session(40), condenser)
    assert condenser.name == "cache_aware(pipeline)"
    names = {item.condensation.metadata.condenser for item in made}  # type: ignore[union-attr]
    assert names <= {"amortized", "cache_aware(pipeline)"} and "amortized" in names
    assert all(condenser.token_counter(step.shown) <= 2_500 for step in steps)


def test_the_config_reads_from_toml_with_its_strategys_named_model(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.toml"
    path.write_text(
        '[llm.condenser]\nmodel = "gpt-4o"\n\n'
        "[condenser]\ntype = \"cache_aware\"\nhard_limit = 50000\n"
        'pricing = { model = "m", rules_name = "openai", input_cost_per_token = 1.0, '
        "cache_read_cost_per_token = 0.1, cache_write_cost_per_token = 1.0 }\n\n"
        '[condenser.condenser]\ntype = "llm"\nllm_config = "condenser"\nmax_size = 40\n'
    )
    condenser = Condenser.from_config(load_condenser_config(path))
    assert isinstance(condenser, CacheAwareCondenser)
    assert (condenser.hard_limit, condenser.pricing.rules.matching, condenser.pricing.min_cache_tokens) == (50_000, "prefix", 1024)
    assert condenser.inner.llm.config.model == "gpt-4o"  # type: ignore[attr-defined]


def test_a_pricing_that_cannot_be_made_out_is_a_config_error_naming_the_field() -> None:
    bad = {**PRICING, "lifetime": 60}
    with pytest.raises(CondenserConfigError, match=re.escape("unknown pricing field 'lifetime'. Did you mean 'lifetime_seconds'?")) as caught:
        Condenser.from_config({"type": "cache_aware", "pricing": bad, "condenser": {"type": "noop"}})
    assert caught.value.field == "pricing"


# -- the hard limit, over random sessions ----------------------------------------------------------

INNERS = st.sampled_from(
    [
        {"type": "noop"},
        {"type": "observation_masking", "attention_window": 4},
        {"type": "amortized", "max_size": 10_000, "keep_first": 2},
        {"type": "llm", "max_size": 20, "keep_first": 1},
        {"type": "pipeline", "condensers": [{"type": "observation_masking", "attention_window": 3}, {"type": "amortized", "max_size": 40}]},
    ]
)


def views_shown(history: list[Event], condenser: Condenser) -> list[View]:
    """Every view the model is shown when `history` is replayed through `condenser`: at each step, then after the last event."""
    replayer = Replayer(condenser)
    shown = [item.shown for item in replayer.replay(history) if isinstance(item, AgentStep)]
    return [*shown, replayer.settle()[0]]


@given(agent_sessions(max_turns=14), INNERS, st.integers(800, 6_000), st.integers(0, 5_000))
def test_no_step_is_over_the_hard_limit_while_anything_in_view_may_be_forgotten(
    history: list[Event], inner: dict[str, Any], hard_limit: int, min_cut: int
) -> None:
    condenser = scheduler(inner, hard_limit=hard_limit, min_cut=min_cut, keep_first=1)
    counter = ApproximateTokenCounter()
    for view in views_shown(history, condenser):
        if counter(view) > hard_limit:
            # Only what is kept for good is left: the head, and the newest unit.
            assert not plan_forgetting(view, keep_first=1, max_tokens=1, token_counter=counter).forgotten


# --- never over the window: one tool output larger than anything forgetting can free (issue 39 item 2) ----------


def session_with_one_enormous_output(turns: int, enormous_at: int, enormous_chars: int, output_chars: int) -> list[Event]:
    """Header, then `turns` tool calls with outputs of `output_chars`, the one at `enormous_at` holding `enormous_chars`."""
    builder = SessionBuilder()
    builder.header()
    for number in range(turns):
        size = enormous_chars if number == enormous_at else output_chars
        _, output = builder.turn(f"step {number}", "")
        output.content = f"line {number}\n" + "y" * size  # set, not built: built in code, output is cut at 30,000 characters
    return builder.events


@given(
    st.integers(1, 12),
    st.data(),
    st.integers(40_000, 400_000),
    st.integers(0, 600),
    st.integers(800, 6_000),
    INNERS,
)
def test_no_step_shows_more_than_the_hard_limit_with_one_enormous_tool_output(
    turns: int, data: st.DataObject, enormous_chars: int, output_chars: int, hard_limit: int, inner: dict[str, Any]
) -> None:
    enormous_at = data.draw(st.integers(0, turns - 1))
    history = session_with_one_enormous_output(turns, enormous_at, enormous_chars, output_chars)
    condenser = scheduler(inner, hard_limit=hard_limit, min_cut=0, keep_first=1)
    counter = ApproximateTokenCounter()
    for view in views_shown(history, condenser):
        assert counter(view) <= hard_limit
        for event in view:  # (by its command: the replayed log's ids move up where condensations are inserted)
            if isinstance(event, CmdOutputObservation) and event.command == f"step {enormous_at}":
                # Shown cut, with the handle that reloads it (or masked, by a masking strategy).
                assert len(event.content) < 400
                assert f"call context_reload with event_id={event.id}" in event.content or "observation_masking" in str(inner)
    assert len(history[5 + 2 * enormous_at].content) > enormous_chars  # the log keeps it whole


def test_the_newest_output_too_large_to_make_room_for_is_cut_not_everything_else_forgotten() -> None:
    history = session_with_one_enormous_output(6, 5, 400_000, 200)
    condenser = scheduler({"type": "amortized", "max_size": 10_000, "keep_first": 2}, hard_limit=5_000, keep_first=1)
    made, _ = replay(history, condenser)
    assert not made  # nothing forgotten: forgetting could not have made room for it
    final = condenser.condense(View.from_events(history))
    assert not isinstance(final, Condensation)
    assert ApproximateTokenCounter()(final) <= 5_000
    assert len(final) == len(View.from_events(history))  # every event still in view, the enormous one cut
    assert condenser.cut_ids == {history[-1].id}
    assert history[-1].content.startswith("line 5\n") and final[-1].content.startswith("line 5\n")
    assert final[-1].content.endswith(f"[... {len(history[-1].content)} characters offloaded; call context_reload with event_id={history[-1].id} to see all of it]")


def session_with_one_enormous_message(turns: int, enormous_at: int, enormous_chars: int, source: str) -> list[Event]:
    """Header, then `turns` tool calls; the task (`enormous_at` -1) or a message before turn `enormous_at` holds `enormous_chars`.

    `source` "user": a user's pasted log; "agent": the agent's own long answer.
    """
    builder = SessionBuilder()
    builder.header()
    text = "paste\n" + "z" * enormous_chars
    if enormous_at == -1:
        builder.events[1].content = text  # the task itself (the head: never forgotten)
    for number in range(turns):
        if number == enormous_at:
            builder.user(text) if source == "user" else builder.agent(text)
        builder.turn(f"step {number}", "out " * 40)
    return builder.events


@given(st.integers(1, 10), st.data(), st.integers(40_000, 400_000), st.integers(800, 6_000), st.sampled_from(["user", "agent"]), INNERS)
def test_no_step_shows_more_than_the_hard_limit_with_one_enormous_message(
    turns: int, data: st.DataObject, enormous_chars: int, hard_limit: int, source: str, inner: dict[str, Any]
) -> None:
    enormous_at = data.draw(st.integers(-1, turns - 1))
    history = session_with_one_enormous_message(turns, enormous_at, enormous_chars, source)
    condenser = scheduler(inner, hard_limit=hard_limit, min_cut=0, keep_first=1)
    counter = ApproximateTokenCounter()
    for view in views_shown(history, condenser):
        assert counter(view) <= hard_limit
        for event in view:
            if getattr(event, "content", "").startswith("paste\n"):  # shown cut, with the handle that reloads it
                assert len(event.content) < 400 and "characters offloaded; call context_reload with event_id=" in event.content
    assert max(len(getattr(event, "content", "")) for event in history) > enormous_chars  # the log keeps it whole


def test_an_enormous_task_is_cut_and_kept_in_view_not_forgotten() -> None:
    history = session_with_one_enormous_message(4, -1, 300_000, "user")
    condenser = scheduler({"type": "noop"}, hard_limit=3_000, keep_first=1)
    final = condenser.condense(View.from_events(history))
    assert not isinstance(final, Condensation)
    assert ApproximateTokenCounter()(final) <= 3_000 and len(final) == len(View.from_events(history))
    task = history[1]
    assert condenser.cut_ids == {task.id} and final[1].content.startswith("paste\nzzz")
    assert final[1].content.endswith(f"[... {len(task.content)} characters offloaded; call context_reload with event_id={task.id} to see all of it]")
