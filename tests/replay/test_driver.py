"""The replay driver: agent steps, condensations appended as if live, and a consistent replayed log."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import real_log_params, require_real_log

from openhands_memory.condenser import Condensation, NoOpCondenser, RollingCondenser
from openhands_memory.errors import CondensationStalledError
from openhands_memory.events import (
    AgentStateChangedObservation,
    CondensationAction,
    CondensationRequestAction,
    EventSource,
    MessageAction,
    NullObservation,
    ToolCallMetadata,
    agent_history,
    dump_events,
    event_to_dict,
    load_events,
)
from openhands_memory.replay import AgentStep, Replayer
from openhands_memory.replay.driver import CondensationMade, RecordedCondensation, is_agent_step
from openhands_memory.view import View

from ._helpers import ForgetOldest, Log


def _steps(items: Sequence[object]) -> list[AgentStep]:
    return [i for i in items if isinstance(i, AgentStep)]


def test_a_step_comes_before_the_first_action_of_each_model_response() -> None:
    log = Log()
    log.header()
    log.calls("ls")
    log.calls("cat a", "cat b", "cat c")  # one response, three parallel calls: one step
    log.add(CondensationRequestAction(), EventSource.AGENT)  # made by the controller: no step
    log.add(MessageAction(content="done"))
    items = list(Replayer(NoOpCondenser(), keep_recorded=True).replay(log.events))
    steps = _steps(items)
    assert [s.event.id for s in steps] == [2, 4, 11]
    assert [s.number for s in steps] == [1, 2, 3]
    assert [s.history_events for s in steps] == [2, 4, 11]
    assert len(steps[1].view) == 4 and steps[1].shown is steps[1].view
    assert steps[1].where == "step 2 (before event 4)"


def test_a_condensation_request_the_model_made_is_a_step() -> None:
    metadata = ToolCallMetadata(function_name="request_condensation", tool_call_id="c1", model_response={"id": "r9"})
    request = CondensationRequestAction(tool_call_metadata=metadata, source=EventSource.AGENT)
    assert is_agent_step(request, previous_response=None)
    assert not is_agent_step(CondensationRequestAction(source=EventSource.AGENT), previous_response=None)


def test_condensations_are_appended_before_the_step_and_later_events_keep_consistent_ids() -> None:
    log = Log()
    log.header()
    log.turns(6)
    replayer = Replayer(ForgetOldest(size=6))
    items = list(replayer.replay(log.events))
    made = [i for i in items if isinstance(i, CondensationMade)]
    assert [m.step for m in made] == [4, 5, 6]
    first = made[0]
    assert first.action.id == 8 and first.action.source == EventSource.AGENT
    assert first.action.forgotten == [2, 3] and first.view_after == first.view.apply(first.action)
    # The action the step comes before moved up by one, and its observation's cause with it.
    ids = [e.id for e in replayer.history]
    assert ids == list(range(len(replayer.history)))
    by_id = {e.id: e for e in replayer.history}
    assert by_id[10].cause == 9 and by_id[9].kind == "run"
    assert replayer.view == View.from_events(agent_history(replayer.history))
    # The source log is untouched.
    assert [e.id for e in log.events] == list(range(14))


def test_the_log_s_condensations_and_requests_are_dropped_unless_kept() -> None:
    log = Log()
    log.header()
    log.turns(3)
    log.add(CondensationRequestAction(), EventSource.AGENT)
    log.add(CondensationAction(forgotten_event_ids=[2, 3]))
    log.turns(1)
    fresh = Replayer(NoOpCondenser())
    list(fresh.replay(log.events))
    assert not any(isinstance(e, CondensationAction | CondensationRequestAction) for e in fresh.history)
    assert len(fresh.view) == 10
    kept = Replayer(NoOpCondenser(), keep_recorded=True)
    recorded = [i for i in kept.replay(log.events) if isinstance(i, RecordedCondensation)]
    assert [(r.source_id, r.steps_before, len(r.view), len(r.view_after)) for r in recorded] == [(9, 3, 8, 6)]
    assert kept.view == View.from_events(agent_history(log.events))


def test_kept_condensations_are_renumbered_with_the_events_they_forget() -> None:
    log = Log()
    log.header()
    log.turns(5)  # ids 2..11
    log.add(CondensationAction(forgotten_events_start_id=6, forgotten_events_end_id=9, summary="s", summary_offset=2))
    log.turns(2)
    replayer = Replayer(ForgetOldest(size=7), keep_recorded=True)
    list(replayer.replay(log.events))
    (recorded,) = [e for e in replayer.history if isinstance(e, CondensationAction) and e.summary == "s"]
    # A condensation was inserted inside the range: the range became the list of the same events' new ids.
    moved = [e.id for e in replayer.history if e.kind == "run" and getattr(e, "command", "") in ("cmd 2", "cmd 3")]
    assert recorded.forgotten == moved == [6, 7, 9, 10]
    assert recorded.forgotten_events_start_id is None
    assert replayer.view == View.from_events(agent_history(replayer.history))
    assert replayer.view[2].kind == "condense"  # the summary, at its offset


def test_a_kept_range_far_wider_than_the_log_is_renumbered_by_the_events_it_holds() -> None:
    log = Log()
    log.header()
    log.turns(5)  # ids 2..11
    big = log.calls("big", gap=10**12)[0]  # ids 10**12 + 12 and 13: the range below spans 10**12 ids
    log.add(CondensationAction(forgotten_events_start_id=6, forgotten_events_end_id=big.id + 1, summary="s", summary_offset=2))
    log.turns(1)
    replayer = Replayer(ForgetOldest(size=7), keep_recorded=True)
    list(replayer.replay(log.events))  # never one step per id of the range
    (recorded,) = [e for e in replayer.history if isinstance(e, CondensationAction) and e.summary == "s"]
    moved = [e.id for e in replayer.history if getattr(e, "command", "") in ("cmd 2", "cmd 3", "cmd 4", "big")]
    assert recorded.forgotten == moved and recorded.forgotten_events_start_id is None
    assert replayer.view == View.from_events(agent_history(replayer.history))
    assert not {e.id for e in replayer.view} & set(moved)


def test_a_kept_range_keeps_its_form_when_its_events_move_together() -> None:
    log = Log()
    log.header()
    log.turns(3)  # ids 2..7
    log.add(MessageAction(content="more"), EventSource.USER)  # 8
    log.turns(1)  # 9, 10
    log.add(CondensationAction(forgotten_events_start_id=9, forgotten_events_end_id=10))
    log.turns(1)
    replayer = Replayer(ForgetOldest(size=7), keep_recorded=True)
    list(replayer.replay(log.events))
    (recorded,) = [e for e in replayer.history if isinstance(e, CondensationAction) and e.condenser_metadata is None]
    assert (recorded.forgotten_events_start_id, recorded.forgotten_events_end_id) == (10, 11)
    assert replayer.view == View.from_events(agent_history(replayer.history))


def test_events_outside_the_agent_history_are_kept_but_never_shown() -> None:
    log = Log()
    log.header()
    log.add(AgentStateChangedObservation(agent_state="running"))
    log.turns(2)
    log.add(NullObservation(content=""))
    replayer = Replayer(NoOpCondenser())
    steps = _steps(list(replayer.replay(log.events)))
    assert len(replayer.history) == len(log.events)
    assert not any(isinstance(e, AgentStateChangedObservation | NullObservation) for e in replayer.view)
    assert [s.history_events for s in steps] == [3, 5]


class _Idle(RollingCondenser):
    """Asks to condense and forgets nothing: no progress."""

    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        return "size"

    def get_condensation(self, view: View) -> Condensation:
        return Condensation(CondensationAction(forgotten_event_ids=[]))


def test_a_condenser_that_makes_no_progress_stops_with_a_clear_error() -> None:
    log = Log()
    log.header()
    log.turns(2)
    with pytest.raises(
        CondensationStalledError,
        match=re.escape(
            "condenser '_Idle' made no progress: it asked to condense again after a condensation that left the view "
            "unchanged (2 events in view)"
        ),
    ):
        list(Replayer(_Idle()).replay(log.events))


def test_a_condenser_that_never_stops_is_stopped_at_the_limit() -> None:
    log = Log()
    log.header()
    for number in range(10):
        log.add(MessageAction(content=f"note {number}"), EventSource.USER)
    log.turns(1)  # the first step sees 12 events; forgetting two at a time takes five condensations
    with pytest.raises(CondensationStalledError, match=re.escape("still condensing after 3 condensations at one step")):
        list(Replayer(ForgetOldest(size=2), max_condensations_per_step=3).replay(log.events))


@pytest.mark.parametrize("log_path", real_log_params("v0_"))
def test_real_logs_replay_with_their_own_condensations_to_their_own_view(log_path: Path | None, tmp_path: Path) -> None:
    path = require_real_log(log_path)
    events = load_events(path)
    before = [event_to_dict(e) for e in events]
    replayer = Replayer(NoOpCondenser(), keep_recorded=True)
    list(replayer.replay(events))
    source_view = View.from_events(agent_history(events))
    assert [e.id for e in replayer.view] == [e.id for e in source_view]
    assert [e.kind for e in replayer.view] == [e.kind for e in source_view]
    assert [event_to_dict(e) for e in events] == before  # never changed
    # Nothing was inserted, so nothing was renumbered: gaps and ranges over gaps stay as they were.
    assert all(a is b for a, b in zip(events, replayer.history, strict=True))
    out = tmp_path / "replayed.jsonl"
    dump_events(replayer.history, out)
    assert View.from_events(agent_history(load_events(out))) == replayer.view
