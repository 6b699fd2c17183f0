"""The event models: kinds, messages, OpenHands' JSON shape for new events, condensation rules."""

from __future__ import annotations

import re

import orjson
import pytest
from hypothesis import given, settings
from pydantic import ValidationError

from openhands_memory.events import (
    AgentFinishAction,
    AgentStateChangedObservation,
    ChangeAgentStateAction,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    Event,
    EventSource,
    FileEditAction,
    IPythonRunCellObservation,
    MessageAction,
    NullAction,
    NullObservation,
    ToolCallMetadata,
    UnknownAction,
    agent_history,
    event_from_dict,
    event_from_json,
    event_to_dict,
    event_to_json,
)
from openhands_memory.events.actions import ACTION_CLASSES
from openhands_memory.events.observations import OBSERVATION_CLASSES
from openhands_memory.testing.strategies import events


def test_every_kind_maps_to_its_class_and_back() -> None:
    for kind, cls in ACTION_CLASSES.items():
        assert cls.model_fields["action"].default == kind
        assert cls.payload_key == "args" and "action" not in cls.payload_fields
    for kind, cls in OBSERVATION_CLASSES.items():
        assert cls.model_fields["observation"].default == kind
        assert "content" not in cls.payload_fields and "content" in cls.envelope_fields


def test_kind_string_is_on_the_event_as_in_openhands() -> None:
    run = CmdRunAction(command="ls")
    assert run.action == "run" and run.kind == "run"
    assert CmdOutputObservation(content="", command="ls").observation == "run"


def test_new_run_action_is_written_the_way_openhands_writes_it() -> None:
    run = CmdRunAction(command="ls -la", thought="look", timeout=30)
    run.id, run.timestamp, run.source = 7, "2025-01-01T00:00:00", EventSource.AGENT
    assert event_to_dict(run) == {
        "id": 7,
        "timestamp": "2025-01-01T00:00:00",
        "source": "agent",
        "message": "Running command: ls -la",
        "action": "run",
        "args": {
            "command": "ls -la",
            "is_input": False,
            "thought": "look",
            "blocking": False,
            "is_static": False,
            "cwd": None,
            "hidden": False,
            "confirmation_state": "confirmed",
            "security_risk": -1,
        },
        "timeout": 30,
    }
    assert list(event_to_dict(run)) == ["id", "timestamp", "source", "message", "action", "args", "timeout"]


def test_new_observation_has_content_extras_and_success() -> None:
    obs = CmdOutputObservation(content="out", command="ls", metadata={"exit_code": 0}, cause=7)
    data = event_to_dict(obs)
    assert data == {
        "message": "Command `ls` executed with exit code 0.",
        "cause": 7,
        "observation": "run",
        "content": "out",
        "extras": {"command": "ls", "metadata": {"exit_code": 0}, "hidden": False},
        "success": True,
    }
    assert obs.success is True and obs.exit_code == 0


def test_optional_fields_openhands_drops_when_none() -> None:
    finish = AgentFinishAction(final_thought="done")
    assert "task_completed" not in event_to_dict(finish)["args"]
    message = MessageAction(content="hi", security_risk=None)
    assert "security_risk" not in event_to_dict(message)["args"]


def test_fields_openhands_does_not_know_go_top_level_only_when_set() -> None:
    plain = MessageAction(content="hi")
    assert "hidden" not in event_to_dict(plain) and "original_id" not in event_to_dict(plain)
    hidden = MessageAction(content="hi", hidden=True, original_id="uuid-1")
    data = event_to_dict(hidden)
    assert data["hidden"] is True and data["original_id"] == "uuid-1"
    assert "hidden" not in data["args"]
    assert event_from_dict(data) == hidden


def test_loaded_event_keeps_its_recorded_message_and_success() -> None:
    data = {
        "id": 3,
        "source": "agent",
        "message": "something an old version wrote",
        "observation": "run",
        "content": "x",
        "extras": {"command": "ls", "metadata": {"exit_code": 1}},
        "success": True,
    }
    obs = event_from_dict(data)
    assert obs.message == "something an old version wrote"
    assert obs.success is True  # as recorded, though exit code 1 would say otherwise
    assert event_to_dict(obs) == data


def test_a_change_after_loading_is_written_back() -> None:
    data = {"id": 1, "source": "agent", "message": "m", "action": "run", "args": {"command": "ls"}}
    run = event_from_dict(data)
    run.thought = "now with a thought"
    run.cause = 0
    out = event_to_dict(run)
    assert out["args"] == {"command": "ls", "thought": "now with a thought"}
    assert out["cause"] == 0


def test_unknown_kind_keeps_its_fields_as_attributes() -> None:
    data = {"id": 5, "source": "agent", "message": "chat", "action": "chat", "args": {"content": "hi", "npc_name": "Chen"}}
    chat = event_from_dict(data)
    assert isinstance(chat, UnknownAction) and chat.action == "chat"
    assert chat.npc_name == "Chen"  # type: ignore[attr-defined]
    assert event_to_dict(chat) == data


def test_payload_key_that_clashes_with_a_top_level_field_is_kept_apart() -> None:
    data = {"id": 2, "source": "agent", "message": "m", "action": "run", "args": {"command": "ls", "timeout": 99}, "timeout": 5}
    run = event_from_dict(data)
    assert run.timeout == 5
    assert event_to_dict(run) == data


def test_equality_ignores_file_layout() -> None:
    run = CmdRunAction(command="ls")
    run.id = 4
    assert event_from_dict(event_to_dict(run)) == run
    assert CmdRunAction(command="ls") != CmdRunAction(command="pwd")


def test_tool_call_metadata_round_trips_and_shares_the_model_response() -> None:
    response = {"id": "resp_1", "choices": [{"message": {"tool_calls": [{"id": "call_1"}]}}]}
    run = CmdRunAction(
        command="ls",
        tool_call_metadata=ToolCallMetadata(function_name="execute_bash", tool_call_id="call_1", model_response=response),
    )
    data = event_to_dict(run)
    assert data["tool_call_metadata"] == {
        "function_name": "execute_bash",
        "tool_call_id": "call_1",
        "model_response": response,
        "total_calls_in_response": 1,
    }
    assert data["tool_call_metadata"]["model_response"] is response
    assert run.response_id == "resp_1"


def test_model_response_must_be_an_object() -> None:
    with pytest.raises(ValueError, match="expected a JSON object"):
        event_from_dict({"action": "run", "args": {"command": "ls"}, "tool_call_metadata": {"function_name": "f", "tool_call_id": "c", "model_response": "nope"}})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "give forgotten_event_ids, or both"),
        ({"forgotten_event_ids": [1], "forgotten_events_start_id": 1, "forgotten_events_end_id": 2}, "not both"),
        ({"forgotten_events_start_id": 1}, "give forgotten_event_ids, or both"),
        ({"forgotten_events_start_id": 5, "forgotten_events_end_id": 2}, "start_id 5 is after"),
        ({"forgotten_event_ids": [], "summary": "s"}, "summary and summary_offset together"),
        ({"forgotten_event_ids": [], "summary": "s", "summary_offset": -1}, "summary_offset must be >= 0"),
    ],
)
def test_invalid_condensations_are_refused(fields: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        CondensationAction(**fields)


def test_condensation_forgotten_from_either_form() -> None:
    assert CondensationAction(forgotten_event_ids=[3, 1]).forgotten == [3, 1]
    assert CondensationAction(forgotten_events_start_id=2, forgotten_events_end_id=4).forgotten == [2, 3, 4]
    assert CondensationAction(forgotten_event_ids=[], summary="s", summary_offset=2).message == "Summary: s"


_PERSISTING_ARGS = {
    "forgotten_event_ids": [1, 2],
    "forgotten_events_start_id": None,
    "forgotten_events_end_id": None,
    "summary": "S",
    "summary_offset": 1,
}


def test_a_new_persisting_condensation_writes_the_flag_at_the_top_level() -> None:
    action = CondensationAction(
        forgotten_event_ids=[1, 2], summary="S", summary_offset=1, summary_persists=True, condenser_metadata={"condenser": "x"}
    )
    data = event_to_dict(action)
    assert data == {
        "message": "Summary: S",
        "action": "condensation",
        "args": _PERSISTING_ARGS,
        "summary_persists": True,
        "condenser_metadata": {"condenser": "x"},
    }
    assert event_from_dict(data) == action
    assert "summary_persists" not in event_to_dict(CondensationAction(forgotten_event_ids=[1]))


@pytest.mark.parametrize("where", ["top", "args"])
def test_persisting_condensation_round_trips_exactly_in_both_shapes(where: str) -> None:
    data: dict = {"id": 7, "timestamp": "2025-01-01T00:00:00", "source": "agent", "message": "Summary: S", "action": "condensation"}
    if where == "top":
        data |= {"args": dict(_PERSISTING_ARGS), "summary_persists": True}
    else:  # the shape this library wrote before the flag moved to the top level
        data |= {"args": {**_PERSISTING_ARGS, "summary_persists": True}}
    action = event_from_dict(data)
    assert isinstance(action, CondensationAction) and action.summary_persists is True
    assert event_to_dict(action) == data
    assert list(event_to_dict(action)["args"]) == list(data["args"])
    assert event_from_json(orjson.dumps(data)) == action


def test_persisting_flag_read_from_args_stays_there_when_changed() -> None:
    action = event_from_dict({"id": 3, "action": "condensation", "args": {**_PERSISTING_ARGS, "summary_persists": True}})
    action.summary_persists = False
    data = event_to_dict(action)
    assert data["args"]["summary_persists"] is False and "summary_persists" not in data


def test_persisting_flag_in_both_places_reads_the_top_level_and_keeps_the_args_copy() -> None:
    data = {"id": 3, "action": "condensation", "args": {**_PERSISTING_ARGS, "summary_persists": False}, "summary_persists": True}
    action = event_from_dict(data)
    assert action.summary_persists is True
    assert event_to_dict(action) == data


def test_a_v0_condensation_has_no_flag_and_writes_none() -> None:
    data = {"id": 3, "source": "agent", "message": "m", "action": "condensation", "args": dict(_PERSISTING_ARGS)}
    action = event_from_dict(data)
    assert action.summary_persists is None
    assert event_to_dict(action) == data


def test_agent_history_leaves_out_what_openhands_leaves_out() -> None:
    kept = [MessageAction(content="hi"), CmdRunAction(command="ls"), CondensationAction(forgotten_event_ids=[])]
    dropped = [
        NullAction(),
        NullObservation(content=""),
        ChangeAgentStateAction(agent_state="running"),
        AgentStateChangedObservation(content="", agent_state="running"),
        CmdRunAction(command="secret", hidden=True),
        FileEditAction(path="x", hidden=True),
    ]
    stream = [dropped[0], kept[0], dropped[1], dropped[2], kept[1], dropped[3], dropped[4], kept[2], dropped[5]]
    assert agent_history(stream) == kept


@settings(deadline=None)
@given(events())
def test_new_event_round_trips_through_its_dict(event: Event) -> None:
    data = event_to_dict(event)
    again = event_from_dict(data)
    assert again == event
    assert event_to_dict(again) == data


# -- the memory tools' kinds (not OpenHands': this library's context_reload / search_history) --------


def test_memory_tool_events_are_written_in_openhands_shape_and_read_back_exactly() -> None:
    from openhands_memory.events import (
        ContextReloadAction,
        ContextReloadObservation,
        SearchHistoryAction,
        SearchHistoryObservation,
    )

    metadata = ToolCallMetadata(function_name="context_reload", tool_call_id="call_9", total_calls_in_response=1)
    reload = ContextReloadAction(event_id=12, id=40, timestamp="2025-01-01T00:00:00", source=EventSource.AGENT, tool_call_metadata=metadata)
    reloaded = ContextReloadObservation(content="[event 12: run observation, forgotten; ...]\nout", reloaded_event_id=12, id=41, cause=40, source=EventSource.ENVIRONMENT, tool_call_metadata=metadata)
    search = SearchHistoryAction(query="pytest failed", id=42, source=EventSource.AGENT)
    found = SearchHistoryObservation(content="No event matches \"x\".", id=43, cause=42, source=EventSource.ENVIRONMENT)
    metadata_json = {"function_name": "context_reload", "tool_call_id": "call_9", "model_response": None, "total_calls_in_response": 1}
    expected = [
        {"id": 40, "timestamp": "2025-01-01T00:00:00", "source": "agent", "message": "Reloading event 12", "action": "context_reload", "tool_call_metadata": metadata_json, "args": {"event_id": 12}},
        {"id": 41, "source": "environment", "message": reloaded.content, "cause": 40, "observation": "context_reload", "tool_call_metadata": metadata_json, "content": reloaded.content, "extras": {"reloaded_event_id": 12}},
        {"id": 42, "source": "agent", "message": "Searching the history for: pytest failed", "action": "search_history", "args": {"query": "pytest failed", "limit": 5}},
        {"id": 43, "source": "environment", "message": "No event matches \"x\".", "cause": 42, "observation": "search_history", "content": "No event matches \"x\".", "extras": {}},
    ]  # fmt: skip
    events = [reload, reloaded, search, found]
    assert [event_to_dict(e) for e in events] == expected
    assert [list(event_to_dict(e)) for e in events] == [list(d) for d in expected]  # key order as OpenHands writes it
    loaded = [event_from_dict(d) for d in expected]
    assert loaded == events and [type(e) for e in loaded] == [type(e) for e in events]
    assert [event_to_dict(e) for e in loaded] == expected
    assert ACTION_CLASSES["context_reload"] is ContextReloadAction and ACTION_CLASSES["search_history"] is SearchHistoryAction
    assert OBSERVATION_CLASSES["context_reload"] is ContextReloadObservation
    assert OBSERVATION_CLASSES["search_history"] is SearchHistoryObservation


# OpenHands 0.62's events are dataclasses that never check field types: what it loads, we load too.


def test_edit_action_with_null_command_loads_and_writes_back_as_openhands_does() -> None:
    data = {
        "id": 4,
        "timestamp": "2025-01-01T00:00:00",
        "source": "agent",
        "message": "Editing /repo/a.py",
        "action": "edit",
        "args": {"path": "/repo/a.py", "command": None, "file_text": None, "old_str": None, "new_str": None,
                 "insert_line": None, "content": "x = 1\n", "start": 1, "end": -1, "thought": "",
                 "security_risk": -1, "impl_source": "llm_based_edit"},
    }  # fmt: skip
    edit = event_from_dict(data)
    assert isinstance(edit, FileEditAction) and edit.command is None
    assert event_to_dict(edit) == data
    assert event_from_json(event_to_json(edit)) == edit


def test_ipython_observation_with_none_and_empty_image_urls_loads_and_writes_back() -> None:
    data = {
        "id": 5,
        "source": "environment",
        "message": "Code executed in IPython cell.",
        "cause": 4,
        "observation": "run_ipython",
        "content": "out",
        "extras": {"code": "plot()", "image_urls": [None, "", "data:image/png;base64,AAA"]},
    }
    obs = event_from_dict(data)
    assert isinstance(obs, IPythonRunCellObservation)
    assert obs.image_urls == [None, "", "data:image/png;base64,AAA"]
    assert event_to_dict(obs) == data
    assert event_from_json(event_to_json(obs)) == obs


def test_condenser_metadata_in_args_is_not_ours_and_is_kept_apart() -> None:
    data = {"id": 3, "action": "condensation", "args": {**_PERSISTING_ARGS, "condenser_metadata": "from elsewhere"}}
    action = event_from_dict(data)
    assert action.condenser_metadata is None
    assert event_to_dict(action) == data
