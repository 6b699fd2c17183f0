"""What every adapter shares: the query keys, log order, rebuild from the log, following a stream, reset."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from openhands_memory.errors import DuplicateEventError
from openhands_memory.events import CmdRunAction, EventSource, MessageAction
from openhands_memory.memory import MarkdownFileMemory, MemoryQuery, MemoryRecord, SummaryMemory, VectorMemory, WindowMemory
from openhands_memory.stream import EventStream
from openhands_memory.testing.synthetic import synthetic_session


def test_query_keys_are_checked_with_a_suggestion() -> None:
    with pytest.raises(ValueError, match=re.escape("unknown memory query key 'role'. Did you mean 'roles'?")):
        MemoryQuery.parse({"role": ["user"]})
    with pytest.raises(ValueError, match="'roles' must be a list of role names, not 'user'"):
        MemoryQuery.parse({"roles": "user"})
    with pytest.raises(ValueError, match="'max_items' must be a non-negative integer, not -1"):
        MemoryQuery.parse({"max_items": -1})
    assert MemoryQuery.parse({"max_items": 8, "top_k": 3}).limit(20) == 3
    assert MemoryQuery.parse({}).limit(20) == 20


def test_append_refuses_a_record_that_is_not_after_the_last_one() -> None:
    memory = WindowMemory()
    memory.append(MemoryRecord("user", "a", 0, event_id=5))
    with pytest.raises(DuplicateEventError, match="event 5 is not after event 5"):
        memory.append(MemoryRecord("user", "again", 0, event_id=5))
    with pytest.raises(DuplicateEventError, match="event 3 is not after event 5"):
        memory.append(MemoryRecord("user", "older", 0, event_id=3))
    assert [r.content for r in memory.records] == ["a"]


def test_an_event_without_an_id_is_refused() -> None:
    with pytest.raises(ValueError, match="this message event has no id"):
        WindowMemory().append_event(MessageAction(content="never stored"))


@pytest.mark.parametrize(
    ("cls", "options"),
    [(WindowMemory, {"window_size": 7}), (SummaryMemory, {"keep_last": 7}), (VectorMemory, {"top_k": 3})],
)
def test_an_adapter_following_a_stream_equals_one_rebuilt_from_its_log(cls: type, options: dict) -> None:
    events = synthetic_session(120)
    stream = EventStream()
    for event in events[:50]:
        stream.add_event(event.model_copy(update={"id": None}), event.source or EventSource.AGENT)
    live = cls(**options)
    live.attach(stream)  # catches up on the 50 events already there
    for event in events[50:]:
        stream.add_event(event.model_copy(update={"id": None}), event.source or EventSource.AGENT)
    live.detach()
    stream.add_event(MessageAction(content="after detach"), EventSource.USER)

    rebuilt = cls.from_events(stream.get_events(end_id=119), **options)  # the log, as stored

    assert live.records == rebuilt.records
    assert live.last_event_id == rebuilt.last_event_id == 119
    query = {"text": "pytest failed", "roles": ["tool"]}
    assert live.retrieve(query) == rebuilt.retrieve(query)


def test_markdown_memory_following_a_stream_equals_one_rebuilt(tmp_path) -> None:
    events = synthetic_session(60)
    stream = EventStream()
    live = MarkdownFileMemory(tmp_path / "live.md", max_in_memory=10)
    live.attach(stream)
    for event in events:
        stream.add_event(event.model_copy(update={"id": None}), event.source or EventSource.AGENT)
    rebuilt = MarkdownFileMemory.from_events(stream.get_events(), path=tmp_path / "rebuilt.md", max_in_memory=10)

    assert live.records == rebuilt.records
    assert (tmp_path / "live.md").read_text() == (tmp_path / "rebuilt.md").read_text()


def test_attach_twice_is_refused() -> None:
    memory = WindowMemory()
    memory.attach(EventStream())
    with pytest.raises(ValueError, match="already follows a stream"):
        memory.attach(EventStream())


def test_reset_forgets_the_records_and_continues_with_new_events() -> None:
    stream = EventStream()
    memory = WindowMemory()
    memory.attach(stream)
    stream.add_event(MessageAction(content="first run"), EventSource.USER)
    memory.reset("run-2")
    stream.add_event(CmdRunAction(command="ls"), EventSource.AGENT)

    assert [(r.event_id, r.content) for r in memory.records] == [(1, "ls")]


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_sizes_must_be_non_negative_integers(bad: object) -> None:
    with pytest.raises(ValueError, match="window_size must be an integer >= 0"):
        WindowMemory(window_size=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="keep_last must be an integer >= 0"):
        SummaryMemory(keep_last=bad)  # type: ignore[arg-type]


def test_importing_the_adapters_loads_no_litellm() -> None:
    code = "import sys, openhands_memory.memory\nprint('litellm' in sys.modules)\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False"]


def test_qitos_history_keys_step_max_and_max_tokens_filter_too() -> None:
    memory = WindowMemory(window_size=0)
    for step, text in enumerate(["a" * 40, "b" * 40, "c" * 40, "d" * 8]):
        memory.append(MemoryRecord(role="user", content=text, step_id=step))

    assert [r.step_id for r in memory.retrieve({"step_max": 1})] == [0, 1]
    # QitOS' estimate: 10 tokens for 40 characters, 2 for 8: the newest that fit in 13.
    assert [r.step_id for r in memory.retrieve({"max_tokens": 13})] == [2, 3]


def test_a_history_policy_query_is_a_memory_query() -> None:
    from openhands_memory.conversation_memory import HistoryPolicy

    memory = WindowMemory(window_size=0)
    for step in range(6):
        memory.append(MemoryRecord(role="user" if step % 2 else "observation", content=f"s{step}", step_id=step))

    query = HistoryPolicy(max_messages=24, step_window=3, max_tokens=100).build_query(step_id=5)

    assert [r.content for r in memory.retrieve(query)] == ["s3", "s5"]  # user and assistant, steps 3-5
