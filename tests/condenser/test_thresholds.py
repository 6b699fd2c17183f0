"""Token limits as a share of the model's context window (Inkeep's model-aware thresholds)."""

from __future__ import annotations

import re

import pytest

from openhands_memory.condenser import Condenser, ContextWindowShare
from openhands_memory.condenser.thresholds import CONVERSATION_SHARE, resolve_token_limit, sub_agent_share
from openhands_memory.errors import CondenserConfigError
from openhands_memory.llm.llm import LLM

from .impl._model_helpers import fake_config


@pytest.mark.parametrize(
    ("window", "conversation", "sub_agent"),
    [
        (400_000, 200_000, 360_000),  # Inkeep: 400K -> 360K
        (200_000, 100_000, 180_000),  # Inkeep: 200K -> 180K
        (1_048_576, 524_288, 954_204),  # Inkeep: 1M -> 954K (a 1,048,576-token window)
        (64_000, 32_000, 54_400),  # small windows: 85%
    ],
)
def test_the_presets_give_inkeeps_thresholds(window: int, conversation: int, sub_agent: int) -> None:
    assert ContextWindowShare(preset="conversation", context_window=window).limit_for(window) == conversation
    assert ContextWindowShare(preset="sub_agent").limit_for(window) == sub_agent


def test_the_sub_agent_share_grows_with_the_window() -> None:
    assert CONVERSATION_SHARE == 0.5
    assert [sub_agent_share(w) for w in (99_999, 100_000, 499_999, 500_000, 2_000_000)] == [0.85, 0.9, 0.9, 0.91, 0.91]


def test_reserved_output_tokens_come_off_the_limit() -> None:
    spec = ContextWindowShare(share=0.5, reserved_output_tokens=8_192)
    assert spec.limit_for(200_000) == 91_808
    with pytest.raises(ValueError, match=re.escape("reserved_output_tokens (8192) leave no room in 0.5 of a 10000-token window")):
        spec.limit_for(10_000)


def test_a_plain_number_is_kept_as_it_is() -> None:
    assert resolve_token_limit(16_000, llm=None, condenser_type="x") == (16_000, None)
    assert resolve_token_limit(None, llm=None, condenser_type="x") == (None, None)


def test_the_window_comes_from_the_config_then_the_llm_config() -> None:
    llm = LLM(fake_config(max_input_tokens=200_000))
    limit, record = resolve_token_limit(ContextWindowShare(preset="sub_agent"), llm=llm, condenser_type="x")
    assert limit == 180_000
    assert record == {
        "context_window": 200_000, "window_source": "llm_config", "window_rule": "whole", "model": "fake-model",
        "share": 0.9, "preset": "sub_agent", "reserved_output_tokens": 0, "limit": 180_000,
    }  # fmt: skip
    limit, record = resolve_token_limit(ContextWindowShare(share=0.5, context_window=400_000), llm=llm, condenser_type="x")
    assert limit == 200_000 and record is not None and record["window_source"] == "config"


def test_the_window_comes_from_litellms_model_info_offline() -> None:
    spec = ContextWindowShare(preset="sub_agent", model="claude-sonnet-4-5")
    limit, record = resolve_token_limit(spec, llm=None, condenser_type="x")
    assert limit == 180_000  # litellm's local map: max_input_tokens 200,000
    assert record is not None and (record["window_source"], record["model"]) == ("litellm", "claude-sonnet-4-5")


@pytest.mark.parametrize(
    ("model", "conversation", "sub_agent"),
    [
        # Inkeep's table (docs.inkeep.com/typescript-sdk/memory, "Model-Specific Behavior"), by model name.
        ("openai/gpt-5.2", 200_000, 360_000),  # 400K window
        ("anthropic/claude-sonnet-4-5", 100_000, 180_000),  # 200K
        ("google/gemini-3-pro-preview", 524_288, 954_204),  # 1M: 1,048,576 tokens
        ("gpt-5.2", 200_000, 360_000),
        ("claude-sonnet-4-5", 100_000, 180_000),
        ("gemini-3-pro-preview", 524_288, 954_204),
    ],
)
def test_by_model_name_the_presets_give_inkeeps_table(model: str, conversation: int, sub_agent: int) -> None:
    for preset, expected in (("conversation", conversation), ("sub_agent", sub_agent)):
        limit, record = resolve_token_limit(ContextWindowShare(preset=preset, model=model), llm=None, condenser_type="x")
        assert limit == expected
        assert record is not None and record["window_rule"] == "whole"


def test_the_input_rule_takes_the_share_of_what_the_api_accepts() -> None:
    # gpt-5.2: 272K prompt tokens of a 400K window; Anthropic counts the reply inside the window, so both rules agree.
    limits = {
        (model, preset): resolve_token_limit(
            ContextWindowShare(preset=preset, model=model, window="input"), llm=None, condenser_type="x"
        )[0]
        for model in ("openai/gpt-5.2", "anthropic/claude-sonnet-4-5")
        for preset in ("conversation", "sub_agent")
    }
    assert limits == {
        ("openai/gpt-5.2", "conversation"): 136_000, ("openai/gpt-5.2", "sub_agent"): 244_800,
        ("anthropic/claude-sonnet-4-5", "conversation"): 100_000, ("anthropic/claude-sonnet-4-5", "sub_agent"): 180_000,
    }  # fmt: skip
    # A plain share keeps our rule unless told otherwise.
    assert resolve_token_limit(ContextWindowShare(share=0.5, model="gpt-5.2"), llm=None, condenser_type="x")[0] == 136_000
    assert resolve_token_limit(ContextWindowShare(share=0.5, model="gpt-5.2", window="whole"), llm=None, condenser_type="x")[0] == 200_000


def test_a_whole_window_limit_past_the_input_limit_is_warned_and_recorded(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="openhands_memory.condenser.thresholds"):
        limit, record = resolve_token_limit(ContextWindowShare(preset="sub_agent", model="gpt-5.2"), llm=None, condenser_type="x")
    assert limit == 360_000 and record is not None
    assert (record["context_window"], record["window_source"], record["over_input_limit"]) == (400_000, "known_windows", 272_000)
    assert "is over the model's input limit (272000 tokens)" in caplog.text and 'set window = "input"' in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="openhands_memory.condenser.thresholds"):
        _, record = resolve_token_limit(ContextWindowShare(preset="conversation", model="gpt-5.2"), llm=None, condenser_type="x")
    assert caplog.text == "" and record is not None and "over_input_limit" not in record


def test_an_unknown_window_is_a_config_error_naming_the_model_and_the_fixes() -> None:
    config = {
        "type": "token_budget_summary",
        "llm_config": {"model": "no-such-model-anywhere", "num_retries": 0},
        "max_tokens": {"preset": "conversation"},
    }
    message = (
        "condenser 'token_budget_summary': max_tokens: the context window of model 'no-such-model-anywhere' is unknown "
        "(litellm's model map has no max_input_tokens for it): set context_window in this threshold, or "
        "max_input_tokens in the model's LLM config"
    )
    with pytest.raises(CondenserConfigError, match=re.escape(message)):
        Condenser.from_config(config)
    with pytest.raises(CondenserConfigError, match="a share of the context window needs a model"):
        resolve_token_limit(ContextWindowShare(share=0.5), llm=None, condenser_type="x")


@pytest.mark.parametrize(
    ("max_tokens", "message"),
    [
        ({"share": 0.5, "preset": "sub_agent"}, "max_tokens: give exactly one of share and preset"),
        ({"shares": 0.5}, "max_tokens: shares: unknown field. Did you mean 'share'?"),
        ({"share": 1.5}, "max_tokens: share: Input should be less than or equal to 1"),
        ({"preset": "subagent"}, "max_tokens: preset: Input should be 'conversation' or 'sub_agent'"),
        ({"preset": "sub_agent", "window": "total"}, "max_tokens: window: Input should be 'whole' or 'input'"),
        (0, "max_tokens: must be at least 1 token, got 0"),
    ],
)
def test_a_bad_threshold_is_named(max_tokens: object, message: str) -> None:
    config = {"type": "compact_history", "llm_config": {"model": "gpt-4o"}, "max_tokens": max_tokens}
    with pytest.raises(CondenserConfigError, match=re.escape(f"condenser 'compact_history': {message}")):
        Condenser.from_config(config)


def test_both_size_triggered_model_backed_strategies_accept_a_share() -> None:
    llm_config = {"model": "fake-model", "max_input_tokens": 128_000}
    for type_name in ("token_budget_summary", "compact_history"):
        condenser = Condenser.from_config(
            {"type": type_name, "llm_config": llm_config, "max_tokens": {"preset": "conversation", "reserved_output_tokens": 4_000}}
        )
        assert condenser.max_tokens == 60_000  # type: ignore[attr-defined]
        assert condenser.threshold["limit"] == 60_000  # type: ignore[attr-defined]


def test_the_agents_model_sizes_a_share_that_names_no_model_and_a_config_s_own_model_wins() -> None:
    llm_config = {"model": "fake-model", "max_input_tokens": 128_000}
    share = {"preset": "conversation"}
    summary = {"type": "token_budget_summary", "llm_config": llm_config, "max_tokens": share}
    assert Condenser.from_config(summary).max_tokens == 64_000  # type: ignore[attr-defined]  # the summarizer's window
    sized = Condenser.from_config(summary, model="claude-sonnet-4-5")
    assert sized.max_tokens == 100_000 and sized.threshold["model"] == "claude-sonnet-4-5"  # type: ignore[attr-defined]
    # In a pipeline too; a share that names its window, and inkeep's own `model`, are the file's choice.
    pipeline = {"type": "pipeline", "condensers": [summary, {**summary, "max_tokens": {**share, "context_window": 10_000}}]}
    members = Condenser.from_config(pipeline, model="claude-sonnet-4-5").condensers  # type: ignore[attr-defined]
    assert [member.max_tokens for member in members] == [100_000, 5_000]
    inkeep = {"type": "inkeep", "llm_config": llm_config, "model": "gpt-5.2"}
    assert Condenser.from_config(inkeep, model="claude-sonnet-4-5").max_tokens == 200_000  # type: ignore[attr-defined]
    assert Condenser.from_config({**inkeep, "model": None}, model="claude-sonnet-4-5").max_tokens == 100_000  # type: ignore[attr-defined]
