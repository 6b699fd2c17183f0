"""Views derived by condensers: applying a condensation, dropping and replacing events."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from openhands_memory.condenser._views import apply_condensation
from openhands_memory.condenser._views import (
    FirstIndexFinder,
    IndexCollector,
    PrefixMapper,
    map_events,
    slice_events,
    standing_summary_index,
    without_events,
)
from openhands_memory.events import CmdOutputObservation, CondensationAction, Event, MessageAction
from openhands_memory.testing.strategies import event_streams
from openhands_memory.view import View, ViewBuilder

from ._helpers import Session, ids


@st.composite
def _stream_and_condensation(draw: st.DrawFn) -> tuple[list[Event], CondensationAction]:
    stream = draw(event_streams(max_size=20))
    next_id = (stream[-1].id + 1) if stream else 0
    top = max(next_id - 1, 0)
    fields: dict[str, object] = {}
    if draw(st.booleans()):
        fields["forgotten_event_ids"] = draw(st.lists(st.integers(0, top), max_size=10))
    else:
        start = draw(st.integers(0, top))
        fields["forgotten_events_start_id"] = start
        fields["forgotten_events_end_id"] = draw(st.integers(start, top))
    if draw(st.booleans()):
        fields["summary"] = "new summary"
        fields["summary_offset"] = draw(st.integers(0, 10))
        if draw(st.booleans()):
            fields["summary_persists"] = True
    action = CondensationAction(**fields)  # type: ignore[arg-type]
    action.id = next_id
    return stream, action


@given(_stream_and_condensation())
def test_applying_a_condensation_to_a_view_equals_appending_it_to_the_stream(case: tuple[list[Event], CondensationAction]) -> None:
    stream, action = case
    before = View.from_events(stream)
    expected = View.from_events([*stream, action])
    after = apply_condensation(before, action)
    assert after.events == expected.events
    assert not after.unhandled_condensation_request
    # Ids forgotten ahead of their arrival are the one thing a view cannot know about.
    assert after.forgotten_event_ids <= expected.forgotten_event_ids


def _with_standing_summary() -> Session:
    s = Session()
    s.user()  # 0
    s.turn()  # 1, 2
    s.condense(forgotten_event_ids=[1, 2], summary="S", summary_offset=1)  # 3
    s.turn()  # 4, 5
    s.turn()  # 6, 7
    return s


def test_dropping_events_keeps_the_standing_summary_in_its_slot() -> None:
    s = _with_standing_summary()
    view = s.view
    assert ids(view) == [0, None, 4, 5, 6, 7]
    trimmed = without_events(view, [2, 3])
    assert ids(trimmed) == [0, None, 6, 7]
    assert standing_summary_index(trimmed) == 1
    assert trimmed.forgotten_event_ids == view.forgotten_event_ids
    assert ids(view) == [0, None, 4, 5, 6, 7]  # the source view is unchanged
    # Forgetting later still follows V0: the summary stays at offset 1.
    later = apply_condensation(trimmed, CondensationAction(forgotten_event_ids=[6, 7]))
    assert ids(later) == [0, None]


def test_dropping_events_before_the_summary_moves_it_up() -> None:
    s = _with_standing_summary()
    trimmed = without_events(s.view, [0])
    assert ids(trimmed) == [None, 4, 5, 6, 7]
    assert standing_summary_index(trimmed) == 0


def test_replacing_events_keeps_positions_and_the_summary() -> None:
    s = _with_standing_summary()
    view = s.view

    def mask(index: int, event: Event) -> Event:
        if isinstance(event, CmdOutputObservation):
            return event.model_copy(update={"content": f"masked at {index}"})
        return event

    masked = map_events(view, mask)
    assert [getattr(e, "content", None) for e in masked if isinstance(e, CmdOutputObservation)] == ["masked at 3", "masked at 5"]
    assert standing_summary_index(masked) == 1 and masked.events[1] is view.events[1]
    assert map_events(view, lambda index, event: event) is view


# --- incremental scanners: they cache by `View.lineage` and read only the new kept events -----------


def _counting(test: Callable[[Event], bool]) -> tuple[Callable[[Event], bool], list[Event]]:
    seen: list[Event] = []

    def counted(event: Event) -> bool:
        seen.append(event)
        return test(event)

    return counted, seen


def test_scanners_look_only_at_the_events_new_since_the_last_view() -> None:
    s = Session()
    s.system()
    s.user()
    never, never_seen = _counting(lambda e: False)
    outputs, outputs_seen = _counting(lambda e: isinstance(e, CmdOutputObservation))
    finder, collector = FirstIndexFinder(never), IndexCollector(outputs)
    mapper, replaced = PrefixMapper(), []

    def replace(event: Event) -> Event:
        replaced.append(event)
        return event

    builder = ViewBuilder()
    for number in range(30):
        s.turn(f"cmd {number}")
        builder.extend(s.events[len(builder) :])
        view = builder.view
        assert finder.find(view) is None
        assert collector.indexes(view) == list(range(3, len(view), 2))
        mapper.map_before(view, len(view) - 4, replace)
    # Each event was tested once over the 30 steps, not once per step.
    assert len(never_seen) == len(outputs_seen) == 62 and len({id(e) for e in never_seen}) == 62
    assert len(replaced) == 62 - 4 and len({id(e) for e in replaced}) == len(replaced)


def test_a_scanner_cache_goes_stale_at_a_condensation_and_is_rebuilt() -> None:
    s = Session()
    s.system()  # 0
    s.user()  # 1
    s.turn()  # 2, 3
    s.turn()  # 4, 5
    first_user = FirstIndexFinder(lambda e: isinstance(e, MessageAction))
    outputs = IndexCollector(lambda e: isinstance(e, CmdOutputObservation))
    builder = ViewBuilder(s.events)
    before = builder.view
    assert first_user.find(before) == 1 and outputs.indexes(before) == [3, 5]
    # Forget the task and the first turn, with a summary in their place: the same number of
    # events after it, but others, so a cache that only compared lengths would answer wrong.
    s.condense(forgotten_event_ids=[1, 2, 3], summary="S", summary_offset=1)  # 6
    s.turn()  # 7, 8
    builder.extend(s.events[len(builder) :])
    after = builder.view
    assert after.lineage != before.lineage
    assert ids(after) == [0, None, 4, 5, 7, 8]
    assert first_user.find(after) is None
    assert outputs.indexes(after) == [3, 5]
    # The earlier view still gets its own answer (its lineage is back: the cache is rebuilt again).
    assert first_user.find(before) == 1 and outputs.indexes(before) == [3, 5]


def test_a_derived_view_of_the_same_size_is_scanned_afresh() -> None:
    s = Session()
    s.user()  # 0
    s.turn()  # 1, 2
    view = s.view
    outputs = IndexCollector(lambda e: isinstance(e, CmdOutputObservation))
    assert outputs.indexes(view) == [2]
    shuffled = view.with_events(list(reversed(view.kept_events())), None)
    assert shuffled.kept_count == view.kept_count and shuffled.lineage != view.lineage
    assert outputs.indexes(shuffled) == [0]


@st.composite
def _growing_stream(draw: st.DrawFn) -> tuple[list[Event], list[int]]:
    """A stream, and for each append how many steps back the view asked about is (0: the newest)."""
    stream = draw(event_streams(max_size=30))
    back = draw(st.lists(st.integers(0, 3), min_size=len(stream), max_size=len(stream)))
    return stream, back


@given(_growing_stream(), st.integers(0, 5))
def test_scanners_that_remember_agree_with_fresh_ones_on_every_view(case: tuple[list[Event], list[int]], margin: int) -> None:
    stream, back = case
    is_output = lambda e: isinstance(e, CmdOutputObservation)  # noqa: E731
    finder, collector, mapper = FirstIndexFinder(is_output), IndexCollector(is_output), PrefixMapper()
    copies: dict[int, tuple[Event, Event]] = {}

    def mask(event: Event) -> Event:  # memoized, as PrefixMapper requires
        if id(event) not in copies:
            copies[id(event)] = (event, event.model_copy(update={"hidden": True}))
        return copies[id(event)][1]

    builder = ViewBuilder()
    views: list[View] = []
    for event, steps_back in zip(stream, back, strict=True):
        builder.append(event)
        views.append(builder.view)
        # Now and then an earlier view again (shorter, maybe of an older lineage).
        view = views[max(0, len(views) - 1 - steps_back)]
        assert finder.find(view) == FirstIndexFinder(is_output).find(view)
        assert collector.indexes(view) == IndexCollector(is_output).indexes(view)
        end = max(0, len(view) - margin)
        mapped = mapper.map_before(view, end, mask)
        assert mapped.events == PrefixMapper().map_before(view, end, mask).events
        assert slice_events(view, 0, len(view)) == view.events
        assert slice_events(view, end // 2, end) == view.events[end // 2 : end]
