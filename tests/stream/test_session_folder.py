"""Streams to and from OpenHands session folders (`events/<id>.json`)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import orjson
import pytest

from openhands_memory.errors import DuplicateEventError, MalformedEventError
from openhands_memory.events import MessageAction, event_to_dict, load_events
from openhands_memory.stream import EventStream, export_session_folder, import_session_folder
from openhands_memory.testing.store_contract import stored_event


def test_export_writes_one_file_per_event_named_by_id(tmp_path: Path) -> None:
    stream = EventStream.from_events([stored_event(i) for i in (0, 2, 7)])
    folder = export_session_folder(stream, tmp_path / "session")
    assert folder == tmp_path / "session" / "events"
    assert sorted(p.name for p in folder.iterdir()) == ["0.json", "2.json", "7.json"]
    assert orjson.loads((folder / "7.json").read_bytes()) == event_to_dict(stream.get_event(7))


@pytest.mark.parametrize("umask", [0o000, 0o022], ids=["umask-000", "umask-022"])
def test_export_creates_owner_only_folders_and_files_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    stream = EventStream.from_events([stored_event(i) for i in (0, 2)])
    old = os.umask(umask)
    try:
        export_session_folder(stream, tmp_path / "sessions" / "one")
    finally:
        os.umask(old)
    modes = {str(p.relative_to(tmp_path)): stat.S_IMODE(p.stat().st_mode) for p in tmp_path.rglob("*")}
    assert modes == {
        "sessions": 0o700, "sessions/one": 0o700, "sessions/one/events": 0o700,
        "sessions/one/events/0.json": 0o600, "sessions/one/events/2.json": 0o600,
    }  # fmt: skip


def test_import_keeps_ids_with_gaps_and_continues_after_the_last(tmp_path: Path) -> None:
    original = EventStream.from_events([stored_event(i) for i in (0, 2, 7)])
    export_session_folder(original, tmp_path / "session")
    stream = import_session_folder(tmp_path / "session")
    assert [event_to_dict(e) for e in stream] == [event_to_dict(e) for e in original]
    assert stream.add_event(MessageAction(content="next"), "user") == 8


def test_import_into_a_jsonl_file(tmp_path: Path) -> None:
    export_session_folder(EventStream.from_events([stored_event(i) for i in range(3)]), tmp_path / "session")
    log = tmp_path / "events.jsonl"
    import_session_folder(tmp_path / "session", into=log).close()
    with EventStream.open(log) as stream:
        assert [e.id for e in stream] == [0, 1, 2]


def test_import_into_a_log_with_later_ids_is_refused(tmp_path: Path) -> None:
    export_session_folder(EventStream.from_events([stored_event(0)]), tmp_path / "session")
    log = tmp_path / "events.jsonl"
    EventStream.from_events([stored_event(5)], log).close()
    with pytest.raises(DuplicateEventError, match=re.escape("event 0 cannot follow id 5")):
        import_session_folder(tmp_path / "session", into=log)


def test_import_of_a_folder_without_events_names_it(tmp_path: Path) -> None:
    with pytest.raises(MalformedEventError, match="no events/<id>.json files"):
        import_session_folder(tmp_path)


def test_real_log_round_trips_through_a_session_folder_and_a_jsonl_file(real_logs_dir: Path, tmp_path: Path) -> None:
    events = load_events(real_logs_dir / "v0_oas_gpt-4o_traj_safety-command-bot.json")  # has id gaps
    dicts = [event_to_dict(e) for e in events]
    export_session_folder(EventStream.from_events(events), tmp_path / "session")
    import_session_folder(tmp_path / "session", into=tmp_path / "events.jsonl").close()
    with EventStream.open(tmp_path / "events.jsonl") as stream:
        assert [event_to_dict(e) for e in stream] == dicts


def test_import_of_events_without_ids_takes_the_ids_their_files_are_named_by(tmp_path: Path) -> None:
    events_dir = tmp_path / "session" / "events"
    events_dir.mkdir(parents=True)
    for event_id in (3, 8):  # the old flattened form has no id
        (events_dir / f"{event_id}.json").write_bytes(orjson.dumps({"action": "message", "content": f"m{event_id}"}))
    stream = import_session_folder(tmp_path / "session")
    assert [(e.id, e.content) for e in stream] == [(3, "m3"), (8, "m8")]
