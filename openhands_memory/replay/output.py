"""Saving a (replayed or converted) log without destroying anything: `write_log` and `check_log_output`.

A log is written as a JSON list (`*.json`), JSONL (`*.jsonl`), or else an OpenHands session folder
(`<folder>/events/<id>.json`). The rules, checked before the work and again when writing:

- an input is never written to, by any path (see `openhands_memory._files.refuse_inputs`);
- an existing log (a file, or a folder's non-empty `events/`) is replaced only with `overwrite=True`;
- files appear whole: each file goes through a temporary file and a rename (mode 0600), and a
  session folder's `events/` is built beside the old one and swapped in by renaming.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from openhands_memory._files import check_writable, make_private_folder, refuse_inputs, resolve_output
from openhands_memory.errors import OutputExistsError, OutputNameError
from openhands_memory.events import Event

__all__ = ["check_log_output", "write_log"]

_SESSION_EXISTS = "already holds a session's events"


def _layout(target: Path) -> str:
    return target.suffix[1:] if target.suffix in (".json", ".jsonl") else "session folder"


def check_log_output(
    path: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str]] = (), overwrite: bool = False
) -> str:
    """Check that `write_log` may write `path`, before any work is done; returns the layout it would write.

    Paths are taken as the OS resolves them (`missing/../log.jsonl` is `log.jsonl`): see
    `openhands_memory._files.resolve_output`.

    Raises:
        OutputIsInputError: `path` (or the folder's `events/`) is one of `inputs`, inside one, or holds one.
        OutputExistsError: `path` exists (a folder: its `events/` is not empty) and `overwrite` is False.
        OutputNameError: `path` does not exist and has a suffix other than `.json` / `.jsonl` (a
            file name we write no layout for; a session folder is an existing folder or a name without one).
        OutputNotWritableError: the folder it would be written in cannot be written (or created).
        NotADirectoryError: `path` is an existing file without a `.json` / `.jsonl` name.
    """
    target = Path(path)
    where = resolve_output(target)
    layout = _layout(where)
    if layout != "session folder":
        refuse_inputs(target, inputs)
        if not overwrite and os.path.lexists(where):
            raise OutputExistsError(target)
        check_writable(where, shown=target)
        return layout
    if os.path.lexists(where) and not where.is_dir():
        raise NotADirectoryError(20, "not a folder (name a file *.json or *.jsonl, or a folder)", str(target))
    if not os.path.lexists(where) and where.suffix:
        raise OutputNameError(
            target,
            f"no log layout is named '{where.suffix}': name a *.json or *.jsonl file, or a folder (an existing one, "
            "or a new name without a suffix) for an OpenHands session folder",
        )
    # The session folder's events/ is what gets replaced; the rest of the folder is left alone.
    refuse_inputs(target / "events", inputs)  # which also refuses the session folder itself as input
    if not overwrite and _has_entries(where / "events"):
        raise OutputExistsError(target, _SESSION_EXISTS)
    check_writable(where / "events", shown=target)
    return layout


def write_log(
    events: Sequence[Event],
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    overwrite: bool = False,
) -> str:
    """Save events as a log: a JSON list (`*.json`), JSONL (`*.jsonl`), or else an OpenHands session folder.

    Returns the layout written (`json`, `jsonl` or `session folder`). `inputs` are the files the
    events were read from: they are never written to. With `overwrite`, an existing file is
    replaced, and a session folder's `events/` is replaced as a whole (other files in the folder
    stay); without it nothing existing is touched.

    Raises:
        OutputIsInputError: `path` is one of `inputs` (by any path), inside one, or holds one.
        OutputExistsError: `path` exists (a folder: it already holds a session's events) and
            `overwrite` is False. It is a `FileExistsError` too.
        OutputNameError: `path` does not exist and has a suffix other than `.json` / `.jsonl`.
        OutputNotWritableError: the folder it would be written in cannot be written (or created).
        NotADirectoryError: `path` is an existing file without a `.json` / `.jsonl` name.
    """
    from openhands_memory.events import dump_events, dump_session_folder

    inputs = list(inputs)
    target = Path(path)
    layout = check_log_output(target, inputs=inputs, overwrite=overwrite)
    if layout != "session folder":
        dump_events(events, target, overwrite=overwrite)
        return layout
    where = resolve_output(target)
    make_private_folder(where)
    staging = Path(tempfile.mkdtemp(dir=where, prefix=".events.", suffix=".tmp"))
    try:
        _swap_in(dump_session_folder(events, staging), where / "events", staging / "replaced", overwrite=overwrite)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return layout


def _swap_in(new: Path, final: Path, aside: Path, *, overwrite: bool) -> None:
    """Rename the finished `new` folder to `final`; the old `final` is moved to `aside` (deleted with it) if allowed."""
    moved = False
    if os.path.lexists(final) and (overwrite or not _has_entries(final)):
        os.rename(final, aside)
        moved = True
    try:
        os.rename(new, final)
    except OSError as exc:
        if moved:
            os.rename(aside, final)  # put the old events back: nothing changed
        elif exc.errno in (errno.EEXIST, errno.ENOTEMPTY):  # another writer filled events/ since the check
            raise OutputExistsError(final.parent, _SESSION_EXISTS) from None
        raise


def _has_entries(folder: Path) -> bool:
    if not folder.is_dir():
        return os.path.lexists(folder)
    with os.scandir(folder) as entries:
        return any(True for _ in entries)
