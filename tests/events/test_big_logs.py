"""Big logs: chunked readers, `iter_events`, shared model responses, bounded memory, typed errors."""

from __future__ import annotations

import copy
import gc
import io
import json
import pickle
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import real_log_params, require_real_log

from openhands_memory.errors import MalformedEventError
from openhands_memory.events import (
    _reading,
    dump_events,
    event_from_json,
    event_to_dict,
    event_to_json,
    iter_events,
    load_events,
)
from openhands_memory.events._reading import (
    ElementError,
    ListShapeError,
    ResponseSharer,
    iter_lines,
    iter_list_elements,
)
from openhands_memory.events.base import RawJson, ToolCallMetadata
from openhands_memory.stream import EventStream
from openhands_memory.testing.synthetic import synthetic_session_dicts

V0_LOGS = real_log_params("v0_")

TRICKY = [
    {"id": 0, "action": "message", "args": {"content": 'a "}, {" and "}]" in a string \\ and \\" end }, {'}},
    {"id": 1, "observation": "run", "content": "[{}, {}]", "extras": {"list": [{"a": 1}, {"b": [{"c": 2}, {}]}]}},
    {"id": 2, "action": "message", "args": {"content": "\\\\", "nested": [[{"x": "]"}], {"y": "}"}]}},
]


def elements(data: bytes) -> list[Any]:
    return list(iter_list_elements(io.BytesIO(data).read))


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize(
    "layout",
    [
        lambda v: orjson.dumps(v),
        lambda v: json.dumps(v).encode(),
        lambda v: orjson.dumps(v, option=orjson.OPT_INDENT_2),
        lambda v: b"\n  " + json.dumps(v, indent=4).encode() + b"\n\n",
    ],
)
def test_list_elements_are_found_across_chunk_ends_whatever_the_strings_hold(
    chunk: int, layout: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_reading, "CHUNK", chunk)
    assert elements(layout(TRICKY)) == TRICKY
    assert elements(b"[ ]") == []


class _CountingSearch:
    """A compiled pattern whose searches add up the bytes each may scan (from where it starts to the end)."""

    def __init__(self, pattern: Any) -> None:
        self.pattern = pattern
        self.spans = 0

    def search(self, buf: Any, pos: int = 0) -> Any:
        self.spans += len(buf) - pos
        return self.pattern.search(buf, pos)


@pytest.mark.parametrize("inside", ["plain text", '"}, {" and \\" every line'])
def test_one_huge_element_is_searched_once_not_once_per_chunk(inside: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # 2,000 chunks in one string: searching the element again from its start after every chunk
    # (as before) scans about a thousand times its size; the reader must stay linear.
    monkeypatch.setattr(_reading, "CHUNK", 64)
    text = "\n".join(f"{n:06d} {inside}" for n in range(128_000 // (8 + len(inside))))
    records = [{"id": 0, "action": "message", "args": {"content": text}}, {"id": 1, "action": "message", "args": {}}]
    data = orjson.dumps(records, option=orjson.OPT_INDENT_2)
    guesses = _CountingSearch(_reading._GUESS_END)
    structure = _CountingSearch(_reading._STRUCTURE)
    monkeypatch.setattr(_reading, "_GUESS_END", guesses)
    monkeypatch.setattr(_reading, "_STRUCTURE", structure)
    ends: list[int] = []
    string_end = _reading._string_end

    def counted_string_end(buf: Any, start: int) -> int:
        ends.append(len(buf) - start)
        return string_end(buf, start)

    monkeypatch.setattr(_reading, "_string_end", counted_string_end)
    assert elements(data) == records
    # Each search may rescan the few separators at a chunk's end, never the element again.
    assert guesses.spans + structure.spans + sum(ends) < 12 * len(data)


@pytest.mark.parametrize(
    ("data", "error", "reason", "index"),
    [
        (b'{"id": 0}', ListShapeError, "not a JSON list", 0),
        (b'[{"id": 0}, 3]', ListShapeError, "expected an event object or the end of the list", 1),
        (b'[{"id": 0},]', ListShapeError, "expected an event object or the end of the list", 1),
        (b'[{"id": 0} {"id": 1}]', ListShapeError, "expected ',' and an event object between list elements", 1),
        (b'[{"id": 0}, "text"]', ListShapeError, "a list element is a string, not an event object", 1),
        (b'[{"id": 0}, {"id": 1}', ListShapeError, "the list is not closed", 2),
        (b'[{"id": 0}] []', ListShapeError, "more data after the list", 1),
        (b'[{"id": 0}, {"id": tru}]', ElementError, "invalid JSON: invalid literal, expected 'true'", 1),
    ],
)
def test_a_list_that_is_not_a_list_of_objects_names_the_element(
    data: bytes, error: type[Exception], reason: str, index: int
) -> None:
    with pytest.raises(error) as raised:
        elements(data)
    assert (raised.value.reason, raised.value.index) == (reason, index)  # type: ignore[attr-defined]


def test_lines_are_numbered_like_split_and_a_last_line_without_newline_is_marked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_reading, "CHUNK", 2)
    assert list(iter_lines(io.BytesIO(b"ab\n\ncdefg\nh").read)) == [
        (1, b"ab", True),
        (2, b"", True),
        (3, b"cdefg", True),
        (4, b"h", False),
    ]
    assert list(iter_lines(io.BytesIO(b"ab\n").read)) == [(1, b"ab", True)]


@pytest.mark.parametrize("chunk", [1, 2, 3, 1 << 20])
def test_cr_and_crlf_end_lines_even_when_a_chunk_ends_between_cr_and_lf(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_reading, "CHUNK", chunk)
    data = b"ab\r\ncd\ref\n\r\ngh\r\n\r\rij"
    assert list(iter_lines(io.BytesIO(data).read)) == [
        (1, b"ab", True),
        (2, b"cd", True),
        (3, b"ef", True),
        (4, b"", True),
        (5, b"gh", True),
        (6, b"", True),
        (7, b"", True),
        (8, b"ij", False),
    ]
    assert _reading.split_lines(data) == [b"ab", b"cd", b"ef", b"", b"gh", b"", b"", b"ij"]


@pytest.mark.parametrize("end", [b"\r", b"\r\n"], ids=["cr", "crlf"])
def test_a_jsonl_log_with_cr_or_crlf_line_ends_loads_as_with_lf(
    end: bytes, session: list[dict[str, Any]], tmp_path: Path
) -> None:
    lf = tmp_path / "lf.jsonl"
    lf.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in session[:40]))
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"".join(orjson.dumps(r) + end for r in session[:40]))
    assert load_events(other) == load_events(lf)
    assert list(iter_events(other)) == load_events(lf)


@pytest.fixture(scope="module")
def session() -> list[dict[str, Any]]:
    return synthetic_session_dicts(300, condense_every=100)


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".oh.json"])
def test_iter_events_and_load_events_read_the_same_events_and_round_trip_exactly(
    suffix: str, session: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = tmp_path / f"log{suffix}"
    if suffix == ".oh.json":
        path.write_text(json.dumps(session))  # OpenHands' own json.dumps spacing
    else:
        dump_events(load_events_from(session, tmp_path), path)
    loaded = load_events(path)
    assert list(iter_events(path)) == loaded
    assert [event_to_dict(e) for e in loaded] == session
    assert [event_to_dict(e) for e in iter_events(path)] == session


def load_events_from(records: list[dict[str, Any]], tmp_path: Path) -> list[Any]:
    source = tmp_path / "source.json"
    source.write_bytes(orjson.dumps(records))
    return load_events(source)


def test_an_action_and_its_observation_share_their_equal_model_response(
    session: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in session))
    events = load_events(path)
    observation = next(e for e in events if e.cause is not None and e.tool_call_metadata is not None)
    action = next(e for e in events if e.id == observation.cause)
    # Read compact, the response stays its bytes (one RawJson for both) until a field read decodes it.
    kept = observation.tool_call_metadata.__dict__["model_response"]  # type: ignore[union-attr]
    assert type(kept) is RawJson
    assert kept is action.tool_call_metadata.__dict__["model_response"]  # type: ignore[union-attr]
    assert observation.response_id == kept.id == orjson.loads(kept.data)["id"]
    assert observation.tool_call_metadata.__dict__["model_response"] is kept  # reading the id decoded nothing
    assert kept.pristine  # reading the id decoded nothing
    # Read, both events give one dict, as a JSON list's events do.
    assert observation.tool_call_metadata.model_response is action.tool_call_metadata.model_response  # type: ignore[union-attr]
    opened = EventStream.open(path)
    by_id = {e.id: e for e in opened.get_events()}
    assert by_id[observation.id].tool_call_metadata.__dict__["model_response"] is by_id[action.id].tool_call_metadata.__dict__["model_response"]  # type: ignore[union-attr]
    opened.close()
    assert [event_to_dict(e) for e in events] == session
    # The same log read as a JSON list shares one dict.
    listed = load_events_from(session, tmp_path)
    observation = next(e for e in listed if e.id == observation.id)
    action = next(e for e in listed if e.id == observation.cause)
    assert observation.tool_call_metadata.model_response is action.tool_call_metadata.model_response  # type: ignore[union-attr]


@pytest.mark.parametrize("log", V0_LOGS)
def test_iter_events_reads_every_real_log_as_load_events_does(log: Path | None) -> None:
    path = require_real_log(log)
    assert list(iter_events(path)) == load_events(path)


def test_iter_events_holds_memory_constant_in_the_number_of_events(
    session: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_reading, "CHUNK", 1 << 14)  # both logs are many chunks long
    def peak(copies: int, suffix: str) -> int:
        records = [{**r, "id": i} for i, r in enumerate(session[:150] * copies)]
        path = tmp_path / f"log-{copies}{suffix}"
        if suffix == ".jsonl":
            path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
        else:
            path.write_bytes(orjson.dumps(records))
        gc.collect()
        tracemalloc.start()
        try:
            for _ in iter_events(path):
                pass
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    for suffix in (".jsonl", ".json"):
        small, large = peak(1, suffix), peak(6, suffix)
        assert large < small * 1.5, (suffix, small, large)


def test_iter_events_names_the_line_or_the_position_of_a_bad_record(tmp_path: Path) -> None:
    jsonl = tmp_path / "log.jsonl"
    jsonl.write_bytes(b'{"id": 0, "action": "message", "args": {"content": "hi"}}\n{"id": 1, "action": 3}\n')
    with pytest.raises(MalformedEventError) as raised:
        list(iter_events(jsonl))
    assert (raised.value.line, raised.value.event_id) == (2, 1)

    listed = tmp_path / "log.json"
    listed.write_bytes(b'[{"id": 0, "action": "message", "args": {"content": "hi"}}, {"id": 1, "action": "message", "args": {"content": "x"}')
    with pytest.raises(MalformedEventError) as raised:
        list(iter_events(listed))
    assert (raised.value.index, raised.value.reason) == (1, f"the list is not closed (byte {listed.stat().st_size})")


def test_load_events_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_bytes(b'[{"id": 0, "action": "message", "args": {"content": "hi"}}]')
    assert gc.isenabled()
    load_events(path)
    assert gc.isenabled()
    gc.disable()
    try:
        load_events(path)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_loaded_events_share_their_fields_set_and_get_their_own_when_changed(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(
        b'{"id": 0, "action": "message", "args": {"content": "a"}}\n{"id": 1, "action": "message", "args": {"content": "b"}}\n'
    )
    first, second = load_events(path)
    assert first.model_fields_set is second.model_fields_set
    assert first.model_fields_set == {"id", "action", "content"}
    with pytest.raises(TypeError, match="shared by loaded events"):
        first.model_fields_set.add("source")
    first.content = "changed"
    assert first.model_fields_set is not second.model_fields_set
    assert second.model_fields_set == {"id", "action", "content"}
    copied = second.model_copy(update={"id": 5})
    assert (copied.id, second.id, second.model_fields_set) == (5, 1, {"id", "action", "content"})


def test_copies_of_a_loaded_event_keep_its_layout(tmp_path: Path) -> None:
    line = {"id": 3, "timestamp": "2025-01-06T09:00:00", "source": "user", "message": "hi", "action": "message",
            "args": {"content": "hi", "wait_for_response": False}, "extra_key": [1]}
    path = tmp_path / "log.jsonl"
    path.write_bytes(orjson.dumps(line) + b"\n")
    (event,) = load_events(path)
    for copied in (copy.copy(event), copy.deepcopy(event), event.model_copy(), event.model_copy(deep=True),
                   pickle.loads(pickle.dumps(event))):
        assert event_to_dict(copied) == line
        assert list(event_to_dict(copied)) == list(line)
    assert event_to_dict(event.model_copy(update={"id": 9})) == {**line, "id": 9}


def test_a_response_kept_as_bytes_reads_compares_and_writes_as_its_dict(
    session: list[dict[str, Any]], tmp_path: Path
) -> None:
    compact = tmp_path / "log.jsonl"
    compact.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in session))
    raw = load_events(compact)
    listed = load_events_from(session, tmp_path)  # responses as dicts
    event = next(e for e in raw if e.tool_call_metadata is not None)
    twin = next(e for e in listed if e.id == event.id)
    assert type(event.tool_call_metadata.__dict__["model_response"]) is RawJson  # type: ignore[union-attr]
    assert raw == listed
    assert repr(event) == repr(twin)
    assert event.model_dump() == twin.model_dump()
    assert event.model_dump_json() == twin.model_dump_json()
    for copied in (copy.copy(event), copy.deepcopy(event), pickle.loads(pickle.dumps(event)), event.model_copy(deep=True)):
        assert copied == twin
        assert event_to_json(copied) == event_to_json(twin)
    # Written back compact, the file is the same bytes.
    again = tmp_path / "again.jsonl"
    dump_events(raw, again)
    assert again.read_bytes() == compact.read_bytes()
    # A read decodes it; a change to what was read is written.
    response = event.tool_call_metadata.model_response  # type: ignore[union-attr]
    assert response == twin.tool_call_metadata.model_response  # type: ignore[union-attr]
    assert type(response) is dict
    response["id"] = "changed"
    assert orjson.loads(event_to_json(event))["tool_call_metadata"]["model_response"]["id"] == "changed"
    assert event.response_id == "changed"
    # Its observation shares the response, unread: it writes and names the change too.
    sibling = next(e for e in raw if e.cause == event.id)
    assert type(sibling.tool_call_metadata.__dict__["model_response"]) is RawJson  # type: ignore[union-attr]
    assert sibling.response_id == "changed"
    assert orjson.loads(event_to_json(sibling))["tool_call_metadata"]["model_response"]["id"] == "changed"
    assert pickle.loads(pickle.dumps(sibling)).tool_call_metadata.model_response["id"] == "changed"  # type: ignore[union-attr]
    assert copy.deepcopy(sibling).tool_call_metadata.model_response == response  # type: ignore[union-attr]


def test_a_kept_response_is_decoded_by_its_field_alone() -> None:
    # `model_response` reads through a descriptor set on the class after pydantic built it: the
    # class still has no such attribute (so it is no default), and the other fields read plainly.
    assert not hasattr(ToolCallMetadata, "model_response")
    assert ToolCallMetadata.model_fields["model_response"].default is None

    class Tagged(ToolCallMetadata):
        tag: str = "t"

    assert Tagged(function_name="f", tool_call_id="c").model_response is None
    metadata = Tagged(function_name="f", tool_call_id="c", model_response=RawJson(b'{"id":"r1"}', "r1"))
    assert type(metadata.__dict__["model_response"]) is RawJson
    assert metadata.function_name == "f" and metadata.tool_call_id == "c" and metadata.tag == "t"
    assert type(metadata.__dict__["model_response"]) is RawJson  # reading other fields decoded nothing
    assert metadata.model_response == {"id": "r1"}
    assert type(metadata.__dict__["model_response"]) is dict
    metadata.model_response = {"id": "r2"}
    assert metadata.model_response == {"id": "r2"} and metadata.response_id == "r2"
    assert "model_response" in metadata.model_fields_set
    object.__setattr__(metadata, "model_response", {"id": "r3"})
    assert metadata.model_response == {"id": "r3"}


def test_a_response_not_written_compact_is_read_as_a_dict(session: list[dict[str, Any]], tmp_path: Path) -> None:
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("".join(json.dumps(r) + "\n" for r in session))
    events = load_events(spaced)
    kept = [e.tool_call_metadata.__dict__["model_response"] for e in events if e.tool_call_metadata is not None]
    assert kept and all(type(k) is dict for k in kept)
    assert [event_to_dict(e) for e in events] == session


def test_a_broken_response_in_a_jsonl_line_raises_what_orjson_raises(session: list[dict[str, Any]], tmp_path: Path) -> None:
    line = next(orjson.dumps(r) for r in session if (r.get("tool_call_metadata") or {}).get("model_response"))
    broken = line.replace(b'"model_response":{', b'"model_response":{oops,', 1)
    with pytest.raises(orjson.JSONDecodeError) as expected:
        orjson.loads(broken)
    with pytest.raises(orjson.JSONDecodeError) as got:
        ResponseSharer().loads(broken)
    assert str(got.value) == str(expected.value)
    path = tmp_path / "broken.jsonl"
    path.write_bytes(line + b"\n" + broken + b"\n")
    with pytest.raises(MalformedEventError, match="invalid JSON"):
        list(iter_events(path))


def test_what_a_load_built_moves_to_the_oldest_generation_and_is_still_collected(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_bytes(b'[{"id": 0, "action": "message", "args": {"content": "hi"}}]')
    gc.collect()
    events = load_events(path)
    assert gc.get_freeze_count() == 0
    assert gc.is_tracked(events[0]) and any(o is events[0] for o in gc.get_objects(generation=2))
    # A cycle built during the load is not kept for ever: a full collection finds it.
    cycle: list[Any] = []
    cycle.append(cycle)
    with _reading.gc_paused():
        made = [cycle]
    del cycle, made
    assert gc.collect() >= 1


def test_a_load_leaves_what_someone_froze_frozen(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_bytes(b'[{"id": 0, "action": "message", "args": {"content": "hi"}}]')
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        load_events(path)
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()


def test_a_model_response_key_elsewhere_in_the_line_is_not_taken_for_the_metadata_one() -> None:
    response = {"id": "r1", "choices": []}
    record = {
        "id": 3,
        "action": "run",
        "args": {"command": "ls", "model_response": response, "total_calls_in_response": 1},
        "tool_call_metadata": {"function_name": "f", "tool_call_id": "c", "model_response": None, "total_calls_in_response": 1},
    }
    line = orjson.dumps(record)
    assert line.index(b'"model_response":{') < line.index(b'"tool_call_metadata"')
    assert ResponseSharer().loads(line) == record
    assert event_to_dict(event_from_json(line)) == record
