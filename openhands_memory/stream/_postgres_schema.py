"""The events table of `PostgresEventStore`, its indexes and the trigger that tells listeners of new events.

One table holds every conversation: a row per event, keyed by (conversation id, event id), with
its position in the conversation (0, 1, 2, ... with no gap: `read_events` slices by it, and two
writers cannot both take one), the event's exact JSON as written (`body`, bytea: see below), and
the columns the library filters on, copied from the event when it is stored.

Why bytea for the body: measured on the 1,363 events of the real OpenHands logs (11 MB,
`benchmarks/bench_postgres.py`), jsonb gave back 0 of them byte for byte (it orders keys by
length and spaces them), json and bytea all of them; bytea read back fastest in binary (0.060 s
against 0.069 s for json as text) and is not parsed by the server on the way in. A dashboard that
wants to query inside the JSON can still: `convert_from(body, 'UTF8')::jsonb`.

A statement-level trigger sends one `NOTIFY` per conversation per statement (payload
`<last event id> <conversation id>`) on the channel named after the table, in the transaction
that stores the events: a listener hears of them exactly when they are committed.

Schema 2 added `append_key`: the key the writer chose for the append (unique per conversation;
NULL for events imported in bulk), so that an append retried after its outcome was lost (the
connection dropped before COMMIT's reply came back) finds the event it stored instead of storing it
twice. A schema 1 table is upgraded in place when opened (`upgrade_ddl`).

Table names are identifiers as written, capitals included: every statement quotes them, and a
lookup by name (`to_regclass`) gets the quoted form (`regclass_name`), so `Events` is always `Events`.
"""

from __future__ import annotations

import zlib
from typing import Any

SCHEMA_VERSION = 2
"""Written in the table's comment; a table of another version is refused, not guessed at."""

COLUMNS = (
    "conversation_id", "position", "event_id", "kind_key", "kind", "source", "timestamp", "cause", "hidden", "body",
)  # fmt: skip
"""The columns every write fills, in order (an append adds `append_key`)."""

KEY_COLUMN = "append_key"
"""The column holding the key an append was made with (see the module)."""


def schema_comment(version: int = SCHEMA_VERSION) -> str:
    """The table comment that marks an events table of `version`."""
    return f"openhands-memory events, schema {version}"


def split_table(table: str) -> tuple[str | None, str]:
    """`schema.table` (or `table`) as its schema (None: the search path's) and its name."""
    schema, _, name = table.rpartition(".")
    return (schema or None), name


def advisory_key(table: str) -> int:
    """The advisory lock key that serializes creating `table` across processes (a signed 64-bit int)."""
    return zlib.crc32(f"openhands-memory:{table}".encode()) - (1 << 31)


def table_ddl(sql: Any, table: str, *, lz4: bool = False) -> list[Any]:
    """The statements that create the events table, its indexes and its notify trigger (psycopg `sql` objects).

    With `lz4` (PostgreSQL 14+ built with it), bodies are compressed with lz4 rather than pglz:
    measured on 10k synthetic events, storing them took 0.47 s instead of 0.81 s and reading them
    back 0.62 s instead of 1.03 s, at the same size.
    """
    schema, name = split_table(table)
    ident = sql.Identifier(*([schema] if schema else []), name)
    function = sql.Identifier(*([schema] if schema else []), f"{name}_notify")
    trigger = sql.Identifier(f"{name}_notify")
    comment = sql.Literal(schema_comment())
    return [
        sql.SQL(
            """
            CREATE TABLE {table} (
                conversation_id text NOT NULL,
                position bigint NOT NULL CHECK (position >= 0),
                event_id bigint NOT NULL CHECK (event_id >= 0),
                kind_key text NOT NULL,
                kind text NOT NULL,
                source text,
                timestamp text,
                cause bigint,
                hidden boolean NOT NULL DEFAULT false,
                body bytea {compression} NOT NULL,
                stored_at timestamptz NOT NULL DEFAULT now(),
                append_key text,
                PRIMARY KEY (conversation_id, event_id),
                UNIQUE (conversation_id, position),
                UNIQUE (conversation_id, append_key)
            )
            """
        ).format(table=ident, compression=sql.SQL("COMPRESSION lz4" if lz4 else "")),
        sql.SQL("COMMENT ON TABLE {table} IS {comment}").format(table=ident, comment=comment),
        sql.SQL(
            """
            CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify({channel}, max(event_id)::text || ' ' || conversation_id)
                    FROM new_rows GROUP BY conversation_id;
                RETURN NULL;
            END
            $$
            """
        ).format(function=function, channel=sql.Literal(table)),
        sql.SQL(
            "CREATE TRIGGER {trigger} AFTER INSERT ON {table} REFERENCING NEW TABLE AS new_rows "
            "FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
        ).format(trigger=trigger, table=ident, function=function),
    ]


def upgrade_ddl(sql: Any, table: str, version: int) -> list[Any]:
    """The statements that bring an events table of schema `version` to `SCHEMA_VERSION` (empty when it is)."""
    ident = table_ident(sql, table)
    statements = []
    if version < 2:
        statements += [
            sql.SQL("ALTER TABLE {table} ADD COLUMN IF NOT EXISTS append_key text").format(table=ident),
            sql.SQL("ALTER TABLE {table} ADD UNIQUE (conversation_id, append_key)").format(table=ident),
        ]
    statements.append(sql.SQL("COMMENT ON TABLE {table} IS {comment}").format(table=ident, comment=sql.Literal(schema_comment())))
    return statements


def schema_version(comment: str | None) -> int | None:
    """The schema version a table comment names, or None when it is not one of ours."""
    prefix = "openhands-memory events, schema "
    if comment is None or not comment.startswith(prefix) or not comment[len(prefix) :].isdigit():
        return None
    return int(comment[len(prefix) :])


def regclass_name(table: str) -> str:
    """`table` quoted as `to_regclass` needs it to keep capitals (`"Events"`, `"s"."Events"`)."""
    return ".".join('"' + part.replace('"', '""') + '"' for part in table.split("."))


def table_ident(sql: Any, table: str) -> Any:
    """The table as a psycopg identifier (schema-qualified when given so)."""
    schema, name = split_table(table)
    return sql.Identifier(*([schema] if schema else []), name)


def parse_notification(payload: str) -> tuple[int, str] | None:
    """A notification's (last event id, conversation id), or None if it is not one of ours."""
    head, _, conversation = payload.partition(" ")
    if not head.isdigit() or not conversation:
        return None
    return int(head), conversation
