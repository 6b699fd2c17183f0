"""Saving a log: `write_log` never writes onto an input, and replaces an existing log only when asked."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from openhands_memory.errors import OutputExistsError, OutputIsInputError
from openhands_memory.events import event_to_dict, load_events
from openhands_memory.replay import write_log
from openhands_memory.replay.output import check_log_output

BUNDLED = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"


@pytest.fixture(scope="module")
def events() -> list:
    return load_events(BUNDLED)


def test_write_log_refuses_an_existing_file_unless_overwrite(tmp_path: Path, events: list) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("precious")
    with pytest.raises(OutputExistsError):
        write_log(events[:3], out)
    assert out.read_text() == "precious"
    assert write_log(events[:3], out, overwrite=True) == "jsonl"
    assert [event_to_dict(e) for e in load_events(out)] == [event_to_dict(e) for e in events[:3]]


def test_write_log_never_writes_onto_an_input_even_with_overwrite(tmp_path: Path, events: list) -> None:
    source = tmp_path / "log.json"
    write_log(events[:3], source)
    with pytest.raises(OutputIsInputError):
        write_log(events, source, inputs=[source], overwrite=True)
    assert len(load_events(source)) == 3


def test_check_log_output_names_the_layout_and_refuses_what_write_log_would(tmp_path: Path, events: list) -> None:
    assert check_log_output(tmp_path / "a.json") == "json"
    assert check_log_output(tmp_path / "a.jsonl") == "jsonl"
    assert check_log_output(tmp_path / "session") == "session folder"
    write_log(events[:3], tmp_path / "session")
    with pytest.raises(OutputExistsError, match="already holds a session's events"):
        check_log_output(tmp_path / "session")
    assert check_log_output(tmp_path / "session", overwrite=True) == "session folder"
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(NotADirectoryError):
        check_log_output(tmp_path / "notes.txt", overwrite=True)


def test_a_failed_swap_puts_the_old_session_back(tmp_path: Path, events: list, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "session"
    write_log(events[:3], folder)
    rename = os.rename

    def fail_to_bring_the_new_events_in(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(src).name == "events" and Path(src).parent.name.startswith(".events."):  # the new events, after the old ones moved aside
            assert not (folder / "events").exists()
            raise OSError(errno.EIO, "Input/output error")
        rename(src, dst)

    monkeypatch.setattr(os, "rename", fail_to_bring_the_new_events_in)
    with pytest.raises(OSError, match="Input/output error"):
        write_log(events[:5], folder, overwrite=True)
    monkeypatch.undo()
    assert [e.id for e in load_events(folder)] == [e.id for e in events[:3]]
    assert sorted(p.name for p in folder.iterdir()) == ["events"]  # the staging folder is gone
