"""`JsonlEventStore`: the durable store contract, the file format, the lock, fsync and failed writes.

Recovery after a crash (torn tails, corrupt lines) is in `test_crash.py`.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from openhands_memory.errors import StoreLockedError
from openhands_memory.events import event_to_json
from openhands_memory.stream import JsonlEventStore, RecoveryWarning
from openhands_memory.testing.log_contract import LogFeaturesContract
from openhands_memory.testing.store_contract import DurableEventStoreContract, stored_event


class TestJsonlEventStore(DurableEventStoreContract):
    def make_store(self, tmp_path: Path) -> JsonlEventStore:
        return JsonlEventStore(tmp_path / "events.jsonl")


class TestJsonlLogFeatures(LogFeaturesContract):
    def log_location(self, tmp_path: Path, name: str) -> str:
        return str(tmp_path / f"{name}.jsonl")


del DurableEventStoreContract, LogFeaturesContract


def test_each_event_is_one_json_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    events = [stored_event(i) for i in range(3)]
    store = JsonlEventStore(path)
    for event in events:
        store.append(event)
    assert path.read_bytes() == b"".join(event_to_json(e) + b"\n" for e in events)
    store.close()


def test_read_returns_the_appended_instance_itself(tmp_path: Path) -> None:
    store = JsonlEventStore(tmp_path / "events.jsonl")
    event = stored_event(0)
    store.append(event)
    assert next(store.read_events()) is event
    store.close()


def test_missing_file_and_folders_are_created_empty(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "events.jsonl"
    store = JsonlEventStore(path)
    assert len(store) == 0
    assert path.read_bytes() == b""
    assert store.recovered is None
    store.close()


def test_a_new_log_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    store = JsonlEventStore(path)
    store.close()
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o277], ids=["umask-000", "umask-022", "umask-277"])
def test_a_new_log_its_new_folders_and_its_sidecars_are_owner_only_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "a" / "b" / "events.jsonl"
    old = os.umask(umask)
    try:
        store = JsonlEventStore(path)
        store.append(stored_event(0))
        store.close()
        with path.open("ab") as log:
            log.write(b'{"id": 1, "tor')  # a torn tail, set aside in a sidecar by the next open
        with pytest.warns(RecoveryWarning):
            store = JsonlEventStore(path)  # reopening works: a 0o277 umask does not leave the log read-only
        store.close()
    finally:
        os.umask(old)
    modes = {str(p.relative_to(tmp_path)): stat.S_IMODE(p.stat().st_mode) for p in tmp_path.rglob("*")}
    [torn] = [name for name in modes if ".torn-" in name]
    assert modes == {"a": 0o700, "a/b": 0o700, "a/b/events.jsonl": 0o600, torn: 0o600}


def test_a_folder_that_exists_keeps_its_mode(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    JsonlEventStore(tmp_path / "events.jsonl").close()
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(event_to_json(stored_event(0)) + b"\n\n  \n" + event_to_json(stored_event(1)) + b"\n")
    store = JsonlEventStore(path)
    assert [e.id for e in store.read_events()] == [0, 1]
    store.close()


def test_second_open_is_refused_while_the_first_is_open(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first = JsonlEventStore(path)
    with pytest.raises(StoreLockedError, match=re.escape(f"{path}: is open for writing")):
        JsonlEventStore(path)
    first.close()
    second = JsonlEventStore(path)
    second.close()


def test_lock_is_released_when_the_store_is_garbage_collected(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    JsonlEventStore(path)  # never closed
    JsonlEventStore(path).close()


def test_fsync_syncs_every_append_and_the_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    store = JsonlEventStore(tmp_path / "events.jsonl", fsync=True)
    assert len(synced) == 1  # the folder, for the new file's name
    for i in range(3):
        store.append(stored_event(i))
    assert len(synced) == 4
    store.close()


def test_without_fsync_nothing_is_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    store = JsonlEventStore(tmp_path / "events.jsonl")
    store.append(stored_event(0))
    store.close()
    assert synced == []


def test_failed_append_leaves_no_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "events.jsonl"
    store = JsonlEventStore(path, fsync=True)
    store.append(stored_event(0))
    before = path.read_bytes()

    def failing_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="Input/output error"):
        store.append(stored_event(1))
    assert path.read_bytes() == before
    assert len(store) == 1
    monkeypatch.undo()
    store.append(stored_event(1))
    assert [e.id for e in store.read_events()] == [0, 1]
    store.close()


def test_short_write_is_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "events.jsonl"
    store = JsonlEventStore(path)
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, data[:10]))
    with pytest.raises(OSError, match="short write"):
        store.append(stored_event(0))
    monkeypatch.undo()
    assert path.read_bytes() == b""
    assert len(store) == 0
    store.close()


def test_repr_names_the_file_and_the_count(tmp_path: Path) -> None:
    store = JsonlEventStore(tmp_path / "events.jsonl")
    store.append(stored_event(0))
    assert repr(store).endswith("events.jsonl', 1 events)")
    store.close()
    assert repr(store).endswith("events.jsonl', closed)")
