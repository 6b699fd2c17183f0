"""`load_events` gives a `LoadedEvents` list that remembers ids and classes; `View.from_events` uses that
record only while it matches the events, and gives the same view as for a plain list either way."""

from __future__ import annotations

import copy
import pickle
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from openhands_memory import EventStream
from openhands_memory.events import (
    AgentStateChangedObservation,
    ChangeAgentStateAction,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    CondensationRequestAction,
    Event,
    EventSource,
    MessageAction,
    NullObservation,
    agent_history,
    dump_events,
    load_events,
)
from openhands_memory.events._loaded import LoadedEvents
from openhands_memory.testing.strategies import event_streams
from openhands_memory.view import View, ViewBuilder


def view_facts(view: View) -> tuple[list[Event], bool, frozenset[int], object]:
    return list(view), view.unhandled_condensation_request, view.forgotten_event_ids, view.standing_summary


def step_by_step(events: list[Event]) -> View:
    builder = ViewBuilder()
    builder.extend(events)
    return builder.view


def loaded(events: list[Event], folder: Path) -> LoadedEvents:
    path = folder / "log.jsonl"
    dump_events(events, path)
    result = load_events(path)
    assert type(result) is LoadedEvents
    return result


def session() -> list[Event]:
    """Ids 0..8: a list-forgetting condensation, a range-forgetting one with a summary, a late request."""
    events: list[Event] = [
        MessageAction(content="task", source="user"),
        CmdRunAction(command="a", source="agent"),
        CmdOutputObservation(content="a", cause=1, source="environment"),
        CondensationAction(forgotten_event_ids=[1], source="agent"),
        CmdRunAction(command="b", source="agent"),
        CmdOutputObservation(content="b", cause=4, source="environment"),
        CondensationAction(forgotten_events_start_id=2, forgotten_events_end_id=4, summary="ran a, b", summary_offset=1, source="agent"),
        CmdRunAction(command="c", source="agent"),
        CondensationRequestAction(source="agent"),
    ]
    for number, event in enumerate(events):
        event.id = number
    return events


def test_a_loaded_list_gives_the_view_of_the_same_events_as_a_plain_list(tmp_path: Path) -> None:
    events = loaded(session(), tmp_path)
    assert events.record() is not None
    view = View.from_events(events)
    assert [e.id for e in view] == [0, None, 5, 7]
    assert view[1].content == "ran a, b" and view.unhandled_condensation_request
    assert view.forgotten_event_ids == {1, 2, 3, 4, 6, 8}
    assert view_facts(view) == view_facts(View.from_events(list(events))) == view_facts(step_by_step(events))
    assert events.record() is not None  # reading the view changed nothing


def test_assigning_an_id_drops_the_record_and_the_view_follows_the_new_id(tmp_path: Path) -> None:
    events = loaded(session(), tmp_path)
    events[7].id = 3  # now inside the range (2-4) the second condensation forgets
    assert events.record() is None
    assert [e.id for e in View.from_events(events)] == [0, None, 5]


def test_any_event_id_write_drops_the_record_even_of_an_event_elsewhere(tmp_path: Path) -> None:
    events = loaded(session(), tmp_path)
    MessageAction(content="unrelated").id = 42
    assert events.record() is None
    assert view_facts(View.from_events(events)) == view_facts(View.from_events(list(events)))


def test_deleting_an_id_drops_the_record(tmp_path: Path) -> None:
    events = loaded(session(), tmp_path)
    del events[0].id
    assert events.record() is None


def test_changing_the_list_drops_the_record(tmp_path: Path) -> None:
    original = loaded(session(), tmp_path)
    stranger = CmdRunAction(command="x", source="agent")
    stranger.id = 3
    changes = {
        "replace": lambda events: events.__setitem__(7, stranger),
        "delete": lambda events: events.__delitem__(0),
        "append": lambda events: events.append(stranger),
        "insert": lambda events: events.insert(0, stranger),
        "reverse": lambda events: events.reverse(),
        "slice": lambda events: events.__setitem__(slice(0, 2), events[1::-1]),
    }
    for name, change in changes.items():
        events = LoadedEvents(original)
        assert events.record() is not None, name
        change(events)
        assert events.record() is None, name
        assert view_facts(View.from_events(events)) == view_facts(View.from_events(list(events))), name
    replaced = LoadedEvents(original)
    replaced[7] = stranger  # id 3: forgotten, so the view loses it
    assert [e.id for e in View.from_events(replaced)] == [0, None, 5]


def test_copies_and_pickles_are_plain_lists(tmp_path: Path) -> None:
    events = loaded(session(), tmp_path)
    for other in (copy.copy(events), copy.deepcopy(events), pickle.loads(pickle.dumps(events)), events[:], events + []):
        assert type(other) is list
        assert other == events


def test_ids_that_do_not_ascend_fall_back_to_the_step_by_step_rules() -> None:
    events = session()
    events[4].id, events[5].id = 5, 4  # a range (2-4) over ids out of order
    listed = LoadedEvents(events)
    assert listed.record() is not None and not listed.record().ascending  # type: ignore[union-attr]
    assert view_facts(View.from_events(listed)) == view_facts(step_by_step(events))


def test_a_list_with_an_id_that_is_not_an_int_keeps_no_record() -> None:
    events = session()
    events[0].id = None
    assert LoadedEvents(events).record() is None


@settings(max_examples=60, deadline=None)
@given(event_streams(max_size=30))
def test_loaded_views_equal_plain_and_step_by_step_views(events: list[Event]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        listed = loaded(events, Path(folder))
    assert listed.record() is not None
    expected = view_facts(step_by_step(list(listed)))
    assert view_facts(View.from_events(listed)) == expected
    assert view_facts(View.from_events(list(listed))) == expected


def builder_facts(builder: ViewBuilder) -> tuple[object, ...]:
    return (*view_facts(builder.view), len(builder))


@settings(max_examples=60, deadline=None)
@given(event_streams(max_size=30), st.integers(min_value=0, max_value=30))
def test_a_builder_made_from_a_list_goes_on_as_one_fed_event_by_event(events: list[Event], cut: int) -> None:
    """`ViewBuilder(list)` computes its state in two passes; what it does with later events is the same."""
    with tempfile.TemporaryDirectory() as folder:
        listed = loaded(events, Path(folder))
    head, rest = listed[:cut], listed[cut:]
    expected = step_by_step(list(listed))
    for start in (LoadedEvents(head), head):
        builder = ViewBuilder(start)
        builder.extend(rest)
        assert view_facts(builder.view) == view_facts(expected)
        assert len(builder) == len(listed)
    one_by_one = ViewBuilder(head)
    for event in rest:
        one_by_one.append(event)
    assert view_facts(one_by_one.view) == view_facts(expected)


def hidden_session() -> list[Event]:
    events: list[Event] = [
        MessageAction(content="task", source="user"),
        ChangeAgentStateAction(agent_state="running", source="agent"),
        CmdRunAction(command="a", source="agent", hidden=True),
        CmdOutputObservation(content="a", cause=2, source="environment"),
        AgentStateChangedObservation(agent_state="running", source="environment"),
        NullObservation(content="", source="environment"),
        CmdRunAction(command="b", source="agent"),
    ]
    for number, event in enumerate(events):
        event.id = number
    return events


def test_a_stream_s_snapshot_and_its_agent_history_keep_the_record(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    dump_events(hidden_session(), path)
    stream = EventStream.open(path)
    try:
        stored = stream.snapshot()
        assert type(stored) is LoadedEvents and stored.record() is not None
        assert stored == list(stream.get_events())
        history = agent_history(stored)
        assert [e.id for e in history] == [0, 3, 6]
        assert type(history) is LoadedEvents and history.record() is not None
        assert history == agent_history(list(stored))
        assert view_facts(View.from_events(history)) == view_facts(step_by_step(list(history)))
    finally:
        stream.close()


def test_setting_hidden_drops_the_record_and_the_history_follows(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    dump_events(hidden_session(), path)
    stream = EventStream.open(path)
    try:
        stored = stream.snapshot()
        stored[6].hidden = True
        assert stored.record() is None
        assert [e.id for e in agent_history(stored)] == [0, 3]
        stored[2].hidden = False
        assert [e.id for e in agent_history(stored)] == [0, 2, 3]
    finally:
        stream.close()


def test_a_stream_appended_to_gives_a_snapshot_without_a_record_that_still_lists_every_event(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    dump_events(hidden_session(), path)
    stream = EventStream.open(path)
    try:
        stream.add_event(MessageAction(content="more"), EventSource.USER)
        stored = stream.snapshot()
        assert stored.record() is None  # type: ignore[attr-defined]
        assert [e.id for e in stored] == list(range(8))
        assert [e.id for e in agent_history(stored)] == [0, 3, 6, 7]
    finally:
        stream.close()


def test_a_builder_made_from_a_list_forgets_later_events_inside_a_range_it_saw() -> None:
    events: list[Event] = [
        MessageAction(content="task", source="user"),
        CmdRunAction(command="a", source="agent"),
        CondensationAction(forgotten_events_start_id=1, forgotten_events_end_id=5, source="agent"),
        CmdRunAction(command="b", source="agent"),  # id 3, inside the range: forgotten on arrival
        CmdRunAction(command="c", source="agent"),
        CmdRunAction(command="d", source="agent"),
        CmdRunAction(command="e", source="agent"),  # id 6: kept
    ]
    for number, event in enumerate(events):
        event.id = number
    builder = ViewBuilder(events[:3])
    builder.extend(events[3:])
    assert [e.id for e in builder.view] == [0, 6]
    assert builder.view.forgotten_event_ids == {1, 2, 3, 4, 5}
    assert view_facts(builder.view) == view_facts(step_by_step(events))
