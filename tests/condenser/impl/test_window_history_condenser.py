"""`window_history`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openhands_memory.condenser import (
    Condensation,
    Condenser,
    WindowHistoryCondenser,
    WindowHistoryCondenserConfig,
)
from openhands_memory.errors import CondenserConfigError
from openhands_memory.testing.condenser_replay import replay_with_condenser
from openhands_memory.testing.strategies import agent_sessions
from openhands_memory.view import View

from .._helpers import Session, ids
from ._model_helpers import session


def test_the_newest_window_size_events_are_shown_with_the_system_prompt_and_the_task() -> None:
    s = session(6)  # 0 system, 1 task, 2-3 recall, 4-15 six calls with their results
    shown = WindowHistoryCondenser(4).condense(s.view)
    assert isinstance(shown, View)
    assert ids(shown) == [0, 1, 12, 13, 14, 15]
    assert ids(s.view) == list(range(16))  # the log is not condensed


def test_a_short_view_is_shown_as_it_is() -> None:
    s = session(2)
    view = s.view
    assert WindowHistoryCondenser(24).condense(view) is view


def test_the_window_starts_at_a_safe_cut_rather_than_split_a_call_from_its_result() -> None:
    s = session(6)
    # The newest 3 events start at result 13 of call 12: the window shows fewer, not the result alone.
    assert ids(WindowHistoryCondenser(3).condense(s.view)) == [0, 1, 14, 15]


def test_parallel_calls_and_their_results_are_shown_or_hidden_together() -> None:
    s = Session()
    s.header()
    calls = s.calls("a", "b")  # 4, 5: one model response
    for call in calls:
        s.result(call)  # 6, 7
    s.turn()  # 8, 9
    assert ids(WindowHistoryCondenser(3).condense(s.view)) == [0, 1, 8, 9]
    assert ids(WindowHistoryCondenser(6).condense(s.view)) == [0, 1, 4, 5, 6, 7, 8, 9]


def test_the_newest_unit_stays_whole_even_when_larger_than_the_window() -> None:
    s = Session()
    s.header()
    s.turn()  # 4, 5
    calls = s.calls("a", "b", "c")  # 6-8
    for call in calls:
        s.result(call)  # 9-11
    assert ids(WindowHistoryCondenser(2).condense(s.view)) == [0, 1, 6, 7, 8, 9, 10, 11]


def test_the_standing_summary_stays_in_view() -> None:
    s = session(6)
    s.condense(forgotten_events_start_id=2, forgotten_events_end_id=5, summary="earlier work", summary_offset=2)
    s.turn("ls", "more")  # 17, 18
    shown = WindowHistoryCondenser(2).condense(s.view)
    assert ids(shown) == [0, 1, None, 17, 18]
    assert shown[2].content == "earlier work"  # type: ignore[attr-defined]


def test_a_request_condenses_the_log_for_real_without_a_summary() -> None:
    s = session(6)
    s.request()  # 16
    result = WindowHistoryCondenser(4).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    action = result.action
    assert (action.forgotten_events_start_id, action.forgotten_events_end_id) == (2, 11)
    assert action.summary is None and action.summary_offset is None
    assert (result.metadata.condenser, result.metadata.reason, result.metadata.forgotten) == ("window_history", "request", 10)
    s.add(action)
    assert ids(s.view) == [0, 1, 12, 13, 14, 15]
    assert not s.view.unhandled_condensation_request


def test_a_request_with_everything_in_the_window_forgets_the_oldest_unit() -> None:
    s = session(2)  # 8 events
    s.request()
    result = WindowHistoryCondenser(24).condense(s.view)
    assert isinstance(result, Condensation)
    assert list(result.action.forgotten) == [2, 3]  # the recall, the oldest forgettable unit


def test_built_from_config_with_qitos_default() -> None:
    condenser = Condenser.from_config({"type": "window_history"})
    assert isinstance(condenser, WindowHistoryCondenser) and condenser.window_size == 24
    assert WindowHistoryCondenserConfig().window_size == 24
    with pytest.raises(CondenserConfigError, match="condenser 'window_history': window_size: Input should be greater"):
        Condenser.from_config({"type": "window_history", "window_size": 0})
    with pytest.raises(CondenserConfigError, match="condenser 'window_history': window_size: must be at least 1, got 0"):
        WindowHistoryCondenser(0)


@given(agent_sessions(max_turns=30), st.integers(1, 12))
def test_every_step_keeps_pairs_the_task_and_the_loop_guard(history: list[Any], window_size: int) -> None:
    replay = replay_with_condenser(history, WindowHistoryCondenser(window_size))
    for record in replay.condensations:
        assert record.reason == "request"
