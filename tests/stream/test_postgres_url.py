"""Database URLs: our parameters split from libpq's, and passwords never shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openhands_memory._locations import is_database_url, log_location
from openhands_memory.errors import StoreDatabaseError
from openhands_memory.stream._postgres_url import display_url, parse_database_url


def test_conversation_and_table_are_ours_the_rest_goes_to_libpq() -> None:
    location = parse_database_url("postgresql://u:pw@db:5433/agents?sslmode=require&conversation=c%2F1&table=s.events")
    assert location.conninfo == "postgresql://u:pw@db:5433/agents?sslmode=require"
    assert (location.conversation, location.table) == ("c/1", "s.events")
    assert location.display == "postgresql://u:***@db:5433/agents?sslmode=require&conversation=c/1&table=s.events"


def test_defaults_no_conversation_and_the_default_table() -> None:
    location = parse_database_url("postgres://db/agents")
    assert (location.conninfo, location.conversation, location.table) == ("postgres://db/agents", None, "openhands_events")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://db/x?table=drop;table", "table name 'drop;table': use letters, digits and _"),
        ("postgresql://db/x?conversation=", "conversation id '': a non-empty string is needed"),
        ("postgresql://db/x?conversation=" + "a" * 201, "at most 200 printable characters"),
        ("mysql://db/x", "not a PostgreSQL URL"),
    ],
)
def test_bad_parameters_are_refused_naming_the_store(url: str, message: str) -> None:
    with pytest.raises(StoreDatabaseError, match=re.escape(message)):
        parse_database_url(url)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://me:hunter2@db/x", "postgresql://me:***@db/x"),
        ("postgresql://me@db/x?password=hunter2&sslmode=require", "postgresql://me@db/x?password=***&sslmode=require"),
        ("host=db password=hunter2 dbname=x", "host=db password=*** dbname=x"),
        ("postgresql://me@db/x", "postgresql://me@db/x"),
    ],
)
def test_display_hides_the_password(url: str, shown: str) -> None:
    assert display_url(url) == shown


def test_a_command_line_log_is_a_url_or_a_path() -> None:
    assert log_location("postgresql://db/x?conversation=c") == "postgresql://db/x?conversation=c"
    assert log_location("logs/postgresql.jsonl") == Path("logs/postgresql.jsonl")
    assert is_database_url("postgres://db") and not is_database_url(Path("postgresql://db"))
