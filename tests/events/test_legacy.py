"""The old flattened OpenHands event form: upcast on read to V0 events."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import real_log_params, require_real_log

from openhands_memory.events import (
    Action,
    AgentFinishAction,
    CmdOutputObservation,
    CmdRunAction,
    IPythonRunCellAction,
    IPythonRunCellObservation,
    MessageAction,
    Observation,
    dump_events,
    event_from_dict,
    event_to_dict,
    load_events,
    validate_log,
)
from openhands_memory.errors import MalformedEventError
from openhands_memory.events._legacy import is_legacy_flat, upcast_legacy_flat

LEGACY_LOGS = real_log_params("v0legacy_")


def read_records(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_bytes())


@pytest.mark.parametrize("log", LEGACY_LOGS)
def test_every_legacy_event_loads_with_ids_in_file_order(log: Path | None) -> None:
    path = require_real_log(log)
    records = read_records(path)
    assert all(is_legacy_flat(r) for r in records)
    events = load_events(path)
    assert [e.id for e in events] == list(range(len(records)))
    assert [e.kind for e in events] == [r.get("action") or r.get("observation") for r in records]
    assert all(e.timestamp is None for e in events)


@pytest.mark.parametrize("log", LEGACY_LOGS)
def test_legacy_events_get_the_source_and_cause_openhands_gave_them(log: Path | None) -> None:
    events = load_events(require_real_log(log))
    task, *rest = events
    assert isinstance(task, MessageAction) and task.source == "user"
    assert all(e.source == "agent" for e in rest)  # the agent's actions, and the runtime's answers to them
    for before, after in zip(events, events[1:]):
        if isinstance(after, Observation):
            assert isinstance(before, Action) and before.runnable and after.cause == before.id


@pytest.mark.parametrize("log", LEGACY_LOGS)
def test_a_legacy_log_replays_one_step_per_agent_action_and_renders_its_roles(log: Path | None) -> None:
    from openhands_memory.conversation_memory import ConversationMemory
    from openhands_memory.replay import replay_events

    events = load_events(require_real_log(log))
    report = replay_events(events, tokenizer="approximate")
    agent_actions = [e for e in events if isinstance(e, Action) and e.source == "agent"]
    assert len(report.steps) == len(agent_actions) > 0
    messages = ConversationMemory(system_prompt="s").process_events(events)
    assert [m.role for m in messages[:3]] == ["system", "user", "assistant"]
    assert not any("User executed the command" in c.text for m in messages for c in m.content)


def test_a_legacy_message_is_the_agents_when_it_waits_for_a_reply() -> None:
    asked = event_from_dict({"action": "message", "content": "Which file?", "wait_for_response": True})
    told = event_from_dict({"action": "message", "content": "Go on.", "wait_for_response": False})
    written = event_from_dict({"action": "message", "source": "user", "content": "x", "wait_for_response": True})
    assert (asked.source, told.source, written.source) == ("agent", "user", "user")  # a recorded source wins


def test_a_legacy_observation_answers_the_runnable_action_before_it(tmp_path: Path) -> None:
    path = tmp_path / "legacy.json"
    records = [
        {"action": "message", "content": "task"},
        {"action": "run", "command": "ls"},
        {"observation": "run", "content": "a", "command": "ls", "exit_code": 0},
        {"observation": "run", "content": "late", "command": "ls", "exit_code": 0},
        {"action": "finish", "outputs": {}},
    ]
    path.write_text(json.dumps(records))
    events = load_events(path)
    assert [e.cause for e in events] == [None, None, 1, None, None]  # an action is answered once


@pytest.mark.parametrize("log", LEGACY_LOGS)
def test_legacy_fields_get_their_v0_names(log: Path | None) -> None:
    path = require_real_log(log)
    records = read_records(path)
    events = load_events(path)
    for record, event in zip(records, events, strict=True):
        args = event_to_dict(event).get("args", {})
        assert "is_confirmed" not in args and "images_urls" not in args
        if "is_confirmed" in record:
            assert event.confirmation_state == record["is_confirmed"]
            assert args["confirmation_state"] == record["is_confirmed"]
        if "images_urls" in record:
            assert isinstance(event, MessageAction) and event.image_urls == record["images_urls"]
        if record.get("action_risk", ...) is None:
            assert "action_risk" not in args and "security_risk" not in args  # an unset risk is left out
    first = events[0]
    assert isinstance(first, MessageAction) and first.content.startswith("Please fix the following issue")


@pytest.mark.parametrize("log", LEGACY_LOGS)
def test_legacy_run_observation_keeps_its_exit_code(log: Path | None) -> None:
    path = require_real_log(log)
    records = read_records(path)
    events = load_events(path)
    runs = [(r, e) for r, e in zip(records, events) if r.get("observation") == "run"]
    assert runs
    for record, event in runs:
        assert isinstance(event, CmdOutputObservation)
        assert event.exit_code == record["exit_code"]
        assert event.success == (record["exit_code"] == 0)
        assert event.content == record["content"] and event.command == record["command"]
        assert event_to_dict(event)["extras"]["exit_code"] == record["exit_code"]
    kinds = {type(e) for e in events}
    assert {MessageAction, CmdRunAction, CmdOutputObservation, IPythonRunCellAction, IPythonRunCellObservation, AgentFinishAction} <= kinds


@pytest.mark.parametrize("log", LEGACY_LOGS)
def test_upcast_event_dumps_as_v0_and_loads_back_equal(log: Path | None, tmp_path: Path) -> None:
    path = require_real_log(log)
    events = load_events(path)
    for event in events:
        data = event_to_dict(event)
        assert not is_legacy_flat(data)  # it has `args` / `extras` now
        assert ("args" in data) == ("action" in data) and ("extras" in data) == ("observation" in data)
        assert data["id"] == event.id
        assert event_from_dict(data) == event
    out = tmp_path / "upcast.jsonl"
    dump_events(events, out)
    assert load_events(out) == events
    # Written once in V0 form, the log now round-trips exactly.
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [event_to_dict(e) for e in load_events(out)] == records


def test_upcast_renames_and_keeps_unknown_fields() -> None:
    data = {"action": "run", "command": "ls", "thought": "t", "keep_prompt": True, "is_confirmed": "rejected", "action_risk": 2}
    assert upcast_legacy_flat(data) == {
        "source": "agent",
        "action": "run",
        "args": {"command": "ls", "thought": "t", "keep_prompt": True, "confirmation_state": "rejected", "security_risk": 2},
    }
    event = event_from_dict(data)
    assert isinstance(event, CmdRunAction)
    assert (event.confirmation_state, event.security_risk) == ("rejected", 2)
    assert event.__pydantic_extra__ == {"keep_prompt": True}


def test_upcast_observation_moves_fields_into_extras() -> None:
    data = {"observation": "run", "content": "out", "command": "ls", "exit_code": 3, "command_id": -1}
    assert upcast_legacy_flat(data) == {
        "source": "agent",
        "observation": "run",
        "content": "out",
        "extras": {"command": "ls", "exit_code": 3, "command_id": -1},
    }
    event = event_from_dict(data)
    assert isinstance(event, CmdOutputObservation) and event.exit_code == 3 and event.success is False


def test_top_level_keys_stay_at_the_top() -> None:
    data = {"id": 4, "timestamp": "2024-01-01T00:00:00", "source": "agent", "message": "m", "action": "message", "content": "hi", "images_urls": ["u"]}
    assert upcast_legacy_flat(data) == {
        "id": 4,
        "timestamp": "2024-01-01T00:00:00",
        "source": "agent",
        "message": "m",
        "action": "message",
        "args": {"content": "hi", "image_urls": ["u"]},
    }


def test_v0_events_are_not_legacy() -> None:
    assert not is_legacy_flat({"action": "run", "args": {"command": "ls"}})
    assert not is_legacy_flat({"observation": "run", "content": "", "extras": {}})
    assert not is_legacy_flat({"kind": "MessageEvent"})
    assert is_legacy_flat({"action": "finish", "outputs": {}})


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_an_unnumbered_event_among_numbered_ones_is_an_error_for_every_reader(tmp_path: Path, suffix: str) -> None:
    # Numbering it after the largest id (as before) gave a log EventStream.open refuses: no id can be guessed.
    path = tmp_path / f"mixed{suffix}"
    records = [{"id": 5, "action": "message", "args": {"content": "a"}}, {"action": "message", "content": "b"}]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records) if suffix == ".jsonl" else orjson.dumps(records))
    place = f"{path}:2" if suffix == ".jsonl" else f"{path}: event #1"
    with pytest.raises(MalformedEventError, match=re.escape(f"{place}: event without an id (ids name events")):
        load_events(path)
    assert [f.what for f in validate_log(path).errors] == ["event without an id"]
