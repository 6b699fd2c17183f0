"""Events to and from OpenHands' JSON: the exact round trip on real logs, every file layout, and errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import real_log_params, require_real_log, require_real_logs_dir
from pydantic import ValidationError

from openhands_memory.errors import MalformedEventError
from openhands_memory.events._wire import wire_of
from openhands_memory.events import (
    AgentStateChangedObservation,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    Event,
    MessageAction,
    ToolCallMetadata,
    UnknownAction,
    UnknownObservation,
    dump_events,
    dump_session_folder,
    event_from_dict,
    event_from_json,
    event_to_dict,
    event_to_json,
    load_events,
    load_session_folder,
)
from openhands_memory.events.actions import ACTION_CLASSES
from openhands_memory.events.observations import OBSERVATION_CLASSES

V0_LOGS = real_log_params("v0_")
SESSION_LOG = "v0_oh-session_63b43159_events0-13.json"


def nested(depth: int) -> list[Any]:
    """A list nested `depth` deep: deeper than Python's recursion limit when `depth` is in the thousands."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def read_records(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_bytes())


# -- the exact round trip on every real V0 log -------------------------------------------------------


@pytest.mark.parametrize("log", V0_LOGS)
def test_every_event_of_a_real_log_round_trips_exactly(log: Path | None) -> None:
    path = require_real_log(log)
    for index, record in enumerate(read_records(path)):
        event = event_from_dict(record, index=index)
        assert event_to_dict(event) == record, f"event #{index} (id {record.get('id')})"
        # Key order is kept too (at the top level and in args / extras).
        assert list(event_to_dict(event)) == list(record)


@pytest.mark.parametrize("log", V0_LOGS)
def test_unknown_kinds_load_as_unknown_events(log: Path | None) -> None:
    path = require_real_log(log)
    for record in read_records(path):
        event = event_from_dict(record)
        if "action" in record:
            assert isinstance(event, UnknownAction) == (record["action"] not in ACTION_CLASSES)
        else:
            assert isinstance(event, UnknownObservation) == (record["observation"] not in OBSERVATION_CLASSES)
        assert event.kind == (record.get("action") or record.get("observation"))


def test_fork_chat_action_is_kept_as_unknown(real_logs_dir: Path) -> None:
    records = read_records(real_logs_dir / "v0_oas_claude-sonnet_traj_safety-data-science.json")
    chats = [r for r in records if r.get("action") == "chat"]
    assert chats
    for record in chats:
        event = event_from_dict(record)
        assert isinstance(event, UnknownAction) and event.action == "chat"
        assert event_to_dict(event) == record


@pytest.mark.parametrize("log", V0_LOGS)
@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_real_log_survives_dump_and_load_through_json_text(log: Path | None, suffix: str, tmp_path: Path) -> None:
    path = require_real_log(log)
    records = read_records(path)
    events = load_events(path)
    out = tmp_path / f"log{suffix}"
    dump_events(events, out)
    again = load_events(out)
    assert [event_to_dict(e) for e in again] == records
    assert again == events
    if suffix == ".jsonl":
        assert out.read_bytes().count(b"\n") == len(records)


def test_event_to_json_and_back() -> None:
    event = CmdRunAction(command="ls -la", thought="look", id=4, timestamp="2025-01-01T00:00:00", source="agent")
    data = event_to_json(event)
    assert b"\n" not in data
    assert event_from_json(data) == event
    assert event_from_json(data.decode()) == event


# -- layouts load_events reads ------------------------------------------------------------------------


@pytest.fixture
def session_records(real_logs_dir: Path) -> list[dict[str, Any]]:
    return read_records(real_logs_dir / SESSION_LOG)


def test_load_json_list(session_records: list[dict[str, Any]], tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text(json.dumps(session_records))
    assert [event_to_dict(e) for e in load_events(path)] == session_records


@pytest.mark.parametrize("key", ["trajectory", "history"])
def test_load_wrapped_list(key: str, session_records: list[dict[str, Any]], tmp_path: Path) -> None:
    path = tmp_path / "wrapped.json"
    path.write_text(json.dumps({"instance_id": "x", key: session_records, "metrics": {}}, indent=2))
    assert [event_to_dict(e) for e in load_events(path)] == session_records


def test_load_jsonl_skips_blank_lines(session_records: list[dict[str, Any]], tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in session_records) + "\n\n")
    assert [event_to_dict(e) for e in load_events(path)] == session_records


def test_load_single_event_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"id": 0, "action": "message", "args": {"content": "hi"}}))
    (event,) = load_events(path)
    assert isinstance(event, MessageAction) and event.content == "hi"


def test_load_empty_file_is_an_empty_log(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert load_events(path) == []


def test_load_session_folder_split_from_the_real_session(session_records: list[dict[str, Any]], tmp_path: Path) -> None:
    events_dir = tmp_path / "sessions" / "63b43159" / "events"
    events_dir.mkdir(parents=True)
    for record in session_records:
        (events_dir / f"{record['id']}.json").write_text(json.dumps(record))
    (events_dir / "notes.json").write_text("{}")  # not an event file: ignored
    expected = [event_to_dict(e) for e in load_events(tmp_path / "sessions" / "63b43159" / "events")]
    assert expected == session_records
    # The session folder itself, and its events/ folder, both work; ids order files numerically.
    assert [event_to_dict(e) for e in load_events(tmp_path / "sessions" / "63b43159")] == session_records
    assert [e.id for e in load_session_folder(events_dir)] == list(range(14))


def test_dump_session_folder_round_trips(session_records: list[dict[str, Any]], tmp_path: Path) -> None:
    events = [event_from_dict(r) for r in session_records]
    folder = dump_session_folder(events, tmp_path / "session")
    assert folder == tmp_path / "session" / "events"
    assert sorted(int(p.stem) for p in folder.glob("*.json")) == [r["id"] for r in session_records]
    assert load_events(tmp_path / "session") == events
    assert [event_to_dict(e) for e in load_events(folder)] == session_records


def test_dump_json_is_a_readable_list(tmp_path: Path) -> None:
    events = [MessageAction(content="hi", id=0, source="user"), CmdRunAction(command="ls", id=1, source="agent")]
    path = tmp_path / "out.json"
    dump_events(events, path)
    assert [r["id"] for r in json.loads(path.read_text())] == [0, 1]
    dump_events(events, tmp_path / "forced.txt", fmt="jsonl")
    assert len((tmp_path / "forced.txt").read_text().splitlines()) == 2


# -- errors -------------------------------------------------------------------------------------------


def test_malformed_jsonl_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"id": 0, "action": "null", "args": {}}\n\n{"id": 1, "action": "null",\n')
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}:3: invalid JSON: ")) as info:
        load_events(path)
    assert (info.value.path, info.value.line) == (path, 3)


def test_bad_event_in_jsonl_names_line_and_id(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"id": 0, "action": "null", "args": {}}\n{"id": 1, "action": "run", "args": {"command": 5}}\n')
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}:2 (id 1): invalid action 'run': command: Input should be a valid string")):
        load_events(path)


def test_bad_event_in_json_list_names_position_and_id(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps([{"id": 0, "action": "null", "args": {}}, {"id": 7, "action": "run", "args": {"command": 5}}]))
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}: event #1 (id 7): invalid action 'run': command: Input should be a valid string")) as info:
        load_events(path)
    assert (info.value.index, info.value.event_id) == (1, 7)


def test_non_object_in_json_list_names_position(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"trajectory": [{"id": 0, "action": "null", "args": {}}, 3]}))
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}: event #1: expected a JSON object, got int")):
        load_events(path)


def test_broken_json_list_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text('[\n{"id": 0, "action": "null", "args": {}},\n')
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}:3: invalid JSON: ")):
        load_events(path)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b'{"instance_id": "x", "metrics": {}}',
            "not a log of any format read here (OpenHands events, Claude Code, Codex, SWE-agent, mini-swe-agent): a JSON object with keys "
            "['instance_id', 'metrics']; an OpenHands log is a list of events, an object with 'trajectory' or 'history', or JSONL of events",
        ),
        (b'{"trajectory": 5}', "a JSON object with keys ['trajectory']; an OpenHands log is a list of events, an object with 'trajectory' or 'history'"),
        (b'"hello"', ":1: not a JSON list, a JSON object or JSONL of events"),
    ],
)
def test_unknown_top_level_shape(body: bytes, message: str, tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_bytes(body)
    with pytest.raises(MalformedEventError, match=re.escape(message)):
        load_events(path)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_events(tmp_path / "nope.json")


def test_folder_without_events_is_malformed(tmp_path: Path) -> None:
    with pytest.raises(MalformedEventError, match=re.escape("no events/<id>.json files in this folder")):
        load_events(tmp_path)


def test_bad_file_in_session_folder_names_it(tmp_path: Path) -> None:
    events_dir = tmp_path / "events"
    events_dir.mkdir()
    (events_dir / "0.json").write_text('{"id": 0, "action": "null", "args": {}}')
    (events_dir / "1.json").write_text('{"id": 1, "action": "run", "args": {}}')
    with pytest.raises(MalformedEventError, match=re.escape(f"{events_dir / '1.json'} (id 1): invalid action 'run': command: Field required")):
        load_events(tmp_path)


def test_value_nested_just_within_orjsons_limit_is_malformed_not_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    # orjson reads up to 1024 levels; printing 1000 of them in an error message would overflow Python's stack.
    path.write_bytes(b'[{"id": 0, "action": "null", "args": {}, "source": ' + b"[" * 1000 + b"]" * 1000 + b"}]")
    with pytest.raises(MalformedEventError, match=re.escape(f"{path}: event #0 (id 0): invalid action 'null': source: ")):
        load_events(path)


def _session_folder(tmp_path: Path, files: dict[str, Any]) -> Path:
    events_dir = tmp_path / "events"
    events_dir.mkdir()
    for name, record in files.items():
        (events_dir / name).write_text(json.dumps(record))
    return events_dir


def test_session_folder_leaves_out_files_not_named_by_an_ascii_id_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # '²'.isdigit() is true, but int('²') fails: only ASCII digits name an event.
    null = {"action": "null", "args": {}}
    events_dir = _session_folder(tmp_path, {"0.json": dict(null, id=0), "1.json": dict(null, id=1), "².json": null, "notes.json": {}})
    with caplog.at_level("WARNING", logger="openhands_memory.events.serialization"):
        events = load_events(tmp_path)
    assert [e.id for e in events] == [0, 1]
    assert f"{events_dir}: 2 file(s) not named <id>.json left out: notes.json, ².json" in caplog.messages


def test_session_folder_with_two_files_for_one_id_is_malformed(tmp_path: Path) -> None:
    events_dir = _session_folder(tmp_path, {"7.json": {"id": 7, "action": "null", "args": {}}, "0007.json": {"id": 7, "action": "null", "args": {}}})
    with pytest.raises(MalformedEventError, match=re.escape(f"{events_dir}: 0007.json and 7.json both name event 7")):
        load_session_folder(tmp_path)


def test_session_folder_file_holding_another_id_is_malformed(tmp_path: Path) -> None:
    events_dir = _session_folder(tmp_path, {"3.json": {"id": 4, "action": "null", "args": {}}})
    with pytest.raises(MalformedEventError, match=re.escape(f"{events_dir / '3.json'}: holds event id 4, not the 3 its name says")):
        load_session_folder(tmp_path)


def test_session_folder_event_without_id_takes_the_id_its_file_is_named_by(tmp_path: Path) -> None:
    _session_folder(tmp_path, {"5.json": {"action": "run", "command": "ls"}})  # the old flattened form
    [event] = load_session_folder(tmp_path)
    assert isinstance(event, CmdRunAction) and event.id == 5


def test_dump_session_folder_names_the_event_json_cannot_hold(tmp_path: Path) -> None:
    events = [MessageAction(content="a", id=0), UnknownAction(action="x", size=10**40, id=1)]
    with pytest.raises(MalformedEventError, match=re.escape("event #1 (id 1): cannot be written as JSON: Integer exceeds 64-bit range")):
        dump_session_folder(events, tmp_path / "session")
    assert not (tmp_path / "session").exists()


def test_sdk_event_given_to_event_from_dict_points_to_load_events() -> None:
    with pytest.raises(
        MalformedEventError,
        match=re.escape(
            "id 'abc': an OpenHands SDK (V1) event of kind 'MessageEvent': a log is all V0 events or all SDK events, "
            "and load_events() imports a whole SDK log"
        ),
    ):
        event_from_dict({"kind": "MessageEvent", "id": "abc", "llm_message": {}})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (5, "expected a JSON object, got int"),
        ([], "expected a JSON object, got list"),
        ({"id": 3}, "id 3: neither 'action' nor 'observation' is set"),
        ({"id": 3, "action": 5, "args": {}}, "id 3: 'action' must be a string, got 5"),
        ({"id": 3, "action": "run", "args": []}, "id 3: 'args' must be an object, got list"),
        ({"id": 3, "observation": "run", "content": "", "extras": "x"}, "id 3: 'extras' must be an object, got str"),
        ({"id": 3, "action": ["run"], "args": {}}, "id 3: 'action' must be a string, got ['run']"),
        ({"id": 3, "action": {"kind": "x"}, "args": {}}, "id 3: 'action' must be a string, got {'kind': 'x'}"),
        ({"id": 3, "observation": [], "content": "", "extras": {}}, "id 3: 'observation' must be a string, got []"),
        ({"id": 3, "action": [[]]}, "id 3: 'action' must be a string, got [[]]"),  # the old flattened form
        (
            {"id": 3, "action": "null", "args": {}, "source": nested(5000)},
            "id 3: invalid action 'null': source: expected one of 'agent', 'user', 'environment' or null, got list",
        ),
        ({"id": nested(5000), "action": 7}, "'action' must be a string, got 7"),
    ],
)
def test_event_from_dict_rejects_non_events(value: Any, message: str) -> None:
    with pytest.raises(MalformedEventError, match=re.escape(message)):
        event_from_dict(value)


def test_event_from_dict_names_position_when_given() -> None:
    with pytest.raises(MalformedEventError, match=re.escape("event #4 (id 9): neither 'action' nor 'observation' is set")):
        event_from_dict({"id": 9}, index=4)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"forgotten_event_ids": [1], "forgotten_events_start_id": 1, "forgotten_events_end_id": 2}, "give forgotten_event_ids or a start/end id range, not both"),
        ({}, "give forgotten_event_ids, or both forgotten_events_start_id and forgotten_events_end_id"),
        ({"forgotten_events_start_id": 1}, "give forgotten_event_ids, or both forgotten_events_start_id and forgotten_events_end_id"),
        ({"forgotten_event_ids": [1], "summary": "s"}, "give summary and summary_offset together, or neither"),
        ({"forgotten_event_ids": [1], "summary_offset": 2}, "give summary and summary_offset together, or neither"),
        ({"forgotten_events_start_id": 5, "forgotten_events_end_id": 2}, "forgotten_events_start_id 5 is after forgotten_events_end_id 2"),
        ({"forgotten_event_ids": [], "summary": "s", "summary_offset": -1}, "summary_offset must be >= 0, got -1"),
    ],
)
def test_inconsistent_condensation_is_rejected(args: dict[str, Any], message: str) -> None:
    with pytest.raises(MalformedEventError, match=re.escape("id 1: invalid action 'condensation': ") + ".*" + re.escape(message)):
        event_from_dict({"id": 1, "action": "condensation", "args": args})
    with pytest.raises(ValidationError, match=re.escape(message)):
        CondensationAction(**args)


def test_condensation_forms_give_the_same_forgotten_ids() -> None:
    as_range = event_from_dict({"id": 9, "action": "condensation", "args": {"forgotten_events_start_id": 2, "forgotten_events_end_id": 4}})
    as_list = event_from_dict({"id": 9, "action": "condensation", "args": {"forgotten_event_ids": [2, 3, 4]}})
    assert isinstance(as_range, CondensationAction) and isinstance(as_list, CondensationAction)
    assert as_range.forgotten == as_list.forgotten == [2, 3, 4]


class _NotJson:
    pass


def test_failed_dump_writes_nothing_and_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    good = [MessageAction(content="kept", id=0)]
    dump_events(good, path)
    before = path.read_bytes()
    bad = [MessageAction(content="a", id=0), MessageAction(content="b", id=1, weird=_NotJson())]
    for target in (path, tmp_path / "new.json"):
        with pytest.raises(MalformedEventError, match=re.escape("id 1: cannot be written as JSON")):
            dump_events(bad, target)
    with pytest.raises(ValueError, match=re.escape("unknown format 'yaml': use 'json' or 'jsonl'")):
        dump_events(good, path, fmt="yaml")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.jsonl"]  # no new file, no temp file left


def test_failed_session_dump_writes_nothing(tmp_path: Path) -> None:
    events = [MessageAction(content="a", id=0), MessageAction(content="no id")]
    with pytest.raises(MalformedEventError, match=re.escape("event #1: an event in a session folder needs an id")):
        dump_session_folder(events, tmp_path / "session")
    assert not (tmp_path / "session").exists()


# -- equality ignores the file layout ---------------------------------------------------------------


def test_hand_built_event_equals_itself_loaded_from_its_dump(tmp_path: Path) -> None:
    metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id="call_1", model_response={"id": "resp_1", "choices": []})
    events: list[Event] = [
        MessageAction(content="fix it", id=0, timestamp="2025-01-01T00:00:00", source="user"),
        CmdRunAction(command="pytest", thought="run", id=1, source="agent", tool_call_metadata=metadata, timeout=30),
        CmdOutputObservation(content="ok", command="pytest", metadata={"exit_code": 0}, id=2, cause=1, source="environment", tool_call_metadata=metadata),
        AgentStateChangedObservation(agent_state="running", id=3),
        CondensationAction(forgotten_events_start_id=1, forgotten_events_end_id=2, summary="ran tests", summary_offset=1, id=4),
        UnknownAction(action="chat", id=5, content="hello", to="bob"),
    ]
    for suffix in (".json", ".jsonl"):
        path = tmp_path / f"log{suffix}"
        dump_events(events, path)
        loaded = load_events(path)
        assert loaded == events
        # The loaded events remember their layout; equality does not look at it.
        assert all(wire_of(e) is not None for e in loaded) and all(wire_of(e) is None for e in events)
    assert [event_from_dict(event_to_dict(e)) for e in events] == events


def test_equality_is_by_value_and_kind() -> None:
    a = MessageAction(content="x", id=1)
    assert a == MessageAction(content="x", id=1)
    assert a != MessageAction(content="y", id=1)
    assert a != UnknownAction(action="message", content="x", id=1)
    loaded = event_from_dict(orjson.loads(event_to_json(a)))
    assert loaded == a and a == loaded


def test_no_security_risk_is_left_out_and_reads_back_unknown_as_in_openhands() -> None:
    # OpenHands' format cannot tell "no risk given" from "unknown": both load as -1.
    event = MessageAction(content="x", id=0, security_risk=None)
    data = event_to_dict(event)
    assert "security_risk" not in data["args"]
    assert event_from_dict(data).security_risk == -1


SDK_CONVERSATION_LOG = "v1_oh-benchmarks_conv-0535c419_343ev.json"


def _sdk_conversation_folder(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    """`records` persisted as the SDK persists a conversation: `events/event-<index>-<uuid>.json`, `base_state.json`."""
    folder = tmp_path / "conversations" / "0535c419"
    (folder / "events").mkdir(parents=True)
    (folder / "base_state.json").write_text('{"agent": {}}')  # not an event: never read
    (folder / "events" / ".eventlog.lock").write_text("")
    for index, record in enumerate(records):
        (folder / "events" / f"event-{index:05d}-{record['id']}.json").write_text(json.dumps(record))
    return folder


def test_sdk_conversation_folder_loads_as_the_sdk_log_it_holds(tmp_path: Path) -> None:
    log = require_real_logs_dir() / SDK_CONVERSATION_LOG
    records = json.loads(log.read_text())
    folder = _sdk_conversation_folder(tmp_path, records)
    expected = [event_to_dict(e) for e in load_events(log)]
    # The conversation folder, and its events/ folder; file names are read in index order, not by listing order.
    assert [event_to_dict(e) for e in load_events(folder)] == expected
    assert [event_to_dict(e) for e in load_session_folder(folder / "events")] == expected
    assert len(expected) == 343 and expected[0]["action"] == "system"


def test_sdk_conversation_folder_orders_by_index_beyond_five_digits(tmp_path: Path) -> None:
    records = json.loads((require_real_logs_dir() / SDK_CONVERSATION_LOG).read_text())[:3]
    folder = tmp_path / "events"
    folder.mkdir()
    # The SDK pads to five digits and goes on past them: 100000 sorts after 99999 by number, not by name.
    for index, record in zip((99999, 100000, 100001), records):
        (folder / f"event-{index:05d}-{record['id']}.json").write_text(json.dumps(record))
    assert [e.original_id for e in load_events(folder)] == [r["id"] for r in records]


def test_sdk_conversation_folder_with_two_files_for_one_index_is_malformed(tmp_path: Path) -> None:
    records = json.loads((require_real_logs_dir() / SDK_CONVERSATION_LOG).read_text())[:2]
    folder = _sdk_conversation_folder(tmp_path, records)
    (folder / "events" / f"event-00001-{records[0]['id']}.json").write_text(json.dumps(records[0]))
    with pytest.raises(MalformedEventError, match=re.escape(f"{folder / 'events'}: ") + r"event-00001-\S+ and event-00001-\S+ both hold SDK event 1"):
        load_events(folder)


def test_sdk_conversation_folder_names_the_file_of_a_bad_event(tmp_path: Path) -> None:
    records = json.loads((require_real_logs_dir() / SDK_CONVERSATION_LOG).read_text())[:3]
    del records[2]["kind"]
    folder = _sdk_conversation_folder(tmp_path, records)
    bad = folder / "events" / f"event-00002-{records[2]['id']}.json"
    with pytest.raises(MalformedEventError, match=re.escape(f"{bad} (id '{records[2]['id']}'): OpenHands SDK event: a V0 event in an SDK log")):
        load_events(folder)


def test_folder_mixing_session_and_sdk_event_files_is_malformed(tmp_path: Path) -> None:
    records = json.loads((require_real_logs_dir() / SDK_CONVERSATION_LOG).read_text())[:1]
    folder = _sdk_conversation_folder(tmp_path, records)
    (folder / "events" / "0.json").write_text('{"id": 0, "action": "null", "args": {}}')
    with pytest.raises(
        MalformedEventError,
        match=re.escape(f"{folder / 'events'}: both <id>.json and SDK event-<index>-<uuid>.json files (1 and 1): two logs in one folder"),
    ):
        load_events(folder)
