"""Writing derived files: atomically, owner-only, never over an input, over an existing file only when asked."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest

from openhands_memory import _files
from openhands_memory._files import refuse_inputs, write_atomically
from openhands_memory.errors import OutputExistsError, OutputIsInputError, OutputRefusedError


def test_a_new_file_is_written_whole_and_owner_only(tmp_path: Path) -> None:
    path = write_atomically(tmp_path / "new" / "out.json", b"[]\n")
    assert path.read_bytes() == b"[]\n"
    assert path.stat().st_mode & 0o777 == 0o600
    assert os.listdir(path.parent) == ["out.json"]


def test_an_existing_file_is_refused_and_kept_unless_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_bytes(b"precious")
    with pytest.raises(OutputExistsError, match=re.escape(f"{path}: already exists; use --force to replace it")) as info:
        write_atomically(path, b"new")
    assert (info.value.path, info.value.reason, info.value.exit_code) == (path, "already exists", 1)
    assert isinstance(info.value, FileExistsError) and isinstance(info.value, OutputRefusedError)
    assert path.read_bytes() == b"precious"
    write_atomically(path, b"new", overwrite=True)
    assert path.read_bytes() == b"new" and path.stat().st_mode & 0o777 == 0o600
    assert os.listdir(tmp_path) == ["out.json"]


def test_a_file_that_appears_while_writing_is_not_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "out.json"
    fsync = os.fsync

    def another_writer_wins(fd: int) -> None:
        fsync(fd)
        path.write_bytes(b"theirs")

    monkeypatch.setattr(os, "fsync", another_writer_wins)
    with pytest.raises(OutputExistsError):
        write_atomically(path, b"ours")
    assert path.read_bytes() == b"theirs"
    assert os.listdir(tmp_path) == ["out.json"]  # the temporary file is gone


def test_without_hard_links_a_new_file_is_still_published_and_an_existing_one_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: str, dst: str) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    path = write_atomically(tmp_path / "out.json", b"one")
    assert path.read_bytes() == b"one"
    with pytest.raises(OutputExistsError):
        _files._publish_new(str(tmp_path / "other"), path)
    assert path.read_bytes() == b"one"


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "out.json"
    path.write_bytes(b"old")

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(path, b"new", overwrite=True)
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out.json"]


@pytest.mark.parametrize("spelling", ["same", "relative", "symlink", "hard link", "symlinked folder"])
def test_an_input_is_recognised_by_any_path(tmp_path: Path, spelling: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    source = tmp_path / "sub" / "log.json"
    source.write_text("[]")
    output = {
        "same": source,
        "relative": Path("sub/../sub/./log.json"),
        "symlink": tmp_path / "link.json",
        "hard link": tmp_path / "hard.json",
        "symlinked folder": tmp_path / "alias" / "log.json",
    }[spelling]
    if spelling == "symlink":
        output.symlink_to(source)
    elif spelling == "hard link":
        os.link(source, output)
    elif spelling == "symlinked folder":
        (tmp_path / "alias").symlink_to(tmp_path / "sub")
    with pytest.raises(OutputIsInputError, match=re.escape(f"{output}: is the input {source}, ")) as info:
        refuse_inputs(output, [tmp_path / "other.json", source])
    assert (info.value.path, info.value.input_path, info.value.exit_code) == (output, source, 1)
    assert isinstance(info.value, ValueError)


def test_an_output_inside_an_input_folder_or_holding_an_input_is_refused(tmp_path: Path) -> None:
    session = tmp_path / "session"
    (session / "events").mkdir(parents=True)
    (session / "events" / "0.json").write_text("{}")
    with pytest.raises(OutputIsInputError, match="is inside the input folder"):
        refuse_inputs(session / "events" / "new" / "out.json", [session])
    with pytest.raises(OutputIsInputError, match="holds the input"):
        refuse_inputs(session, [session / "events" / "0.json"])


def test_outputs_beside_the_inputs_and_missing_inputs_are_allowed(tmp_path: Path) -> None:
    (tmp_path / "log.json").write_text("[]")
    refuse_inputs(tmp_path / "out.json", [tmp_path / "log.json", tmp_path / "missing.json"])
    refuse_inputs(tmp_path / "new" / "out.json", [tmp_path / "log.json"])
