"""`token_budget_summary`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openhands_memory.condenser import (
    Condensation,
    Condenser,
    ContextWindowShare,
    TokenBudgetSummaryCondenser,
    TokenBudgetSummaryCondenserConfig,
)
from openhands_memory.condenser.impl.llm_summarizing_condenser import SUMMARY_PROMPT
from openhands_memory.errors import CondenserConfigError
from openhands_memory.events import AgentCondensationObservation
from openhands_memory.testing.condenser_replay import replay_with_condenser
from openhands_memory.testing.strategies import agent_sessions
from openhands_memory.view import View

from .._helpers import ids
from ._history_helpers import add_turn, started_history
from ._model_helpers import NumberedSummaries, fake_llm, prompt_of, session

_TOKENS = 414
"""The approximate tokens of `session(6, output="x" * 200)`: 16 events."""


def test_within_budget_nothing_changes_and_the_model_is_not_called() -> None:
    s = session(6, output="x" * 200)
    fake, llm = fake_llm("S")
    condenser = TokenBudgetSummaryCondenser(llm, keep_last=4, keep_first=2, max_tokens=_TOKENS)
    assert condenser.token_counter(s.view) == _TOKENS
    view = s.view
    assert condenser.condense(view) is view
    assert fake.calls == []


def test_past_the_budget_all_but_the_newest_keep_last_are_summarized() -> None:
    s = session(6, output="x" * 200)
    fake, llm = fake_llm("USER_CONTEXT: fix the bug\nCOMPLETED: ran cmd0-cmd3")
    result = TokenBudgetSummaryCondenser(llm, keep_last=4, keep_first=2, max_tokens=_TOKENS - 1).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    action = result.action
    assert (action.forgotten_events_start_id, action.forgotten_events_end_id) == (2, 11)
    assert action.summary == "USER_CONTEXT: fix the bug\nCOMPLETED: ran cmd0-cmd3" and action.summary_offset == 2
    record = result.metadata
    assert (record.condenser, record.reason, record.events_before, record.events_after) == ("token_budget_summary", "tokens", 16, 7)
    assert record.tokens_before == _TOKENS and record.tokens_after is not None and record.tokens_after < _TOKENS
    assert record.extra["max_tokens"] == _TOKENS - 1 and "threshold" not in record.extra
    prompt = prompt_of(fake)
    assert prompt.startswith(SUMMARY_PROMPT)
    assert "<EVENT id=2>" in prompt and "<EVENT id=11>" in prompt and "<EVENT id=12>" not in prompt
    s.add(action)
    assert ids(s.view) == [0, 1, None, 12, 13, 14, 15]
    assert isinstance(s.view[2], AgentCondensationObservation)


def test_the_newest_events_start_at_a_safe_cut() -> None:
    s = session(6, output="x" * 200)
    _, llm = fake_llm("S")
    # The newest 3 events start at result 13 of call 12: 2 are kept rather than split them.
    result = TokenBudgetSummaryCondenser(llm, keep_last=3, keep_first=2, max_tokens=100).condense(s.view)
    assert isinstance(result, Condensation)
    assert (result.action.forgotten_events_start_id, result.action.forgotten_events_end_id) == (2, 13)


def test_with_no_more_than_keep_last_events_nothing_is_summarized() -> None:
    s = session(2, output="x" * 2000)  # 8 events, far over the budget
    fake, llm = fake_llm("S")
    condenser = TokenBudgetSummaryCondenser(llm, keep_last=8, max_tokens=10)
    view = s.view
    assert condenser.condense(view) is view  # QitOS' keep_last_floor
    assert fake.calls == []


def test_a_share_of_the_context_window_is_resolved_and_recorded() -> None:
    s = session(6, output="x" * 200)
    _, llm = fake_llm("S", max_input_tokens=1_000)
    condenser = TokenBudgetSummaryCondenser(llm, keep_last=4, max_tokens=ContextWindowShare(share=0.5, reserved_output_tokens=100))
    assert condenser.max_tokens == 400
    result = condenser.condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.metadata.extra["threshold"] == {
        "context_window": 1_000, "window_source": "llm_config", "window_rule": "input", "model": "fake-model",
        "share": 0.5, "preset": None, "reserved_output_tokens": 100, "limit": 400,
    }  # fmt: skip


def test_built_from_config_with_qitos_defaults() -> None:
    condenser = Condenser.from_config({"type": "token_budget_summary", "llm_config": {"model": "gpt-4o"}})
    assert isinstance(condenser, TokenBudgetSummaryCondenser)
    assert (condenser.max_tokens, condenser.keep_last, condenser.keep_first) == (16_000, 8, 1)
    assert TokenBudgetSummaryCondenserConfig(llm_config="x").max_tokens == 16_000
    with pytest.raises(CondenserConfigError, match="condenser 'token_budget_summary': max_size: unknown field"):
        Condenser.from_config({"type": "token_budget_summary", "llm_config": {"model": "gpt-4o"}, "max_size": 10})
    with pytest.raises(CondenserConfigError, match="condenser 'token_budget_summary': keep_last: must be at least 1, got 0"):
        TokenBudgetSummaryCondenser(fake_llm()[1], keep_last=0)


def test_history_steps_never_stall_and_the_prompt_stays_near_the_budget() -> None:
    summaries = NumberedSummaries()
    condenser = TokenBudgetSummaryCondenser(summaries.llm(), keep_last=6, keep_first=2, max_tokens=600)
    history = started_history(condenser)
    for number in range(40):
        add_turn(history, number, "y" * 300)
        history.next_messages()
        assert condenser.token_counter(history.last_view) <= 600  # type: ignore[arg-type]
    condensations = [e for e in history.stream.get_events() if type(e).__name__ == "CondensationAction"]
    assert len(condensations) == len(summaries.fake.calls) > 1
    assert history.last_view is not None and history.last_view[2].content == f"summary #{len(condensations)}"  # type: ignore[attr-defined]


@settings(max_examples=30, deadline=None)
@given(agent_sessions(max_turns=30), st.integers(1, 8), st.integers(50, 600))
def test_every_step_keeps_pairs_the_head_and_the_loop_guard(history: list[Any], keep_last: int, max_tokens: int) -> None:
    condenser = TokenBudgetSummaryCondenser(NumberedSummaries().llm(), keep_last=keep_last, keep_first=2, max_tokens=max_tokens)
    replay_with_condenser(history, condenser, keep_first=2)
    assert isinstance(condenser.condense(View.from_events([])), View)
