"""A log replaced, moved or deleted under an open store: later appends are refused, nothing acknowledged is lost.

Before the check, every append after `dump_events(path)` over an open log was acknowledged and went
to the old, unnamed file: 20 of 20 were lost when the stream closed.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import pytest

from openhands_memory.errors import StoreError, StoreReplacedError
from openhands_memory.events import MessageAction, dump_events, event_from_json, load_events
from openhands_memory.stream import EventStream, JsonlEventStore
from openhands_memory.testing.store_contract import stored_event


def _sidecars(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.replaced-*"))


def _ids_in(path: Path) -> list[int]:
    return [event_from_json(line).id for line in path.read_bytes().splitlines() if line.strip()]  # type: ignore[misc]


def test_appends_after_dump_events_over_the_log_are_refused_and_none_acknowledged_is_lost(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    stream = EventStream.open(path)
    acknowledged = [stream.add_event(MessageAction(content=f"before {i}"), "user") for i in range(5)]
    dump_events([stored_event(i) for i in range(3)], path)  # replaces the file: a new inode at the path
    replacement = path.read_bytes()

    refused = 0
    for i in range(20):
        try:
            acknowledged.append(stream.add_event(MessageAction(content=f"after {i}"), "user"))
        except StoreReplacedError:
            refused += 1
    stream.close()

    assert refused == 20
    assert path.read_bytes() == replacement  # the new file is not written to
    [saved] = _sidecars(path)
    found = set(_ids_in(saved))
    lost = [event_id for event_id in acknowledged if event_id not in found]
    assert (len(acknowledged), lost) == (5, [])


def test_the_error_says_what_happened_and_where_the_events_are(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    store = JsonlEventStore(path)
    store.append(stored_event(0))
    written = path.read_bytes()
    dump_events([], path)
    with pytest.raises(StoreReplacedError) as info:
        store.append(stored_event(1))
    [saved] = _sidecars(path)
    error = info.value
    assert isinstance(error, StoreError)
    assert (error.path, error.reason, error.saved_to, error.linked_elsewhere) == (
        path, "replaced by another file", saved, False,
    )  # fmt: skip
    assert str(error) == (
        f"{path}: replaced by another file while a stream had it open, so nothing more was written; "
        f"every event it acknowledged is saved in {saved}. Close this stream, then reopen {path} to continue "
        "with what it names now"
    )
    assert saved.read_bytes() == written
    assert saved.stat().st_mode & 0o777 == 0o600
    store.close()


def test_a_deleted_log_is_copied_aside_and_every_later_append_refused(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    store = JsonlEventStore(path)
    for i in range(3):
        store.append(stored_event(i))
    written = path.read_bytes()
    path.unlink()
    for _ in range(3):
        with pytest.raises(StoreReplacedError, match=re.escape(f"{path}: deleted while a stream had it open")):
            store.append(stored_event(3))
    [saved] = _sidecars(path)  # copied once
    assert saved.read_bytes() == written
    assert not path.exists()  # nothing recreated at the path
    assert [e.id for e in store.read_events()] == [0, 1, 2]  # reads still answer from memory
    store.close()
    assert _sidecars(path) == [saved]


def test_a_moved_log_is_not_copied_since_it_still_has_a_name(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    store = JsonlEventStore(path)
    store.append(stored_event(0))
    moved = tmp_path / "kept.jsonl"
    os.rename(path, moved)
    with pytest.raises(StoreReplacedError, match="is still on disk under another name") as info:
        store.append(stored_event(1))
    assert (info.value.reason, info.value.saved_to, info.value.linked_elsewhere) == ("deleted", None, True)
    store.close()
    assert _sidecars(path) == []
    assert _ids_in(moved) == [0]


def test_a_second_stream_may_open_the_replacement_while_the_stale_one_refuses(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    stale = EventStream.open(path)
    stale.add_event(MessageAction(content="old"), "user")
    dump_events([stored_event(0)], path)
    # The lock was on the old file; the path names a new one, which nobody writes yet.
    fresh = EventStream.open(path)
    fresh.add_event(MessageAction(content="new"), "user")
    with pytest.raises(StoreReplacedError):
        stale.add_event(MessageAction(content="lost?"), "user")
    stale.close()
    fresh.close()
    assert [(e.id, getattr(e, "content", None)) for e in load_events(path)] == [(0, "message 0"), (1, "new")]


def test_a_replacement_after_the_last_append_is_copied_aside_on_close(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "events.jsonl"
    store = JsonlEventStore(path)
    store.append(stored_event(0))
    written = path.read_bytes()
    dump_events([], path)
    with caplog.at_level(logging.WARNING, logger="openhands_memory.stream.file_store"):
        store.close()
    [saved] = _sidecars(path)
    assert saved.read_bytes() == written
    assert f"every event it acknowledged is saved in {saved}" in caplog.text


def test_a_store_that_appended_nothing_copies_nothing_on_close(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    dump_events([stored_event(0)], path)
    store = JsonlEventStore(path)
    path.unlink()
    store.close()
    assert _sidecars(path) == []


def test_changing_the_working_folder_is_not_taken_for_a_replacement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "events.jsonl").write_bytes(b"")
    monkeypatch.chdir(tmp_path / "a")
    store = JsonlEventStore("events.jsonl")
    monkeypatch.chdir(tmp_path / "b")  # "events.jsonl" now names another file, but the store's is unchanged
    store.append(stored_event(0))
    store.close()
    assert _ids_in(tmp_path / "a" / "events.jsonl") == [0]
