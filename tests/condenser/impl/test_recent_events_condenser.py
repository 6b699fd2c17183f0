"""`recent`."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import real_log_params, require_real_log

from openhands_memory.condenser import Condensation, RecentEventsCondenser
from openhands_memory.condenser.impl import recent_events_condenser
from openhands_memory.events import CmdOutputObservation, CmdRunAction, MessageAction, ToolCallMetadata
from openhands_memory.testing.condenser_replay import replay_with_condenser
from openhands_memory.view import View, ViewBuilder

from .._helpers import Session, history_of, ids


def _session(turns: int = 5) -> Session:
    s = Session()
    s.header()
    for i in range(turns):
        s.turn(f"c{i}")
    return s


def test_the_head_and_the_newest_events_are_shown() -> None:
    view = _session().view  # 14 events
    shown = RecentEventsCondenser(keep_first=4, max_events=8).condense(view)
    assert ids(shown) == [0, 1, 2, 3, 10, 11, 12, 13]
    assert ids(view) == list(range(14))


def test_no_event_is_shown_twice() -> None:
    # OpenHands shows head + view[-tail:], so a short view (or max_events <= keep_first) repeats events.
    view = _session(1).view
    assert RecentEventsCondenser(keep_first=4, max_events=100).condense(view) is view
    shown = RecentEventsCondenser(keep_first=3, max_events=2).condense(_session().view)
    assert ids(shown) == [0, 1, 2, 3, 12, 13]  # the head (grown to a safe cut) and the newest unit


def test_the_system_prompt_and_first_user_message_stay_with_keep_first_zero() -> None:
    shown = RecentEventsCondenser(keep_first=0, max_events=4).condense(_session().view)
    assert ids(shown) == [0, 1, 12, 13]


def test_the_cut_does_not_split_parallel_calls() -> None:
    s = _session(2)
    a, b = s.calls("a", "b")
    s.result(a)
    s.result(b)
    shown = RecentEventsCondenser(keep_first=4, max_events=7).condense(s.view)
    assert ids(shown) == [0, 1, 2, 3, 8, 9, 10, 11]  # not 9, 10, 11 alone


def test_a_token_budget_trims_further() -> None:
    s = _session(4)
    counter = lambda events: 10 * len(events)  # noqa: E731
    shown = RecentEventsCondenser(keep_first=4, max_events=100, max_tokens=80, token_counter=counter).condense(s.view)
    assert ids(shown) == [0, 1, 2, 3, 8, 9, 10, 11]


def test_a_request_condenses_the_log_for_real() -> None:
    s = _session()
    s.request()
    result = RecentEventsCondenser(keep_first=4, max_events=8).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.action.forgotten == list(range(4, 10)) and result.metadata.reason == "request"


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match=r"max_events \(0\) must be at least 1"):
        RecentEventsCondenser(max_events=0)
    with pytest.raises(ValueError, match=r"keep_first \(-1\) cannot be negative"):
        RecentEventsCondenser(keep_first=-1)


@pytest.mark.parametrize("log", real_log_params("v0_"))
def test_real_logs_replay_within_budget(log: Path | None) -> None:
    history = history_of(require_real_log(log))
    replay = replay_with_condenser(history, RecentEventsCondenser(keep_first=2, max_events=12), keep_first=2)
    assert replay.largest_view <= 16


# Long views: only the head and the newest max_events + 32 events are looked at.


@pytest.fixture
def no_full_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the full plan was used")

    monkeypatch.setattr(recent_events_condenser, "plan_forgetting", refuse)


@pytest.mark.usefixtures("no_full_plan")
def test_a_long_view_is_trimmed_from_its_ends() -> None:
    view = _session(100).view  # 204 events
    shown = RecentEventsCondenser(keep_first=4, max_events=10).condense(view)
    assert ids(shown) == [0, 1, 2, 3, 198, 199, 200, 201, 202, 203]
    assert shown.forgotten_event_ids == view.forgotten_event_ids


@pytest.mark.usefixtures("no_full_plan")
def test_a_long_view_keeps_the_first_user_message_when_the_head_is_shorter() -> None:
    view = _session(100).view
    assert ids(RecentEventsCondenser(keep_first=1, max_events=6).condense(view)) == [0, 1, 200, 201, 202, 203]


@pytest.mark.usefixtures("no_full_plan")
def test_a_result_that_answers_a_hidden_call_is_hidden_with_it() -> None:
    s = _session(60)
    (late,) = s.calls("sleep 600")  # 124
    for i in range(40):
        s.turn(f"d{i}")  # 125-204
    s.result(late, "finally")  # 205
    s.turn()  # 206, 207
    shown = RecentEventsCondenser(keep_first=4, max_events=8).condense(s.view)
    assert ids(shown) == [0, 1, 2, 3, 206, 207]


@pytest.mark.usefixtures("no_full_plan")
def test_a_long_view_never_starts_inside_a_batch() -> None:
    s = _session(60)
    a, b, c = s.calls("a", "b", "c")
    s.result(a)
    s.result(b)
    s.result(c)
    shown = RecentEventsCondenser(keep_first=4, max_events=7).condense(s.view)
    assert ids(shown)[4:] == [124, 125, 126, 127, 128, 129]


@pytest.mark.usefixtures("no_full_plan")
def test_a_long_view_with_a_standing_summary_in_the_head() -> None:
    s = _session(2)
    s.condense(forgotten_event_ids=[4, 5], summary="S", summary_offset=2)
    for i in range(60):
        s.turn()
    shown = RecentEventsCondenser(keep_first=4, max_events=7).condense(s.view)
    assert [e.id for e in shown] == [0, 1, None, 2, 3, 127, 128]


@pytest.mark.parametrize(("keep_first", "expected"), [(0, [1, 120, 121, 122, 123]), (2, [0, 1, 122, 123])])
@pytest.mark.usefixtures("no_full_plan")
def test_a_long_view_without_a_system_prompt(keep_first: int, expected: list[int]) -> None:
    s = Session()
    s.agent("hello")
    task = s.user()
    s.recall(task.content)
    for i in range(60):
        s.turn()
    shown = RecentEventsCondenser(keep_first=keep_first, max_events=5).condense(s.view)
    assert ids(shown) == expected


# Long views show exactly what the full plan shows (regressions: the fast path used to differ).


def _long_session() -> Session:
    return _session(40)  # 84 events


@pytest.mark.usefixtures("no_full_plan")
def test_a_long_view_shows_a_result_whose_call_was_forgotten_where_the_full_plan_does() -> None:
    s = _long_session()
    call, _ = s.turn()  # 84, 85
    s.condense(forgotten_event_ids=[call.id])  # a condensation made elsewhere forgot the call only
    s.turn()  # 87, 88
    shown = RecentEventsCondenser(keep_first=4, max_events=9).condense(s.view)
    assert ids(shown) == [0, 1, 2, 3, 82, 83, 85, 87, 88]  # the fast path hid 82-85 as if 85 answered a hidden call


@pytest.mark.usefixtures("no_full_plan")
def test_a_long_view_hides_a_call_whose_id_was_used_before() -> None:
    s = _long_session()
    (first,) = s.calls("x")  # 84
    s.result(first)  # 85
    for _ in range(40):
        s.turn()  # 86-165
    assert first.tool_call_metadata is not None
    again = first.tool_call_metadata.model_copy(update={"model_response": {"id": "another response"}})
    s.result(s.add(CmdRunAction(command="y", tool_call_metadata=again)))  # 166, 167: one unit with 84 and 85
    s.turn()  # 168, 169
    shown = RecentEventsCondenser(keep_first=4, max_events=9).condense(s.view)
    assert ids(shown) == [0, 1, 2, 3, 168, 169]


@pytest.mark.usefixtures("no_full_plan")
def test_a_long_view_keeps_calls_of_one_response_together_whatever_their_count_says() -> None:
    s = _long_session()
    response = {"id": "R"}  # total_calls_in_response says 1 for each: the shared response id still ties them
    early = s.add(CmdRunAction(command="a", tool_call_metadata=ToolCallMetadata(function_name="execute_bash", tool_call_id="a", model_response=response)))  # fmt: skip
    s.result(early)  # 84, 85
    for _ in range(40):
        s.turn()  # 86-165
    late = s.add(CmdRunAction(command="b", tool_call_metadata=ToolCallMetadata(function_name="execute_bash", tool_call_id="b", model_response=response)))  # fmt: skip
    s.result(late)  # 166, 167
    s.turn()  # 168, 169
    shown = RecentEventsCondenser(keep_first=4, max_events=9).condense(s.view)
    assert ids(shown) == [0, 1, 2, 3, 168, 169]


def test_a_long_view_keeps_the_head_whole_when_its_call_is_answered_much_later() -> None:
    s = Session()
    s.system()
    s.user()
    make = s.add(CmdRunAction(command="make"))  # 2: no tool call metadata, answered by cause only
    for _ in range(40):
        s.turn()  # 3-82
    s.add(CmdOutputObservation(content="done", command="make", cause=make.id))  # 83: the head's unit ends here
    for _ in range(40):
        s.turn()  # 84-163
    shown = RecentEventsCondenser(keep_first=3, max_events=4).condense(s.view)
    assert ids(shown) == [*range(84), 162, 163]  # the fast path showed [0, 1, 2, 162, 163]: 2 without its result


def test_step_after_step_a_long_view_sees_what_each_step_adds() -> None:
    s = _long_session()
    (first,) = s.calls("x")
    s.result(first)  # 84, 85
    for _ in range(40):
        s.turn()  # 86-165
    builder = ViewBuilder(s.events)
    condenser = RecentEventsCondenser(keep_first=4, max_events=9)
    assert ids(condenser.condense(builder.view)) == [0, 1, 2, 3, 162, 163, 164, 165]
    assert first.tool_call_metadata is not None
    again = first.tool_call_metadata.model_copy(update={"model_response": {"id": "another response"}})
    action = s.add(CmdRunAction(command="y", tool_call_metadata=again))  # 166: one unit with 84 and 85
    for event in (action, s.result(action), *s.turn()):  # 166-169, one at a time
        builder.append(event)
        condenser.condense(builder.view)
    assert ids(condenser.condense(builder.view)) == [0, 1, 2, 3, 168, 169]


def test_events_without_ids_are_trimmed_as_openhands_does() -> None:
    # Built in code, not yet in a stream: OpenHands 0.62 shows view[:1] + view[-2:] (m0, m3, m4).
    view = View.from_events([MessageAction(content=f"m{i}") for i in range(5)])
    shown = RecentEventsCondenser(keep_first=1, max_events=3).condense(view)
    assert [e.content for e in shown] == ["m0", "m3", "m4"]  # type: ignore[attr-defined]
    assert len(view) == 5


def test_a_long_view_hides_events_without_ids_in_between() -> None:
    s = _session(40)  # 0-83
    s.events.append(MessageAction(content="built in code"))  # no id: a view-level trim may hide it
    for _ in range(40):
        s.turn()  # 84-163
    condenser = RecentEventsCondenser(keep_first=4, max_events=8)
    assert ids(condenser.condense(s.view)) == [0, 1, 2, 3, 160, 161, 162, 163]
    assert condenser._trim_long_view(s.view) is not None  # the fast path decides it, without the full plan
