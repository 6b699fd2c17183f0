"""The prompt-cache cost model, pinned against requests priced by hand.

Prices are round numbers per token (input 3, cache read 0.3, cache write 3.75: Anthropic's ratios;
input 2, read 0.2, write 2: OpenAI's), so every expected cost below is arithmetic on the block sizes.
"""

from __future__ import annotations

import re

import pytest

from openhands_memory.errors import UnknownPriceError
from openhands_memory.llm._model_map import model_map
from openhands_memory.llm.prompt_cache import (
    CACHE_RULES,
    MODEL_CACHE_RULES,
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
    with pytest.raises(UnknownPriceError, match=re.escape("pricing 'no-such-model-xyz': litellm knows no such model.")):
        PromptPricing.for_model("no-such-model-xyz")
    with pytest.raises(UnknownPriceError, match=re.escape("unknown pricing field 'lifetime'. Did you mean 'lifetime_seconds'?")):
        ANTHROPIC.with_overrides({"lifetime": 60})
    with pytest.raises(UnknownPriceError, match=re.escape("a pricing table needs a model name")):
        resolve_pricing({"lifetime_seconds": 60})


# -- issue 39 item 3: current, sourced cache rules --------------------------------------------------


@pytest.mark.parametrize(
    ("model", "close"),
    [("claude-sonet-4-5", "'claude-sonnet-4-5'"), ("gpt-5o", "'gpt-5'"), ("anthropic/claude-sonet-4-5", "'anthropic/claude-sonnet-4-5'")],
)
def test_a_model_litellm_does_not_know_is_refused_with_the_closest_names_never_priced_at_zero(model: str, close: str) -> None:
    # litellm's get_model_info makes up an entry with zero prices for these names: they cost $0.00 before.
    with pytest.raises(UnknownPriceError, match=re.escape(f"pricing {model!r}: litellm knows no such model. Did you mean {close}")):
        PromptPricing.for_model(model)


@pytest.mark.parametrize(
    ("model", "bare"),
    [
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("openai/gpt-5", "gpt-5"),
        ("gemini/gemini-2.5-pro", "gemini/gemini-2.5-pro"),
        ("bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
        ("vertex_ai/gemini-2.5-pro", "gemini-2.5-pro"),
    ],
)
def test_provider_prefixed_names_are_priced_as_litellm_prices_them(model: str, bare: str) -> None:
    pricing = PromptPricing.for_model(model)
    entry = model_map()[bare]  # type: ignore[index]
    assert pricing.input_cost_per_token == entry["input_cost_per_token"] > 0
    assert pricing.cache_read_cost_per_token == entry["cache_read_input_token_cost"]


def test_every_provider_prefixed_name_of_litellms_map_with_a_price_is_accepted() -> None:
    # `provider/key` for every bare key of the main providers, and every key that has its provider in it.
    table = model_map()
    assert table is not None
    names = []
    for key, entry in table.items():
        provider = entry.get("litellm_provider") if isinstance(entry, dict) else None
        if provider not in ("anthropic", "openai", "gemini", "bedrock", "bedrock_converse", "vertex_ai", "azure"):
            continue
        if not isinstance(entry.get("input_cost_per_token"), int | float) or entry.get("mode") != "chat":
            continue
        names.append(key if "/" in key else f"{provider}/{key}")
    assert len(names) > 300
    for name in names:
        assert PromptPricing.for_model(name).input_cost_per_token >= 0, name


def test_anthropics_two_lifetimes_are_a_choice_with_their_write_prices() -> None:
    choices = PromptPricing.for_model("claude-sonnet-4-5").ttl_choices()
    assert list(choices) == ["5m", "1h"]
    five, hour = choices["5m"], choices["1h"]
    assert (five.lifetime_seconds, hour.lifetime_seconds) == (300, 3600)
    assert five.cache_write_cost_per_token == pytest.approx(1.25 * five.input_cost_per_token)
    assert hour.cache_write_cost_per_token == pytest.approx(2.0 * hour.input_cost_per_token)
    assert five.cache_read_cost_per_token == hour.cache_read_cost_per_token == pytest.approx(0.1 * five.input_cost_per_token)
    assert resolve_pricing({"model": "claude-sonnet-4-5", "ttl": "1h"}) == hour
    with pytest.raises(UnknownPriceError, match=re.escape("pricing 'claude-sonnet-4-5': no cache lifetime '2h' for it: '5m' or '1h'")):
        resolve_pricing({"model": "claude-sonnet-4-5", "ttl": "2h"})


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("claude-sonnet-4-5", 1024),
        ("claude-sonnet-4-6", 1024),
        ("claude-opus-4-5", 4096),
        ("claude-opus-4-6", 4096),
        ("claude-haiku-4-5", 4096),
        ("us.anthropic.claude-3-5-haiku-20241022-v1:0", 2048),
        ("anthropic.claude-opus-4-20250514-v1:0", 1024),
        ("gemini/gemini-2.5-flash", 2048),  # litellm's map gives none: the Gemini docs' figure
        ("gemini/gemini-2.5-pro", 2048),
        ("gemini/gemini-3.1-pro-preview", 4096),  # litellm writes 4096.0 for some: read as 4096
        ("gpt-5", 1024),
    ],
)
def test_the_minimum_cacheable_prefix_is_the_providers_figure_for_the_model(model: str, minimum: int) -> None:
    assert PromptPricing.for_model(model).min_cache_tokens == minimum


def test_the_documented_minimums_agree_with_litellms_wherever_both_have_one() -> None:
    table = model_map()
    assert table is not None
    checked = 0
    for key, entry in table.items():
        mapped = entry.get("prompt_cache_min_tokens") if isinstance(entry, dict) else None
        if mapped is None:
            continue
        for rule in MODEL_CACHE_RULES:
            if "min_tokens" in rule.fields and rule.matches(key) and ("claude" in key) == (rule.rules_name == "anthropic"):
                assert rule.fields["min_tokens"] == mapped, (key, rule.source)
                checked += 1
                break
    assert checked > 50


def test_openai_bills_no_cache_write_before_gpt_5_6_and_1_25x_from_it_on_with_24_hours_where_documented() -> None:
    gpt5, gpt56, gpt4o = (PromptPricing.for_model(m) for m in ("gpt-5", "gpt-5.6", "gpt-4o"))
    assert gpt5.cache_write_cost_per_token == gpt5.input_cost_per_token
    assert gpt5.cache_read_cost_per_token == pytest.approx(0.1 * gpt5.input_cost_per_token)
    assert gpt56.cache_write_cost_per_token == pytest.approx(1.25 * gpt56.input_cost_per_token)
    assert list(gpt5.ttl_choices()) == ["in_memory", "24h"]
    assert gpt5.ttl_choices()["24h"].lifetime_seconds == 86_400
    assert list(gpt4o.ttl_choices()) == ["in_memory"]  # no 24-hour retention documented for gpt-4o
    with pytest.raises(UnknownPriceError, match=re.escape("pricing 'gpt-4o': its provider documents no longer-lived cache for it")):
        PromptPricing.for_model("gpt-4o", extended=True)


def test_gemini_implicit_hits_are_90_percent_off_when_litellm_has_no_read_price() -> None:
    # A made-up Gemini 2.5 model litellm gives no cache-read price: the rules' 0.1x.
    pricing = PromptPricing.for_model(
        "gemini-2.5-made-up", overrides={"rules_name": "gemini", "input_cost_per_token": 1e-06}
    )
    assert pricing.rules_name == "gemini" and CACHE_RULES["gemini"].read_multiplier == 0.1
    assert pricing.min_cache_tokens == 2048
    assert pricing.cache_read_cost_per_token == pytest.approx(0.1 * pricing.input_cost_per_token)
    assert pricing.cache_write_cost_per_token == pricing.input_cost_per_token


def test_every_model_rule_cites_the_providers_docs() -> None:
    for rule in MODEL_CACHE_RULES:
        assert rule.source.startswith("https://") and rule.rules_name in CACHE_RULES


def test_the_cache_aware_scheduler_can_be_given_anthropics_1_hour_lifetime() -> None:
    from openhands_memory.condenser import CacheAwareCondenser, Condenser

    inner = {"type": "observation_masking", "attention_window": 4}
    default = Condenser.from_config({"type": "cache_aware", "condenser": inner})
    hour = Condenser.from_config({"type": "cache_aware", "pricing": {"model": "claude-sonnet-4-5", "ttl": "1h"}, "condenser": inner})
    assert isinstance(default, CacheAwareCondenser) and isinstance(hour, CacheAwareCondenser)
    assert default.pricing.lifetime_seconds == 300  # the default stays the 5-minute cache
    assert (hour.pricing.lifetime_seconds, hour.pricing.cache_write_cost_per_token) == (3600, 6e-06)
