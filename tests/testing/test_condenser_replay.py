"""The condenser replay harness: it renumbers, asks at agent steps, and catches broken condensers."""

from __future__ import annotations

import re

import pytest

from openhands_memory.condenser import Condensation, Condenser, RollingCondenser
from openhands_memory.condenser._boundaries import condensation_action
from openhands_memory.events import CmdOutputObservation, CmdRunAction, CondensationAction, Event, EventSource, MessageAction, ToolCallMetadata
from openhands_memory.testing.condenser_replay import check_derived_view, replay_with_condenser
from openhands_memory.view import View


def _history(step: int = 10) -> list[Event]:
    events: list[Event] = [MessageAction(content="task", source=EventSource.USER)]
    for i in range(4):
        metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id=f"c{i}", model_response={"id": f"r{i}"})
        events.append(CmdRunAction(command=f"c{i}", tool_call_metadata=metadata, source=EventSource.AGENT))
        events.append(CmdOutputObservation(content="out", tool_call_metadata=metadata, source=EventSource.ENVIRONMENT))
    for index, event in enumerate(events):
        event.id = step * index  # sparse ids by default: free ids for the condensations
        if isinstance(event, CmdOutputObservation):
            event.cause = events[index - 1].id
    return events


class Forget(RollingCondenser):
    """Forgets fixed ids (by their new numbers) once the view is long enough."""

    def __init__(self, forget: list[int], *, at: int = 5) -> None:
        super().__init__()
        self.forget = forget
        self.at = at
        self.done = False

    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        return "size" if len(view) >= self.at and not self.done else None

    def get_condensation(self, view: View) -> Condensation:
        self.done = True
        return Condensation(condensation_action(view, self.forget))


class Always(RollingCondenser):
    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        return "size"

    def get_condensation(self, view: View) -> Condensation:
        return Condensation(CondensationAction(forgotten_event_ids=[]))


class Duplicate(Condenser):
    def condense(self, view: View) -> View:
        return View([*view.events, *view.events[-1:]])


def test_a_good_condensation_takes_the_next_free_id_and_later_events_keep_theirs() -> None:
    replay = replay_with_condenser(_history(), Forget([10, 20]), keep_first=1)
    assert replay.steps == 4 and len(replay.condensations) == 1
    kinds = [(e.id, e.kind) for e in replay.history]
    assert kinds[:7] == [(0, "message"), (10, "run"), (20, "run"), (30, "run"), (40, "run"), (41, "condensation"), (50, "run")]
    assert [e.id for e in replay.history[6:]] == [50, 60, 70, 80]
    assert [e.cause for e in replay.history if isinstance(e, CmdOutputObservation)] == [10, 30, 50, 70]


def test_events_after_a_condensation_move_up_when_it_took_their_id() -> None:
    replay = replay_with_condenser(_history(step=1), Forget([1, 2]), keep_first=1)
    kinds = [(e.id, e.kind) for e in replay.history]
    assert kinds[:6] == [(0, "message"), (1, "run"), (2, "run"), (3, "run"), (4, "run"), (5, "condensation")]
    assert [e.id for e in replay.history] == list(range(10))
    assert [e.cause for e in replay.history if isinstance(e, CmdOutputObservation)] == [1, 3, 6, 8]


@pytest.mark.parametrize(
    ("condenser", "message"),
    [
        (Forget([10]), "step 3 (before event 50): event 10 and its observation 20 were split"),
        (Forget([0]), "step 3 (before event 50): forgot protected event 0 (#0)"),
        (Always(), "step 1: condenser 'Always' made no progress: it asked to condense again after a condensation"),
        (Duplicate(), "step 1 (before event 10): events repeated or reordered"),
    ],
)
def test_broken_condensers_are_caught(condenser: Condenser, message: str) -> None:
    with pytest.raises(AssertionError, match=re.escape(message)):
        replay_with_condenser(_history(), condenser, keep_first=1)


def test_a_derived_view_must_keep_tool_calls_with_their_results() -> None:
    view = View.from_events([e for e in _history()])
    with pytest.raises(AssertionError, match="were split"):
        check_derived_view(view, View([view[0], view[1], view[3], view[4]]))


class SummarizeOldestTurn(RollingCondenser):
    """Summarizes the oldest tool turn in place, as a persisting summary, while the view holds two or more."""

    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        return "size" if sum(isinstance(e, CmdRunAction) for e in view) > 1 else None

    def get_condensation(self, view: View) -> Condensation:
        index = next(i for i, e in enumerate(view) if isinstance(e, CmdRunAction))
        call = view[index]
        assert isinstance(call, CmdRunAction)
        action = condensation_action(view, [call.id, view[index + 1].id], summary=f"ran {call.command}", summary_offset=index)
        action.summary_persists = True
        return Condensation(action)


def test_persisting_summaries_pass_the_checks_and_stand_together() -> None:
    replay = replay_with_condenser(_history(), SummarizeOldestTurn(), keep_first=1, persisting=True)
    assert len(replay.condensations) == 2
    shown = View.from_events(replay.history)
    assert [getattr(e, "command", None) or e.content for e in shown] == ["task", "ran c0", "ran c1", "c2", "out", "c3", "out"]  # type: ignore[attr-defined]
