"""Records in QitOS' form (`MemoryRecord(role=..., content=..., step_id=..., metadata=...)`): into the log, then memory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openhands_memory.errors import MemoryAdapterError
from openhands_memory.events import CmdOutputObservation, CmdRunAction, EventSource, MessageAction, agent_history, load_events
from openhands_memory.events.serialization import dump_events
from openhands_memory.memory import MarkdownFileMemory, MemoryRecord, SummaryMemory, VectorMemory, WindowMemory, window_memory
from openhands_memory.stream import EventStream


def _qitos_run(memory: WindowMemory | SummaryMemory | VectorMemory) -> None:
    """What QitOS' engine appends in one run (`Engine._memory_append`)."""
    memory.append(MemoryRecord(role="task", content={"objective": "fix the parser", "task_id": None}, step_id=0, metadata={}))
    memory.append(MemoryRecord(role="decision", content="run the tests", step_id=1, metadata={"source": "engine"}))
    memory.append(MemoryRecord(role="action", content="pytest -x", step_id=1))
    memory.append(MemoryRecord(role="observation", content="1 failed: test_parse", step_id=1, metadata={"exit_code": 1}))


def test_a_record_in_qitos_form_is_written_to_the_log_and_read_back() -> None:
    memory = window_memory()
    _qitos_run(memory)

    assert memory.stream is not None  # no stream was attached: the memory keeps one of its own
    events = memory.stream.get_events()
    assert [e.id for e in events] == [0, 1, 2, 3]
    assert all(isinstance(e, MessageAction) and e.hidden for e in events)  # in the log, never in a model's prompt
    assert agent_history(events) == []
    assert [(r.role, r.content, r.step_id, r.metadata, r.event_id) for r in memory.records] == [
        ("task", '{"objective": "fix the parser", "task_id": null}', 0, {}, 0),
        ("decision", "run the tests", 1, {"source": "engine"}, 1),
        ("action", "pytest -x", 1, {}, 2),
        ("observation", "1 failed: test_parse", 1, {"exit_code": 1}, 3),
    ]


@pytest.mark.parametrize("cls", [WindowMemory, SummaryMemory, VectorMemory])
def test_a_memory_rebuilt_from_the_log_equals_the_live_one(cls: type, tmp_path: Path) -> None:
    stream = EventStream()
    live = cls()
    live.attach(stream)
    stream.add_event(MessageAction(content="Fix the parser"), EventSource.USER)
    _qitos_run(live)
    run = CmdRunAction(command="cat src/p.py")
    stream.add_event(run, EventSource.AGENT)
    stream.add_event(CmdOutputObservation(content="def parse(): ...", command=run.command, cause=run.id), EventSource.ENVIRONMENT)

    # Through a file: the tags survive the JSON round trip.
    path = tmp_path / "events.jsonl"
    dump_events(stream.get_events(), path)
    rebuilt = cls.from_events(load_events(path))

    assert live.records == rebuilt.records and len(live.records) == 7
    assert [r.role for r in rebuilt.records] == ["user", "task", "decision", "action", "observation", "assistant", "tool"]


def test_qitos_roles_are_accepted_in_filters_alongside_ours() -> None:
    stream = EventStream()
    memory = WindowMemory(window_size=0)
    memory.attach(stream)
    _qitos_run(memory)  # events 0-3
    run = CmdRunAction(command="pytest")
    stream.add_event(run, EventSource.AGENT)  # 4: an action from the log (assistant)
    stream.add_event(CmdOutputObservation(content="2 failed", command="pytest", cause=run.id), EventSource.ENVIRONMENT)  # 5

    def ids(roles: list[str]) -> list[int | None]:
        return [r.event_id for r in memory.retrieve({"roles": roles})]

    assert ids(["observation"]) == [3, 5]  # QitOS' observation, and the log's observation (ours: tool)
    assert ids(["action"]) == [2, 4]
    assert ids(["task"]) == [0]
    assert ids(["tool"]) == [5]  # our role names only ours
    assert ids(["state"]) == []


def test_a_bad_record_is_refused_and_nothing_is_written() -> None:
    memory = WindowMemory()
    with pytest.raises(MemoryAdapterError, match=re.escape("a memory record needs a role (a non-empty string), not ''")):
        memory.append(MemoryRecord(role="", content="x", step_id=0))
    with pytest.raises(MemoryAdapterError, match=re.escape("step_id must be an integer >= 0, not -1")):
        memory.append(MemoryRecord(role="task", content="x", step_id=-1))
    with pytest.raises(MemoryAdapterError, match="metadata must be a JSON object"):
        memory.append(MemoryRecord(role="task", content="x", step_id=0, metadata={"when": object()}))
    with pytest.raises(MemoryAdapterError, match="the record of event 4 must hold text, not dict"):
        memory.append(MemoryRecord(role="user", content={"a": 1}, step_id=0, event_id=4))
    assert memory.stream is None and memory.records == []


def test_a_malformed_tag_in_a_log_names_its_event() -> None:
    event = MessageAction(content="x", hidden=True, memory_record={"role": "task"})
    stream = EventStream()
    stream.add_event(event, EventSource.AGENT)
    with pytest.raises(MemoryAdapterError, match=re.escape("event 0: its memory_record tag is not {role, step_id, metadata}")):
        WindowMemory.from_events(stream.get_events())


def test_a_markdown_memory_mirrors_a_record_in_qitos_form(tmp_path: Path) -> None:
    memory = MarkdownFileMemory(tmp_path / "memory.md")
    memory.append(MemoryRecord(role="observation", content="1 failed", step_id=3, metadata={"exit_code": 1}))

    text = (tmp_path / "memory.md").read_text(encoding="utf-8")
    assert re.search(
        r"\n## Step 3 · observation\n- time_utc: \S+\+00:00\n- event_id: 0\n- metadata: \{'exit_code': 1\}\n\n```text\n1 failed\n```\n$", text
    )
