"""`PostgresSearchIndex`: the search index of a conversation in PostgreSQL, a projection rebuilt from the log."""

from __future__ import annotations

import logging

import psycopg
import pytest

from openhands_memory.events import CmdOutputObservation, Event, EventSource, MessageAction
from openhands_memory.recall import PostgresSearchIndex, SearchIndex
from openhands_memory.stream import PostgresEventStore, Redactor


def _event(event_id: int, text: str, *, hidden: bool = False) -> Event:
    event = MessageAction(content=text) if event_id % 2 == 0 else CmdOutputObservation(content=text, command="x")
    event.id, event.timestamp, event.source, event.hidden = event_id, "2025-01-01T00:00:00", EventSource.AGENT, hidden
    return event


EVENTS = [
    _event(0, "Fix the failing test in src/config_loader.py please"),
    _event(1, "tests/test_config.py::test_save_entry FAILED\nAssertionError: expected 3 got 4"),
    _event(2, "I will open src/config_loader.py and read load_entry"),
    _event(3, "def load_entry(path):\n    return parse(path)  # the parser drops the last key"),
    _event(4, "secret plans", hidden=True),
    _event(5, "npm install finished; 0 vulnerabilities; config ok"),
]


@pytest.fixture
def store(postgres_url: str) -> PostgresEventStore:
    store = PostgresEventStore(postgres_url, conversation="c")
    store.append_all(EVENTS)
    yield store
    store.close()


@pytest.mark.parametrize(
    "query",
    ["config_loader.py", "FAILED", "load_entry parser", "vulnerabilities config", "zzz nothing", "AND ( * : \"", "test_save_entry"],
)
def test_finds_what_the_sqlite_index_finds(store: PostgresEventStore, query: str) -> None:
    with PostgresSearchIndex.for_store(store) as index, SearchIndex.in_memory() as sqlite:
        index.sync(EVENTS)
        sqlite.sync(EVENTS)
        found = index.search(query, limit=10)
        expected = sqlite.search(query, limit=10)
    assert sorted(hit.event_id for hit in found) == sorted(hit.event_id for hit in expected)
    by_id = {hit.event_id: hit for hit in expected}
    assert [(hit.kind, hit.snippet) for hit in found] == [(by_id[hit.event_id].kind, by_id[hit.event_id].snippet) for hit in found]


@pytest.mark.parametrize("before", [0, 1, 3, 4, 6])
def test_before_finds_only_older_events_as_the_sqlite_index_does(store: PostgresEventStore, before: int) -> None:
    with PostgresSearchIndex.for_store(store) as index, SearchIndex.in_memory() as sqlite:
        index.sync(EVENTS)
        sqlite.sync(EVENTS)
        found = sorted(hit.event_id for hit in index.search("config", limit=10, before=before))
        expected = sorted(hit.event_id for hit in sqlite.search("config", limit=10, before=before))
    assert found == expected == [i for i in (0, 1, 2, 5) if i < before]


def test_hidden_events_are_never_found(store: PostgresEventStore) -> None:
    with PostgresSearchIndex.for_store(store) as index:
        index.sync(EVENTS)
        assert index.search("secret plans") == []
        assert len(index) == 5 and index.last_indexed_id == 5


def test_every_worker_shares_one_index_kept_in_the_database(store: PostgresEventStore, postgres_url: str) -> None:
    with PostgresSearchIndex.for_store(store) as first:
        assert first.sync(EVENTS) == 6
    other_worker = PostgresEventStore(postgres_url, conversation="c")
    with PostgresSearchIndex.for_store(other_worker) as second:
        assert second.last_indexed_id == 5
        assert second.sync(other_worker.snapshot()) == 0  # nothing to index again
        assert [hit.event_id for hit in second.search("vulnerabilities")] == [5]
        new = _event(6, "the flaky vulnerabilities scanner again")
        other_worker.append(new)
        second.add(new)
    with PostgresSearchIndex.for_store(store) as first:
        assert sorted(hit.event_id for hit in first.search("vulnerabilities")) == [5, 6]
    other_worker.close()


def test_dropped_tables_are_made_again_and_refilled_from_the_log(store: PostgresEventStore, postgres_url: str) -> None:
    index = PostgresSearchIndex.for_store(store)
    index.sync(EVENTS)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DROP TABLE openhands_events_search, openhands_events_search_state")
    assert index.search("config") == []  # no error: the tables are back, empty
    assert index.needs_sync and index.last_indexed_id is None
    assert index.sync(EVENTS) == 6
    assert not index.needs_sync
    assert sorted(hit.event_id for hit in index.search("load_entry")) == [2, 3]
    index.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DROP TABLE openhands_events_search, openhands_events_search_state")
    reopened = PostgresSearchIndex.for_store(store)  # a fresh worker finds them missing: made again
    assert reopened.last_indexed_id is None and reopened.sync(store.snapshot()) == 6
    reopened.close()


def test_a_replaced_conversation_is_reindexed(store: PostgresEventStore, caplog: pytest.LogCaptureFixture) -> None:
    with PostgresSearchIndex.for_store(store) as index:
        index.sync(EVENTS)
        replacement = [_event(0, "a different start"), _event(1, "about kubernetes only")]
        store.append_all(replacement, replace=True)
        with caplog.at_level(logging.WARNING):
            assert index.sync(store.snapshot()) == 2
        assert index.rebuilds == 1 and "does not match the log" in caplog.text
        assert index.search("config") == []
        assert [hit.event_id for hit in index.search("kubernetes")] == [1]


def test_search_from_the_command_line_uses_the_database_index(
    store: PostgresEventStore, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from openhands_memory.cli import main

    assert main(["search", f"{postgres_url}&conversation=c", "npm", "install"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[:2] for line in out.splitlines()[1:]] == [["5", "run"]]
    with psycopg.connect(postgres_url) as conn:
        # Every event is recorded (its digest); the hidden one has no words.
        assert conn.execute(
            "SELECT count(*), count(words) FROM openhands_events_search WHERE conversation_id = 'c'"
        ).fetchone() == (6, 5)


def test_secrets_in_force_are_hidden_and_a_caller_without_them_never_writes(postgres_url: str) -> None:
    store = PostgresEventStore(postgres_url, conversation="s")
    store.append_all([_event(0, "the token is hunter2-long-secret ok"), _event(1, "nothing here")])
    redactor = Redactor({"TOKEN": "hunter2-long-secret"})
    with PostgresSearchIndex.for_store(store, redactor=redactor) as index:
        index.sync(store.snapshot())
        assert index.search("hunter2") == []
        (hit,) = index.search("token")
        assert "hunter2" not in hit.snippet and "<secret_hidden>" in hit.snippet
        assert index.is_current(store.snapshot()[0])
    with PostgresSearchIndex.for_store(store) as blind:
        blind.sync(store.snapshot())
        assert blind.fallback_reason == "the index in the database hides secrets this caller was not given"
        assert [hit.event_id for hit in blind.search("hunter2")] == [0]  # its own index, in memory
    with PostgresSearchIndex.for_store(store, redactor=redactor) as index:
        assert index.search("hunter2") == []  # the caller without the secrets wrote nothing
    store.close()
