"""`bench.work`: the logs a benchmark's paths name, and the worker processes the work is worth."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openhands_memory.bench import work
from openhands_memory.bench.work import WORK_PER_WORKER, find_logs, workers_for
from openhands_memory.errors import MalformedEventError


def _sized(path: Path, size: int) -> Path:
    with open(path, "wb") as file:
        file.truncate(size)  # sparse: the size a stat reports, without the disk
    return path


def test_workers_start_only_for_work_that_pays_for_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = [_sized(tmp_path / f"s{i}.jsonl", 50_000) for i in range(2)]
    big = [_sized(tmp_path / f"b{i}.jsonl", 3 * WORK_PER_WORKER) for i in range(4)]
    assert workers_for(small, 3, jobs=8) == 1  # 18 times slower in two workers than here
    assert workers_for(big[:1], 1, jobs=8) == 1  # one run: one process
    assert workers_for(big[:2], 1, jobs=8) == 2  # one per run
    assert workers_for(big, 2, jobs=3) == 3  # at most --jobs
    assert workers_for([*big[:1], *small], 1, jobs=8) == 3  # 3 worth of work, 3 runs
    monkeypatch.setattr(work, "available_cpus", lambda: 2)
    assert workers_for(big, 2) == 2  # by default, up to the CPUs


def test_a_folder_of_logs_stands_for_its_logs_and_a_session_folder_for_one(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "session" / "events").mkdir(parents=True)
    (logs / "session" / "events" / "0.json").write_text("{}")
    (logs / "flat-session").mkdir()
    (logs / "flat-session" / "0.json").write_text("{}")
    for name in ("b.jsonl", "a.json", ".hidden.json", "notes.txt"):
        (logs / name).write_text("")
    (logs / "other").mkdir()
    single = tmp_path / "single.jsonl"
    assert find_logs([logs, single, logs / "session"]) == [
        logs / "a.json", logs / "b.jsonl", logs / "flat-session", logs / "session", single, logs / "session",
    ]  # fmt: skip
    with pytest.raises(MalformedEventError, match=re.escape(f"{logs / 'other'}: a folder with no log in it")):
        find_logs([logs / "other"])


def test_an_sdk_conversations_events_folder_is_one_log(tmp_path: Path) -> None:
    # The SDK persists a conversation as <id>/events/event-<index>-<uuid>.json (and <id>/base_state.json).
    conversations = tmp_path / "conversations"
    events = conversations / "0535c419" / "events"
    events.mkdir(parents=True)
    (events / "event-00000-67b9dd8e-9e75-4d5b-b2fe-d8d82cf8faf9.json").write_text("{}")
    assert find_logs([conversations]) == [conversations / "0535c419"]
    assert find_logs([events]) == [events]
