"""`conversation_window`."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import real_log_params, require_real_log

from openhands_memory.condenser import Condensation, ConversationWindowCondenser
from openhands_memory.events import CmdOutputObservation, MessageAction
from openhands_memory.testing.condenser_replay import replay_with_condenser

from .._helpers import Session, history_of, ids


def _session(turns: int) -> Session:
    s = Session()
    s.header()  # system, task, recall, recall observation
    for i in range(turns):
        s.turn(f"c{i}")
    return s


def test_only_a_request_triggers_it_by_default() -> None:
    view = _session(20).view
    assert ConversationWindowCondenser().condense(view) is view


def test_it_keeps_the_essentials_and_the_newer_half() -> None:
    s = _session(6)  # 4 essential + 12 others
    s.request()
    result = ConversationWindowCondenser().condense(s.view)
    assert isinstance(result, Condensation)
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3, 10, 11, 12, 13, 14, 15]


def test_the_kept_half_never_starts_on_a_dangling_observation_or_inside_a_batch() -> None:
    s = _session(2)  # 4 + 4
    a, b, c = s.calls("a", "b", "c")  # 8-10
    for action in (a, b, c):
        s.result(action)  # 11-13
    s.turn()  # 14, 15: 12 others, half is 6 -> would start at 10
    s.request()
    result = ConversationWindowCondenser().condense(s.view)
    assert isinstance(result, Condensation)
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3, 14, 15]


def test_the_first_user_message_is_found_after_other_events() -> None:
    s = Session()
    s.system()
    s.agent("hello")
    task = s.user("the task")
    s.recall(task.content)
    for i in range(4):
        s.turn()
    s.request()
    result = ConversationWindowCondenser().condense(s.view)
    assert isinstance(result, Condensation)
    s.add(result.action)
    kept = s.view
    assert [e.id for e in kept][:4] == [0, 2, 3, 4]
    assert not any(isinstance(e, MessageAction) and e.content == "hello" for e in kept)


def test_optional_size_triggers() -> None:
    view = _session(10).view
    result = ConversationWindowCondenser(max_events=20).condense(view)
    assert isinstance(result, Condensation) and result.metadata is not None and result.metadata.reason == "size"
    with pytest.raises(ValueError, match=r"max_events \(0\) must be at least 1"):
        ConversationWindowCondenser(max_events=0)


@pytest.mark.parametrize("log", real_log_params("v0_"))
def test_real_logs_replay_with_the_essentials_kept(log: Path | None) -> None:
    history = history_of(require_real_log(log))
    replay = replay_with_condenser(history, ConversationWindowCondenser(max_events=24))
    assert replay.largest_view <= 25


def _dangling(s: Session, content: str) -> CmdOutputObservation:
    """An observation whose action (id 100) is not in the view."""
    return s.add(CmdOutputObservation(content=content, command="ls", cause=100))


def test_dangling_observations_at_the_start_of_the_kept_half_are_all_forgotten() -> None:
    # OpenHands 0.62 on [system, task, recall, recall observation, 2 dangling observations, request]:
    # 2 others, half is 1, the kept slice holds only dangling observations: both go.
    s = Session()
    s.header()  # 0-3
    _dangling(s, "a")  # 4
    _dangling(s, "b")  # 5
    s.request()  # 6
    result = ConversationWindowCondenser().condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.action.forgotten == [4, 5] and result.metadata.forgotten == 2
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3]


def test_the_kept_half_starts_at_the_first_event_after_the_dangling_observations() -> None:
    # 6 others, half is 3: OpenHands' slice is [b, 8, 9]; it skips b and keeps the turn.
    s = Session()
    s.header()  # 0-3
    s.turn()  # 4, 5
    _dangling(s, "a")  # 6
    _dangling(s, "b")  # 7
    s.turn()  # 8, 9
    s.request()
    result = ConversationWindowCondenser().condense(s.view)
    assert isinstance(result, Condensation)
    assert result.action.forgotten == [4, 5, 6, 7]
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3, 8, 9]
