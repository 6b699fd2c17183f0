"""Telling a database URL from a path, with no import: the command line's parser needs it before anything loads."""

from __future__ import annotations

from pathlib import Path

DATABASE_SCHEMES = ("postgresql", "postgres")
"""URL schemes that name a PostgreSQL database (libpq accepts both)."""


def is_database_url(location: object) -> bool:
    """Whether `location` is a PostgreSQL URL (a string starting with `postgresql://` or `postgres://`)."""
    return isinstance(location, str) and location.startswith(tuple(f"{scheme}://" for scheme in DATABASE_SCHEMES))


def log_location(text: str) -> Path | str:
    """A LOG argument: a PostgreSQL URL as given (a `Path` would fold its `//`), anything else a `Path`."""
    return text if is_database_url(text) else Path(text)
