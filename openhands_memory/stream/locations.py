"""Where a log is: a file or folder (any layout `load_events` reads), or a conversation in PostgreSQL (a URL).

The command line and the benchmark take either, through these functions:

    load_log("trajectory.json")
    load_log("postgresql://user@db.internal/agents?conversation=c1")
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from openhands_memory._locations import is_database_url, log_location
from openhands_memory.errors import MalformedEventError, OutputExistsError, StoreDatabaseError
from openhands_memory.events import Event, ValidationReport, load_events, validate_events, validate_log
from openhands_memory.stream._postgres_url import display_url, parse_database_url

__all__ = [
    "LogLocation", "is_database_url", "load_log", "log_location", "shown_location", "validate_location", "write_to_database",
]  # fmt: skip

logger = logging.getLogger(__name__)

LogLocation = str | os.PathLike[str]
"""A log's file or folder, or a `postgresql://...?conversation=ID` URL."""


def shown_location(location: LogLocation) -> str:
    """How a location is shown in output and reports: a path as it is, a URL without its password."""
    return display_url(location) if is_database_url(location) else os.fspath(location)  # type: ignore[arg-type]


def load_log(location: LogLocation) -> list[Event]:
    """Every event of the log at `location`, checked as `load_events` checks a file.

    Raises:
        FileNotFoundError: no file or folder is at a path.
        MalformedEventError: the log is not one we can read (see `load_events`).
        StoreDatabaseError: the database cannot be reached, the URL names no conversation, or the
            conversation holds no event (no such conversation: a misspelled id is not an empty log).
        CorruptRecordError: a stored event does not read back (it names the conversation and position).
    """
    if not is_database_url(location):
        return load_events(location)
    events, report = _read_database(str(location))
    if not report.is_valid:
        first = report.errors[0]
        raise MalformedEventError(
            f"{first.what} ({first.why}); `openhands-memory validate` lists every finding",
            path=report.path,
            index=first.index,
            event_id=first.event_id,
        )
    for finding in report.warnings:
        logger.warning("%s", finding.describe())
    return events


def validate_location(location: LogLocation) -> ValidationReport:
    """The findings of `validate_log` for a file, or for the conversation a URL names (StoreDatabaseError when it holds no event)."""
    if not is_database_url(location):
        return validate_log(location)
    return _read_database(str(location))[1]


def _read_database(url: str) -> tuple[list[Event], ValidationReport]:
    """The conversation's events and their findings; a conversation with no event is no log (a misspelled id)."""
    from openhands_memory.stream.postgres_store import PostgresEventStore

    store = PostgresEventStore.from_url(url)
    try:
        events = store.snapshot()
    finally:
        store.close()
    if not events:  # a table holds a conversation once it holds an event of it: read as zeros, a typo passed
        raise StoreDatabaseError(
            store.location, f"no conversation {store.conversation!r} in table {store.table!r}: it holds no event of it"
        )
    return events, validate_events(events, path=store.location)


def write_to_database(events: Sequence[Event], url: str, *, overwrite: bool = False) -> int:
    """Store `events` (ids set, increasing) as the conversation a URL names, in one transaction; returns how many.

    The conversation must be empty unless `overwrite`, which replaces what it holds (in the same
    transaction: a reader sees the old events or the new ones, never a mix).

    Raises:
        OutputExistsError: the conversation holds events and `overwrite` is not set (nothing written).
        StoreDatabaseError: the database cannot be reached, or the URL names no conversation.
        DuplicateEventError, MalformedEventError: an event has no id, or ids do not increase.
    """
    from openhands_memory.stream.postgres_store import PostgresEventStore

    parse_database_url(url)
    store = PostgresEventStore.from_url(url)
    try:
        if len(store) and not overwrite:
            raise OutputExistsError(store.location, f"the conversation holds {len(store)} events")
        return store.append_all(events, replace=overwrite)
    finally:
        store.close()
