"""Writing derived files safely: atomically, owner-only, never over an input, over an existing file only when asked.

- `write_atomically(path, body, overwrite=...)`: a temporary file in the same folder, fsynced, then
  renamed into place (mode 0600); a reader sees the old file or the new one, never half of one, and
  the temporary file is removed when anything fails.
- `make_private_folder(path)`: creates a folder and its missing parents owner-only (0700), whatever
  the umask; a folder that already exists is left as it is.
- `refuse_inputs(output, inputs)`: raises `OutputIsInputError` when writing `output` would write to
  one of `inputs`: the same file by another path (symlink, hard link, relative path), a file or
  folder inside an input folder, or a folder that holds an input.

Used by every writer of the library (`dump_events`, `write_log`, the benchmark's results), so the
rules hold in one place.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from openhands_memory.errors import OutputExistsError, OutputIsInputError

__all__ = ["FILE_MODE", "FOLDER_MODE", "make_private_folder", "refuse_inputs", "write_atomically"]

FILE_MODE = 0o600
"""Files the library writes are readable and writable by their owner only: logs hold prompts and secrets."""

FOLDER_MODE = 0o700
"""Folders the library creates are the owner's only too: their names (event ids, log names) say what they hold."""

# Errors of os.link that mean "this file system has no hard links", not "the name is taken".
_NO_HARD_LINKS = {errno.EPERM, errno.EACCES, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EXDEV, errno.EMLINK}


def write_atomically(path: str | os.PathLike[str], body: bytes, *, overwrite: bool = False) -> Path:
    """Write `body` to `path` through a temporary file in the same folder; returns the path.

    The file gets mode 0600. Without `overwrite`, an existing `path` is left alone and
    `OutputExistsError` raised, even when it appears while the body is being written.

    Raises:
        OutputExistsError: `path` exists and `overwrite` is False; nothing was written.
        OSError: the folder cannot be created or written; nothing was written.
    """
    target = Path(path)
    if not overwrite and os.path.lexists(target):
        raise OutputExistsError(target)  # before any work; checked again, atomically, when publishing
    make_private_folder(target.parent)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)  # mkstemp already makes it private; say so rather than rely on it
        with os.fdopen(fd, "wb") as out:
            out.write(body)
            out.flush()
            os.fsync(out.fileno())
        if overwrite:
            os.replace(tmp, target)
        else:
            _publish_new(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def make_private_folder(path: str | os.PathLike[str]) -> Path:
    """Create the folder `path` and its missing parents with mode 0700, whatever the umask; returns the path.

    Folders that already exist keep their mode: they are the caller's, not ours to change.

    Raises:
        FileExistsError: `path` (or a parent) exists and is not a folder.
        OSError: a folder cannot be created.
    """
    folder = Path(path)
    missing: list[Path] = []
    for candidate in (folder, *folder.parents):
        if os.path.isdir(candidate):
            break
        missing.append(candidate)
    for candidate in reversed(missing):
        try:
            os.mkdir(candidate, FOLDER_MODE)
        except FileExistsError:
            if not os.path.isdir(candidate):
                raise
            continue  # created meanwhile by someone else: theirs, left as it is
        # mkdir's mode is masked by the umask (0o277 would leave it unwritable): set it exactly.
        os.chmod(candidate, FOLDER_MODE)
    return folder


def _publish_new(tmp: str, target: Path) -> None:
    """Give the finished temporary file its name only if nothing has that name (a hard link fails if it does)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise OutputExistsError(target) from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        # No hard links here (some network and FUSE file systems): check, then rename; a writer
        # racing us in this instant could still be replaced, which hard links would have prevented.
        if os.path.lexists(target):
            raise OutputExistsError(target) from None
        os.replace(tmp, target)
        return
    os.unlink(tmp)


def refuse_inputs(output: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Raise `OutputIsInputError` when writing `output` would write to one of `inputs`.

    Compares files with `os.path.samefile` (so a symlink, a hard link or another spelling of an
    input is caught) and folders along the resolved paths (folders cannot be hard-linked).
    Inputs that do not exist are skipped: nothing of them can be destroyed.
    """
    target = Path(output)
    # The folders the output would be written in, symlinks resolved, that exist.
    folders = [folder for folder in Path(os.path.realpath(target)).parents if folder.is_dir()]
    for source in map(Path, inputs):
        if not source.exists():
            continue
        if os.path.lexists(target) and _same(target, source):
            raise OutputIsInputError(target, source)
        if source.is_dir() and any(_same(folder, source) for folder in folders):
            raise OutputIsInputError(target, source, "is inside the input folder")
        if target.is_dir() and any(_same(target, folder) for folder in Path(os.path.realpath(source)).parents):
            raise OutputIsInputError(target, source, "holds the input")


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # a dangling symlink, or no permission to look: not provably the same
        return False
