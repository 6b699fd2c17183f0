"""`PostgresEventStore` under real use (issue 33): lost replies, retries, operations beside live writers, bounds, bad input.

Each test runs on the real local server; the failures are injected where a network would cause
them (a reply lost after the server committed), or made by the server itself (a lock held).
"""

from __future__ import annotations

import re
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import HANG_GUARD_SECONDS, postgres_server_log

from openhands_memory import EventStream, History, MessageAction
from openhands_memory.errors import (
    ConcurrentAppendError,
    DuplicateEventError,
    MalformedEventError,
    StoreDatabaseError,
    StoreTimeoutError,
)
from openhands_memory.events import event_from_json, event_to_json
from openhands_memory.stream import PostgresEventStore
from openhands_memory.stream import postgres_store as store_module
from openhands_memory.testing.store_contract import stored_event


def _message(event_id: int, text: str) -> MessageAction:
    event = stored_event(event_id)
    message = MessageAction(content=text)
    message.id, message.timestamp, message.source = event_id, event.timestamp, event.source
    return message


def _url(postgres_url: str, conversation: str) -> str:
    return f"{postgres_url}&conversation={conversation}"


def _rows(postgres_url: str, conversation: str, table: str = "openhands_events") -> list[tuple[int, int, str]]:
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(
            f'SELECT position, event_id, body FROM "{table}" WHERE conversation_id = %s ORDER BY position', (conversation,)
        ).fetchall()
    return [(position, event_id, event_from_json(bytes(body)).content) for position, event_id, body in rows]


class _Flaky:
    """A connection that loses the reply of chosen statements: the server ran (and committed) them, the client hears nothing."""

    def __init__(self, conn: Any, lose: dict[str, int]) -> None:
        self._conn = conn
        self._lose = lose

    def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        if self._lose["before"] > 0:  # the connection is gone before the statement is sent
            self._lose["before"] -= 1
            self._conn.close()
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        result = self._conn.execute(query, *args, **kwargs)
        if self._lose["after"] > 0:
            self._lose["after"] -= 1
            self._conn.close()
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def _lose_replies(monkeypatch: pytest.MonkeyPatch, store: PostgresEventStore, *, before: int = 0, after: int = 0) -> dict[str, int]:
    lose = {"before": before, "after": after}
    real = store._connection

    @contextmanager
    def connection(*args: Any, **kwargs: Any) -> Iterator[Any]:
        with real(*args, **kwargs) as conn:
            yield _Flaky(conn, lose)

    monkeypatch.setattr(store, "_connection", connection)
    return lose


# -- 3: idempotent appends ---------------------------------------------------------------------------


def test_an_append_whose_commit_reply_was_lost_is_stored_once_and_acknowledged(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module.time, "sleep", lambda seconds: None)
    with EventStream.open(_url(postgres_url, "lost")) as stream:
        lose = _lose_replies(monkeypatch, stream.store, after=1)  # type: ignore[arg-type]
        assert stream.add_event(MessageAction(content="once"), "agent") == 0
        assert lose["after"] == 0
        assert stream.add_event(MessageAction(content="next"), "agent") == 1
    assert _rows(postgres_url, "lost") == [(0, 0, "once"), (1, 1, "next")]


def test_a_caller_retrying_with_its_key_gets_the_stored_id_and_stores_nothing_twice(postgres_url: str) -> None:
    url = _url(postgres_url, "keyed")
    with EventStream.open(url) as other, EventStream.open(url) as retrying:
        # The first try was stored, but its worker never heard so (say it died): a second worker retries.
        assert other.add_event(MessageAction(content="step 1"), "agent", key="step-1") == 0
        event = MessageAction(content="step 1")
        assert retrying.add_event(event, "agent", key="step-1") == 0
        assert event.id is None  # nothing new was stored: the event is left as given
        assert [e.content for e in retrying.get_events()] == ["step 1"]  # it caught up to the stored one
        assert retrying.add_event(MessageAction(content="step 2"), "agent", key="step-2") == 1
    assert _rows(postgres_url, "keyed") == [(0, 0, "step 1"), (1, 1, "step 2")]


def test_an_append_that_cannot_reach_the_server_says_its_key(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module.time, "sleep", lambda seconds: None)
    with EventStream.open(_url(postgres_url, "down")) as stream:
        _lose_replies(monkeypatch, stream.store, before=store_module.APPEND_ATTEMPTS)  # type: ignore[arg-type]
        event = MessageAction(content="lost")
        with pytest.raises(StoreDatabaseError, match=r"event 0 may be stored: add it again with key '[0-9a-f]{32}'"):
            stream.add_event(event, "agent")
        assert event.id is None and len(stream) == 0


# -- 4: retrying through History, catch_up halfway ----------------------------------------------------


def test_a_catch_up_that_fails_halfway_leaves_the_stream_able_to_append(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    url = _url(postgres_url, "halfway")
    with EventStream.open(url) as writer, EventStream.open(url) as late:
        for number in range(3):
            writer.add_event(MessageAction(content=f"w{number}"), "agent")
        uses = {"n": 0}
        real = late.store._connection  # type: ignore[attr-defined]

        @contextmanager
        def second_use_fails(*args: Any, **kwargs: Any) -> Iterator[Any]:
            uses["n"] += 1
            if uses["n"] == 2:  # the connection drops between learning of the events and reading them
                raise psycopg.OperationalError("server closed the connection unexpectedly")
            with real(*args, **kwargs) as conn:
                yield conn

        monkeypatch.setattr(late.store, "_connection", second_use_fails)
        try:
            late.catch_up()
        except StoreDatabaseError:
            pass
        monkeypatch.setattr(late.store, "_connection", real)
        try:
            event_id = late.add_event(MessageAction(content="late"), "agent")
        except ConcurrentAppendError:  # consistent: it does not know the others' events yet, and says so
            late.catch_up()
            event_id = late.add_event(MessageAction(content="late"), "agent")
        assert event_id == 3
        assert [e.content for e in late.get_events()] == ["w0", "w1", "w2", "late"]


def test_a_refresh_that_fails_changes_nothing(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    url = _url(postgres_url, "refresh")
    with EventStream.open(url) as writer, EventStream.open(url) as late:
        writer.add_event(MessageAction(content="w0"), "agent")
        _lose_replies(monkeypatch, late.store, before=1)  # type: ignore[arg-type]
        with pytest.raises(StoreDatabaseError):
            late.catch_up()
        assert len(late.store) == 0 and len(late) == 0
        with pytest.raises(ConcurrentAppendError):  # not DuplicateEventError: the store and the stream agree
            late.add_event(MessageAction(content="late"), "agent")
        assert [e.content for e in late.catch_up()] == ["w0"]


def test_history_gives_up_after_its_attempts_saying_what_to_do(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import openhands_memory.history as history_module

    monkeypatch.setattr(history_module.time, "sleep", lambda seconds: None)
    with History.open(_url(postgres_url, "contended")) as history:
        store = history.stream.store

        def always_first(events: Any, key: Any = None) -> None:
            raise ConcurrentAppendError(events[0].id, 0, "contended")

        monkeypatch.setattr(store, "append_batch", always_first)
        event = MessageAction(content="never first")
        message = re.escape(f"tried {history_module.APPEND_ATTEMPTS} times, catching up each time")
        with pytest.raises(ConcurrentAppendError, match=message) as raised:
            history.add_event(event, "agent")
        assert raised.value.attempts == history_module.APPEND_ATTEMPTS and event.id is None
        monkeypatch.undo()
        assert history.add_event(event, "agent") == 0  # the history is current: adding again works


# -- 5: beside live writers; names --------------------------------------------------------------------


def test_convert_force_beside_a_live_writer_never_lets_it_append_past_a_gap(postgres_url: str) -> None:
    from openhands_memory.cli import main

    url = _url(postgres_url, "live")
    with EventStream.open(url) as writer:
        for number in range(5):
            writer.add_event(MessageAction(content=f"old {number}"), "agent")
        replacement = PostgresEventStore(postgres_url, conversation="other")
        replacement.append_all([_message(0, "new 0"), _message(1, "new 1")])
        replacement.close()
        assert main(["convert", _url(postgres_url, "other"), url, "--force"]) == 0
        with pytest.raises(StoreDatabaseError, match="the conversation was replaced since this store read it"):
            writer.add_event(MessageAction(content="after the replace"), "agent")
    with EventStream.open(url) as reopened:  # it opens: no gap
        assert [e.content for e in reopened.get_events()] == ["new 0", "new 1"]


def test_a_replace_refuses_when_a_writer_appended_meanwhile(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    url = _url(postgres_url, "racing")
    with EventStream.open(url) as writer:
        for number in range(4):
            writer.add_event(MessageAction(content=f"old {number}"), "agent")
        replacing = PostgresEventStore(postgres_url, conversation="racing")
        real_check = replacing._check_nothing_past

        def writer_commits_first(conn: Any, count: int) -> None:
            # A writer held event 3 (FOR KEY SHARE) before the replace deleted it: its event 4 landed meanwhile.
            with psycopg.connect(postgres_url, autocommit=True) as other:
                other.execute(
                    "INSERT INTO openhands_events (conversation_id, position, event_id, kind_key, kind, body) "
                    "VALUES ('racing', 4, 4, 'action', 'message', %s)",
                    (event_to_json(_message(4, "old 4")),),
                )
            real_check(conn, count)

        monkeypatch.setattr(replacing, "_check_nothing_past", writer_commits_first)
        with pytest.raises(StoreDatabaseError, match="was not replaced: a writer appended to it meanwhile"):
            replacing.append_all([_message(0, "new 0"), _message(1, "new 1")], replace=True)
        replacing.close()
    assert [content for _, _, content in _rows(postgres_url, "racing")] == [f"old {n}" for n in range(5)]


@pytest.mark.parametrize("table", ["Events", "s_Ev.Mixed_Case"])
def test_a_table_name_with_capitals_opens_again_and_again(postgres_url: str, table: str) -> None:
    if "." in table:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute('CREATE SCHEMA "s_Ev"')
    for number in range(3):
        with EventStream.open(f"{postgres_url}&conversation=c&table={table}") as stream:
            assert stream.add_event(MessageAction(content=f"open {number}"), "agent") == number
    schema, _, name = table.rpartition(".")
    qualified = f'"{schema}"."{name}"' if schema else f'"{name}"'
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute(f"SELECT count(*) FROM {qualified}").fetchone()[0] == 3


def test_a_plus_in_a_conversation_id_stays_a_plus(postgres_url: str) -> None:
    with EventStream.open(f"{postgres_url}&conversation=team+a%2Bb c") as stream:
        assert stream.store.conversation == "team+a+b c"  # type: ignore[attr-defined]
        stream.add_event(MessageAction(content="x"), "agent")
    assert len(_rows(postgres_url, "team+a+b c")) == 1


# -- 6: bounded waits; conflicts are not server errors ------------------------------------------------


def _in_thread(work: Any) -> BaseException | None:
    """Run `work` in a thread; its exception, or None. A hang past the guard fails the test (it would hang forever)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            work()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    assert outcome, "it hung: no bound on the wait"
    return outcome[0]


def test_a_server_that_accepts_but_never_answers_is_a_timeout_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "CONNECT_TIMEOUT", 1)
    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel accepts; nothing ever answers
        port = silent.getsockname()[1]
        error = _in_thread(lambda: PostgresEventStore(f"postgresql://u@127.0.0.1:{port}/db?sslmode=disable", conversation="c"))
    assert isinstance(error, StoreTimeoutError), error
    assert "connect_timeout" in str(error)


def test_an_append_waiting_on_a_lock_past_lock_timeout_is_a_timeout_error(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "SESSION_TIMEOUTS", {"lock_timeout": "200ms", "statement_timeout": "300s"})
    with EventStream.open(_url(postgres_url, "locked")) as stream, psycopg.connect(postgres_url) as blocker:
        blocker.execute("LOCK TABLE openhands_events IN EXCLUSIVE MODE")
        release = threading.Timer(30, blocker.cancel_safe)  # without a bound the append would wait for this
        release.start()
        try:
            error = _in_thread(lambda: stream.add_event(MessageAction(content="blocked"), "agent"))
        finally:
            release.cancel()
        assert isinstance(error, StoreTimeoutError), error
        assert "lock_timeout" in str(error)
        blocker.rollback()
        assert stream.add_event(MessageAction(content="after"), "agent") == 0


def test_a_lost_race_is_not_an_error_in_the_server_log(postgres_server: str, postgres_url: str) -> None:
    log = postgres_server_log(postgres_server)
    conversation = f"race-{uuid.uuid4().hex[:12]}"
    url = _url(postgres_url, conversation)
    with EventStream.open(url) as first, EventStream.open(url) as second:
        first.add_event(MessageAction(content="first"), "agent")
        with pytest.raises(ConcurrentAppendError):
            second.add_event(MessageAction(content="second"), "agent")
        with pytest.raises(ConcurrentAppendError):
            second.add_events([MessageAction(content="a"), MessageAction(content="b")], "agent")
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute("SELECT pg_catalog.pg_sleep(0)")  # the log is written as errors happen: nothing to wait for
    assert conversation not in log.read_text(errors="replace")


def test_a_bulk_store_that_lost_the_race_is_not_an_error_in_the_server_log(postgres_server: str, postgres_url: str) -> None:
    log = postgres_server_log(postgres_server)
    conversation = f"bulk-{uuid.uuid4().hex[:12]}"
    first, second = (PostgresEventStore(postgres_url, conversation=conversation) for _ in range(2))
    first.append_all([_message(0, "first")])
    with pytest.raises(ConcurrentAppendError, match=re.escape("event 0 was not stored at index 0")):
        second.append_all([_message(0, "second"), _message(1, "third")])  # what `convert` does into a conversation
    second.close()
    first.append_all([_message(1, "next")])
    stale = PostgresEventStore(postgres_url, conversation=conversation)  # it knows events 0 and 1
    first.append_all([_message(2, "more")])
    with pytest.raises(ConcurrentAppendError, match=re.escape("event 3 was not stored at index 2")):
        stale.append_all([_message(3, "late")])
    stale.close()
    first.close()
    assert [content for _, _, content in _rows(postgres_url, conversation)] == ["first", "next", "more"]
    assert conversation not in log.read_text(errors="replace")


# -- 7: bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["id", "cause"])
def test_an_id_or_cause_past_bigint_is_a_malformed_event_naming_it(postgres_url: str, field: str) -> None:
    event = stored_event(0, "big")
    if field == "id":
        event.id = 2**63
    else:
        event.cause = 2**63
    store = PostgresEventStore(postgres_url, conversation=f"big-{field}")
    for write in (store.append, lambda e: store.append_all([e])):
        with pytest.raises(MalformedEventError, match=re.escape(f"{field} {2**63} is past what a PostgreSQL bigint holds")):
            write(event)
    assert len(store) == 0
    store.close()


# -- 8: a step's events in one transaction -----------------------------------------------------------


def test_add_events_stores_a_step_together_or_not_at_all(postgres_url: str) -> None:
    url = _url(postgres_url, "step")
    with EventStream.open(url) as first, EventStream.open(url) as second:
        assert first.add_events([MessageAction(content="action"), MessageAction(content="observation")], "agent") == [0, 1]
        lost = [MessageAction(content="x"), MessageAction(content="y")]
        with pytest.raises(ConcurrentAppendError):
            second.add_events(lost, "agent")
        assert [event.id for event in lost] == [None, None]
        second.catch_up()
        assert second.add_events(lost, "agent", key="step-2") == [2, 3]
        again = [MessageAction(content="x"), MessageAction(content="y")]
        assert first.add_events(again, "agent", key="step-2") == [2, 3]  # stored before under this key
    assert [content for _, _, content in _rows(postgres_url, "step")] == ["action", "observation", "x", "y"]
    with pytest.raises(DuplicateEventError):
        PostgresEventStore(postgres_url, conversation="step").append_batch([stored_event(9), stored_event(8)])


def _round_trips(conn: Any, work: Any, tmp_path: Path) -> int:
    """How many times `work` waited for the server on `conn`: the client's messages, then the server's, counted once per turn."""
    trace = tmp_path / "protocol.trace"
    with open(trace, "w") as sink:
        conn.pgconn.trace(sink.fileno())
        try:
            work()
        finally:
            conn.pgconn.untrace()
    directions = [line.split("\t")[1] for line in trace.read_text().splitlines() if line.count("\t") >= 2]
    return sum(1 for before, after in zip(directions, directions[1:]) if before == "F" and after == "B")


def test_add_events_is_one_round_trip(postgres_url: str, tmp_path: Path) -> None:
    with EventStream.open(_url(postgres_url, "trips")) as stream:
        for text in ("first", "second"):  # the statement prepared (once with no event before it, once with one)
            stream.add_event(MessageAction(content=text), "agent")
        conn = stream.store._conn  # type: ignore[attr-defined]
        step = [MessageAction(content="action"), MessageAction(content="observation")]
        assert _round_trips(conn, lambda: stream.add_events(step, "agent"), tmp_path) == 1
        assert _round_trips(conn, lambda: stream.add_event(MessageAction(content="one"), "agent"), tmp_path) == 1
    assert [content for _, _, content in _rows(postgres_url, "trips")] == ["first", "second", "action", "observation", "one"]


def test_a_step_that_waited_for_another_writers_turn_is_stored_whole_or_not_at_all(postgres_url: str) -> None:
    import time

    application = f"step_{uuid.uuid4().hex[:8]}"
    url = f"{_url(postgres_url, 'waited')}&application_name={application}"
    outcome: list[BaseException | list[int]] = []
    with EventStream.open(url) as winner, EventStream.open(url) as step_writer:
        with winner.store.turn():  # type: ignore[attr-defined]

            def add_step() -> None:
                try:
                    step = [MessageAction(content=f"s{n}") for n in range(3)]
                    outcome.append(step_writer.add_events(step, "agent"))
                except ConcurrentAppendError as exc:
                    outcome.append(exc)

            thread = threading.Thread(target=add_step)
            thread.start()
            with psycopg.connect(postgres_url, autocommit=True) as watcher:
                deadline = time.monotonic() + HANG_GUARD_SECONDS
                while not watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND wait_event = 'advisory'",
                    (application,),
                ).fetchone()[0]:
                    assert time.monotonic() < deadline and thread.is_alive(), outcome
                    time.sleep(0.01)
            # While the step waits, a shorter one takes its first position: none of the step may follow it.
            assert winner.add_event(MessageAction(content="w0"), "agent") == 0
        thread.join(HANG_GUARD_SECONDS)
    assert isinstance(outcome[0], ConcurrentAppendError), outcome
    assert [content for _, _, content in _rows(postgres_url, "waited")] == ["w0"]


def test_validate_warns_of_an_id_or_cause_past_bigint(tmp_path: Path) -> None:
    from openhands_memory.events import validate_events

    big = _message(0, "big")
    big.cause = 2**63
    report = validate_events([big, _message(2**63, "bigger")])
    assert [(f.level, f.what) for f in report.findings if "2**63" in f.what] == [
        ("warning", f"cause {2**63} is past 2**63 - 1"),
        ("warning", f"id {2**63} is past 2**63 - 1"),
    ]


@pytest.mark.parametrize("url", ["postgresql:/db?conversation=c", "postgresq://db/x", "PostgreSQL://db/x", "mysql://db/x"])
def test_a_mistyped_url_is_refused_never_written_as_a_file(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from openhands_memory.cli import main

    monkeypatch.chdir(tmp_path)
    log = tmp_path / "log.jsonl"
    with EventStream.open(log) as stream:
        stream.add_event(MessageAction(content="x"), "user")
    assert main(["convert", str(log), url]) == 2
    assert "looks like a URL but is not one this library opens: expected postgresql://" in capsys.readouterr().err
    with pytest.raises(StoreDatabaseError, match="expected postgresql://"):
        EventStream.open(url)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.jsonl"]  # nothing written beside it


def test_a_schema_1_table_is_upgraded_when_opened_and_keeps_its_events(postgres_url: str) -> None:
    with EventStream.open(_url(postgres_url, "old")) as stream:
        stream.add_event(MessageAction(content="written by schema 1"), "agent")
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # as a schema 1 table was made
        conn.execute("ALTER TABLE openhands_events DROP COLUMN append_key")
        conn.execute("COMMENT ON TABLE openhands_events IS 'openhands-memory events, schema 1'")
    with EventStream.open(_url(postgres_url, "old")) as stream:
        assert stream.add_event(MessageAction(content="after"), "agent", key="k") == 1
        assert stream.add_event(MessageAction(content="after"), "agent", key="k") == 1
    assert [content for _, _, content in _rows(postgres_url, "old")] == ["written by schema 1", "after"]
    with psycopg.connect(postgres_url) as conn:
        comment = conn.execute("SELECT obj_description('openhands_events'::regclass, 'pg_class')").fetchone()[0]
    assert comment == "openhands-memory events, schema 2"


@contextmanager
def _frozen(conn: Any) -> Iterator[None]:
    """The server process that serves `conn` stops answering (SIGSTOP) for the block; thawed after it, or after 30 s at most."""
    import os
    import signal

    backend = conn.info.backend_pid
    assert backend > 0, "no server process: the connection is closed"  # kill(0) would stop this very process group
    try:
        os.kill(backend, signal.SIGSTOP)
    except PermissionError:
        pytest.skip("the server runs as another user: its process cannot be stopped from here")
    thawed = threading.Timer(30, os.kill, (backend, signal.SIGCONT))  # without a bound the call would wait for this
    thawed.start()
    try:
        yield
    finally:
        thawed.cancel()
        os.kill(backend, signal.SIGCONT)


@pytest.fixture
def small_reply_timeout(monkeypatch: pytest.MonkeyPatch) -> float:
    """A bound of 1 s on every wait for the server's reply (the default is a minute)."""
    monkeypatch.setattr(store_module, "REPLY_TIMEOUT", 1.0)
    return 1.0


def _frozen_outcome(store: PostgresEventStore, call: Any) -> BaseException | None:
    with _frozen(store._conn):
        return _in_thread(call)


def test_an_append_to_a_frozen_server_is_a_timeout_error_not_a_hang(postgres_url: str, small_reply_timeout: float) -> None:
    with EventStream.open(_url(postgres_url, "frozen")) as stream:
        stream.add_event(MessageAction(content="before"), "agent")
        error = _frozen_outcome(stream.store, lambda: stream.add_event(MessageAction(content="frozen"), "agent"))  # type: ignore[arg-type]
        assert isinstance(error, StoreTimeoutError), error
        assert "no reply within 1.0 s (is the server frozen?); event 1 may be stored: add it again with key" in str(error)
        assert stream.add_event(MessageAction(content="after"), "agent") in (1, 2)  # a new connection goes on


def test_opening_over_a_pool_whose_server_froze_is_a_timeout_error(postgres_url: str, small_reply_timeout: float) -> None:
    from psycopg_pool import ConnectionPool

    with ConnectionPool(postgres_url, min_size=1, max_size=1, kwargs={"autocommit": True}) as pool:
        with pool.connection() as conn:
            lent = conn  # the pool's one connection: the store borrows it next
        with _frozen(lent):
            error = _in_thread(lambda: PostgresEventStore(pool=pool, conversation="open"))
        assert isinstance(error, StoreTimeoutError), error
        assert "open failed: no reply within 1.0 s (is the server frozen?)" in str(error)


def test_reading_from_a_frozen_server_is_a_timeout_error(postgres_url: str, small_reply_timeout: float) -> None:
    PostgresEventStore(postgres_url, conversation="read").append_all([_message(n, f"m{n}") for n in range(3)])
    store = PostgresEventStore(postgres_url, conversation="read")  # it read the ids; the events are read when asked for
    error = _frozen_outcome(store, lambda: list(store.read_events(0)))
    assert isinstance(error, StoreTimeoutError), error
    assert "read failed: no reply within 1.0 s (is the server frozen?)" in str(error)
    assert [event.content for event in store.read_events(0)] == ["m0", "m1", "m2"]  # a new connection goes on
    store.close()


def test_catching_up_with_a_frozen_server_is_a_timeout_error(postgres_url: str, small_reply_timeout: float) -> None:
    url = _url(postgres_url, "refresh")
    with EventStream.open(url) as writer, EventStream.open(url) as reader:
        writer.add_event(MessageAction(content="new"), "agent")
        error = _frozen_outcome(reader.store, reader.catch_up)  # type: ignore[arg-type]
        assert isinstance(error, StoreTimeoutError), error
        assert "refresh failed: no reply within 1.0 s (is the server frozen?)" in str(error)
        reader.catch_up()
        assert [event.content for event in reader.get_events()] == ["new"]


def test_searching_a_frozen_server_is_a_timeout_error(postgres_url: str, small_reply_timeout: float) -> None:
    from openhands_memory.recall import PostgresSearchIndex

    store = PostgresEventStore(postgres_url, conversation="search")
    store.append_all([_message(0, "the quokka smiles")])
    with PostgresSearchIndex.for_store(store) as index:
        index.sync(store.snapshot())
        error = _frozen_outcome(store, lambda: index.search("quokka"))
        assert isinstance(error, StoreTimeoutError), error
        assert "search index: search failed: no reply within 1.0 s (is the server frozen?)" in str(error)
        assert [hit.event_id for hit in index.search("quokka")] == [0]
    store.close()


def test_storing_many_events_on_a_frozen_server_is_a_timeout_error(postgres_url: str, small_reply_timeout: float) -> None:
    store = PostgresEventStore(postgres_url, conversation="bulk")  # what `convert` does: append_all
    error = _frozen_outcome(store, lambda: store.append_all([_message(n, f"m{n}") for n in range(50)]))
    assert isinstance(error, StoreTimeoutError), error
    assert "store events failed: no reply within 1.0 s (is the server frozen?); the events may be stored" in str(error)
    store.close()


def test_waiting_for_the_turn_or_for_events_on_a_frozen_server_is_a_timeout_error(postgres_url: str, small_reply_timeout: float) -> None:
    store = PostgresEventStore(postgres_url, conversation="turn")

    def take_turn() -> None:
        with store.turn():
            pass

    error = _frozen_outcome(store, take_turn)
    assert isinstance(error, StoreTimeoutError) and "wait for the turn failed: no reply within 1.0 s" in str(error), error
    assert store.stored_count() == 0  # on a new connection
    error = _frozen_outcome(store, lambda: store.wait_for_events(timeout=60))  # it counts what is stored before it listens
    assert isinstance(error, StoreTimeoutError) and "count failed: no reply within 1.0 s" in str(error), error
    store.close()


def test_a_writer_in_its_turn_goes_before_the_writer_that_keeps_winning(postgres_url: str) -> None:
    import time

    application = f"turn_{uuid.uuid4().hex[:8]}"
    url = f"{_url(postgres_url, 'turns')}&application_name={application}"
    outcome: list[BaseException | int] = []
    with EventStream.open(url) as winner, EventStream.open(url) as loser:
        winner.add_event(MessageAction(content="w0"), "agent")
        with loser.store.turn():  # type: ignore[attr-defined]

            def append() -> None:
                try:
                    outcome.append(winner.add_event(MessageAction(content="w1"), "agent"))
                except ConcurrentAppendError as exc:
                    outcome.append(exc)

            thread = threading.Thread(target=append)
            thread.start()
            with psycopg.connect(postgres_url, autocommit=True) as watcher:
                deadline = time.monotonic() + HANG_GUARD_SECONDS
                while not watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND wait_event = 'advisory'",
                    (application,),
                ).fetchone()[0]:
                    assert time.monotonic() < deadline and thread.is_alive(), outcome
                    time.sleep(0.01)
            loser.catch_up()
            assert loser.add_event(MessageAction(content="l1"), "agent") == 1  # the waiting winner does not go first
        thread.join(HANG_GUARD_SECONDS)
    assert isinstance(outcome[0], ConcurrentAppendError)
    assert [content for _, _, content in _rows(postgres_url, "turns")] == ["w0", "l1"]
