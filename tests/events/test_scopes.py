"""Delegation scopes: what the top-level agent and each delegate see of a log with nested and parallel delegations."""

from __future__ import annotations

import logging

import pytest

from openhands_memory.events import (
    TOP_LEVEL,
    AgentDelegateAction,
    AgentDelegateObservation,
    AgentFinishAction,
    AgentStateChangedObservation,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    Event,
    EventSource,
    MessageAction,
    Scope,
    SystemMessageAction,
    ToolCallMetadata,
    agent_history,
    event_from_dict,
    event_to_dict,
    events_in_scope,
    find_delegations,
    load_events,
)
from openhands_memory.events.scopes import DelegationTracker
from openhands_memory.testing.sessions import SessionBuilder
from openhands_memory.view import View
from conftest import real_log_params, require_real_log


def _call(call_id: str, response: str | None = None) -> ToolCallMetadata:
    return ToolCallMetadata(function_name="delegate", tool_call_id=call_id, model_response={"id": response or f"r-{call_id}"})


def _ids(events: list[Event]) -> list[int | None]:
    return [e.id for e in events]


def nested_log() -> list[Event]:
    """OpenHands V0's shape: one delegate at a time, written into the parent's stream; A delegates to B."""
    s = SessionBuilder()
    s.add(SystemMessageAction(content="top system"))  # 0
    s.user("Fix the bug")  # 1
    s.add(AgentDelegateAction(agent="BrowsingAgent", inputs={"task": "find docs"}, tool_call_metadata=_call("a")))  # 2
    s.add(SystemMessageAction(content="browsing system"))  # 3: the delegate's own system prompt
    s.user("TASK: find docs")  # 4
    run = s.add(CmdRunAction(command="curl docs"))  # 5
    s.add(CmdOutputObservation(content="<html>", command="curl docs", cause=run.id))  # 6
    s.add(AgentDelegateAction(agent="ReaderAgent", inputs={"task": "read page"}))  # 7: nested
    s.user("TASK: read page")  # 8
    run = s.add(CmdRunAction(command="cat page"))  # 9
    s.add(CmdOutputObservation(content="text", command="cat page", cause=run.id))  # 10
    s.add(AgentFinishAction(final_thought="read"))  # 11
    s.add(AgentDelegateObservation(content="ReaderAgent finishes task", outputs={"ok": True}))  # 12
    s.add(AgentFinishAction(final_thought="found"))  # 13
    s.add(AgentDelegateObservation(content="BrowsingAgent finishes task", tool_call_metadata=_call("a")))  # 14
    s.agent("Done")  # 15
    return s.events


def parallel_log() -> list[Event]:
    """Inkeep's shape: two delegates run at once; their events interleave, tagged or caused."""
    s = SessionBuilder()
    s.add(SystemMessageAction(content="top system"))  # 0
    s.user("Compare X and Y")  # 1
    # Opened at once: two tool calls of one model response.
    s.add(AgentDelegateAction(agent="Researcher", inputs={"task": "X"}, tool_call_metadata=_call("x", "r1")))  # 2
    s.add(AgentDelegateAction(agent="Researcher", inputs={"task": "Y"}, tool_call_metadata=_call("y", "r1")))  # 3
    s.add(MessageAction(content="TASK: X", cause=2), EventSource.USER)  # 4: caused by its delegate action
    s.add(MessageAction(content="TASK: Y", cause=3), EventSource.USER)  # 5
    s.add(CmdRunAction(command="search X", delegation_id=2))  # 6: tagged
    s.add(CmdRunAction(command="search Y", delegation_id=3))  # 7
    s.add(CmdOutputObservation(content="Y results", command="search Y", cause=7))  # 8: follows its call
    s.add(CmdOutputObservation(content="X results", command="search X", cause=6))  # 9
    s.add(AgentFinishAction(final_thought="Y done", delegation_id=3))  # 10
    s.add(AgentDelegateObservation(content="Y: 3", tool_call_metadata=_call("y", "r1")))  # 11: closes 3 by its call id
    s.add(AgentFinishAction(final_thought="X done", delegation_id=2))  # 12
    s.add(AgentDelegateObservation(content="X: 2", cause=2))  # 13: closes 2 by its cause
    s.agent("X is better")  # 14
    return s.events


def test_nested_delegations_each_agent_sees_its_own_events_and_its_delegations_as_a_pair() -> None:
    events = nested_log()

    assert _ids(events_in_scope(events, TOP_LEVEL)) == [0, 1, 2, 14, 15]
    assert _ids(events_in_scope(events, Scope.of_delegation(2))) == [3, 4, 5, 6, 7, 12, 13]
    assert _ids(events_in_scope(events, Scope.of_delegation(7))) == [8, 9, 10, 11]


def test_with_conversation_a_delegate_also_sees_the_top_level_and_the_enclosing_messages() -> None:
    events = nested_log()

    # The top level before A ended (not its system prompt: the delegate has its own), then A's own events.
    assert _ids(events_in_scope(events, Scope.of_delegation(2, with_conversation=True))) == [1, 2, 3, 4, 5, 6, 7, 12, 13]
    # B sees the top level, and A's messages before 7: none of A's tool calls or results.
    assert _ids(events_in_scope(events, Scope.of_delegation(7, with_conversation=True))) == [1, 2, 4, 8, 9, 10, 11]


def top_level_tools_log() -> list[Event]:
    """The top-level agent runs a tool, then delegates to two agents at once; each runs a tool of its own."""
    s = SessionBuilder()
    s.add(SystemMessageAction(content="top system"))  # 0
    s.user("Release it")  # 1
    run = s.add(CmdRunAction(command="git tag"))  # 2: a top-level (non-delegated) tool call
    s.add(CmdOutputObservation(content="v1.2", command="git tag", cause=run.id))  # 3: its result
    s.add(AgentDelegateAction(agent="Builder", inputs={"task": "build"}, tool_call_metadata=_call("b", "r2")))  # 4
    s.add(AgentDelegateAction(agent="Tester", inputs={"task": "test"}, tool_call_metadata=_call("t", "r2")))  # 5
    s.add(MessageAction(content="TASK: build", cause=4), EventSource.USER)  # 6
    s.add(MessageAction(content="TASK: test", cause=5), EventSource.USER)  # 7
    s.add(CmdRunAction(command="make", delegation_id=4))  # 8
    s.add(CmdRunAction(command="pytest", delegation_id=5))  # 9
    s.add(CmdOutputObservation(content="built", command="make", cause=8))  # 10
    s.add(CmdOutputObservation(content="1 failed", command="pytest", cause=9))  # 11
    s.add(AgentDelegateObservation(content="built", cause=4))  # 12
    s.add(AgentDelegateObservation(content="1 failed", cause=5))  # 13
    s.agent("The build is fine, a test fails")  # 14
    return s.events


def test_inkeep_a_delegate_sees_the_top_level_tool_results_and_never_a_siblings() -> None:
    events = top_level_tools_log()

    builder = _ids(events_in_scope(events, Scope.of_delegation(4, with_conversation=True)))
    tester = _ids(events_in_scope(events, Scope.of_delegation(5, with_conversation=True)))

    assert builder == [1, 2, 3, 4, 5, 6, 8, 10]  # the top-level `git tag` and its result; not `pytest` (9, 11)
    assert tester == [1, 2, 3, 4, 5, 7, 9, 11, 12]  # the builder's end reached the top level (12); `make` did not
    # Without Inkeep's rule the delegate sees only its own events.
    assert _ids(events_in_scope(events, Scope.of_delegation(4))) == [6, 8, 10]


def test_inkeep_the_main_agent_sees_everything() -> None:
    events = top_level_tools_log()

    assert _ids(events_in_scope(events, Scope(with_conversation=True))) == list(range(15))
    assert _ids(events_in_scope(events, TOP_LEVEL)) == [0, 1, 2, 3, 4, 5, 12, 13, 14]


def test_find_delegations_reports_parents_depths_and_ends() -> None:
    nested = [(d.action_id, d.agent, d.parent, d.depth, d.observation_id) for d in find_delegations(nested_log())]
    parallel = [(d.action_id, d.parent, d.depth, d.tool_call_id, d.observation_id) for d in find_delegations(parallel_log())]

    assert nested == [(2, "BrowsingAgent", None, 1, 14), (7, "ReaderAgent", 2, 2, 12)]
    assert parallel == [(2, None, 1, "x", 13), (3, None, 1, "y", 11)]


def test_an_untagged_event_during_parallel_delegations_goes_to_the_latest_opened() -> None:
    tracker = DelegationTracker()
    s = SessionBuilder()
    for event in (
        s.add(AgentDelegateAction(agent="A")),  # 0
        s.add(AgentDelegateAction(agent="B")),  # 1
        s.add(CmdRunAction(command="whose?")),  # 2
    ):
        tracker.add(event)

    assert tracker.owner_of(2) == 1


def test_a_tag_in_a_loaded_log_is_a_top_level_key() -> None:
    log = [event_to_dict(e) for e in parallel_log()]
    # A tag set in code is written at the top level, where OpenHands' loader ignores it (it rejects
    # unknown args): never in the payload.
    assert [data.get("delegation_id") for data in log if "delegation_id" in data] == [2, 3, 3, 2]
    assert not any("delegation_id" in (data.get("args") or data.get("extras") or {}) for data in log)
    loaded = [event_from_dict(data) for data in log]
    assert [event_to_dict(event) for event in loaded] == log

    assert event_to_dict(loaded[6])["delegation_id"] == 2  # kept for the round trip
    assert _ids(events_in_scope(loaded, Scope.of_delegation(2))) == [4, 6, 9, 12]
    assert _ids(events_in_scope(loaded, Scope.of_delegation(3))) == [5, 7, 8, 10]


def test_top_level_equals_openhands_init_history_on_sequential_delegations() -> None:
    # OpenHands 0.62 StateTracker._init_history, for delegations one after the other.
    s = SessionBuilder()
    s.user("two tasks")
    for task in ("one", "two"):
        s.add(AgentDelegateAction(agent="CodeActAgent", inputs={"task": task}))
        s.user(f"TASK: {task}")
        s.add(CmdRunAction(command=task))
        s.add(AgentFinishAction())
        s.add(AgentDelegateObservation(content=f"{task} done"))
    s.agent("both done")

    assert _ids(events_in_scope(s.events, TOP_LEVEL)) == _ids(_openhands_parent_history(s.events)) == [0, 1, 5, 6, 10, 11]


def _openhands_parent_history(events: list[Event]) -> list[Event]:
    ranges, stack = [], []
    for event in events:
        if isinstance(event, AgentDelegateAction):
            stack.append(event.id)
        elif isinstance(event, AgentDelegateObservation) and stack:
            ranges.append((stack.pop(), event.id))
    kept, index = [], 0
    for start, end in sorted(ranges):
        kept.extend(e for e in events[index:] if e.id < start)
        kept.extend(e for e in events if e.id in (start, end))
        index = next((i for i, e in enumerate(events) if e.id > end), len(events))
    return kept + events[index:]


def test_openhands_lets_a_nested_pair_into_the_parent_history_and_we_do_not() -> None:
    events = nested_log()

    # OpenHands' ranges loop restarts after the inner pair: 7, 12, 13 get in, and 14 comes twice.
    assert _ids(_openhands_parent_history(events)) == [0, 1, 2, 14, 7, 12, 13, 14, 15]
    assert _ids(events_in_scope(events, TOP_LEVEL)) == [0, 1, 2, 14, 15]


def test_agent_history_and_view_take_a_scope() -> None:
    s = SessionBuilder()
    s.add(SystemMessageAction(content="top system"))  # 0
    s.user("Fix the bug")  # 1
    s.add(AgentDelegateAction(agent="BrowsingAgent", inputs={"task": "find docs"}))  # 2
    s.add(SystemMessageAction(content="browsing system"))  # 3
    s.user("TASK: find docs")  # 4
    run = s.add(CmdRunAction(command="curl docs"))  # 5
    s.add(CmdOutputObservation(content="<html>", command="curl docs", cause=run.id))  # 6
    s.add(AgentStateChangedObservation(agent_state="running"))  # 7: not agent history
    # The delegate's condenser wrote this: it belongs to the delegate and acts only on its view.
    s.add(CondensationAction(forgotten_event_ids=[5, 6], summary="ran curl", summary_offset=1))  # 8
    s.add(AgentFinishAction(final_thought="found"))  # 9
    s.add(AgentDelegateObservation(content="BrowsingAgent finishes task"))  # 10
    s.agent("Done")  # 11
    delegate = Scope.of_delegation(2)

    assert _ids(agent_history(s.events, scope=delegate)) == [3, 4, 5, 6, 8, 9]
    view = View.from_events(agent_history(s.events), scope=delegate)
    assert [getattr(e, "content", None) or e.kind for e in view] == ["browsing system", "ran curl", "TASK: find docs", "finish"]
    assert _ids(View.from_events(s.events, scope=TOP_LEVEL)) == [0, 1, 2, 10, 11]
    assert len(agent_history(s.events)) == 11  # without a scope, nothing is set apart


def test_an_unknown_delegation_is_an_error_and_an_unmatched_observation_is_logged(caplog) -> None:
    with pytest.raises(ValueError, match="no delegation was opened by event 5"):
        events_in_scope(nested_log(), Scope.of_delegation(5))

    s = SessionBuilder()
    s.user("hi")
    s.add(AgentDelegateObservation(content="stray"))
    tracker = DelegationTracker()
    with caplog.at_level(logging.WARNING, logger="openhands_memory.events.scopes"):
        for event in s.events:
            tracker.add(event)
    assert tracker.unmatched_observations == [1]
    assert "delegate observation 1 closes no delegation" in caplog.text


@pytest.mark.parametrize("log", real_log_params("v0_"))
def test_a_real_log_without_delegations_is_all_top_level(log) -> None:
    # No recorded log at hand has a delegation (see INDEX.md): on them, scoping must change nothing.
    events = agent_history(load_events(require_real_log(log)))

    assert find_delegations(events) == []
    assert events_in_scope(events, TOP_LEVEL) == events
    assert list(View.from_events(events, scope=TOP_LEVEL)) == list(View.from_events(events))
