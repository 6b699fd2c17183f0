"""Writing derived files: atomically, owner-only, never over an input, over an existing file only when asked."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from _folders import unwritable  # noqa: F401  (a fixture)

from openhands_memory import _files
from openhands_memory._files import refuse_inputs, write_atomically
from openhands_memory.errors import OutputExistsError, OutputIsInputError, OutputNotWritableError, OutputRefusedError
from openhands_memory.events import dump_events, dump_session_folder
from openhands_memory.recall import SearchIndex
from openhands_memory.replay.output import write_log
from openhands_memory.stream import JsonlEventStore
from openhands_memory.testing.store_contract import stored_event


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


@pytest.fixture(params=[0o000, 0o022], ids=["umask-000", "umask-022"])
def loose_umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run the test under a umask that would leave new files and folders readable by others."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    """The permission bits of everything under `root`, by relative path."""
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in sorted(root.rglob("*"))}


def test_new_folders_are_owner_only_whatever_the_umask(tmp_path: Path, loose_umask: int) -> None:
    folder = _files.make_private_folder(tmp_path / "a" / "b" / "c")
    assert folder.is_dir()
    assert _modes(tmp_path) == {"a": 0o700, "a/b": 0o700, "a/b/c": 0o700}


def test_an_existing_folder_keeps_its_mode(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    _files.make_private_folder(shared / "mine")
    _files.make_private_folder(shared)
    assert _modes(tmp_path) == {"shared": 0o755, "shared/mine": 0o700}


def test_a_file_where_a_folder_should_be_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(FileExistsError):
        _files.make_private_folder(tmp_path / "file")
    with pytest.raises(OSError):
        _files.make_private_folder(tmp_path / "file" / "below")


def test_every_writer_creates_owner_only_files_and_folders_whatever_the_umask(tmp_path: Path, loose_umask: int) -> None:
    # Logs hold prompts, code and command output: no file or folder the library makes is for others.
    events = [stored_event(i) for i in range(3)]
    write_atomically(tmp_path / "atomic" / "new" / "out.json", b"[]")
    dump_events(events, tmp_path / "dumped" / "log.json")
    dump_events(events, tmp_path / "dumped" / "log.jsonl")
    dump_session_folder(events, tmp_path / "session")
    write_log(events, tmp_path / "replayed" / "session")  # `replay --out FOLDER`
    write_log(events, tmp_path / "replayed" / "log.jsonl")  # `replay --out FILE`, `convert`
    store = JsonlEventStore(tmp_path / "stream" / "new" / "log.jsonl")
    store.append(events[0])
    with SearchIndex.for_log(store.path) as index:
        index.sync(list(store.read_events()))
    store.close()
    modes = _modes(tmp_path)
    assert {name: oct(mode) for name, mode in modes.items() if mode not in (0o600, 0o700)} == {}
    assert all(mode == (0o700 if (tmp_path / name).is_dir() else 0o600) for name, mode in modes.items())
    assert {"session/events", "session/events/2.json", "replayed/session/events", "stream/new"} <= set(modes)


def test_stale_temporary_files_are_removed_and_a_live_writers_kept(tmp_path: Path) -> None:
    import fcntl

    target = tmp_path / "log.jsonl"
    dead = tmp_path / ".log.jsonl.abcd1234.tmp"
    live = tmp_path / ".log.jsonl.live_123.tmp"
    others = [tmp_path / ".log.jsonl.tmp", tmp_path / ".other.jsonl.abcd1234.tmp", tmp_path / "log.jsonl.abcd1234.tmp"]
    for path in (dead, live, *others):
        path.write_bytes(b"partial")
    with open(live, "rb") as writer:
        fcntl.flock(writer.fileno(), fcntl.LOCK_EX)  # as write_atomically holds its temporary file
        assert _files.remove_stale_temporary_files(target) == [dead]
    assert sorted(tmp_path.iterdir()) == sorted([live, *others])


def test_a_temporary_file_is_locked_until_it_has_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[Path]] = []
    replace = os.replace

    def cleaner_runs_meanwhile(src: str, dst: str) -> None:
        seen.append(_files.remove_stale_temporary_files(dst))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", cleaner_runs_meanwhile)
    path = write_atomically(tmp_path / "out.json", b"body", overwrite=True)
    assert seen == [[]] and path.read_bytes() == b"body"


def test_outputs_resolve_as_the_os_resolves_them_once_missing_folders_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real" / "deep").mkdir(parents=True)
    os.symlink("real/deep", tmp_path / "link")
    assert _files.resolve_output("missing/../log.jsonl") == tmp_path / "log.jsonl"
    assert _files.resolve_output("link/../x/y.json") == tmp_path / "real" / "x" / "y.json"  # `..` of the link's target
    assert _files.resolve_output("link/out.json") == tmp_path / "real" / "deep" / "out.json"
    assert _files.resolve_output("missing/..") == tmp_path
    (tmp_path / "log.jsonl").write_bytes(b"input")
    with pytest.raises(OutputIsInputError):
        refuse_inputs("missing/../log.jsonl", ["log.jsonl"])
    write_atomically("missing/../new.json", b"[]", overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "log.jsonl", "new.json", "real"]


def test_an_output_that_cannot_be_written_is_refused_before_anything_is_made(unwritable: Path) -> None:
    out = unwritable / "new" / "out.json"
    with pytest.raises(OutputNotWritableError, match=re.escape(f"{out}: cannot be written: {unwritable} is not writable")) as info:
        write_atomically(out, b"[]")
    assert isinstance(info.value, PermissionError) and info.value.folder == unwritable
    assert list(unwritable.iterdir()) == []
    file = unwritable.parent / "file"
    file.write_bytes(b"")
    with pytest.raises(NotADirectoryError, match=re.escape(f"{file} is a file, not a folder")):
        _files.check_writable(file / "sub" / "out.json")
