"""Telling a database URL from a path, with no import: the command line's parser needs it before anything loads."""

from __future__ import annotations

import argparse
import re
import uuid
from pathlib import Path

DATABASE_SCHEMES = ("postgresql", "postgres")
"""URL schemes that name a PostgreSQL database (libpq accepts both)."""


def is_database_url(location: object) -> bool:
    """Whether `location` is a PostgreSQL URL (a string starting with `postgresql://` or `postgres://`)."""
    return isinstance(location, str) and location.startswith(tuple(f"{scheme}://" for scheme in DATABASE_SCHEMES))


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):/")
"""A URL's start (two letters at least: `C:/` is a Windows drive, not a scheme)."""


def mistyped_url(location: object) -> str | None:
    """Why `location` is refused when it looks like a URL but is no PostgreSQL one (`postgresq://`, `postgresql:/x`,
    `PostgreSQL://`, `mysql://`), else None: such a string must never become a local file or folder."""
    if not isinstance(location, str) or is_database_url(location):
        return None
    found = _SCHEME.match(location)
    if found is None:
        return None
    return (
        f"{location.split('?', 1)[0]!r} looks like a URL but is not one this library opens: expected "
        "postgresql://user@host/db?conversation=ID (or postgres://, in lower case, with two slashes), or a file path"
    )


def output_location(text: str) -> Path | str:
    """A DST argument: a PostgreSQL URL as given (a `Path` would fold its `//`), anything else a `Path`.

    Raises:
        argparse.ArgumentTypeError: it looks like a URL of another kind, or a mistyped one (`mistyped_url`).
    """
    problem = mistyped_url(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text if is_database_url(text) else Path(text)


def log_location(text: str) -> Path | str:
    """A LOG argument (only read): as `output_location`, and an SDK conversation's folder by either name of its id.

    The OpenHands SDK names the folder `<persistence_dir>/<conversation.id.hex>`; `str(conversation.id)`
    has dashes: a missing path named so stands for the folder named by the hex, when there is one.

    Raises:
        argparse.ArgumentTypeError: see `output_location`.
    """
    location = output_location(text)
    if isinstance(location, str) or location.exists():
        return location
    try:
        folder = location.with_name(uuid.UUID(location.name).hex)
    except ValueError:  # not a uuid (or no name at all)
        return location
    return folder if folder.is_dir() else location
