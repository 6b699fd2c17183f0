"""Tests for `openhands_memory.testing.synthetic`: shape, determinism and OpenHands compatibility."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openhands_memory.events import (
    Action,
    AgentFinishAction,
    CmdOutputObservation,
    CondensationAction,
    ErrorObservation,
    Event,
    MessageAction,
    Observation,
    RecallAction,
    RecallObservation,
    SystemMessageAction,
    event_from_dict,
    event_to_dict,
    load_events,
)
from openhands_memory.testing.synthetic import KEEP_FIRST, main, synthetic_session, synthetic_session_dicts
from openhands_memory.view import View

FIXTURE = Path(__file__).parents[2] / "fixtures" / "synthetic_session_300.jsonl"


@pytest.fixture(scope="module")
def session() -> list[Event]:
    return synthetic_session(600, seed=1)


@pytest.fixture(scope="module")
def condensed() -> list[Event]:
    return synthetic_session(600, seed=2, condense_every=150)


def check_session(events: list[Event], n_events: int) -> None:
    """The structural promises every synthetic session keeps."""
    assert [e.id for e in events] == list(range(n_events))
    stamps = [e.timestamp for e in events]
    assert all(s is not None for s in stamps)
    assert stamps == sorted(stamps)  # type: ignore[type-var]
    assert isinstance(events[0], SystemMessageAction) and events[0].tools
    assert isinstance(events[1], MessageAction) and events[1].source == "user"
    assert isinstance(events[2], RecallAction) and events[2].recall_type == "workspace_context"
    assert isinstance(events[3], RecallObservation) and events[3].cause == 2
    assert isinstance(events[-1], AgentFinishAction)
    by_id = {e.id: e for e in events}
    for index, event in enumerate(events):
        if isinstance(event, Observation):
            assert event.cause is not None and event.cause < event.id  # type: ignore[operator]
            action = by_id[event.cause]
            assert isinstance(action, Action)
            if event.tool_call_metadata is not None:
                assert action.tool_call_metadata is not None
                assert event.tool_call_metadata.tool_call_id == action.tool_call_metadata.tool_call_id
                assert event.tool_call_metadata.function_name == action.tool_call_metadata.function_name
        elif event.tool_call_metadata is not None and not isinstance(event, AgentFinishAction):
            # A tool action is answered by the very next event, also for parallel calls.
            answer = events[index + 1]
            assert isinstance(answer, Observation) and answer.cause == event.id
        if event.source == "agent" and isinstance(event, Action) and not isinstance(event, SystemMessageAction):
            assert event.llm_metrics is not None and event.llm_metrics["accumulated_cost"] > 0


def test_session_has_exactly_the_events_asked_for_with_increasing_ids(session: list[Event]) -> None:
    check_session(session, 600)


@settings(max_examples=25, deadline=None)
@given(
    n_events=st.integers(min_value=5, max_value=260),
    seed=st.integers(min_value=0, max_value=2**32),
    condense_every=st.none() | st.integers(min_value=1, max_value=80),
    parallel_every=st.none() | st.integers(min_value=1, max_value=9),
)
def test_every_size_and_seed_keeps_the_structure(
    n_events: int, seed: int, condense_every: int | None, parallel_every: int | None
) -> None:
    events = synthetic_session(n_events, seed=seed, condense_every=condense_every, parallel_every=parallel_every)
    check_session(events, n_events)
    check_condensations(events)


def test_same_seed_gives_the_same_dicts() -> None:
    first = synthetic_session_dicts(400, seed=7, condense_every=100)
    assert first == synthetic_session_dicts(400, seed=7, condense_every=100)
    assert orjson.dumps(first) == orjson.dumps(synthetic_session_dicts(400, seed=7, condense_every=100))


def test_another_seed_gives_another_session() -> None:
    assert synthetic_session_dicts(100, seed=1) != synthetic_session_dicts(100, seed=2)


def test_parallel_calls_share_one_model_response(session: list[Event]) -> None:
    groups: dict[str, list[Action]] = defaultdict(list)
    for event in session:
        if isinstance(event, Action) and event.response_id is not None:
            groups[event.response_id].append(event)
    parallel = [calls for calls in groups.values() if len(calls) > 1]
    assert parallel, "no parallel tool calls in 600 events"
    for calls in groups.values():
        metadata = [c.tool_call_metadata for c in calls]
        assert all(m is not None and m.total_calls_in_response == len(calls) for m in metadata)
        assert len({m.tool_call_id for m in metadata if m is not None}) == len(calls)
        response = calls[0].tool_call_metadata.model_response  # type: ignore[union-attr]
        assert response is not None
        listed = [call["id"] for call in response["choices"][0]["message"]["tool_calls"]]
        assert listed == [m.tool_call_id for m in metadata if m is not None]  # call order


def test_parallel_every_none_makes_single_calls_only() -> None:
    events = synthetic_session(400, parallel_every=None)
    assert all(
        e.tool_call_metadata.total_calls_in_response == 1 for e in events if e.tool_call_metadata is not None
    )


def test_session_has_failing_commands_errors_and_varied_output_sizes(session: list[Event]) -> None:
    runs = [e for e in session if isinstance(e, CmdOutputObservation)]
    failed = [e for e in runs if e.exit_code != 0]
    assert failed and len(failed) < len(runs)
    assert any(re.search(r"tests/test_\w+\.py::test_\w+ FAILED", e.content) and e.exit_code == 1 for e in failed)
    assert all(e.success == (e.exit_code == 0) for e in runs)
    assert any(isinstance(e, ErrorObservation) for e in session)
    sizes = [len(e.content) for e in session if isinstance(e, Observation)]
    assert min(sizes) < 300 and max(sizes) > 2000


def test_dicts_round_trip_through_event_from_dict(session: list[Event]) -> None:
    for event in session:
        data = event_to_dict(event)
        loaded = event_from_dict(orjson.loads(orjson.dumps(data)))
        assert loaded == event
        assert event_to_dict(loaded) == data


def check_condensations(events: list[Event]) -> None:
    """Condensations forget whole turns after the head, never an action without its observation."""
    forgotten_through = KEEP_FIRST - 1
    by_id = {e.id: e for e in events}
    for condensation in (e for e in events if isinstance(e, CondensationAction)):
        start, end = condensation.forgotten_events_start_id, condensation.forgotten_events_end_id
        assert condensation.forgotten_event_ids is None and start is not None and end is not None
        assert start == forgotten_through + 1 and start <= end < condensation.id  # type: ignore[operator]
        assert condensation.summary and condensation.summary_offset == KEEP_FIRST
        for event_id in range(start, end + 1):
            event = by_id[event_id]
            if isinstance(event, Observation):
                assert start <= event.cause <= end  # type: ignore[operator]
        following = by_id[end + 1]
        assert not (isinstance(following, Observation) and following.cause is not None and following.cause <= end)
        forgotten_through = end


def test_condensations_are_valid_and_views_shrink(condensed: list[Event]) -> None:
    condensations = [e for e in condensed if isinstance(e, CondensationAction)]
    assert len(condensations) == 3
    check_session(condensed, 600)
    check_condensations(condensed)
    for condensation in condensations:
        data = event_to_dict(condensation)
        assert data["args"]["forgotten_events_start_id"] == condensation.forgotten_events_start_id
        assert event_from_dict(data) == condensation
    view = View.from_events(condensed)
    assert len(view) < len(condensed) // 3
    assert [e.id for e in view.events[:KEEP_FIRST]] == list(range(KEEP_FIRST))
    assert view.events[KEEP_FIRST].content == condensations[-1].summary  # type: ignore[attr-defined]


def test_too_few_events_is_an_error() -> None:
    with pytest.raises(ValueError, match="n_events must be at least 5, got 4"):
        synthetic_session(4)


def test_command_line_writes_a_loadable_log(tmp_path: Path) -> None:
    out = tmp_path / "session.jsonl"
    assert main(["--events", "120", "--condense-every", "50", "--seed", "3", "--out", str(out)]) == 0
    loaded = [event_to_dict(e) for e in load_events(out)]
    assert loaded == orjson.loads(orjson.dumps(synthetic_session_dicts(120, seed=3, condense_every=50)))


def test_command_line_keeps_an_existing_file_unless_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "session.jsonl"
    out.write_text("mine\n")
    assert main(["--events", "20", "--out", str(out)]) == 1
    assert out.read_text() == "mine\n"
    assert "already exists" in capsys.readouterr().err
    assert main(["--events", "20", "--out", str(out), "--force"]) == 0
    assert len(load_events(out)) == 20


def test_bundled_fixture_is_what_the_generator_writes() -> None:
    loaded = [event_to_dict(e) for e in load_events(FIXTURE)]
    expected = orjson.loads(orjson.dumps(synthetic_session_dicts(300, condense_every=120)))
    assert loaded == expected, (
        "fixtures/synthetic_session_300.jsonl is stale; regenerate it with "
        "python -m openhands_memory.testing.synthetic --events 300 --condense-every 120 "
        "--out fixtures/synthetic_session_300.jsonl --force"
    )
    assert sum(isinstance(e, CondensationAction) for e in load_events(FIXTURE)) == 2
