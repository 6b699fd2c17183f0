"""Importing OpenHands SDK (V1) logs: the mapping, and that our view is the SDK's view."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import real_log_params, require_real_log

from openhands_memory.errors import MalformedEventError
from openhands_memory.events import (
    Action,
    AgentCondensationObservation,
    AgentFinishAction,
    AgentThinkAction,
    AgentThinkObservation,
    BrowseInteractiveAction,
    BrowserOutputObservation,
    BrowseURLAction,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    CondensationRequestAction,
    ContextReloadAction,
    ContextReloadObservation,
    ErrorObservation,
    Event,
    FileEditAction,
    FileEditObservation,
    FileReadAction,
    FileReadObservation,
    MCPAction,
    MCPObservation,
    MessageAction,
    Observation,
    SearchHistoryAction,
    SearchHistoryObservation,
    SystemMessageAction,
    TaskTrackingAction,
    TaskTrackingObservation,
    UnknownAction,
    UnknownObservation,
    UserRejectObservation,
    agent_history,
    dump_events,
    event_from_dict,
    event_to_dict,
    load_events,
)
from openhands_memory.events._sdk_import import import_sdk_events, is_sdk_event
from openhands_memory.view import View

V1_LOGS = real_log_params("v1_")
GOAL_FIXTURE = "v1_oh-sdk_goal-fixture_events"


# -- the SDK's view, simulated literally over the raw V1 dicts -------------------------------------

# What `LLMConvertibleEvent` covers in the SDK; everything else never enters a view.
LLM_CONVERTIBLE = {
    "SystemPromptEvent",
    "MessageEvent",
    "ActionEvent",
    "ObservationEvent",
    "AgentErrorEvent",
    "UserRejectObservation",
    "CondensationSummaryEvent",
}
TOOL_RESULTS = {"ObservationEvent", "AgentErrorEvent", "UserRejectObservation"}


def sdk_view(records: list[dict[str, Any]], *, enforce: bool) -> tuple[list[dict[str, Any]], bool]:
    """`View.from_events` of the SDK, over UUIDs: condensations applied in order, then (if `enforce`) its properties."""
    view: list[dict[str, Any]] = []
    unhandled = False
    recorded = {r["id"] for r in records}
    for record in records:
        kind = record["kind"]
        if kind == "CondensationRequest":
            unhandled = True
        elif kind == "Condensation":
            unhandled = False
            forgotten = set(record["forgotten_event_ids"])
            # The SDK that recorded these logs gave each summary a random id that never reached the
            # log; a later condensation forgetting an unrecorded id forgot the summary standing then.
            unrecorded = [u for u in forgotten if u not in recorded and not u.endswith("-summary")]
            standing = [e["id"] for e in view if e["kind"] == "CondensationSummaryEvent"]
            if unrecorded and len(standing) == 1:
                forgotten.add(standing[0])
            view = [e for e in view if e["id"] not in forgotten]
            if record.get("summary") is not None and record.get("summary_offset") is not None:
                summary = {"kind": "CondensationSummaryEvent", "id": f"{record['id']}-summary", "summary": record["summary"]}
                view.insert(record["summary_offset"], summary)
        elif kind in LLM_CONVERTIBLE:
            view.append(record)
    if enforce:
        view = enforce_properties(view, records)
    return view, unhandled


def enforce_properties(view: list[dict[str, Any]], all_events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The SDK's `enforce_properties`: drop events until every property holds (tool loops: see the assert)."""
    # Tool-loop atomicity only concerns batches with Anthropic thinking blocks; these logs have none.
    assert not any(e.get("thinking_blocks") for e in all_events if e["kind"] == "ActionEvent")

    def batches(events: list[dict[str, Any]]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for e in events:
            if e["kind"] == "ActionEvent":
                out.setdefault(e["llm_response_id"], set()).add(e["id"])
        return out

    while True:
        drop: set[str] = set()
        # Batch atomicity: a response's actions stay together or go together.
        everything = batches(all_events)
        for response_id, ids in batches(view).items():
            if ids != everything[response_id]:
                drop |= ids
        # Tool-call matching: every action has a result and every result an action.
        calls = {e["tool_call_id"] for e in view if e["kind"] == "ActionEvent"}
        results = {e["tool_call_id"] for e in view if e["kind"] in TOOL_RESULTS}
        for e in view:
            if e["kind"] == "ActionEvent" and e["tool_call_id"] not in results:
                drop.add(e["id"])
            if e["kind"] in TOOL_RESULTS and e["tool_call_id"] not in calls:
                drop.add(e["id"])
        # Tool-result uniqueness: consecutive results for one call keep one.
        for left, right in zip(view, view[1:]):
            if left["kind"] in TOOL_RESULTS and right["kind"] in TOOL_RESULTS and left["tool_call_id"] == right["tool_call_id"]:
                drop.add(left["id"])
        if not drop:
            return view
        view = [e for e in view if e["id"] not in drop]


def read_records(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_bytes())


def our_view(events: list[Event]) -> list[Event]:
    """What the model may see of imported events: hidden ones left out first, as the controller does."""
    return View.from_events(agent_history(events)).events


def sdk_ids(events: list[Event], view: list[Event]) -> list[str]:
    """Each view event's SDK id: its UUID, or `<condensation uuid>-summary` for a summary."""
    out = []
    for event in view:
        if event.id is None:
            assert isinstance(event, AgentCondensationObservation) and event.cause is not None
            out.append(f"{events[event.cause].original_id}-summary")
        else:
            assert event.original_id is not None
            out.append(event.original_id)
    return out


def orphans_dropped(view: list[Event]) -> list[Event]:
    """Tool-call matching on our events (by `tool_call_id`): what a renderer must do for a valid chat."""
    calls = {e.tool_call_metadata.tool_call_id for e in view if isinstance(e, Action) and e.tool_call_metadata}
    results = {e.tool_call_metadata.tool_call_id for e in view if isinstance(e, Observation) and e.tool_call_metadata}
    return [
        e
        for e in view
        if e.tool_call_metadata is None
        or e.tool_call_metadata.tool_call_id in (results if isinstance(e, Action) else calls)
    ]


# -- the view, on every real V1 log -------------------------------------------------------------------


@pytest.mark.parametrize("log", V1_LOGS)
def test_view_is_the_sdk_view_with_condensations_applied(log: Path | None) -> None:
    path = require_real_log(log)
    records = read_records(path)
    events = load_events(path)
    expected, unhandled = sdk_view(records, enforce=False)
    view = View.from_events(agent_history(events))
    assert sdk_ids(events, view.events) == [e["id"] for e in expected]
    assert view.unhandled_condensation_request == unhandled
    summaries = [e.content for e in view if isinstance(e, AgentCondensationObservation)]
    assert summaries == [e["summary"] for e in expected if e["kind"] == "CondensationSummaryEvent"]


@pytest.mark.parametrize("log", V1_LOGS)
def test_sdk_property_enforcement_only_drops_orphan_tool_results(log: Path | None) -> None:
    """The SDK view also enforces its properties; on these logs that removes exactly the tool results
    whose action was forgotten (or is not in the file), which our renderer must drop too."""
    path = require_real_log(log)
    records = read_records(path)
    events = load_events(path)
    before, _ = sdk_view(records, enforce=False)
    after, _ = sdk_view(records, enforce=True)
    dropped = [e for e in before if e not in after]
    assert all(e["kind"] == "ObservationEvent" for e in dropped)
    assert sdk_ids(events, orphans_dropped(our_view(events))) == [e["id"] for e in after]
    expected_drops = {
        "v1_oh-benchmarks_conv-0535c419_343ev": 7,  # each of 7 condensations forgets an action, keeps its result
        "v1_oh-benchmarks_conv-3f8f233d_150ev": 2,
        GOAL_FIXTURE: 1,  # the result whose action is not in the trimmed file
    }
    if path.stem in expected_drops:
        assert len(dropped) == expected_drops[path.stem]


@pytest.mark.parametrize("log", V1_LOGS)
def test_ids_are_positions_and_uuids_timestamps_sources_are_kept(log: Path | None) -> None:
    path = require_real_log(log)
    records = read_records(path)
    events = load_events(path)
    assert [e.id for e in events] == list(range(len(records)))
    assert [e.original_id for e in events] == [r["id"] for r in records]
    assert [e.timestamp for e in events] == [r["timestamp"] for r in records]
    assert [e.source for e in events] == [r["source"] for r in records]


@pytest.mark.parametrize("log", V1_LOGS)
def test_each_kind_maps_to_its_v0_class(log: Path | None) -> None:
    path = require_real_log(log)
    records = read_records(path)
    events = load_events(path)
    for record, event in zip(records, events, strict=True):
        kind = record["kind"]
        if kind == "ActionEvent":
            assert isinstance(event, Action) and not event.hidden
        elif kind in TOOL_RESULTS:
            assert isinstance(event, Observation) and not event.hidden
        elif kind == "SystemPromptEvent":
            assert isinstance(event, SystemMessageAction) and event.content == record["system_prompt"]["text"]
            assert [t["function"]["name"] for t in event.tools or []] == [t["function"]["name"] for t in record["tools"]]
        elif kind == "MessageEvent":
            assert isinstance(event, MessageAction)
            assert event.content == "\n".join(c["text"] for c in record["llm_message"]["content"] if c["type"] == "text")
        elif kind == "Condensation":
            assert isinstance(event, CondensationAction) and event.summary_persists is True
        else:
            assert isinstance(event, UnknownObservation) and event.hidden and event.observation == kind
    assert agent_history(events) == [e for e, r in zip(events, records) if r["kind"] in LLM_CONVERTIBLE | {"Condensation", "CondensationRequest"}]


@pytest.mark.parametrize("log", V1_LOGS)
def test_actions_carry_their_tool_call_and_model_response(log: Path | None) -> None:
    path = require_real_log(log)
    records = read_records(path)
    events = load_events(path)
    batch_sizes = Counter(r["llm_response_id"] for r in records if r["kind"] == "ActionEvent")
    for record, event in zip(records, events):
        if record["kind"] != "ActionEvent":
            continue
        metadata = event.tool_call_metadata
        assert metadata is not None
        assert (metadata.function_name, metadata.tool_call_id) == (record["tool_name"], record["tool_call_id"])
        assert metadata.response_id == record["llm_response_id"]
        assert metadata.total_calls_in_response == batch_sizes[record["llm_response_id"]]
        message = metadata.model_response["choices"][0]["message"]
        assert message["role"] == "assistant"
        assert record["tool_call_id"] in [call["id"] for call in message["tool_calls"]]
        thought = "\n".join(t["text"] for t in record["thought"])
        if not isinstance(event, AgentThinkAction):  # think combines both thoughts, as V0 does
            assert getattr(event, "thought", thought) == thought
        for call in message["tool_calls"]:
            assert call["type"] == "function" and isinstance(call["function"]["arguments"], str)
            json.loads(call["function"]["arguments"])


@pytest.mark.parametrize("log", V1_LOGS)
def test_observations_point_at_their_actions(log: Path | None) -> None:
    path = require_real_log(log)
    records = read_records(path)
    events = load_events(path)
    position = {r["id"]: i for i, r in enumerate(records)}
    for record, event in zip(records, events):
        if record["kind"] != "ObservationEvent":
            continue
        assert event.tool_call_metadata is not None
        assert event.tool_call_metadata.tool_call_id == record["tool_call_id"]
        if record["action_id"] in position:
            action = events[event.cause]
            assert event.cause == position[record["action_id"]]
            assert isinstance(action, Action) and action.original_id == record["action_id"]
            assert action.tool_call_metadata == event.tool_call_metadata
        else:
            assert event.cause is None
            assert event.tool_call_metadata.function_name == record["tool_name"]
            assert event.tool_call_metadata.model_response is None


@pytest.mark.parametrize("log", V1_LOGS)
def test_condensations_forget_the_int_ids_of_their_uuids(log: Path | None) -> None:
    path = require_real_log(log)
    records = read_records(path)
    events = load_events(path)
    position = {r["id"]: i for i, r in enumerate(records)}
    previous: int | None = None  # the last condensation with a summary: its summary stands
    for index, (record, event) in enumerate(zip(records, events)):
        if record["kind"] != "Condensation":
            continue
        assert isinstance(event, CondensationAction)
        expected = []
        for uuid in record["forgotten_event_ids"]:
            if uuid in position and position[uuid] < index:
                expected.append(position[uuid])
            elif uuid not in position and previous is not None:
                expected.append(previous)  # the unrecorded id of the summary standing at that place
        assert event.forgotten_event_ids == expected
        assert (event.summary, event.summary_offset) == (record["summary"], record["summary_offset"])
        if record["summary"] is not None:
            previous = index


def test_fixture_views_show_only_the_newest_summary_as_the_recording_sdk_did(real_logs_dir: Path) -> None:
    for name in ("v1_oh-benchmarks_conv-0535c419_343ev", "v1_oh-benchmarks_conv-3f8f233d_150ev"):
        records = read_records(real_logs_dir / f"{name}.json")
        view = View.from_events(agent_history(load_events(real_logs_dir / f"{name}.json")))
        summaries = [e for e in view if isinstance(e, AgentCondensationObservation)]
        newest = [r for r in records if r["kind"] == "Condensation"][-1]
        assert [s.content for s in summaries] == [newest["summary"]]
        assert view.events.index(summaries[0]) == newest["summary_offset"]


def test_goal_fixture_result_of_an_action_outside_the_file_has_no_cause(real_logs_dir: Path) -> None:
    path = real_logs_dir / f"{GOAL_FIXTURE}.json"
    events = load_events(path)
    dangling = [e for e in events if e.original_id == "8df85183-1da3-4677-ad2e-eb87d6f33809"]
    assert len(dangling) == 1
    (event,) = dangling
    assert isinstance(event, CmdOutputObservation)
    assert event.cause is None
    assert event.tool_call_metadata is not None
    assert event.tool_call_metadata.tool_call_id == "chatcmpl-tool-9051d3d10f914188"
    assert event.tool_call_metadata.function_name == "terminal"
    # The others are answered, with the text the terminal returned and its exit code.
    answered = [e for e in events if isinstance(e, CmdOutputObservation) and e.cause is not None]
    assert [events[e.cause].original_id for e in answered] == [
        "e54cbba2-3be2-4494-aa13-83af6044c5a7",
        "1eb65bb3-22e7-473f-855c-2dcf26ae8e08",
    ]
    assert answered[0].content.startswith("Cannot execute multiple commands at once.")
    assert answered[0].exit_code == -1


def test_imported_log_round_trips_as_v0_json(real_logs_dir: Path, tmp_path: Path) -> None:
    for path in sorted(real_logs_dir.glob("v1_*.json")):
        events = load_events(path)
        for suffix in (".json", ".jsonl"):
            out = tmp_path / f"{path.stem}{suffix}"
            dump_events(events, out)
            again = load_events(out)
            assert again == events
            assert [event_to_dict(e) for e in again] == [event_to_dict(e) for e in events]


# -- the mapping, by example ------------------------------------------------------------------------

_counter = iter(range(10**6))


def uid() -> str:
    return f"00000000-0000-0000-0000-{next(_counter):012d}"


def action_event(action: dict[str, Any] | None, *, tool: str, response: str | None = None, thought: str = "", **extra: Any) -> dict[str, Any]:
    call_id = f"call_{next(_counter)}"
    arguments = {k: v for k, v in (action or {}).items() if k != "kind"}
    return {
        "kind": "ActionEvent",
        "id": uid(),
        "timestamp": "2025-01-01T00:00:00",
        "source": "agent",
        "thought": [{"type": "text", "text": thought}] if thought else [],
        "action": action,
        "tool_name": tool,
        "tool_call_id": call_id,
        "tool_call": {"id": call_id, "name": tool, "arguments": json.dumps(arguments), "origin": "completion"},
        "llm_response_id": response or f"resp_{next(_counter)}",
        "security_risk": "LOW",
        **extra,
    }


def observation_event(action: dict[str, Any], observation: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "ObservationEvent",
        "id": uid(),
        "timestamp": "2025-01-01T00:00:01",
        "source": "environment",
        "tool_name": action["tool_name"],
        "tool_call_id": action["tool_call_id"],
        "observation": observation,
        "action_id": action["id"],
    }


def message_event(text: str, source: str = "user") -> dict[str, Any]:
    return {
        "kind": "MessageEvent",
        "id": uid(),
        "timestamp": "2025-01-01T00:00:00",
        "source": source,
        "llm_message": {"role": source, "content": [{"type": "text", "text": text}]},
    }


def condensation(forgotten: list[str], summary: str | None = None, offset: int | None = None) -> dict[str, Any]:
    return {
        "kind": "Condensation",
        "id": uid(),
        "timestamp": "2025-01-01T00:00:02",
        "source": "environment",
        "forgotten_event_ids": forgotten,
        "summary": summary,
        "summary_offset": offset,
    }


def state_update() -> dict[str, Any]:
    return {"kind": "ConversationStateUpdateEvent", "id": uid(), "timestamp": "2025-01-01T00:00:00", "source": "environment", "key": "stats", "value": {}}


@pytest.mark.parametrize(
    ("action", "tool", "expected", "fields"),
    [
        ({"kind": "TerminalAction", "command": "ls", "is_input": False, "timeout": 30.0, "reset": False}, "terminal", CmdRunAction, {"command": "ls", "timeout": 30.0, "security_risk": 0}),
        ({"kind": "ExecuteBashAction", "command": "pwd", "is_input": True}, "execute_bash", CmdRunAction, {"command": "pwd", "is_input": True}),
        ({"kind": "FileEditorAction", "command": "view", "path": "/a.py", "view_range": [1, 5]}, "file_editor", FileReadAction, {"path": "/a.py", "view_range": [1, 5], "impl_source": "oh_aci"}),
        (
            {"kind": "StrReplaceEditorAction", "command": "str_replace", "path": "/a.py", "old_str": "x", "new_str": "y"},
            "str_replace_editor",
            FileEditAction,
            {"command": "str_replace", "path": "/a.py", "old_str": "x", "new_str": "y", "impl_source": "oh_aci"},
        ),
        ({"kind": "FileEditorAction", "command": "insert", "path": "/a.py", "new_str": "z", "insert_line": 3}, "file_editor", FileEditAction, {"command": "insert", "insert_line": 3}),
        ({"kind": "FileEditorAction", "command": "create", "path": "/b.py", "file_text": "print()"}, "file_editor", FileEditAction, {"command": "create", "file_text": "print()"}),
        ({"kind": "ThinkAction", "thought": "hmm"}, "think", AgentThinkAction, {"thought": "before\nhmm"}),
        ({"kind": "FinishAction", "message": "done"}, "finish", AgentFinishAction, {"final_thought": "done", "thought": "before"}),
        ({"kind": "TaskTrackerAction", "command": "plan", "task_list": [{"title": "t", "status": "todo"}]}, "task_tracker", TaskTrackingAction, {"command": "plan", "task_list": [{"title": "t", "status": "todo"}]}),
        ({"kind": "MCPToolAction", "data": {"url": "https://x"}}, "fetch_fetch", MCPAction, {"name": "fetch_fetch", "arguments": {"url": "https://x"}}),
        ({"kind": "BrowserNavigateAction", "url": "https://x", "new_tab": False}, "browser_navigate", BrowseURLAction, {"url": "https://x"}),
        ({"kind": "BrowserClickAction", "index": 3}, "browser_click", BrowseInteractiveAction, {"browser_actions": 'browser_click({"index":3})'}),
        ({"kind": "GlobAction", "pattern": "*.py"}, "glob", UnknownAction, {"action": "GlobAction"}),
        (None, "terminal", UnknownAction, {"action": "NonExecutableAction"}),
        # This library's SDK memory tools: their events are its own kinds, which the search index leaves out.
        ({"kind": "SearchHistoryAction", "query": "zebra", "limit": None}, "search_history", SearchHistoryAction, {"query": "zebra", "limit": 5}),
        ({"kind": "SearchHistoryAction", "query": "zebra", "limit": 12}, "search_history", SearchHistoryAction, {"limit": 12}),
        ({"kind": "ContextReloadAction", "event_id": 3}, "context_reload", ContextReloadAction, {"event_id": 3}),
    ],
)
def test_action_kinds_map_to_v0_actions(action: dict[str, Any] | None, tool: str, expected: type[Action], fields: dict[str, Any]) -> None:
    record = action_event(action, tool=tool, thought="before")
    (event,) = import_sdk_events([record])
    assert type(event) is expected
    for name, value in fields.items():
        assert getattr(event, name) == value, name
    assert event.tool_call_metadata is not None and event.tool_call_metadata.tool_call_id == record["tool_call_id"]
    if expected is UnknownAction and action is not None:
        assert event.__pydantic_extra__ == {"pattern": "*.py", "thought": "before"}
    # Whatever the kind, the event writes V0 JSON that reads back equal.
    assert event_from_dict(event_to_dict(event)) == event


@pytest.mark.parametrize(
    ("action", "tool", "expected", "fields"),
    [
        ({"kind": "TerminalAction", "is_input": False}, "terminal", UnknownAction, {"action": "TerminalAction", "is_input": False}),
        ({"kind": "ExecuteBashAction", "command": ["ls"]}, "execute_bash", UnknownAction, {"action": "ExecuteBashAction", "command": ["ls"]}),
        ({"kind": "FileEditorAction", "command": "view", "path": None}, "file_editor", UnknownAction, {"action": "FileEditorAction", "path": None}),
        ({"kind": "BrowserNavigateAction", "new_tab": True}, "browser_navigate", BrowseInteractiveAction, {"browser_actions": 'browser_navigate({"new_tab":true})'}),
        ({"kind": 5, "x": 1}, "odd", UnknownAction, {"action": "UnknownSDKAction", "x": 1}),
        ({"kind": ["TerminalAction"], "x": 1}, "odd", UnknownAction, {"action": "UnknownSDKAction", "x": 1}),
        ({"kind": {"a": 1}, "x": 1}, "odd", UnknownAction, {"action": "UnknownSDKAction", "x": 1}),
        # A memory tool's call that names an event by its UUID, or holds what the model wrote, is kept as written.
        ({"kind": "ContextReloadAction", "event_id": "6d3c0b7e-uuid"}, "context_reload", UnknownAction, {"action": "ContextReloadAction", "event_id": "6d3c0b7e-uuid"}),
        ({"kind": "ContextReloadAction", "event_id": True}, "context_reload", UnknownAction, {"action": "ContextReloadAction", "event_id": True}),
        ({"kind": "SearchHistoryAction", "query": ["x"], "limit": None}, "search_history", UnknownAction, {"action": "SearchHistoryAction", "query": ["x"]}),
        ({"kind": "SearchHistoryAction", "query": "x", "limit": 2**64}, "search_history", UnknownAction, {"action": "SearchHistoryAction", "limit": 2**64}),
    ],
)
def test_action_without_what_its_kind_needs_maps_like_an_unlisted_kind(
    action: dict[str, Any], tool: str, expected: type[Action], fields: dict[str, Any]
) -> None:
    (event,) = import_sdk_events([action_event(action, tool=tool, thought="before")])
    assert type(event) is expected
    for name, value in fields.items():
        assert getattr(event, name) == value, name
    assert event.thought == "before"
    assert event_from_dict(event_to_dict(event)) == event


@pytest.mark.parametrize(
    ("action", "observation", "expected", "content"),
    [
        (
            {"kind": "TerminalAction", "command": "ls"},
            {"kind": "TerminalObservation", "content": [{"type": "text", "text": "a\nb"}], "is_error": False, "command": "ls", "exit_code": 0, "metadata": {"exit_code": 0, "working_dir": "/w"}},
            CmdOutputObservation,
            "a\nb",
        ),
        ({"kind": "ExecuteBashAction", "command": "ls"}, {"kind": "ExecuteBashObservation", "output": "out", "command": "ls", "error": False, "metadata": {"exit_code": 2}}, CmdOutputObservation, "out"),
        ({"kind": "StrReplaceEditorAction", "command": "view", "path": "/a"}, {"kind": "StrReplaceEditorObservation", "command": "view", "output": "1\tx", "path": "/a", "error": ""}, FileReadObservation, "1\tx"),
        (
            {"kind": "StrReplaceEditorAction", "command": "create", "path": "/a", "file_text": "x"},
            {"kind": "StrReplaceEditorObservation", "command": "create", "output": "created", "path": "/a", "prev_exist": False, "new_content": "x", "error": None},
            FileEditObservation,
            "created",
        ),
        ({"kind": "StrReplaceEditorAction", "command": "str_replace", "path": "/a"}, {"kind": "StrReplaceEditorObservation", "command": "str_replace", "output": "", "error": "No replacement was performed"}, ErrorObservation, "No replacement was performed"),
        ({"kind": "ThinkAction", "thought": "t"}, {"kind": "ThinkObservation", "content": "Your thought has been logged."}, AgentThinkObservation, "Your thought has been logged."),
        ({"kind": "TaskTrackerAction", "command": "view"}, {"kind": "TaskTrackerObservation", "content": "No tasks", "command": "view", "task_list": []}, TaskTrackingObservation, "No tasks"),
        ({"kind": "MCPToolAction", "data": {"q": 1}}, {"kind": "MCPToolObservation", "content": [{"type": "text", "text": "page"}], "is_error": False, "tool_name": "fetch"}, MCPObservation, "page"),
        ({"kind": "BrowserNavigateAction", "url": "https://x"}, {"kind": "BrowserObservation", "output": "page text", "error": None, "screenshot_data": None}, BrowserOutputObservation, "page text"),
        ({"kind": "FinishAction", "message": "bye"}, {"kind": "FinishObservation", "message": "bye"}, UnknownObservation, "bye"),
        (
            {"kind": "SearchHistoryAction", "query": "zebra"},
            {"kind": "SearchHistoryObservation", "content": [{"type": "text", "text": "1 event matches"}], "is_error": False},
            SearchHistoryObservation,
            "1 event matches",
        ),
        (
            {"kind": "ContextReloadAction", "event_id": 0},
            {"kind": "ContextReloadObservation", "content": [{"type": "text", "text": "[event 0: ...]"}], "is_error": False, "reloaded_event_id": 0},
            ContextReloadObservation,
            "[event 0: ...]",
        ),
    ],
)
def test_observation_kinds_map_to_v0_observations(action: dict[str, Any], observation: dict[str, Any], expected: type[Observation], content: str) -> None:
    act = action_event(action, tool="tool")
    obs = observation_event(act, observation)
    events = import_sdk_events([act, obs])
    result = events[1]
    assert type(result) is expected
    assert result.content == content
    assert result.cause == 0
    assert result.tool_call_metadata == events[0].tool_call_metadata
    if isinstance(result, CmdOutputObservation) and observation.get("metadata", {}).get("exit_code") == 0:
        assert (result.exit_code, result.working_dir) == (0, "/w")
    assert event_from_dict(event_to_dict(result)) == result


def test_finish_and_its_result_are_one_tool_call_and_its_answer_as_the_sdk_shows_them() -> None:
    from openhands_memory.conversation_memory import ConversationMemory

    finish = action_event({"kind": "FinishAction", "message": "all fixed"}, tool="finish", thought="Done.")
    records = [message_event("fix it"), finish, observation_event(finish, {"kind": "FinishObservation", "message": "all fixed"})]
    events = import_sdk_events(records)
    action = events[1]
    assert isinstance(action, AgentFinishAction) and action.result_recorded is True
    assert event_from_dict(event_to_dict(action)) == action  # the flag survives a V0 round-trip
    memory = ConversationMemory(system_prompt="s")
    messages = memory.process_events(events)
    assert memory.last_repairs.count == 0
    call, result = messages[-2], messages[-1]
    assert call.role == "assistant" and [c.function.name for c in call.tool_calls or ()] == ["finish"]
    assert call.content[0].text == "Done."
    assert result.role == "tool" and result.tool_call_id == finish["tool_call_id"] and result.content[0].text == "all fixed"


def test_finish_whose_result_is_not_in_the_file_stays_the_agents_words() -> None:
    from openhands_memory.conversation_memory import ConversationMemory

    finish = action_event({"kind": "FinishAction", "message": "all fixed"}, tool="finish", thought="Done.")
    events = import_sdk_events([message_event("fix it"), finish])
    assert events[1].result_recorded is None
    messages = ConversationMemory(system_prompt="s").process_events(events)
    assert (messages[-1].role, messages[-1].tool_calls, messages[-1].content[0].text) == ("assistant", None, "Done.")


@pytest.mark.parametrize("log", V1_LOGS)
def test_no_finish_result_of_a_real_sdk_log_is_an_orphan(log: Path | None) -> None:
    from openhands_memory.replay import inspect_log

    report = inspect_log(require_real_log(log))
    assert [o for o in report.orphans if o.function_name == "finish"] == []


def test_parallel_tool_calls_share_one_model_response() -> None:
    first = action_event({"kind": "TerminalAction", "command": "a"}, tool="terminal", response="resp-1", thought="two at once")
    second = action_event({"kind": "TerminalAction", "command": "b"}, tool="terminal", response="resp-1")
    records = [first, second, observation_event(first, {"kind": "TerminalObservation", "content": []}), observation_event(second, {"kind": "TerminalObservation", "content": []})]
    events = import_sdk_events(records)
    a, b = events[0].tool_call_metadata, events[1].tool_call_metadata
    assert a is not None and b is not None
    assert a.response_id == b.response_id == "resp-1"
    assert a.total_calls_in_response == b.total_calls_in_response == 2
    assert a.model_response == b.model_response
    message = a.model_response["choices"][0]["message"]
    assert message["content"] == "two at once"
    assert [call["id"] for call in message["tool_calls"]] == [first["tool_call_id"], second["tool_call_id"]]
    assert [events[2].cause, events[3].cause] == [0, 1]
    assert events[3].tool_call_metadata.tool_call_id == second["tool_call_id"]


def test_thinking_blocks_of_a_batch_go_into_its_model_response() -> None:
    thinking = [{"type": "thinking", "thinking": "first ls, then pwd", "signature": "sig"}]
    first = action_event({"kind": "TerminalAction", "command": "ls"}, tool="terminal", response="resp-t", thinking_blocks=thinking)
    second = action_event({"kind": "TerminalAction", "command": "pwd"}, tool="terminal", response="resp-t", thinking_blocks=[])
    plain = action_event({"kind": "TerminalAction", "command": "id"}, tool="terminal")
    events = import_sdk_events([first, second, plain])
    shared = events[0].tool_call_metadata.model_response["choices"][0]["message"]
    assert shared["thinking_blocks"] == thinking
    assert events[1].tool_call_metadata.model_response is events[0].tool_call_metadata.model_response
    assert "thinking_blocks" not in events[2].tool_call_metadata.model_response["choices"][0]["message"]


def test_tool_call_in_litellm_shape_is_read_too() -> None:
    record = action_event({"kind": "ExecuteBashAction", "command": "ls"}, tool="execute_bash")
    record["tool_call"] = {"index": 0, "function": {"arguments": '{"command": "ls"}', "name": "execute_bash"}, "id": record["tool_call_id"], "type": "function"}
    (event,) = import_sdk_events([record])
    assert event.tool_call_metadata.model_response["choices"][0]["message"]["tool_calls"] == [
        {"id": record["tool_call_id"], "type": "function", "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'}}
    ]


def test_error_and_rejection_answer_their_action() -> None:
    act = action_event({"kind": "TerminalAction", "command": "rm -rf /"}, tool="terminal")
    reject = {"kind": "UserRejectObservation", "id": uid(), "source": "environment", "tool_name": "terminal", "tool_call_id": act["tool_call_id"], "action_id": act["id"], "rejection_reason": "no"}
    act2 = action_event(None, tool="terminal")
    error = {"kind": "AgentErrorEvent", "id": uid(), "source": "agent", "tool_name": "terminal", "tool_call_id": act2["tool_call_id"], "error": "bad arguments"}
    stray = {"kind": "AgentErrorEvent", "id": uid(), "source": "agent", "tool_name": "nope", "tool_call_id": "call_x", "error": "no such tool"}
    events = import_sdk_events([act, reject, act2, error, stray])
    assert isinstance(events[1], UserRejectObservation) and events[1].content == "Action rejected: no" and events[1].cause == 0
    assert isinstance(events[3], ErrorObservation) and events[3].content == "bad arguments" and events[3].cause == 2
    assert events[3].tool_call_metadata == events[2].tool_call_metadata
    assert isinstance(events[4], ErrorObservation) and events[4].cause is None
    assert events[4].tool_call_metadata.tool_call_id == "call_x"


def test_system_prompt_and_message_keep_text_tools_and_images() -> None:
    system = {
        "kind": "SystemPromptEvent",
        "id": uid(),
        "source": "agent",
        "system_prompt": {"type": "text", "text": "You are X."},
        "dynamic_context": {"type": "text", "text": "Repo: y"},
        "tools": [
            {"type": "function", "function": {"name": "terminal", "parameters": {}}},
            {"name": "think", "description": "Think.", "parameters": {"type": "object"}},
            # How SDK 1.58 persists a tool: its ToolDefinition, the name in `title`, no parameter schema.
            {"description": "List files.", "action_type": "ListFilesAction", "observation_type": "ListFilesObservation",
             "annotations": {"readOnlyHint": True}, "kind": "ListFilesTool", "title": "list_files"},
        ],
    }
    message = message_event("look")
    message["llm_message"]["content"].append({"type": "image", "image_urls": ["data:image/png;base64,AAA"]})
    message["extended_content"] = [{"type": "text", "text": "<skill>hint</skill>"}]
    system_event, message_action = import_sdk_events([system, message])
    assert isinstance(system_event, SystemMessageAction)
    assert system_event.content == "You are X.\n\nRepo: y"
    assert system_event.tools == [
        {"type": "function", "function": {"name": "terminal", "parameters": {}}},
        {"type": "function", "function": {"name": "think", "description": "Think.", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "list_files", "description": "List files."}},
    ]
    assert isinstance(message_action, MessageAction)
    assert message_action.content == "look\n<skill>hint</skill>"
    assert message_action.image_urls == ["data:image/png;base64,AAA"]
    assert message_action.source == "user"


def test_forgotten_ids_map_summaries_to_their_condensation_and_drop_unknown_and_later_ids() -> None:
    m0, m1, m2 = message_event("task"), message_event("a", "agent"), message_event("b", "agent")
    first = condensation([m1["id"], "ffffffff-not-in-this-file"], summary="S1", offset=1)
    later = message_event("c", "agent")
    second = condensation([f"{first['id']}-summary", m2["id"], later["id"]], summary="S2", offset=1)
    records = [m0, m1, m2, first, second, later]
    events = import_sdk_events(records)
    assert events[3].forgotten_event_ids == [1]  # the unknown UUID is dropped
    assert events[4].forgotten_event_ids == [3, 2]  # the summary of #3 is forgotten by #3's id; `later` comes after
    expected, _ = sdk_view(records, enforce=False)
    view = our_view(events)
    assert sdk_ids(events, view) == [e["id"] for e in expected] == [m0["id"], f"{second['id']}-summary", later["id"]]
    assert [e.content for e in view] == ["task", "S2", "c"]


def test_summaries_stack_like_the_sdk_and_hidden_events_do_not_shift_them() -> None:
    records = [message_event("task"), state_update()]
    for n in range(3):
        work = [message_event(f"w{n}.{i}", "agent") for i in range(3)]
        records += [*work, state_update(), condensation([w["id"] for w in work[:2]], summary=f"S{n}", offset=1), state_update()]
    records.append({"kind": "CondensationRequest", "id": uid(), "source": "environment"})
    events = import_sdk_events(records)
    expected, unhandled = sdk_view(records, enforce=False)
    view = View.from_events(agent_history(events))
    assert sdk_ids(events, view.events) == [e["id"] for e in expected]
    assert [getattr(e, "content", None) for e in view][:4] == ["task", "S2", "S1", "S0"]
    assert view.unhandled_condensation_request is unhandled is True
    assert isinstance(events[-1], CondensationRequestAction)


def test_an_unrecorded_forgotten_id_forgets_the_summary_standing_at_its_place() -> None:
    """Older SDKs gave summaries random ids never written to the log: match them by view position."""
    task = message_event("task")
    work = [message_event(f"w{i}", "agent") for i in range(6)]
    first = condensation([work[0]["id"]], summary="S0", offset=1)  # view: task S0 w1 w2 ...
    second = condensation([work[2]["id"]], summary="S1", offset=3)  # view: task S0 w1 S1 w3 w4 w5
    # Forget the summary between w1 and w3 (S1) by an id the log never recorded, and w3 itself.
    third = condensation([work[1]["id"], uid(), work[3]["id"]], summary="S2", offset=1)
    records = [task, *work[:3], first, second, *work[3:], third]
    events = import_sdk_events(records)
    position = {r["id"]: i for i, r in enumerate(records)}
    assert events[-1].forgotten_event_ids == [position[work[1]["id"]], position[second["id"]], position[work[3]["id"]]]
    view = View.from_events(agent_history(events))
    assert [getattr(e, "content", None) for e in view] == ["task", "S2", "S0", "w4", "w5"]


def test_summary_without_offset_is_not_shown() -> None:
    records = [message_event("task"), condensation([], summary="lost", offset=None)]
    events = import_sdk_events(records)
    assert (events[1].summary, events[1].summary_offset) == (None, None)
    assert sdk_ids(events, our_view(events)) == [e["id"] for e in sdk_view(records, enforce=False)[0]]


def test_state_events_are_kept_hidden_with_their_fields() -> None:
    record = state_update()
    record["value"] = {"hidden": 1}
    record["content"] = "x"
    (event,) = import_sdk_events([record])
    assert isinstance(event, UnknownObservation) and event.hidden
    assert event.observation == "ConversationStateUpdateEvent"
    assert event.__pydantic_extra__ == {"key": "stats", "value": {"hidden": 1}, "sdk_content": "x"}
    assert agent_history([event]) == []
    assert event_from_dict(event_to_dict(event)) == event


def test_is_sdk_event() -> None:
    assert is_sdk_event({"kind": "MessageEvent", "id": "x"})
    # An SDK action or observation event holds an object (or null) where a V0 event names its kind.
    assert is_sdk_event({"kind": "ActionEvent", "action": {"kind": "TerminalAction"}})
    assert is_sdk_event({"kind": "ActionEvent", "action": None})
    assert is_sdk_event({"kind": "ObservationEvent", "observation": {"kind": "TerminalObservation"}})
    assert not is_sdk_event({"action": "run", "kind": "x"})
    assert not is_sdk_event({"observation": "run"})
    assert not is_sdk_event(["kind"])


def test_load_events_reads_sdk_jsonl(tmp_path: Path) -> None:
    act = action_event({"kind": "TerminalAction", "command": "ls"}, tool="terminal")
    records = [message_event("hi"), act, observation_event(act, {"kind": "TerminalObservation", "content": [{"type": "text", "text": "a"}]})]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    events = load_events(path)
    assert [type(e) for e in events] == [MessageAction, CmdRunAction, CmdOutputObservation]
    assert events[2].cause == 1


# -- malformed input ----------------------------------------------------------------------------------


def nested(depth: int) -> list[Any]:
    """A list nested `depth` deep."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _bad(**changes: Any) -> list[Any]:
    act = action_event({"kind": "TerminalAction", "command": "ls"}, tool="terminal")
    obs = observation_event(act, {"kind": "TerminalObservation", "content": []})
    records: list[Any] = [message_event("hi"), act, obs]
    for key, value in changes.items():
        index, field = key.split("__")
        if value is ...:
            del records[int(index[1:])][field]
        else:
            records[int(index[1:])][field] = value
    return records


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"kind": "MessageEvent", "id": "a", "llm_message": {"content": []}}, 7], "log.json: event #1: expected a JSON object, got int"),
        ([{"kind": "MessageEvent", "id": "a", "llm_message": {"content": []}}, {"action": "run", "args": {}}], "log.json: event #1: OpenHands SDK event: a V0 event in an SDK log"),
        ([{"kind": "MessageEvent", "llm_message": {"content": []}}], "log.json: event #0: OpenHands SDK event: MessageEvent: 'id' must be a non-empty string, got None"),
        (_bad(e2__id=None), "log.json: event #2: OpenHands SDK event: ObservationEvent: 'id' must be a non-empty string"),
        (_bad(e1__tool_call_id=...), "log.json: event #1 (id '"),
        (_bad(e1__llm_response_id=5), "OpenHands SDK event: ActionEvent: 'llm_response_id' must be a string, got 5"),
        (_bad(e2__action_id=...), "log.json: event #2 (id '"),
        (_bad(e2__observation="text"), "ObservationEvent: 'observation' must be an object"),
        (_bad(e2__tool_call_id="other"), "ObservationEvent: tool_call_id 'other' does not match"),
        (_bad(e0__source="robot"), "MessageEvent: unknown source 'robot'"),
        (_bad(e0__llm_message=None), "MessageEvent: 'llm_message' must be an object"),
        (_bad(e1__action=[1]), "ActionEvent: 'action' must be an object or null, got list"),
        (_bad(e0__source=["agent"]), "log.json: event #0 (id '"),
        (_bad(e0__source=["agent"]), "MessageEvent: unknown source ['agent'] (expected one of"),
        (_bad(e1__llm_response_id=nested(990)), "ActionEvent: 'llm_response_id' must be a string, got [[[[...]]]]"),
        (_bad(e2__id=nested(990)), "log.json: event #2: OpenHands SDK event: ObservationEvent: 'id' must be a non-empty string"),
        (
            _bad(e2__observation={"kind": "TerminalObservation", "content": [], "metadata": "0"}),
            "log.json: event #2 (id '",
        ),
        (
            _bad(e2__observation={"kind": "TerminalObservation", "content": [], "metadata": "0"}),
            "OpenHands SDK event: ObservationEvent: metadata: expected a JSON object, got str",
        ),
        (
            _bad(e1__action={"kind": "FileEditorAction", "command": "view", "path": "/a", "view_range": "1-2"}),
            "OpenHands SDK event: ActionEvent: view_range: ",
        ),
        (
            # No arguments text in the tool call: they are written from the action, too deep for orjson.
            _bad(e1__tool_call=None, e1__action={"kind": "LookAction", "x": nested(300)}),
            "OpenHands SDK event: ActionEvent: cannot be written as JSON: ",
        ),
    ],
)
def test_malformed_sdk_input_names_file_position_and_reason(records: list[Any], message: str) -> None:
    with pytest.raises(MalformedEventError, match=re.escape(message)):
        import_sdk_events(records, path="log.json")


def test_duplicate_uuid_is_malformed() -> None:
    first = message_event("a")
    again = dict(message_event("b"), id=first["id"])
    with pytest.raises(MalformedEventError, match=re.escape(f"event #1 (id {first['id']!r}): OpenHands SDK event: MessageEvent: id {first['id']!r} already used by event #0")):
        import_sdk_events([first, again])


def test_observation_whose_action_id_names_a_non_action_is_malformed() -> None:
    message = message_event("hi")
    act = action_event({"kind": "TerminalAction", "command": "ls"}, tool="terminal")
    obs = observation_event(act, {"kind": "TerminalObservation", "content": []})
    obs["action_id"] = message["id"]
    with pytest.raises(MalformedEventError, match=re.escape("names event #0, which is not an earlier ActionEvent")):
        import_sdk_events([message, act, obs])


def test_condensation_with_bad_forgotten_ids_is_malformed() -> None:
    with pytest.raises(MalformedEventError, match=re.escape("Condensation: 'forgotten_event_ids' must be a list of event ids")):
        import_sdk_events([condensation([1])])  # type: ignore[list-item]
    with pytest.raises(MalformedEventError, match=re.escape("'summary_offset' must be an integer >= 0 or null, got -1")):
        import_sdk_events([condensation([], summary="s", offset=-1)])


def test_malformed_sdk_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sdk.json"
    path.write_text(json.dumps([message_event("hi"), {"kind": "ActionEvent", "id": "x"}]))
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}: event #1 (id 'x'): OpenHands SDK event: ActionEvent: 'llm_response_id' must be a string, got None")):
        load_events(path)


@pytest.mark.parametrize("log", V1_LOGS)
def test_a_slice_of_a_real_sdk_log_starting_at_an_action_event_imports(log: Path | None, tmp_path: Path) -> None:
    records = read_records(require_real_log(log))
    start = next(i for i, r in enumerate(records) if r["kind"] == "ActionEvent")
    path = tmp_path / "slice.json"
    path.write_text(json.dumps(records[start:]))
    events = load_events(path)
    assert [e.original_id for e in events] == [r["id"] for r in records[start:]]
    assert isinstance(events[0], Action) and events[0].tool_call_metadata is not None


def test_a_log_is_sdk_when_most_of_its_events_are_not_only_its_first(tmp_path: Path) -> None:
    act = action_event({"kind": "TerminalAction", "command": "ls"}, tool="terminal")
    obs = observation_event(act, {"kind": "TerminalObservation", "content": []})
    path = tmp_path / "log.json"
    path.write_text(json.dumps([{"id": 0, "action": "null", "args": {}}, act, obs]))
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}: event #0 (id 0): OpenHands SDK event: a V0 event in an SDK log")):
        load_events(path)


def test_malformed_sdk_jsonl_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    records = [message_event("hi"), {"kind": "ActionEvent", "id": "x"}]
    path.write_text("\n" + json.dumps(records[0]) + "\n\n" + json.dumps(records[1]) + "\n")
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}:4 (id 'x'): OpenHands SDK event: ActionEvent: 'llm_response_id'")):
        load_events(path)
