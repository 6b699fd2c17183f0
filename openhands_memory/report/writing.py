"""Write a report page: owner-only, atomically, never over an input, over an existing file only when asked.

Before a byte is written, the page is searched for every secret value (as written, and as JSON
escapes it): the replay hides them in every event it reads, so one found here is a bug, and the page
is refused rather than written (`OutputRefusedError`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from openhands_memory._files import (
    check_writable,
    refuse_inputs,
    resolve_output,
    write_atomically,
)
from openhands_memory.errors import OutputExistsError, OutputRefusedError
from openhands_memory.report.page import embed_json

__all__ = ["check_report_output", "write_page"]


def check_report_output(
    path: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str]] = (), overwrite: bool = False
) -> Path:
    """Check, before any work, that a page may be written at `path`; returns it.

    Raises:
        OutputIsInputError: `path` is one of `inputs` (by any path), or inside an input folder.
        OutputExistsError: `path` exists and `overwrite` is False.
        OutputNotWritableError: its folder (or the nearest one that exists) cannot be written.
    """
    target = Path(path)
    refuse_inputs(target, list(inputs))
    if not overwrite and os.path.lexists(resolve_output(target)):
        raise OutputExistsError(target)
    check_writable(target)
    return target


def _refuse_secrets(page: str, path: Path, secrets: Mapping[str, str]) -> None:
    for name, value in secrets.items():
        escaped = embed_json(value)[1:-1]
        if value in page or escaped in page:
            raise OutputRefusedError(path, f"the page would hold the value of secret {name}; nothing was written")


def write_page(
    path: str | os.PathLike[str],
    page: str,
    *,
    secrets: Mapping[str, str] | None = None,
    inputs: Iterable[str | os.PathLike[str]] = (),
    overwrite: bool = False,
) -> Path:
    """Write `page` (HTML) to `path`, mode 0600; returns the path.

    Raises:
        OutputRefusedError: the page holds a secret's value; or see `check_report_output`.
    """
    target = check_report_output(path, inputs=inputs, overwrite=overwrite)
    _refuse_secrets(page, target, secrets or {})
    return write_atomically(target, page.encode("utf-8"), overwrite=overwrite)
