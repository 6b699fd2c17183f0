"""Telling a database URL from a path, with no import: the command line's parser needs it before anything loads."""

from __future__ import annotations

import uuid
from pathlib import Path

DATABASE_SCHEMES = ("postgresql", "postgres")
"""URL schemes that name a PostgreSQL database (libpq accepts both)."""


def is_database_url(location: object) -> bool:
    """Whether `location` is a PostgreSQL URL (a string starting with `postgresql://` or `postgres://`)."""
    return isinstance(location, str) and location.startswith(tuple(f"{scheme}://" for scheme in DATABASE_SCHEMES))


def output_location(text: str) -> Path | str:
    """A DST argument: a PostgreSQL URL as given (a `Path` would fold its `//`), anything else a `Path`."""
    return text if is_database_url(text) else Path(text)


def log_location(text: str) -> Path | str:
    """A LOG argument (only read): as `output_location`, and an SDK conversation's folder by either name of its id.

    The OpenHands SDK names the folder `<persistence_dir>/<conversation.id.hex>`; `str(conversation.id)`
    has dashes: a missing path named so stands for the folder named by the hex, when there is one.
    """
    if is_database_url(text):
        return text
    path = Path(text)
    if path.exists():
        return path
    try:
        folder = path.with_name(uuid.UUID(path.name).hex)
    except ValueError:  # not a uuid (or no name at all)
        return path
    return folder if folder.is_dir() else path
