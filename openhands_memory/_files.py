"""Writing derived files safely: atomically, owner-only, never over an input, over an existing file only when asked.

- `write_atomically(path, body, overwrite=...)`: a temporary file in the same folder, fsynced, then
  renamed into place (mode 0600); a reader sees the old file or the new one, never half of one, and
  the temporary file is removed when anything fails.
- `remove_stale_temporary_files(path)`: removes the temporary files a killed writer of `path`
  left (a live writer's are locked and stay).
- `make_private_folder(path)`: creates a folder and its missing parents owner-only (0700), whatever
  the umask; a folder that already exists is left as it is.
- `refuse_inputs(output, inputs)`: raises `OutputIsInputError` when writing `output` would write to
  one of `inputs`: the same file by another path (symlink, hard link, relative path), a file or
  folder inside an input folder, or a folder that holds an input.
- `resolve_output(path)`: where writing `path` lands, as the OS resolves it (`missing/../log.jsonl`
  is `log.jsonl`); every check and write above goes by it, so no folder is made for nothing.
- `check_writable(path)`: raises `OutputNotWritableError` (or `NotADirectoryError`) when `path`
  could not be written, before any work.

Used by every writer of the library (`dump_events`, `write_log`, the benchmark's results), so the
rules hold in one place.
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

from openhands_memory.errors import OutputExistsError, OutputIsInputError, OutputNotWritableError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock: no temporary file is taken for a dead writer's
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "FILE_MODE",
    "FOLDER_MODE",
    "check_writable",
    "make_private_folder",
    "refuse_inputs",
    "remove_stale_temporary_files",
    "resolve_output",
    "write_atomically",
]

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
    The temporary file (`.<name>.<random>.tmp`) is locked (flock) until it has its name, so
    `remove_stale_temporary_files` can tell one a killed process left from one being written.

    Raises:
        OutputExistsError: `path` exists and `overwrite` is False; nothing was written.
        OutputNotWritableError: the folder cannot be written (or created); nothing was written.
    OSError: writing failed (a full disk, ...); nothing was written.
    """
    target = Path(path)
    where = resolve_output(target)
    if not overwrite and os.path.lexists(where):
        raise OutputExistsError(target)  # before any work; checked again, atomically, when publishing
    check_writable(where, shown=target)
    make_private_folder(where.parent)
    try:
        fd, tmp = tempfile.mkstemp(dir=where.parent, prefix=f".{where.name}.", suffix=TEMPORARY_SUFFIX)
    except OSError as exc:  # name the user's file, not the temporary one
        raise OSError(exc.errno, exc.strerror, str(target)) from exc
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # a new file: nobody else can hold it
        os.fchmod(fd, FILE_MODE)  # mkstemp already makes it private; say so rather than rely on it
        view = memoryview(body)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        # Published while still open (and locked): a cleaner never takes it for a dead writer's.
        if overwrite:
            os.replace(tmp, where)
        else:
            _publish_new(tmp, where, shown=target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    return target


TEMPORARY_SUFFIX = ".tmp"
"""The suffix of `write_atomically`'s temporary files (`.<name>.<8 random characters>.tmp`)."""


def remove_stale_temporary_files(path: str | os.PathLike[str], *, name_pattern: str | None = None) -> list[Path]:
    """Remove the temporary files that writes of `path` left behind when their process died; returns them.

    A temporary file is `.<name>.<8 random characters>.tmp` beside `path` (as `write_atomically`
    makes them), where `<name>` is `path`'s name or matches the regular expression `name_pattern`.
    One still locked is being written by a live process and is left alone; without flock (Windows)
    none can be told apart, and none is removed.
    """
    if fcntl is None:  # pragma: no cover
        return []
    target = Path(path)
    name = re.escape(target.name) if name_pattern is None else name_pattern
    temporary = re.compile(rf"\.(?:{name})\.[a-z0-9_]{{8}}{re.escape(TEMPORARY_SUFFIX)}")
    removed: list[Path] = []
    with os.scandir(target.parent) as entries:
        candidates = [entry.path for entry in entries if temporary.fullmatch(entry.name) and entry.is_file(follow_symlinks=False)]
    for candidate in sorted(candidates):
        try:
            fd = os.open(candidate, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            continue  # its writer published or removed it meanwhile
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live writer's
            os.unlink(candidate)
            removed.append(Path(candidate))
        except FileNotFoundError:
            continue
        finally:
            os.close(fd)
    return removed


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


def _publish_new(tmp: str, target: Path, *, shown: Path | None = None) -> None:
    """Give the finished temporary file its name only if nothing has that name (a hard link fails if it does)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise OutputExistsError(shown or target) from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        # No hard links here (some network and FUSE file systems): check, then rename; a writer
        # racing us in this instant could still be replaced, which hard links would have prevented.
        if os.path.lexists(target):
            raise OutputExistsError(shown or target) from None
        os.replace(tmp, target)
        return
    os.unlink(tmp)


def resolve_output(path: str | os.PathLike[str]) -> Path:
    """Where writing `path` writes: its folders resolved as the OS resolves them once the missing ones exist.

    Symlinks among the folders are followed, and `..` after a folder that does not exist yet is
    that folder's parent, as it will be once made: `missing/../log.jsonl` is `./log.jsonl`, so it
    is checked against the inputs as such, and `missing/` is never made for it. The last name is
    kept as given (a symlink there is replaced, not followed, by an atomic write).
    """
    target = Path(path)
    if target.name in ("", ".", ".."):
        return Path(os.path.realpath(target))
    return Path(os.path.realpath(target.parent)) / target.name


def check_writable(path: str | os.PathLike[str], *, shown: str | os.PathLike[str] | None = None) -> Path:
    """Raise unless a file or folder can be written at `path` (its folder, or the nearest one that exists,
    is writable); errors name `shown` (the path as the user gave it), else `path`. Returns the resolved path.

    Raises:
        NotADirectoryError: a file stands where one of its folders should be.
        OutputNotWritableError: the folder (or the nearest existing one, where the others are to be
            made) is not writable, or not a folder one can enter.
    """
    where = resolve_output(path)
    name = Path(shown) if shown is not None else Path(path)
    for folder in where.parents:
        if not os.path.lexists(folder):
            continue  # to be made by the writer
        if not os.path.isdir(folder):
            raise NotADirectoryError(errno.ENOTDIR, f"{folder} is a file, not a folder", str(name))
        if not os.access(folder, os.W_OK | os.X_OK):
            raise OutputNotWritableError(name, folder)
        return where
    return where  # pragma: no cover - the root folder exists


def refuse_inputs(output: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Raise `OutputIsInputError` when writing `output` would write to one of `inputs`.

    Compares files with `os.path.samefile` (so a symlink, a hard link or another spelling of an
    input is caught) and folders along the resolved paths (folders cannot be hard-linked).
    Inputs that do not exist are skipped: nothing of them can be destroyed.
    """
    target = Path(output)
    where = resolve_output(target)  # as the OS will resolve it: `missing/../input` is the input
    # The folders the output would be written in, symlinks resolved, that exist.
    folders = [folder for folder in Path(os.path.realpath(where)).parents if folder.is_dir()]
    for source in map(Path, inputs):
        if not source.exists():
            continue
        if os.path.lexists(where) and _same(where, source):
            raise OutputIsInputError(target, source)
        if source.is_dir() and any(_same(folder, source) for folder in folders):
            raise OutputIsInputError(target, source, "is inside the input folder")
        if where.is_dir() and any(_same(where, folder) for folder in Path(os.path.realpath(source)).parents):
            raise OutputIsInputError(target, source, "holds the input")


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # a dangling symlink, or no permission to look: not provably the same
        return False
