"""The prompt-cache cost model, pinned against requests priced by hand.

Prices are round numbers per token (input 3, cache read 0.3, cache write 3.75: Anthropic's ratios;
input 2, read 0.2, write 2: OpenAI's), so every expected cost below is arithmetic on the block sizes.
"""

from __future__ import annotations

import re

import pytest

from openhands_memory.errors import UnknownPriceError
from openhands_memory.llm.prompt_cache import (
    CACHE_RULES,
    PromptBlock,
    PromptCache,
    PromptPricing,
    resolve_pricing,
    timestamp_seconds,
)

ANTHROPIC = PromptPricing(
    model="anthropic-like",
    rules_name="anthropic",
    input_cost_per_token=3.0,
    output_cost_per_token=15.0,
    cache_read_cost_per_token=0.3,
    cache_write_cost_per_token=3.75,
    min_cache_tokens=1024,
    rules=CACHE_RULES["anthropic"],
)
OPENAI = PromptPricing(
    model="openai-like",
    rules_name="openai",
    input_cost_per_token=2.0,
    output_cost_per_token=8.0,
    cache_read_cost_per_token=0.2,
    cache_write_cost_per_token=2.0,
    min_cache_tokens=1024,
    rules=CACHE_RULES["openai"],
)

SYSTEM = PromptBlock("system", 2000)
TASK = PromptBlock("task", 500)
REPLY = PromptBlock("reply", 300)
SUMMARY = PromptBlock("summary", 400)
MORE = PromptBlock("more", 100)


def test_the_first_request_is_a_cold_start_that_writes_the_prompt_up_to_its_last_breakpoint() -> None:
    cache = PromptCache(ANTHROPIC)

    cost = cache.request([SYSTEM, TASK], at=0.0, static_blocks=1, output_tokens=10)

    assert (cost.cache_read_tokens, cost.cache_write_tokens, cost.uncached_tokens) == (0, 2500, 0)
    assert cost.kind == "first"
    assert cost.cost == pytest.approx(2500 * 3.75 + 10 * 15)
    assert cost.cost_without_cache == pytest.approx(2500 * 3 + 10 * 15)


def test_a_request_that_extends_the_previous_prompt_reads_it_and_writes_only_what_is_new() -> None:
    cache = PromptCache(ANTHROPIC)
    cache.request([SYSTEM, TASK], at=0.0, static_blocks=1)

    cost = cache.request([SYSTEM, TASK, REPLY], at=10.0, static_blocks=1)

    assert (cost.cache_read_tokens, cost.cache_write_tokens, cost.uncached_tokens) == (2500, 300, 0)
    assert cost.kind == "warm"
    assert cost.cost == pytest.approx(2500 * 0.3 + 300 * 3.75)
    assert cost.penalty == 0.0
    assert cost.idle_seconds == 10.0


def test_a_rewritten_prefix_reads_only_up_to_the_system_breakpoint_and_the_break_costs_the_rewrite() -> None:
    cache = PromptCache(ANTHROPIC)
    cache.request([SYSTEM, TASK], at=0.0, static_blocks=1)
    cache.request([SYSTEM, TASK, REPLY], at=10.0, static_blocks=1)

    cost = cache.request([SYSTEM, SUMMARY, REPLY], at=20.0, static_blocks=1)  # a condensation replaced TASK

    assert (cost.cache_read_tokens, cost.cache_write_tokens) == (2000, 700)
    assert cost.cost == pytest.approx(2000 * 0.3 + 700 * 3.75)
    assert cost.kind == "break"
    # Had the 2,700 tokens been served as the previous 2,800 were: 700 written instead of read.
    assert cost.rewritten_tokens == 700
    assert cost.penalty == pytest.approx(700 * (3.75 - 0.3))


def test_an_idle_gap_longer_than_the_lifetime_in_the_log_timestamps_is_a_cold_start() -> None:
    cache = PromptCache(ANTHROPIC)
    start = timestamp_seconds("2025-05-06T14:14:20")
    assert start is not None
    cache.request([SYSTEM, TASK], at=start, static_blocks=1)
    warm = cache.request([SYSTEM, TASK, REPLY], at=timestamp_seconds("2025-05-06T14:19:19"), static_blocks=1)  # 299 s
    assert warm.kind == "warm"

    # 301 s after the previous request: every entry (5 minutes from its last use) is gone.
    cold = cache.request([SYSTEM, TASK, REPLY, MORE], at=timestamp_seconds("2025-05-06T14:24:20"), static_blocks=1)

    assert cold.idle_seconds == pytest.approx(301.0)
    assert (cold.cache_read_tokens, cold.cache_write_tokens) == (0, 2900)
    assert cold.kind == "expired"
    assert cold.cost == pytest.approx(2900 * 3.75)
    assert cold.rewritten_tokens == 2800
    assert cold.penalty == pytest.approx(2900 * 3.75 - (2800 * 0.3 + 100 * 3.75))


def test_a_longer_lifetime_override_keeps_the_same_gap_warm() -> None:
    cache = PromptCache(ANTHROPIC.with_overrides({"lifetime_seconds": 3600}))
    cache.request([SYSTEM, TASK], at=0.0, static_blocks=1)

    cost = cache.request([SYSTEM, TASK, REPLY], at=1000.0, static_blocks=1)

    assert (cost.kind, cost.cache_read_tokens) == ("warm", 2500)


def test_a_prompt_below_the_minimum_is_never_cached_and_costs_the_input_price() -> None:
    cache = PromptCache(ANTHROPIC)
    short = PromptBlock("short system", 600)

    first = cache.request([short], at=0.0, static_blocks=1)
    second = cache.request([short, PromptBlock("next", 300)], at=5.0, static_blocks=1)

    assert (first.cache_write_tokens, first.uncached_tokens, first.cost) == (0, 600, pytest.approx(600 * 3))
    assert (second.cache_read_tokens, second.cache_write_tokens, second.uncached_tokens) == (0, 0, 900)
    assert second.cost == pytest.approx(900 * 3)
    assert (second.kind, second.penalty) == ("warm", 0.0)  # nothing was lost: nothing could be cached


def test_an_automatic_prefix_cache_starts_at_the_minimum_and_grows_in_128_token_steps() -> None:
    cache = PromptCache(OPENAI)
    system = PromptBlock("system", 1000)

    below = cache.request([system], at=0.0)
    written = cache.request([system, PromptBlock("a", 100)], at=1.0)  # 1,100 tokens: cached from now on
    read = cache.request([system, PromptBlock("a", 100), PromptBlock("b", 200)], at=2.0)

    assert (below.cache_read_tokens, below.cost) == (0, pytest.approx(1000 * 2))
    assert (written.cache_read_tokens, written.cache_write_tokens, written.cost) == (0, 1100, pytest.approx(1100 * 2))
    assert (read.cache_read_tokens, read.cache_write_tokens) == (1024, 276)  # 1,100 shared, cut to 8 x 128
    assert read.cost == pytest.approx(1024 * 0.2 + 276 * 2)


def test_an_automatic_prefix_cache_matches_inside_a_block_token_by_token() -> None:
    cache = PromptCache(OPENAI)
    tokens = list(range(3000))
    changed = tokens[:1500] + [-1] * 1500
    cache.request([PromptBlock("whole", 3000, tokens)], at=0.0)

    cost = cache.request([PromptBlock("edited", 3000, changed)], at=1.0)

    assert cost.cache_read_tokens == 1408  # 1,500 shared tokens, cut to 11 x 128
    assert cost.kind == "break"
    # Had it extended the previous prompt, it would have read 2,944 tokens (23 x 128).
    assert cost.rewritten_tokens == 2944 - 1408
    assert cost.penalty == pytest.approx((2944 - 1408) * (2.0 - 0.2))


def test_a_change_more_than_twenty_blocks_before_the_last_breakpoint_loses_everything_after_the_system_prompt() -> None:
    cache = PromptCache(ANTHROPIC)
    messages = [PromptBlock(f"m{i}", 100) for i in range(30)]
    cache.request([SYSTEM, *messages], at=0.0, static_blocks=1)
    masked = [*messages[:4], PromptBlock("m4 masked", 10), *messages[5:], PromptBlock("m30", 100)]
    near = [*messages[:25], PromptBlock("m25 masked", 10), *messages[26:], PromptBlock("m30", 100)]

    far_change = cache.peek([SYSTEM, *masked], at=1.0, static_blocks=1)
    near_change = cache.peek([SYSTEM, *near], at=1.0, static_blocks=1)

    assert far_change.cache_read_tokens == 2000  # block 5 is 27 blocks before the breakpoint
    assert near_change.cache_read_tokens == 2000  # nothing cached ends between block 26 and the end
    assert cache.requests == 1  # peek leaves the cache as it was


def test_a_condensation_while_the_cache_is_cold_is_an_expiry_not_a_break() -> None:
    cache = PromptCache(ANTHROPIC)
    cache.request([SYSTEM, TASK, REPLY], at=0.0, static_blocks=1)

    cost = cache.request([SYSTEM, SUMMARY], at=1000.0, static_blocks=1)

    assert cost.kind == "expired"
    assert cache.is_cold(2000.0) and not cache.is_cold(1100.0)


def test_a_request_earlier_than_the_previous_one_is_refused() -> None:
    cache = PromptCache(ANTHROPIC)
    cache.request([SYSTEM], at=10.0, static_blocks=1)

    with pytest.raises(ValueError, match=re.escape("a request at 5.0 comes before the previous one (10.0)")):
        cache.request([SYSTEM], at=5.0, static_blocks=1)


def test_timestamps_without_a_zone_are_utc_and_bad_ones_are_none() -> None:
    assert timestamp_seconds("1970-01-01T00:01:00") == 60.0
    assert timestamp_seconds("1970-01-01T00:01:00+00:00") == 60.0
    assert timestamp_seconds("yesterday") is None
    assert timestamp_seconds(None) is None


def test_prices_come_from_litellms_map_and_the_rules_from_the_provider_row() -> None:
    sonnet = PromptPricing.for_model("claude-sonnet-4-5")
    sonnet_hour = PromptPricing.for_model("claude-sonnet-4-5", extended=True)
    gpt5 = resolve_pricing({"model": "gpt-5", "lifetime_seconds": 600})

    assert (sonnet.rules.matching, sonnet.lifetime_seconds, sonnet.min_cache_tokens) == ("breakpoints", 300, 1024)
    assert (sonnet.input_cost_per_token, sonnet.cache_read_cost_per_token) == (3e-06, 3e-07)
    assert sonnet.cache_write_cost_per_token == 3.75e-06
    assert (sonnet_hour.cache_write_cost_per_token, sonnet_hour.lifetime_seconds) == (6e-06, 3600)
    assert sonnet_hour.name == "claude-sonnet-4-5 (extended cache)"
    # litellm gives gpt-5 no write price and no minimum: the OpenAI row's (writes at the input price, 1,024).
    assert (gpt5.rules.matching, gpt5.rules.block_tokens, gpt5.min_cache_tokens) == ("prefix", 128, 1024)
    assert gpt5.cache_write_cost_per_token == gpt5.input_cost_per_token == 1.25e-06
    assert gpt5.lifetime_seconds == 600


def test_an_unknown_model_or_override_is_a_pricing_error_that_says_what_to_do() -> None:
    with pytest.raises(UnknownPriceError, match=re.escape("pricing 'no-such-model-xyz': litellm's model map has no input price")):
        PromptPricing.for_model("no-such-model-xyz")
    with pytest.raises(UnknownPriceError, match=re.escape("unknown pricing field 'lifetime'. Did you mean 'lifetime_seconds'?")):
        ANTHROPIC.with_overrides({"lifetime": 60})
    with pytest.raises(UnknownPriceError, match=re.escape("a pricing table needs a model name")):
        resolve_pricing({"lifetime_seconds": 60})
