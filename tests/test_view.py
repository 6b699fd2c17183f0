"""View.from_events and ViewBuilder against OpenHands V0's rules, by example and by property."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openhands_memory.events import (
    AgentCondensationObservation,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    CondensationRequestAction,
    Event,
    MessageAction,
    agent_history,
    load_events,
)
from openhands_memory.testing.strategies import event_streams
from openhands_memory.view import View, ViewBuilder


def reference_view(events: list[Event]) -> tuple[list[Event], bool]:
    """OpenHands V0's algorithm, written out literally: the oracle for the fast paths."""
    forgotten: set[int | None] = set()
    for event in events:
        if isinstance(event, CondensationAction):
            forgotten.update(event.forgotten)
            forgotten.add(event.id)
        elif isinstance(event, CondensationRequestAction):
            forgotten.add(event.id)
    kept: list[Event] = [e for e in events if e.id not in forgotten]
    for event in reversed(events):
        if isinstance(event, CondensationAction) and event.summary is not None and event.summary_offset is not None:
            kept.insert(event.summary_offset, AgentCondensationObservation(content=event.summary, cause=event.id))
            break
    unhandled = False
    for event in reversed(events):
        if isinstance(event, CondensationAction):
            break
        if isinstance(event, CondensationRequestAction):
            unhandled = True
            break
    return kept, unhandled


def numbered(*events: Event) -> list[Event]:
    for i, event in enumerate(events):
        event.id = i
    return list(events)


def test_plain_events_are_all_kept_in_order() -> None:
    events = numbered(MessageAction(content="hi"), CmdRunAction(command="ls"), CmdOutputObservation(content="a"))
    view = View.from_events(events)
    assert view.events == events
    assert len(view) == 3 and view[1] is events[1] and view[-1] is events[2]
    assert not view.unhandled_condensation_request
    assert view.forgotten_event_ids == frozenset()


def test_condensation_forgets_range_itself_and_inserts_summary_at_offset() -> None:
    events = numbered(
        MessageAction(content="task"),  # 0
        CmdRunAction(command="a"),  # 1
        CmdOutputObservation(content="a"),  # 2
        CmdRunAction(command="b"),  # 3
        CondensationAction(forgotten_events_start_id=1, forgotten_events_end_id=2, summary="ran a", summary_offset=1),
        CmdOutputObservation(content="b"),  # 5
    )
    view = View.from_events(events)
    assert [e.id for e in view] == [0, None, 3, 5]
    assert isinstance(view[1], AgentCondensationObservation) and view[1].content == "ran a"
    assert view[1].cause == 4
    assert view.forgotten_event_ids == {1, 2, 4}


def test_forgetting_adds_up_and_only_the_newest_summary_stands() -> None:
    events = numbered(
        MessageAction(content="task"),
        CmdRunAction(command="a"),
        CondensationAction(forgotten_event_ids=[1], summary="first", summary_offset=1),
        CmdRunAction(command="b"),
        CondensationAction(forgotten_event_ids=[3], summary="second", summary_offset=1),
        CmdRunAction(command="c"),
        CondensationAction(forgotten_event_ids=[5]),  # no summary: "second" still stands
    )
    view = View.from_events(events)
    assert [e.content if isinstance(e, AgentCondensationObservation) else e.id for e in view] == [0, "second"]


def test_summary_offset_past_the_end_appends() -> None:
    events = numbered(MessageAction(content="x"), CondensationAction(forgotten_event_ids=[], summary="s", summary_offset=99))
    view = View.from_events(events)
    assert [type(e) for e in view] == [MessageAction, AgentCondensationObservation]


def test_request_is_unhandled_until_the_next_condensation() -> None:
    events = numbered(MessageAction(content="x"), CondensationRequestAction())
    assert View.from_events(events).unhandled_condensation_request
    events += numbered(*[MessageAction(content="y")] * 0)
    condensation = CondensationAction(forgotten_event_ids=[])
    condensation.id = 2
    view = View.from_events([*events, condensation])
    assert not view.unhandled_condensation_request
    assert view.forgotten_event_ids == {1, 2}
    assert [e.id for e in view] == [0]


def test_ids_forgotten_before_they_arrive_stay_forgotten() -> None:
    events = numbered(MessageAction(content="x"), CondensationAction(forgotten_event_ids=[3]), CmdRunAction(command="a"), CmdRunAction(command="b"))
    assert [e.id for e in View.from_events(events)] == [0, 2]


def test_earlier_views_do_not_change_when_the_builder_moves_on() -> None:
    builder = ViewBuilder()
    builder.append(numbered(MessageAction(content="x"))[0])
    first = builder.view
    for i, event in enumerate([CmdRunAction(command="a"), CondensationAction(forgotten_event_ids=[0], summary="s", summary_offset=0)], 1):
        event.id = i
        builder.append(event)
    assert [e.id for e in first] == [0]
    assert [e.id if e.id is not None else "summary" for e in builder.view] == ["summary", 1]
    assert len(builder) == 3


def test_persisting_summaries_stack_until_forgotten_by_their_condensation_id() -> None:
    events = numbered(
        MessageAction(content="task"),  # 0
        CmdRunAction(command="a"),  # 1
        CondensationAction(forgotten_event_ids=[1], summary="S1", summary_offset=1, summary_persists=True),  # 2
        CmdRunAction(command="b"),  # 3
        CondensationAction(forgotten_event_ids=[3], summary="S2", summary_offset=1, summary_persists=True),  # 4
    )
    assert [getattr(e, "content", e.id) for e in View.from_events(events)] == ["task", "S2", "S1"]
    forget_first = CondensationAction(forgotten_event_ids=[2], summary_persists=True)
    forget_first.id = 5
    assert [getattr(e, "content", e.id) for e in View.from_events([*events, forget_first])] == ["task", "S2"]


def test_a_log_with_persisting_condensations_shows_several_summaries_in_place(tmp_path: Path) -> None:
    # Both shapes of the flag: at the top level (written now) and in args (written before).
    lines = [
        {"id": 0, "source": "user", "message": "task", "action": "message", "args": {"content": "task"}},
        {"id": 1, "source": "agent", "message": "a", "action": "run", "args": {"command": "a"}},
        {"id": 2, "source": "agent", "message": "b", "action": "run", "args": {"command": "b"}},
        {"id": 3, "source": "agent", "message": "Summary: S1", "action": "condensation",
         "args": {"forgotten_event_ids": [1], "summary": "S1", "summary_offset": 1}, "summary_persists": True},
        {"id": 4, "source": "agent", "message": "c", "action": "run", "args": {"command": "c"}},
        {"id": 5, "source": "agent", "message": "Summary: S2", "action": "condensation",
         "args": {"forgotten_event_ids": [4], "summary": "S2", "summary_offset": 3, "summary_persists": True}},
        {"id": 6, "source": "agent", "message": "d", "action": "run", "args": {"command": "d"}},
    ]  # fmt: skip
    log = tmp_path / "events.jsonl"
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    events = load_events(log)
    view = View.from_events(events)
    assert [getattr(e, "command", None) or e.content for e in view] == ["task", "S1", "b", "S2", "d"]  # type: ignore[attr-defined]
    assert [e.cause for e in view if isinstance(e, AgentCondensationObservation)] == [3, 5]
    builder = ViewBuilder()
    for event in events:
        builder.append(event)
    assert builder.view == view
    # The same log without the flag (OpenHands V0): only the newest summary shows, at its offset in the kept events.
    v0 = [{k: v for k, v in line.items() if k != "summary_persists"} for line in lines]
    v0[5]["args"] = {k: v for k, v in v0[5]["args"].items() if k != "summary_persists"}
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in v0))
    assert [getattr(e, "command", None) or e.content for e in View.from_events(load_events(log))] == ["task", "b", "d", "S2"]  # type: ignore[attr-defined]


def test_view_can_be_built_directly() -> None:
    events = numbered(MessageAction(content="x"), CmdRunAction(command="y"))
    view = View(events, unhandled_condensation_request=True)
    assert view.events == events and view.unhandled_condensation_request
    assert view == View(list(events), unhandled_condensation_request=True)
    assert view[0:1] == events[:1]
    with pytest.raises(IndexError):
        view[2]


@settings(deadline=None)
@given(event_streams(max_size=50))
def test_from_events_matches_the_openhands_rules(events: list[Event]) -> None:
    kept, unhandled = reference_view(events)
    view = View.from_events(events)
    assert view.events == kept
    assert len(view) == len(kept)
    assert [view[i] for i in range(len(view))] == kept
    assert view.unhandled_condensation_request == unhandled


@settings(deadline=None)
@given(event_streams(max_size=40), st.data())
def test_builder_equals_from_events_after_every_append(events: list[Event], data: st.DataObject) -> None:
    builder = ViewBuilder()
    snapshots = []
    for n, event in enumerate(events, 1):
        builder.append(event)
        assert builder.view == View.from_events(events[:n])
        snapshots.append((n, builder.view))
    # Every snapshot still shows its own prefix after later appends.
    for n, view in snapshots:
        assert view == View.from_events(events[:n])


# --- the incremental face: lineage, kept_count, kept_slice, iter_kept ---------------------------


def _summarized() -> View:
    events = numbered(
        MessageAction(content="task"),  # 0
        CmdRunAction(command="a"),  # 1
        CmdOutputObservation(content="a"),  # 2
        CondensationAction(forgotten_event_ids=[1, 2], summary="ran a", summary_offset=1),  # 3
        CmdRunAction(command="b"),  # 4
        CmdOutputObservation(content="b"),  # 5
    )
    return View.from_events(events)


def test_kept_events_are_the_view_without_its_standing_summary() -> None:
    view = _summarized()
    assert [e.id for e in view] == [0, None, 4, 5]
    assert view.kept_count == 3 == len(view) - 1
    assert [e.id for e in view.kept_slice()] == [0, 4, 5]
    assert [e.id for e in view.kept_slice(1)] == [4, 5]
    assert [e.id for e in view.kept_slice(1, 2)] == [4]
    assert [e.id for e in view.kept_slice(-2, -1)] == [4]  # counted from kept_count, like slicing
    assert view.kept_slice(2, 99) == view.kept_slice(2) and view.kept_slice(5, 9) == []
    for start, stop in [(0, None), (0, 2), (1, 3), (2, 1), (-1, None), (0, 99)]:
        assert list(view.iter_kept(start, stop)) == view.kept_slice(start, stop) == view.kept_events()[start:stop]


def test_a_view_reads_only_its_own_prefix_of_the_builder_s_events() -> None:
    builder = ViewBuilder(numbered(MessageAction(content="x"), CmdRunAction(command="a")))
    early = builder.view
    later_event = CmdRunAction(command="b")
    later_event.id = 2
    builder.append(later_event)
    assert early.kept_count == 2 and builder.view.kept_count == 3
    assert [e.id for e in early.kept_slice()] == [0, 1]
    assert [e.id for e in early.kept_slice(0, 3)] == [0, 1]  # not the event appended after it
    assert [e.id for e in early.iter_kept(1, 3)] == [1]


def test_views_of_one_builder_share_a_lineage_until_the_next_condensation() -> None:
    builder = ViewBuilder()
    events = numbered(
        MessageAction(content="task"),  # 0
        CmdRunAction(command="a"),  # 1
        CondensationRequestAction(),  # 2
        CmdOutputObservation(content="a"),  # 3
        CondensationAction(forgotten_event_ids=[1]),  # 4
        CmdRunAction(command="b"),  # 5
    )
    lineages = []
    for event in events:
        builder.append(event)
        lineages.append(builder.view.lineage)
    before, after = lineages[:4], lineages[4:]
    assert len(set(before)) == 1 and len(set(after)) == 1  # requests and plain events keep it
    assert before[0] != after[0]  # the condensation made a new list of kept events: a stale cache must see it
    assert ViewBuilder(events[:2]).view.lineage != before[0]  # another builder of the same events


def test_every_other_way_of_making_a_view_starts_a_new_lineage() -> None:
    events = numbered(MessageAction(content="x"), CmdRunAction(command="a"))
    view = View.from_events(events)
    kept = view.kept_events()
    others = [
        View(events),
        View(events),
        View.from_events(events),
        view.with_events(kept, None),
        view.with_events(kept, None),
        view.apply(CondensationAction(forgotten_event_ids=[])),
    ]
    assert len({view.lineage, *(other.lineage for other in others)}) == len(others) + 1


@settings(deadline=None)
@given(event_streams(max_size=40))
def test_views_of_one_lineage_show_prefixes_of_one_sequence_of_kept_events(events: list[Event]) -> None:
    builder = ViewBuilder()
    views: list[View] = []
    for event in events:
        builder.append(event)
        views.append(builder.view)
    for i, early in enumerate(views):
        for late in views[i:]:
            if late.lineage == early.lineage:
                shared = late.kept_slice(0, early.kept_count)
                assert len(shared) == early.kept_count
                assert all(a is b for a, b in zip(shared, early.kept_slice(), strict=True))
        # What a view shows is its kept events with the standing summary put in its slot.
        shown = early.kept_events()
        if early.standing_summary is not None:
            at, summary = early.standing_summary
            shown.insert(at, summary)
        assert shown == early.events


def test_real_log_with_two_condensation_ranges(real_logs_dir) -> None:
    events = agent_history(load_events(real_logs_dir / "v0_enyst-playground_issue10730_trajectory_297ev.json"))
    view = View.from_events(events)
    kept, unhandled = reference_view(events)
    assert view.events == kept and view.unhandled_condensation_request == unhandled
    # The ranges count the ids of events in the log (not every number between their bounds).
    in_ranges = {e.id for e in events if e.id is not None and 9 <= e.id <= 160}
    assert len(in_ranges) > 100 and in_ranges <= view.forgotten_event_ids
    assert not any(e.id is not None and 9 <= e.id <= 160 for e in view)
    summary = view[4]
    assert isinstance(summary, AgentCondensationObservation)
    assert summary.content.startswith("USER_CONTEXT")


def test_building_a_view_does_not_import_litellm(tmp_path) -> None:
    code = (
        "import sys\n"
        "from openhands_memory.events import MessageAction\n"
        "from openhands_memory.view import View\n"
        "from openhands_memory.stream import EventStream\n"
        "View.from_events([MessageAction(content='x')])\n"
        "assert 'litellm' not in sys.modules, 'litellm was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
