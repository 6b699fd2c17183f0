"""`PostgresEventStore`: the store contract on a real local server, and what a shared database adds.

Concurrency across processes (several writers, a writer killed mid-append, live readers) is in
`test_postgres_concurrency.py`.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

from openhands_memory import EventStream, MessageAction
from openhands_memory.errors import (
    ConcurrentAppendError,
    CorruptRecordError,
    DuplicateEventError,
    StoreClosedError,
    StoreDatabaseError,
)
from openhands_memory.events import event_to_json
from openhands_memory.stream import EventStore, PostgresEventStore
from openhands_memory.testing.log_contract import LogFeaturesContract
from openhands_memory.testing.store_contract import DurableEventStoreContract, stored_event


class TestPostgresEventStore(DurableEventStoreContract):
    @pytest.fixture(autouse=True)
    def _database(self, postgres_url: str) -> None:
        self.url = postgres_url

    def make_store(self, tmp_path: Path) -> EventStore:
        # One conversation per test folder: reopening the folder reopens the conversation.
        return PostgresEventStore(self.url, conversation=tmp_path.name)


class TestPostgresLogFeatures(LogFeaturesContract):
    @pytest.fixture(autouse=True)
    def _database(self, postgres_url: str) -> None:
        self.url = postgres_url

    def log_location(self, tmp_path: Path, name: str) -> str:
        return f"{self.url}&conversation={tmp_path.name}-{name}"


del DurableEventStoreContract, LogFeaturesContract


def _url(postgres_url: str, conversation: str) -> str:
    return f"{postgres_url}&conversation={conversation}"


def test_body_is_the_exact_json_written_and_filter_columns_are_filled(postgres_url: str) -> None:
    store = PostgresEventStore(postgres_url, conversation="c1")
    events = [stored_event(i) for i in range(3)]
    for event in events:
        store.append(event)
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(
            "SELECT position, event_id, kind_key, kind, source, timestamp, cause, hidden, body FROM openhands_events "
            "WHERE conversation_id = 'c1' ORDER BY position"
        ).fetchall()
    assert [bytes(row[-1]) for row in rows] == [event_to_json(e) for e in events]
    assert [row[:8] for row in rows] == [
        (0, 0, "action", "message", "user", events[0].timestamp, None, False),
        (1, 1, "action", "run", "agent", events[1].timestamp, None, False),
        (2, 2, "observation", "run", "user", events[2].timestamp, 1, False),
    ]
    store.close()


def test_second_writer_of_a_position_gets_a_clear_error_and_nothing_is_overwritten(postgres_url: str) -> None:
    first = PostgresEventStore(postgres_url, conversation="c")
    second = PostgresEventStore(postgres_url, conversation="c")
    first.append(stored_event(0, "first writer"))
    with pytest.raises(
        ConcurrentAppendError,
        match=re.escape("conversation 'c': event 0 was not stored at index 0: another writer stored an event there first"),
    ) as caught:
        second.append(stored_event(0, "second writer"))
    assert isinstance(caught.value, DuplicateEventError)
    assert (caught.value.event_id, caught.value.index, caught.value.conversation) == (0, 0, "c")
    assert len(second) == 0  # nothing was taken in
    assert second.refresh() == 1
    assert [e.content for e in second.read_events()] == ["first writer"]
    second.append(stored_event(1, "second writer"))
    assert first.refresh() == 1
    assert [e.id for e in first.read_events()] == [0, 1]
    first.close()
    second.close()


def test_stream_catch_up_then_add_again_takes_the_next_id(postgres_url: str) -> None:
    url = _url(postgres_url, "shared")
    with EventStream.open(url) as one, EventStream.open(url) as two:
        seen: list[int] = []
        two.subscribe(lambda event: seen.append(event.id), "watcher")
        one.add_event(MessageAction(content="from one"), "user")
        event = MessageAction(content="from two")
        with pytest.raises(ConcurrentAppendError):
            two.add_event(event, "user")
        assert event.id is None  # the stream gave it no id
        caught_up = two.catch_up()
        assert [e.content for e in caught_up] == ["from one"]
        assert seen == [0]  # subscribers are told of the other writer's events too
        assert two.add_event(event, "user") == 1
        assert seen == [0, 1]
        assert [e.content for e in one.catch_up()] == ["from two"]
        assert [e.id for e in one.get_events()] == [0, 1]


def test_open_reads_ids_only_and_fetches_events_when_read(postgres_url: str) -> None:
    writer = PostgresEventStore(postgres_url, conversation="lazy")
    writer.append_all([stored_event(i) for i in range(50)])
    writer.close()
    store = PostgresEventStore(postgres_url, conversation="lazy")
    assert store.event_ids() == list(range(50))
    assert sum(event is not None for event in store._events) == 0
    assert [e.id for e in store.read_events(40, 42)] == [40, 41]
    assert sum(event is not None for event in store._events) == 2
    assert [e.id for e in store.snapshot()] == list(range(50))
    store.close()


def test_append_all_is_all_or_nothing(postgres_url: str) -> None:
    store = PostgresEventStore(postgres_url, conversation="bulk")
    store.append(stored_event(0))
    other = PostgresEventStore(postgres_url, conversation="bulk")
    other.append(stored_event(1))
    with pytest.raises(ConcurrentAppendError):
        store.append_all([stored_event(1), stored_event(2)])
    assert other.stored_count() == 2  # the batch left nothing behind
    with pytest.raises(DuplicateEventError, match="event 3 cannot follow id 5"):
        other.append_all([stored_event(5), stored_event(3)])
    assert other.stored_count() == 2
    store.close()
    other.close()


def test_append_all_replace_swaps_the_conversation_in_one_transaction(postgres_url: str) -> None:
    store = PostgresEventStore(postgres_url, conversation="swap")
    store.append_all([stored_event(i) for i in range(5)])
    store.append_all([stored_event(10), stored_event(11)], replace=True)
    assert [e.id for e in store.read_events()] == [10, 11]
    reopened = PostgresEventStore(postgres_url, conversation="swap")
    assert reopened.event_ids() == [10, 11]
    store.close()
    reopened.close()


def test_conversations_share_the_table_and_never_see_each_other(postgres_url: str) -> None:
    one = PostgresEventStore(postgres_url, conversation="one")
    two = PostgresEventStore(postgres_url, conversation="two")
    one.append(stored_event(0, "in one"))
    two.append(stored_event(0, "in two"))
    assert [e.content for e in one.read_events()] == ["in one"]
    assert [e.content for e in two.read_events()] == ["in two"]
    one.close()
    two.close()


def test_event_stream_open_takes_a_url_with_the_conversation(postgres_url: str) -> None:
    url = _url(postgres_url, "by-url")
    with EventStream.open(url) as stream:
        stream.add_event(MessageAction(content="hello"), "user")
        assert isinstance(stream.store, PostgresEventStore)
    with EventStream.open(url) as stream:
        assert [e.content for e in stream.get_events()] == ["hello"]
        assert stream.store.conversation == "by-url"


def test_url_without_conversation_is_refused(postgres_url: str) -> None:
    with pytest.raises(StoreDatabaseError, match=re.escape("the URL names no conversation: add ?conversation=ID")):
        EventStream.open(postgres_url)


def test_table_parameter_keeps_events_apart(postgres_url: str) -> None:
    with EventStream.open(_url(postgres_url, "c") + "&table=other_events") as stream:
        stream.add_event(MessageAction(content="elsewhere"), "user")
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM other_events").fetchone() == (1,)
        assert conn.execute("SELECT to_regclass('openhands_events')").fetchone() == (None,)


def test_password_never_appears_in_errors_or_repr(postgres_url: str) -> None:
    url = postgres_url.replace("postgresql://postgres@", "postgresql://postgres:hunter2secret@")
    store = PostgresEventStore(url, conversation="c")  # the test server trusts local users
    assert "hunter2secret" not in repr(store) and "postgres:***@" in store.location
    store.close()
    with pytest.raises(StoreClosedError) as closed:
        store.append(stored_event(0))
    assert "hunter2secret" not in str(closed.value)
    unreachable = "postgresql://user:hunter2secret@/db?host=/nonexistent-folder&conversation=c"
    with pytest.raises(StoreDatabaseError, match=re.escape("postgresql://user:***@/db?host=/nonexistent-folder")) as caught:
        EventStream.open(unreachable)
    assert "hunter2secret" not in str(caught.value)


def test_unreachable_server_is_a_store_error_naming_the_location() -> None:
    with pytest.raises(StoreDatabaseError, match=r"^postgresql://u@/db\?host=/nonexistent-folder&conversation=c: open failed: "):
        PostgresEventStore("postgresql://u@/db?host=/nonexistent-folder", conversation="c")


def test_a_table_that_is_not_ours_is_refused(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE openhands_events (x int)")
    with pytest.raises(StoreDatabaseError, match=re.escape("table 'openhands_events' exists but is not an openhands-memory events table")):
        PostgresEventStore(postgres_url, conversation="c")


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("UPDATE openhands_events SET body = 'not json'::bytea WHERE event_id = 1", "2: event 1: invalid JSON"),
        ("UPDATE openhands_events SET event_id = 9 WHERE event_id = 2", "3: the row of event 9 holds event 2"),
    ],
)
def test_a_damaged_row_is_a_corrupt_record_naming_conversation_and_position(
    postgres_url: str, statement: str, message: str
) -> None:
    store = PostgresEventStore(postgres_url, conversation="hurt")
    store.append_all([stored_event(i) for i in range(3)])
    store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(statement)
    reopened = PostgresEventStore(postgres_url, conversation="hurt")
    with pytest.raises(CorruptRecordError, match=re.escape(f"conversation=hurt:{message}")):
        reopened.snapshot()
    reopened.close()


def test_a_gap_in_positions_is_refused_when_opening(postgres_url: str) -> None:
    store = PostgresEventStore(postgres_url, conversation="gap")
    store.append_all([stored_event(i) for i in range(3)])
    store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DELETE FROM openhands_events WHERE position = 1")
    with pytest.raises(CorruptRecordError, match=re.escape("conversation=gap:2: no event at position 1")):
        PostgresEventStore(postgres_url, conversation="gap")


def test_a_pool_is_borrowed_and_left_open(postgres_url: str) -> None:
    from psycopg_pool import ConnectionPool

    with ConnectionPool(postgres_url, min_size=1, max_size=2, open=True) as pool:
        store = PostgresEventStore(pool=pool, conversation="pooled")
        store.append(stored_event(0))
        store.close()
        again = PostgresEventStore(pool=pool, conversation="pooled")
        assert [e.id for e in again.read_events()] == [0]
        again.close()
        assert not pool.closed


def test_a_pool_of_keyword_conninfo_is_named_without_its_password(postgres_url: str) -> None:
    from psycopg_pool import ConnectionPool

    socket = postgres_url.split("host=")[1].split("&")[0].replace("%2F", "/")
    schema = postgres_url.split("search_path%3D")[1]
    conninfo = f"host={socket} user=postgres dbname=postgres password=pool-secret options='-csearch_path={schema}'"
    with ConnectionPool(conninfo, min_size=1, max_size=1, open=True) as pool:
        store = PostgresEventStore(pool=pool, conversation="kw")
        assert store.location == f"postgresql: host={socket} user=postgres dbname=postgres password=*** options='-csearch_path={schema}' conversation=kw"
        store.append(stored_event(0))
        assert store.wait_for_events(timeout=0) is False  # listens with the pool's conninfo
        store.close()


def test_a_history_catches_up_with_another_worker_itself_and_appends_after_it(postgres_url: str) -> None:
    from openhands_memory import History

    url = _url(postgres_url, "handover")
    with History.open(url) as first, History.open(url) as second:
        first.add_event(MessageAction(content="Fix the failing test"), "user")
        # The second history lost the race for id 0: it catches up and stores its event after it.
        assert second.add_event(MessageAction(content="and the docs"), "user") == 1
        assert [e.content for e in second.view if isinstance(e, MessageAction)] == ["Fix the failing test", "and the docs"]
        first.stream.catch_up()
        assert [e.id for e in first.view] == [e.id for e in second.view]


def test_event_stream_from_events_stores_them_in_one_transaction(postgres_url: str) -> None:
    url = _url(postgres_url, "seeded")
    with EventStream.from_events([stored_event(0), stored_event(1)], url) as stream:
        assert stream.add_event(MessageAction(content="next"), "user") == 2
    with pytest.raises(DuplicateEventError):
        EventStream.from_events([stored_event(5), stored_event(4)], url)
    with EventStream.open(url) as stream:
        assert [e.id for e in stream.get_events()] == [0, 1, 2]  # the refused batch left nothing
