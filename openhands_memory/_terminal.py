"""How wide the command line's text may be, and lines broken to fit it."""

from __future__ import annotations

import os
import sys
import textwrap

DEFAULT_WIDTH = 100
"""How wide text reports are when the output is no terminal and `$COLUMNS` is not set."""


def text_width() -> int:
    """How wide text reports may be: `$COLUMNS`, else the terminal's width, else `DEFAULT_WIDTH` (piped output)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if sys.stdout.isatty():
            return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):  # no real terminal behind it
        pass
    return DEFAULT_WIDTH


def wrap_line(line: str, width: int | None = None, *, indent: int = 0) -> str:
    """`line` broken at spaces to fit `width` (default: `text_width()`), the lines after the first indented.

    A word longer than the width (a path, a URL) is never cut.
    """
    limit = text_width() if width is None else width
    if len(line) <= limit:
        return line
    return textwrap.fill(line, width=limit, subsequent_indent=" " * indent, break_long_words=False, break_on_hyphens=False)
