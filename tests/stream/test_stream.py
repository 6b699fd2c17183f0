"""`EventStream`: ids, stamps, reads, subscribers, secrets, threads and closing."""

from __future__ import annotations

import logging
import re
import threading
from datetime import datetime
from pathlib import Path

import pytest

from openhands_memory.errors import (
    DuplicateEventError,
    EventAlreadyAddedError,
    EventNotFoundError,
    InvalidSecretError,
    MalformedEventError,
    StoreClosedError,
)
from openhands_memory.events import (
    CmdOutputObservation,
    CmdRunAction,
    Event,
    EventSource,
    MessageAction,
    UnknownAction,
    ToolCallMetadata,
    event_to_dict,
)
from openhands_memory.stream import EventFilter, EventStream, InMemoryEventStore
from openhands_memory.testing.store_contract import stored_event


def _stream_with(ids: list[int]) -> EventStream:
    return EventStream.from_events([stored_event(i) for i in ids])


# --- ids, stamps, sources ---------------------------------------------------------------------


def test_ids_start_at_zero_and_increase_by_one() -> None:
    stream = EventStream()
    assert [stream.add_event(MessageAction(content=str(i)), "user") for i in range(3)] == [0, 1, 2]
    assert [e.id for e in stream] == [0, 1, 2]


def test_add_event_sets_id_timestamp_and_source_on_the_event_itself() -> None:
    stream = EventStream()
    event = MessageAction(content="hi")
    before = datetime.now()
    stream.add_event(event, EventSource.AGENT)
    assert event.id == 0
    assert event.source is EventSource.AGENT
    assert event.timestamp is not None
    stamp = datetime.fromisoformat(event.timestamp)
    assert stamp.tzinfo is None  # as OpenHands writes it
    assert before <= stamp <= datetime.now()
    assert stream.get_event(0) is event


def test_source_may_be_a_plain_string() -> None:
    stream = EventStream()
    event = CmdRunAction(command="ls")
    stream.add_event(event, "environment")
    assert event.source is EventSource.ENVIRONMENT


def test_unknown_source_is_refused_and_the_event_left_alone() -> None:
    stream = EventStream()
    event = MessageAction(content="hi")
    with pytest.raises(ValueError, match="'robot' is not a valid EventSource"):
        stream.add_event(event, "robot")
    assert (event.id, event.timestamp, event.source) == (None, None, None)
    assert len(stream) == 0


def test_adding_an_event_twice_is_refused() -> None:
    stream = EventStream()
    event = MessageAction(content="hi")
    stream.add_event(event, "user")
    with pytest.raises(EventAlreadyAddedError, match=re.escape("event already has id 0")):
        stream.add_event(event, "user")
    assert len(stream) == 1


def test_ids_continue_after_the_last_id_of_a_log_with_gaps() -> None:
    stream = _stream_with([0, 4, 9])
    assert stream.add_event(MessageAction(content="next"), "user") == 10


def test_ids_continue_after_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    with EventStream.open(path) as stream:
        stream.add_event(MessageAction(content="a"), "user")
        stream.add_event(MessageAction(content="b"), "agent")
    with EventStream.open(path) as stream:
        assert stream.add_event(MessageAction(content="c"), "user") == 2
        assert [e.content for e in stream] == ["a", "b", "c"]  # type: ignore[attr-defined]


class _FailingStore(InMemoryEventStore):
    def append(self, event: Event) -> None:
        raise OSError(28, "No space left on device")


def test_failed_store_leaves_the_event_and_the_ids_as_they_were() -> None:
    stream = EventStream(_FailingStore())
    event = MessageAction(content="hi")
    with pytest.raises(OSError, match="No space left"):
        stream.add_event(event, "user")
    assert (event.id, event.timestamp, event.source) == (None, None, None)
    assert len(stream) == 0
    assert stream.get_latest_event_id() == -1


# --- from_events ------------------------------------------------------------------------------


def test_from_events_keeps_ids_times_and_sources(tmp_path: Path) -> None:
    events = [stored_event(i) for i in (0, 3, 4)]
    dicts = [event_to_dict(e) for e in events]
    stream = EventStream.from_events(events, tmp_path / "events.jsonl")
    assert [event_to_dict(e) for e in stream] == dicts
    stream.close()
    with EventStream.open(tmp_path / "events.jsonl") as reopened:
        assert [event_to_dict(e) for e in reopened] == dicts


def test_from_events_refuses_ids_that_do_not_increase() -> None:
    with pytest.raises(DuplicateEventError, match=re.escape("event 2 cannot follow id 3")):
        EventStream.from_events([stored_event(i) for i in (0, 3, 2)])


def test_from_events_refuses_events_without_ids(tmp_path: Path) -> None:
    with pytest.raises(MalformedEventError, match="needs an id"):
        EventStream.from_events([MessageAction(content="new")], tmp_path / "events.jsonl")
    # The stream it started was closed, so the file is free again.
    EventStream.open(tmp_path / "events.jsonl").close()


# --- reads ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start_id", "end_id", "expected"),
    [
        (0, None, [0, 1, 5, 6, 9]),
        (1, 6, [1, 5, 6]),  # end_id is included
        (2, 5, [5]),  # start_id in a gap
        (2, 4, []),  # the whole range in a gap
        (6, 6, [6]),
        (7, 100, [9]),
        (10, None, []),
        (5, 1, []),
    ],
)
def test_get_events_range_is_inclusive_and_tolerates_gaps(start_id: int, end_id: int | None, expected: list[int]) -> None:
    stream = _stream_with([0, 1, 5, 6, 9])
    assert [e.id for e in stream.get_events(start_id, end_id)] == expected
    assert [e.id for e in stream.get_events(start_id, end_id, reverse=True)] == expected[::-1]


def test_get_events_reverse_with_limit_reads_from_the_end() -> None:
    stream = _stream_with(list(range(1000)))
    assert [e.id for e in stream.get_events(reverse=True, limit=3)] == [999, 998, 997]
    assert [e.id for e in stream.get_events(10, 600, reverse=True)][-3:] == [12, 11, 10]
    assert len(list(stream.get_events(10, 600, reverse=True))) == 591


@pytest.mark.parametrize("limit", [0, 1, 2, 10])
def test_get_events_limit_counts_kept_events(limit: int) -> None:
    stream = _stream_with(list(range(9)))
    odd = [e.id for e in stream.get_events(filter=lambda e: e.id % 2 == 1, limit=limit)]
    assert odd == [1, 3, 5, 7][:limit]


def test_get_events_takes_an_event_filter() -> None:
    stream = _stream_with(list(range(6)))
    assert [e.id for e in stream.get_events(filter=EventFilter(include_types=CmdRunAction))] == [1, 4]


def test_get_events_range_is_fixed_when_called() -> None:
    stream = _stream_with([0, 1])
    reading = stream.get_events()
    stream.add_event(MessageAction(content="later"), "user")
    assert [e.id for e in reading] == [0, 1]


def test_get_event_finds_by_id_not_position() -> None:
    stream = _stream_with([0, 4, 9])
    assert stream.get_event(9).id == 9


@pytest.mark.parametrize("missing", [-1, 1, 5, 10])
def test_get_event_of_a_missing_id_raises(missing: int) -> None:
    stream = _stream_with([0, 4, 9])
    with pytest.raises(EventNotFoundError, match=f"^no event with id {missing}$"):
        stream.get_event(missing)
    with pytest.raises(KeyError):
        stream.get_event(missing)


def test_latest_id_length_and_iteration() -> None:
    stream = EventStream()
    assert (stream.get_latest_event_id(), len(stream), list(stream)) == (-1, 0, [])
    stream = _stream_with([0, 4, 9])
    assert (stream.get_latest_event_id(), len(stream)) == (9, 3)
    assert [e.id for e in stream] == [0, 4, 9]


# --- subscribers ------------------------------------------------------------------------------


def test_subscribers_are_called_after_the_event_is_stored() -> None:
    stream = EventStream()
    seen: list[tuple[str, int | None, bool]] = []

    def record(name: str):  # noqa: ANN202
        return lambda e: seen.append((name, e.id, stream.get_event(e.id) is e))

    stream.subscribe(record("a"), "a")
    stream.subscribe(record("b"), "b")
    stream.add_event(MessageAction(content="hi"), "user")
    assert seen == [("a", 0, True), ("b", 0, True)]


def test_failing_subscriber_is_logged_and_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    stream = EventStream()
    seen: list[int | None] = []

    def broken(event: Event) -> None:
        raise RuntimeError("boom")

    stream.subscribe(broken, "broken")
    stream.subscribe(lambda e: seen.append(e.id), "fine")
    with caplog.at_level(logging.ERROR, logger="openhands_memory.stream.stream"):
        assert stream.add_event(MessageAction(content="hi"), "user") == 0
    assert seen == [0]
    assert len(stream) == 1
    assert "subscriber 'broken' failed on event 0" in caplog.text
    assert "RuntimeError: boom" in caplog.text


def test_unsubscribed_callbacks_are_not_called() -> None:
    stream = EventStream()
    seen: list[int | None] = []
    stream.subscribe(lambda e: seen.append(e.id), "s")
    stream.add_event(MessageAction(content="a"), "user")
    stream.unsubscribe("s")
    stream.add_event(MessageAction(content="b"), "user")
    assert seen == [0]


def test_subscriber_names_are_unique_and_must_exist_to_unsubscribe() -> None:
    stream = EventStream()
    stream.subscribe(print, "s")
    with pytest.raises(ValueError, match="a subscriber named 's' exists"):
        stream.subscribe(print, "s")
    with pytest.raises(KeyError, match="no subscriber named 't'"):
        stream.unsubscribe("t")


def test_events_added_by_subscribers_reach_every_subscriber_in_id_order() -> None:
    stream = EventStream()
    seen: dict[str, list[int | None]] = {"first": [], "second": []}

    def first(event: Event) -> None:
        seen["first"].append(event.id)
        if isinstance(event, CmdRunAction):  # answer each command, as a runtime would
            stream.add_event(CmdOutputObservation(content="ok", command=event.command, cause=event.id), "environment")

    stream.subscribe(first, "first")
    stream.subscribe(lambda e: seen["second"].append(e.id), "second")
    stream.add_event(CmdRunAction(command="ls"), "agent")
    assert seen == {"first": [0, 1], "second": [0, 1]}


def test_concurrent_adds_get_unique_ids_stored_and_delivered_in_order(tmp_path: Path) -> None:
    stream = EventStream.open(tmp_path / "events.jsonl")
    delivered: list[int | None] = []
    stream.subscribe(lambda e: delivered.append(e.id), "order")

    def writer(n: int) -> None:
        for i in range(n):
            stream.add_event(MessageAction(content=str(i)), "user")

    threads = [threading.Thread(target=writer, args=(300,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [e.id for e in stream] == list(range(1200))
    assert delivered == list(range(1200))
    stamps = [e.timestamp for e in stream]
    assert stamps == sorted(stamps)  # type: ignore[type-var]
    stream.close()
    with EventStream.open(tmp_path / "events.jsonl") as reopened:
        assert len(reopened) == 1200


# --- secrets ----------------------------------------------------------------------------------


def _secret_event() -> UnknownAction:
    return UnknownAction.model_validate(
        {
            "action": "deploy",
            "token": "use hunter2 here",
            "nested": {"list": ["a", {"deep": "xhunter2x"}, 3], "keep": "fine"},
        }
    )


def test_stored_copy_hides_secrets_everywhere_and_subscribers_get_that_copy(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    stream = EventStream.open(path, secrets={"password": "hunter2"})
    received: list[Event] = []
    stream.subscribe(received.append, "s")
    event = _secret_event()
    stream.add_event(event, "agent")

    assert event.token == "use hunter2 here"  # type: ignore[attr-defined]  # the caller's object is left alone
    stored = stream.get_event(0)
    assert stored is not event
    assert len(received) == 1 and received[0] is stored  # what a reader of the log gets, never the clear text
    assert event_to_dict(stored)["args"] == {
        "token": "use <secret_hidden> here",
        "nested": {"list": ["a", {"deep": "x<secret_hidden>x"}, 3], "keep": "fine"},
    }
    assert (stored.id, stored.timestamp, stored.source) == (event.id, event.timestamp, event.source)
    stream.close()
    assert b"hunter2" not in path.read_bytes()


def test_secret_in_a_message_is_hidden_in_its_message_too(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    with EventStream.open(path, secrets={"k": "hunter2"}) as stream:
        stream.add_event(MessageAction(content="my password is hunter2"), "user")
        assert stream.get_event(0).message == "my password is <secret_hidden>"
    assert b"hunter2" not in path.read_bytes()


def test_protected_top_level_fields_are_never_rewritten() -> None:
    stream = EventStream(secrets={"k": "message"})  # also the name of the action kind
    stream.add_event(MessageAction(content="a message"), "user")
    stored = event_to_dict(stream.get_event(0))
    assert stored["action"] == "message"
    assert stored["args"]["content"] == "a <secret_hidden>"


def test_events_without_secrets_are_stored_as_they_are() -> None:
    stream = EventStream(secrets={"k": "hunter2"})
    event = MessageAction(content="nothing to hide")
    stream.add_event(event, "user")
    assert stream.get_event(0) is event


def test_longer_secret_is_hidden_whole_and_empty_secrets_are_ignored() -> None:
    stream = EventStream(secrets={"short": "abcdef", "long": "abcdefghij", "unset": ""})
    stream.add_event(MessageAction(content="abcdefghij abcdef"), "user")
    assert stream.get_event(0).content == "<secret_hidden> <secret_hidden>"  # type: ignore[attr-defined]


def test_set_secrets_hides_them_in_later_events_and_in_every_read_of_earlier_ones() -> None:
    stream = EventStream()
    stream.add_event(MessageAction(content="hunter2 said hi"), "user")
    stream.set_secrets({"k": "hunter2"})
    stream.add_event(MessageAction(content="hunter2"), "user")
    hidden = ["<secret_hidden> said hi", "<secret_hidden>"]
    assert [e.content for e in stream] == hidden  # type: ignore[attr-defined]
    assert [e.content for e in stream.get_events(reverse=True)] == hidden[::-1]  # type: ignore[attr-defined]
    assert [e.content for e in stream.snapshot()] == hidden  # type: ignore[attr-defined]
    assert stream.get_event(0).content == hidden[0]  # type: ignore[attr-defined]
    # The log is not rewritten: the store keeps the event as it was written.
    assert next(stream.store.read_events(0, 1)).content == "hunter2 said hi"  # type: ignore[attr-defined]
    stream.set_secrets({})
    assert stream.get_event(0).content == "hunter2 said hi"  # type: ignore[attr-defined]


def test_a_log_written_without_secrets_is_read_with_the_secrets_in_force(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    metadata = ToolCallMetadata(function_name="run", tool_call_id="c1", model_response={"id": "r", "note": "hunter2/é"})
    with EventStream.open(path) as stream:
        stream.add_event(CmdRunAction(command="echo hunter2/é", tool_call_metadata=metadata), "agent")
        stream.add_event(MessageAction(content="nothing to hide"), "user")
    with EventStream.open(path, secrets={"k": "hunter2/é"}) as stream:
        first, second = stream.snapshot()
        assert first.command == "echo <secret_hidden>"  # type: ignore[attr-defined]
        assert first.tool_call_metadata is not None and "hunter2" not in str(first.tool_call_metadata.model_response)
        assert second is next(stream.store.read_events(1, 2))  # an event without a secret is not copied
    assert b"hunter2" in path.read_bytes()  # the log is read, never rewritten


def test_a_secret_used_as_a_key_is_hidden_in_the_key_too(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    event = UnknownAction.model_validate(
        {"action": "deploy", "env": {"hunter2": "value", "x-hunter2-y": {"hunter2": ["hunter2"]}, "PATH": "/bin"}}
    )
    with EventStream.open(path, secrets={"password": "hunter2"}) as stream:
        stream.add_event(event, "agent")
        assert event_to_dict(stream.get_event(0))["args"]["env"] == {
            "<secret_hidden>": "value",
            "x-<secret_hidden>-y": {"<secret_hidden>": ["<secret_hidden>"]},
            "PATH": "/bin",
        }
    assert b"hunter2" not in path.read_bytes()
    with EventStream.open(path) as reopened:
        assert "hunter2" not in repr(event_to_dict(reopened.get_event(0)))


def test_two_keys_that_differ_only_by_a_secret_keep_the_later_value_and_say_so(caplog: pytest.LogCaptureFixture) -> None:
    stream = EventStream(secrets={"password": "hunter2"})
    event = UnknownAction.model_validate({"action": "deploy", "env": {"hunter2": "first", "<secret_hidden>": "second"}})
    with caplog.at_level(logging.WARNING):
        stream.add_event(event, "agent")
    assert event_to_dict(stream.get_event(0))["args"]["env"] == {"<secret_hidden>": "second"}
    assert "two keys become '<secret_hidden>'" in caplog.text and "hunter2" not in caplog.text


@pytest.mark.parametrize("value", ["e", "ab", "12345"])
def test_a_secret_shorter_than_six_characters_is_refused_naming_the_rule(value: str) -> None:
    message = f"secret 'PIN': its value is {len(value)} character{'s' if len(value) > 1 else ''} long; a secret must be at least 6"
    with pytest.raises(InvalidSecretError, match=re.escape(message)) as raised:
        EventStream(secrets={"PIN": value})
    assert (raised.value.name, raised.value.length) == ("PIN", len(value))
    assert isinstance(raised.value, ValueError)


def test_a_short_secret_is_refused_before_the_file_is_opened_and_set_secrets_keeps_the_old_ones(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    with pytest.raises(InvalidSecretError, match="secret 'E'"):
        EventStream.open(path, secrets={"E": "e"})
    assert not path.exists()
    with EventStream.open(path, secrets={"k": "hunter2"}) as stream:  # not locked by the refused open
        with pytest.raises(InvalidSecretError):
            stream.set_secrets({"k": "e"})
        stream.add_event(MessageAction(content="hunter2 here, e everywhere"), "user")
        assert stream.get_event(0).content == "<secret_hidden> here, e everywhere"  # type: ignore[attr-defined]


def test_a_secret_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(InvalidSecretError, match=re.escape("secret 'PORT': its value is not a string but int")):
        EventStream(secrets={"PORT": 8080})  # type: ignore[dict-item]


# --- closing ----------------------------------------------------------------------------------


def test_closed_stream_refuses_adds_and_reads(tmp_path: Path) -> None:
    with EventStream.open(tmp_path / "events.jsonl") as stream:
        stream.add_event(MessageAction(content="a"), "user")
    event = MessageAction(content="b")
    with pytest.raises(StoreClosedError):
        stream.add_event(event, "user")
    assert event.id is None
    with pytest.raises(StoreClosedError):
        list(stream.get_events())
    with pytest.raises(StoreClosedError):
        stream.get_event(0)
    stream.close()  # twice is fine
    assert repr(stream).endswith("closed)")


def test_close_releases_the_file_for_the_next_stream(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    EventStream.open(path).close()
    EventStream.open(path).close()


def test_catch_up_on_a_store_only_this_stream_writes_finds_nothing(tmp_path: Path) -> None:
    with EventStream.open(tmp_path / "log.jsonl") as stream:
        stream.add_event(MessageAction(content="hi"), EventSource.USER)
        assert stream.catch_up() == []
        assert stream.add_event(MessageAction(content="again"), EventSource.USER) == 1


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_an_add_retried_with_its_key_stores_the_event_once(tmp_path: Path, kind: str) -> None:
    stream = EventStream() if kind == "memory" else EventStream.open(tmp_path / "log.jsonl")
    with stream:
        assert stream.add_event(MessageAction(content="step 1"), "agent", key="k1") == 0
        retried = MessageAction(content="step 1")
        assert stream.add_event(retried, "agent", key="k1") == 0
        assert retried.id is None and len(stream) == 1  # nothing stored twice, the retried event left as given
        assert stream.add_events([MessageAction(content="a"), MessageAction(content="b")], "agent", key="k2") == [1, 2]
        assert stream.add_events([MessageAction(content="a"), MessageAction(content="b")], "agent", key="k2") == [1, 2]
        assert [e.content for e in stream.get_events()] == ["step 1", "a", "b"]


def test_add_events_gives_a_step_consecutive_ids_and_tells_subscribers_in_order() -> None:
    seen: list[int] = []
    with EventStream() as stream:
        stream.subscribe(lambda event: seen.append(event.id), "probe")  # type: ignore[arg-type]
        stream.add_event(MessageAction(content="first"), "user")
        assert stream.add_events([MessageAction(content="x"), MessageAction(content="y")], "agent") == [1, 2]
    assert seen == [0, 1, 2]
