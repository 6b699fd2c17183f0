"""Database URLs: `postgresql://user@host/db?conversation=ID[&table=NAME]`, split into libpq's part and ours.

`conversation` and `table` are this library's parameters; everything else (host, port, sslmode,
options, ...) is libpq's and passed on untouched. `display_url` drops the password, so an error
or a log line that names a store never shows one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from openhands_memory._locations import is_database_url
from openhands_memory.errors import StoreDatabaseError

DEFAULT_TABLE = "openhands_events"
"""The events table when a URL or a store names none."""

MAX_CONVERSATION_ID = 200
"""Characters a conversation id may have: it travels in every notification, whose payload is limited."""

_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,50}(\.[A-Za-z_][A-Za-z0-9_]{0,50})?")
_OURS = ("conversation", "table")
_SECRET_PARAMS = frozenset({"password", "sslpassword"})


@dataclass(frozen=True, slots=True)
class DatabaseLocation:
    """A conversation in a database, as a URL names it."""

    conninfo: str
    """The URL for libpq: ours without `conversation` and `table` (it may hold a password: never print it)."""
    conversation: str | None
    """The conversation id, or None when the URL names none."""
    table: str
    """The events table."""

    @property
    def display(self) -> str:
        """The location without any password, for messages and logs."""
        shown = display_url(self.conninfo)
        if not is_database_url(self.conninfo):  # a keyword string (a pool's): no URL to add parameters to
            named = [f"conversation={self.conversation}"] if self.conversation is not None else []
            named += [f"table={self.table}"] if self.table != DEFAULT_TABLE else []
            return " ".join(["postgresql:", shown or "(libpq defaults)", *named])
        extra = [("conversation", self.conversation)] if self.conversation is not None else []
        if self.table != DEFAULT_TABLE:
            extra.append(("table", self.table))
        if not extra:
            return shown
        return shown + ("&" if "?" in shown else "?") + urlencode(extra, quote_via=quote, safe="/")


def parse_database_url(url: str | os.PathLike[str]) -> DatabaseLocation:
    """Split a database URL into libpq's part, the conversation and the table.

    Raises:
        StoreDatabaseError: it is not a PostgreSQL URL, or names a bad table or conversation.
    """
    text = os.fspath(url)
    if not is_database_url(text):
        raise StoreDatabaseError(display_url(text), "not a PostgreSQL URL (postgresql://...)")
    parts = urlsplit(text)
    # A `+` is a plus, as libpq reads it (only form encoding makes it a space): `conversation=a+b` is `a+b`.
    params = parse_qsl(parts.query.replace("+", "%2B"), keep_blank_values=True)
    ours = {key: value for key, value in params if key in _OURS}
    rest = [(key, value) for key, value in params if key not in _OURS]
    conninfo = urlunsplit(parts._replace(query=urlencode(rest, quote_via=quote, safe="/")))
    table = ours.get("table", DEFAULT_TABLE)
    conversation = ours.get("conversation")
    try:
        check_table_name(table)
        if conversation is not None:
            check_conversation_id(conversation)
    except ValueError as exc:
        raise StoreDatabaseError(display_url(text), str(exc)) from None
    return DatabaseLocation(conninfo, conversation, table)


def check_table_name(table: str) -> None:
    """Refuse (ValueError) a table name that is not a plain identifier (optionally `schema.table`)."""
    if not _TABLE_NAME.fullmatch(table):
        raise ValueError(f"table name {table!r}: use letters, digits and _ (optionally schema.table), starting with a letter")


def check_conversation_id(conversation: object) -> None:
    """Refuse (ValueError) a conversation id that is not a non-empty string of at most `MAX_CONVERSATION_ID` printable characters."""
    if not isinstance(conversation, str) or not conversation:
        raise ValueError(f"conversation id {conversation!r}: a non-empty string is needed")
    if len(conversation) > MAX_CONVERSATION_ID or not conversation.isprintable():
        raise ValueError(f"conversation id {conversation[:40]!r}: at most {MAX_CONVERSATION_ID} printable characters")


_KEYWORD_PASSWORD = re.compile(r"\b((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")


def display_url(url: str) -> str:
    """`url` with its password (in the user part or a `password=` parameter) replaced by `***`.

    A libpq keyword string (`host=db password=...`, as a pool may hold) gets its password hidden too.
    """
    if not is_database_url(url):
        return _KEYWORD_PASSWORD.sub(r"\1***", url)
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unreadable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        if ":" in user:
            user = user.split(":", 1)[0] + ":***"
        netloc = f"{user}@{host}"
    params = parse_qsl(parts.query, keep_blank_values=True)
    if any(key in _SECRET_PARAMS for key, _ in params):
        params = [(key, "***" if key in _SECRET_PARAMS else value) for key, value in params]
        query = urlencode(params, quote_via=quote, safe="/*")
    else:
        query = parts.query
    return urlunsplit(parts._replace(netloc=netloc, query=query))
