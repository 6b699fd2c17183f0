"""`compact_history`."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openhands_memory.condenser import (
    CompactHistoryCondenser,
    CompactHistoryCondenserConfig,
    Condensation,
    Condenser,
)
from openhands_memory.condenser._boundaries import analyze
from openhands_memory.condenser._recency import round_starts
from openhands_memory.condenser.impl.compact_history_condenser import CONTINUATION_PROMPT, micro_preview
from openhands_memory.condenser.tokens import ApproximateTokenCounter
from openhands_memory.errors import CondenserConfigError
from openhands_memory.events import CmdOutputObservation
from openhands_memory.testing.condenser_replay import replay_with_condenser
from openhands_memory.testing.fake_llm import litellm_error
from openhands_memory.testing.strategies import agent_sessions
from openhands_memory.view import View

from .._helpers import Session, ids
from ._history_helpers import add_turn, started_history
from ._model_helpers import NumberedSummaries, fake_llm, prompt_of

_TOKENS = 769
"""The approximate tokens of `_session()`."""


def _session() -> Session:
    """0 system, 1 task, 2-3 recall, then four calls with their results: 5 is long (1,201
    characters, 2 lines), 7 and 9 short, 11 long (1,500 characters) but in the last two rounds."""
    s = Session()
    s.header()
    s.turn("cat big", "A" * 600 + "\n" + "B" * 600)  # 4, 5
    s.turn("ls", "small")  # 6, 7
    s.turn("ls -a", "small too")  # 8, 9
    s.turn("cat other", "C" * 1500)  # 10, 11
    return s


def test_micro_preview_shows_head_and_tail_with_the_original_size() -> None:
    text = "0123456789abcdefghij\nKLMNOPQRSTUVWXYZ"
    assert micro_preview(text, event_id=5, label="tool output", preview_chars=10) == (
        "[compacted tool output of event 5: original 37 characters, 2 lines; head and tail shown; "
        "call context_reload with event_id=5 to see all of it]\n0123456789\n...\nVWXYZ"
    )


def test_rounds_are_agent_steps_with_what_answers_them() -> None:
    s = Session()
    s.header()  # 0 system, 1 task, 2-3 recall
    calls = s.calls("a", "b")  # 4, 5: one model response
    s.result(calls[1])  # 6
    s.result(calls[0])  # 7
    s.turn()  # 8, 9
    s.agent("done")  # 10
    assert round_starts(analyze(s.view)) == [0, 1, 2, 4, 8, 10]


def test_within_the_budget_and_below_the_warning_nothing_changes() -> None:
    s = _session()
    fake, llm = fake_llm("S")
    condenser = CompactHistoryCondenser(llm, max_tokens=1_000)  # warns at 800
    view = s.view
    assert condenser.token_counter(view) == _TOKENS
    assert condenser.condense(view) is view
    assert (condenser.warnings, condenser.last_stages, fake.calls) == (0, {}, [])


def test_a_warning_is_logged_once_per_crossing_before_any_compaction(caplog: pytest.LogCaptureFixture) -> None:
    s = _session()
    fake, llm = fake_llm("S")
    condenser = CompactHistoryCondenser(llm, max_tokens=900)  # warns at 720
    view = s.view
    with caplog.at_level(logging.WARNING):
        assert condenser.condense(view) is view
        assert condenser.condense(view) is view
    assert condenser.warnings == 1
    assert [r.getMessage() for r in caplog.records] == [
        "compact_history: the prompt has 769 tokens, at least 0.8 of its budget of 900 tokens (at event 11)"
    ]
    assert fake.calls == []


def test_the_warning_rides_on_the_first_compaction_in_the_log() -> None:
    s = _session()
    _, llm = fake_llm("S1", "S2")
    condenser = CompactHistoryCondenser(llm, max_tokens=900)
    assert condenser.condense(s.view) is not None and condenser.warnings == 1
    s.turn("cat third", "D" * 1500)  # 12, 13: over 900 tokens even with 5 micro-compacted
    result = condenser.condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.metadata.extra["warning"] == {
        "tokens": _TOKENS, "threshold": 720, "warning_ratio": 0.8, "max_tokens": 900, "at_event_id": 11,
    }  # fmt: skip
    assert result.action.condenser_metadata is not None
    assert result.action.condenser_metadata["extra"]["warning"]["at_event_id"] == 11  # in the log itself
    s.add(result.action)
    s.turn("cat fourth", "E" * 1500)
    s.turn("cat fifth", "F" * 1500)
    later = condenser.condense(s.view)
    assert isinstance(later, Condensation) and later.metadata is not None
    assert "warning" not in later.metadata.extra  # recorded once; the counter says how many
    assert condenser.warnings == 1


def test_a_skipped_summary_leaves_the_warning_pending_for_the_next_one() -> None:
    s = _session()
    fake, llm = fake_llm(litellm_error("RateLimitError", "slow down"), "S")
    condenser = CompactHistoryCondenser(llm, max_tokens=500, on_model_error="skip")
    skipped = condenser.condense(s.view)
    assert isinstance(skipped, View) and skipped[5] is not s.view[5]  # the micro view, nothing appended
    result = condenser.condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.metadata.extra["warning"]["at_event_id"] == 11 and len(fake.calls) == 2


def test_past_the_budget_old_long_outputs_are_micro_compacted_in_the_view_only() -> None:
    s = _session()
    fake, llm = fake_llm("S")
    condenser = CompactHistoryCondenser(llm, max_tokens=700)
    view = s.view
    shown = condenser.condense(view)
    assert isinstance(shown, View) and ids(shown) == ids(view)
    compacted = shown[5]
    assert isinstance(compacted, CmdOutputObservation)
    assert compacted.content == micro_preview(view[5].content, event_id=5, label="tool output", preview_chars=220)  # type: ignore[attr-defined]
    assert compacted.content.startswith("[compacted tool output of event 5: original 1201 characters, 2 lines;")
    assert (compacted.id, compacted.cause, compacted.tool_call_metadata) == (5, 4, view[5].tool_call_metadata)
    assert shown[11] is view[11]  # in the last two rounds: never compacted
    assert all(shown[i] is view[i] for i in range(12) if i != 5)
    assert condenser.last_stages == {
        "micro_compaction": {"messages": 1, "tokens_before": _TOKENS, "tokens_after": 588, "tokens_saved": 181}
    }
    assert condenser.condense(view)[5] is compacted  # type: ignore[index]  # the same copy step after step
    assert fake.calls == [] and view[5].content.startswith("AAA")  # type: ignore[attr-defined]


def test_still_over_the_budget_the_older_rounds_get_a_continuation_summary() -> None:
    s = _session()
    fake, llm = fake_llm("GOAL AND CONSTRAINTS: fix the bug")
    result = CompactHistoryCondenser(llm, max_tokens=500).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    action = result.action
    assert (action.forgotten_events_start_id, action.forgotten_events_end_id) == (2, 7)
    assert action.summary == "GOAL AND CONSTRAINTS: fix the bug" and action.summary_offset == 1
    extra = result.metadata.extra
    assert extra["micro_compaction"] == {"messages": 1, "tokens_before": _TOKENS, "tokens_after": 588, "tokens_saved": 181}
    assert extra["continuation_summary"] == {
        "rounds_kept": 2, "events": 6, "tokens_before": 588, "tokens_after": 434, "tokens_saved": 154,
    }  # fmt: skip
    assert result.metadata.tokens_after == 434 and extra["max_tokens"] == 500
    prompt = prompt_of(fake)
    assert prompt.startswith(CONTINUATION_PROMPT) and prompt.endswith("Now write the continuation summary.")
    assert re.findall(r"<EVENT id=(\d+)>", prompt) == ["2", "3", "4", "5", "6", "7"]
    s.add(action)
    assert ids(s.view) == [0, None, 1, 8, 9, 10, 11]


def test_when_the_kept_rounds_alone_are_over_budget_only_the_newest_events_stay() -> None:
    s = _session()
    _, llm = fake_llm("S")
    result = CompactHistoryCondenser(llm, max_tokens=300).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert (result.action.forgotten_events_start_id, result.action.forgotten_events_end_id) == (2, 9)
    assert result.metadata.extra["continuation_summary"]["trimmed_events"] == 2
    s.add(result.action)
    assert ids(s.view) == [0, None, 1, 10, 11]  # the newest unit stays whole, over budget or not


def test_a_summary_that_may_outweigh_the_older_round_makes_it_trim_so_the_prompt_shrinks() -> None:
    # Found by hypothesis (issue 40): the last two rounds fill the budget exactly, the older round
    # takes a few tokens, and a summary under MIN_SUMMARY_TOKENS is never cut. Forgetting only that
    # round grew the prompt (4,078 -> 4,088 tokens), still over budget, and the loop guard stopped
    # the next condensation with CondensationStalledError.
    s = Session()
    s.header()  # 0-3
    s.turn("ls", "a.txt")  # 4, 5: the older round
    s.turn("cat a.txt", "A" * 8000)  # 6, 7
    s.turn("cat b.txt", "B" * 8000)  # 8, 9: the last two rounds
    budget = ApproximateTokenCounter()([e for e in s.events if e.id not in (4, 5)])
    result = CompactHistoryCondenser(None, max_tokens=budget).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert (result.action.forgotten_events_start_id, result.action.forgotten_events_end_id) == (2, 7)
    assert result.metadata.extra["continuation_summary"]["trimmed_events"] == 2
    assert result.metadata.tokens_after is not None and result.metadata.tokens_after <= budget


def test_without_auto_compact_it_only_warns() -> None:
    s = _session()
    fake, llm = fake_llm("S")
    condenser = CompactHistoryCondenser(llm, max_tokens=300, auto_compact=False)
    view = s.view
    assert condenser.condense(view) is view
    assert condenser.warnings == 1 and fake.calls == []


def test_a_request_is_handled_within_the_budget_too() -> None:
    s = _session()
    s.request()
    _, llm = fake_llm("S")
    result = CompactHistoryCondenser(llm).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.metadata.reason == "request"
    assert (result.action.forgotten_events_start_id, result.action.forgotten_events_end_id) == (2, 7)


def test_built_from_config_with_qitos_compact_config_defaults() -> None:
    config = CompactHistoryCondenserConfig(llm_config="x")
    assert (config.max_tokens, config.keep_last_rounds, config.keep_last_messages, config.warning_ratio, config.auto_compact) == (
        16_000, 2, 8, 0.8, True,
    )  # fmt: skip
    assert (config.compact_over_chars, config.preview_chars) == (900, 220)
    condenser = Condenser.from_config({"type": "compact_history", "llm_config": {"model": "gpt-4o"}})
    assert isinstance(condenser, CompactHistoryCondenser)
    assert (condenser.budget, condenser.warning_threshold, condenser.keep_last_rounds) == (16_000, 12_800, 2)
    message = "preview_chars (600) plus its tail (300) must be less than compact_over_chars (900)"
    with pytest.raises(CondenserConfigError, match=re.escape(message)):
        Condenser.from_config({"type": "compact_history", "llm_config": {"model": "gpt-4o"}, "preview_chars": 600})
    with pytest.raises(CondenserConfigError, match=re.escape(f"condenser 'compact_history': {message}")):
        CompactHistoryCondenser(fake_llm()[1], preview_chars=600)
    with pytest.raises(CondenserConfigError, match="warning_ratio: must be in"):
        CompactHistoryCondenser(fake_llm()[1], warning_ratio=0)


def test_history_steps_never_stall_and_stay_within_the_budget() -> None:
    summaries = NumberedSummaries()
    condenser = CompactHistoryCondenser(summaries.llm(), max_tokens=1_500, keep_first=2)
    history = started_history(condenser)
    for number in range(40):
        add_turn(history, number, f"line {number}\n" * 150)  # about 1,300 characters each
        history.next_messages()
        assert condenser.token_counter(history.last_view) <= 1_500  # type: ignore[arg-type]
    condensations = [e for e in history.stream.get_events() if type(e).__name__ == "CondensationAction"]
    assert len(condensations) == len(summaries.fake.calls) > 1
    assert all(c.condenser_metadata["extra"]["continuation_summary"]["tokens_saved"] > 0 for c in condensations)  # type: ignore[index]


@settings(max_examples=30, deadline=None)
@given(agent_sessions(max_turns=30), st.integers(1, 3), st.integers(1, 8), st.integers(100, 1_500))
def test_every_step_keeps_pairs_the_head_and_the_loop_guard(history: list[Any], rounds: int, messages: int, max_tokens: int) -> None:
    condenser = CompactHistoryCondenser(
        NumberedSummaries().llm(), rounds, messages, max_tokens=max_tokens, keep_first=2, compact_over_chars=40, preview_chars=10
    )
    replay_with_condenser(history, condenser, keep_first=2)
