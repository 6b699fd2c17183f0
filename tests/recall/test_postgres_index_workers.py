"""`PostgresSearchIndex` used as a team uses it: many workers at once, a server that drops connections, a read-only role."""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from conftest import HANG_GUARD_SECONDS, postgres_server_log

from openhands_memory import History
from openhands_memory.condenser import Condenser
from openhands_memory.events import CmdOutputObservation, Event, EventSource, MessageAction, SearchHistoryAction
from openhands_memory.recall import PostgresSearchIndex
from openhands_memory.stream import PostgresEventStore


def _event(event_id: int, text: str) -> Event:
    event = MessageAction(content=text) if event_id % 2 == 0 else CmdOutputObservation(content=text, command="x")
    event.id, event.timestamp, event.source = event_id, "2025-01-01T00:00:00", EventSource.AGENT
    return event


def test_workers_indexing_one_conversation_at_once_never_deadlock_nor_lose_an_event(postgres_url: str) -> None:
    workers, rounds = 4, 12
    events = [_event(n, f"note marker{n} of the race") for n in range(workers * rounds)]
    store = PostgresEventStore(postgres_url, conversation="shared")
    store.append_all(events)
    store.close()
    start = threading.Barrier(workers)
    failures: list[BaseException] = []

    def work(number: int) -> None:
        try:
            own = PostgresEventStore(postgres_url, conversation="shared")
            start.wait()
            for round_ in range(rounds):
                # A worker that just picked the conversation up opens its index, then indexes: the
                # moment the tables used to be made inside the write, beside others' writes.
                with PostgresSearchIndex.for_store(own) as index:
                    index.add(events[round_ * workers + number])
                    index.add(events[(round_ * workers + number + 1) % len(events)])
            own.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_GUARD_SECONDS)
    assert not failures, failures[0]
    reader = PostgresEventStore(postgres_url, conversation="shared")
    with PostgresSearchIndex.for_store(reader) as index:
        missing = [e.id for e in events if e.id not in {hit.event_id for hit in index.search(f"marker{e.id}", limit=3)}]
    reader.close()
    assert missing == []


def _search(history: History, query: str, number: int) -> str:
    call = {"id": f"call_{number}", "type": "function", "function": {"name": "search_history", "arguments": f'{{"query": "{query}"}}'}}
    return history.run_memory_tool(call).content


def _drop_connections(postgres_url: str, application: str) -> int:
    """What a server restart does to a client: every connection of `application` is cut."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        return conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s", (application,)
        ).fetchone()[0]


def test_search_goes_on_after_the_database_dropped_every_connection(postgres_url: str) -> None:
    application = f"restart_{uuid.uuid4().hex[:8]}"
    url = f"{postgres_url}&application_name={application}&conversation=restart"
    with History.open(url, condenser=Condenser.from_config({"type": "noop"})) as history:
        history.add_event(MessageAction(content="the quokka is a marsupial"), EventSource.USER)
        assert "quokka" in _search(history, "quokka", 1)
        for round_ in range(3):  # again and again: a restart is not a reason to stop searching for good
            assert _drop_connections(postgres_url, application) >= 1
            history.add_event(MessageAction(content=f"wombat number {round_}"), EventSource.USER)
            assert _drop_connections(postgres_url, application) >= 1
            answer = _search(history, f"wombat number {round_}", 2 + round_)
            assert "unavailable" not in answer and f"wombat number {round_}" in answer
        assert history.stream.get_latest_event_id() == len(history.stream) - 1  # every append stored once


@pytest.fixture
def dashboard_url(postgres_url: str, postgres_server: str) -> Iterator[str]:
    """The URL of a role that may only read (SELECT on the test's schema, as a dashboard gets), every statement it sends logged."""
    role = f"dash_{uuid.uuid4().hex[:8]}"
    schema = psycopg.conninfo.conninfo_to_dict(postgres_url)["options"].split("=", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{role}" LOGIN')
        conn.execute(f'ALTER ROLE "{role}" SET log_statement = \'all\'')  # a superuser's setting: the role cannot unset it
        conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO "{role}"')
        conn.execute(f'ALTER DEFAULT PRIVILEGES IN SCHEMA "{schema}" GRANT SELECT ON TABLES TO "{role}"')
    try:
        yield postgres_url.replace("postgresql://postgres@", f"postgresql://{quote(role)}@", 1)
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f'DROP OWNED BY "{role}"')
            conn.execute(f'DROP ROLE "{role}"')


_WRITE = re.compile(r"(statement|execute [^:]*): *(INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|TRUNCATE)\b|FOR UPDATE|permission denied")


def _writes_tried(log: Path, since: int) -> list[str]:
    """The lines of the server's log after byte `since` where a role tried to write (only the dashboard's statements are logged)."""
    with open(log, "rb") as lines:
        lines.seek(since)
        return [line for line in lines.read().decode(errors="replace").splitlines() if _WRITE.search(line)]


def _writer_with(postgres_url: str, conversation: str, texts: list[str], *, indexed: int) -> PostgresEventStore:
    """A writer's store of `texts` (one event each), the first `indexed` of them indexed in the database."""
    writer = PostgresEventStore(postgres_url, conversation=conversation)
    writer.append_all([_event(n, text) for n, text in enumerate(texts)])
    if indexed:
        with PostgresSearchIndex.for_store(writer) as index:
            index.sync(writer.snapshot()[:indexed])
    return writer


def test_a_read_only_role_searches_the_shared_index_and_never_writes_it(postgres_url: str, postgres_server: str, dashboard_url: str) -> None:
    log = postgres_server_log(postgres_server)
    writer = _writer_with(postgres_url, "dash", ["deploy the kangaroo service", "kangaroo deployed"], indexed=2)
    since = log.stat().st_size
    with History.open(f"{dashboard_url}&conversation=dash", condenser=Condenser.from_config({"type": "noop"})) as history:
        recall = history._recall  # the dashboard only reads: it never appends
        answer = recall.search(SearchHistoryAction(query="kangaroo"), 2000, lambda: (lambda event_id: "in view"))
        index = recall.index
        assert isinstance(index, PostgresSearchIndex)
        assert "unavailable" not in answer.content and "kangaroo deployed" in answer.content
        # The shared index answered: no index of its own in memory, nothing written nor tried.
        assert index.fallback_reason is None and _writes_tried(log, since) == []
        assert index.read_only and index.fallbacks == 0
    writer.close()


def test_a_read_only_role_falls_back_visibly_while_the_shared_index_is_behind(
    postgres_url: str, postgres_server: str, dashboard_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    log = postgres_server_log(postgres_server)
    writer = _writer_with(postgres_url, "late", ["the wombat digs", "a wombat sleeps", "the wombat wakes up"], indexed=2)
    since = log.stat().st_size
    reader = PostgresEventStore(f"{dashboard_url}&conversation=late")
    with PostgresSearchIndex.for_store(reader) as index, caplog.at_level(logging.WARNING):
        index.sync(reader.snapshot())  # the writers have not indexed event 2 yet
        assert "behind the log: it holds events up to 1, the log goes to 2" in caplog.text and index.fallbacks == 1
        assert index.fallback_reason is not None and "may only read" in index.fallback_reason
        assert [hit.event_id for hit in index.search("wakes")] == [2]  # the index in memory has it
        with PostgresSearchIndex.for_store(writer) as shared:
            shared.sync(writer.snapshot())  # a writer catches the shared index up
        index.sync(reader.snapshot())
        assert (index.fallbacks, index.fallback_reason) == (1, None)  # the shared one again
        assert "holds the log again" in caplog.text
        assert [hit.event_id for hit in index.search("wakes")] == [2]
    reader.close()
    writer.close()
    assert _writes_tried(log, since) == []


def test_a_read_only_role_never_makes_the_tables_of_an_absent_index(
    postgres_url: str, postgres_server: str, dashboard_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    log = postgres_server_log(postgres_server)
    writer = _writer_with(postgres_url, "bare", ["the platypus lays eggs"], indexed=0)
    since = log.stat().st_size
    reader = PostgresEventStore(f"{dashboard_url}&conversation=bare")
    with PostgresSearchIndex.for_store(reader) as index, caplog.at_level(logging.WARNING):
        index.sync(reader.snapshot())
        assert _writes_tried(log, since) == []  # not even the tables' CREATE
        assert index.read_only and index.fallbacks == 1 and "absent: its tables are missing" in caplog.text
        assert [hit.event_id for hit in index.search("platypus")] == [0]
    reader.close()
    writer.close()
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT to_regclass('openhands_events_search')").fetchone()[0] is None


def test_a_search_index_that_failed_on_a_database_error_is_opened_again_by_the_next_search(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openhands_memory.errors import StoreDatabaseError

    with History.open(f"{postgres_url}&conversation=reopen", condenser=Condenser.from_config({"type": "noop"})) as history:
        history.add_event(MessageAction(content="the quokka is a marsupial"), EventSource.USER)
        assert "quokka" in _search(history, "quokka", 1)
        broken = {"left": 2}  # the server is down for two index writes

        def add(self: PostgresSearchIndex, event: Event) -> None:
            if broken["left"]:
                broken["left"] -= 1
                raise StoreDatabaseError(self._store.location, "update the search index failed: server closed the connection")
            original(self, event)

        original = PostgresSearchIndex.add
        monkeypatch.setattr(PostgresSearchIndex, "add", add)
        history.add_event(MessageAction(content="a wombat digs"), EventSource.USER)  # the index fails here
        assert history._recall.index is None
        # The search's own action fails the index once more; then it is opened again and finds the event.
        assert "a wombat digs" in _search(history, "wombat", 2)
        assert history._recall.reopens == 1 and broken["left"] == 0


def test_a_dashboard_searches_from_the_command_line_and_says_when_the_shared_index_is_behind(
    postgres_url: str, postgres_server: str, dashboard_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from openhands_memory.cli import main

    log = postgres_server_log(postgres_server)
    writer = _writer_with(postgres_url, "cli", ["the echidna forages", "an echidna rests"], indexed=2)
    since = log.stat().st_size
    url = f"{dashboard_url}&conversation=cli"
    assert main(["search", url, "echidna"]) == 0
    out, err = capsys.readouterr()
    assert sorted(line.split()[0] for line in out.splitlines()[1:]) == ["0", "1"] and "warning" not in err
    writer.append_all([_event(2, "the echidna wakes")])  # not indexed yet
    assert main(["search", url, "echidna", "wakes"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[1].split()[0] == "2"
    assert "warning:" in err and "behind the log: it holds events up to 1, the log goes to 2" in err
    writer.close()
    assert _writes_tried(log, since) == []
