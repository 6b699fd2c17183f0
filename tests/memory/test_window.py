"""`WindowMemory`: the last `window_size` records, QitOS' filters, eviction."""

from __future__ import annotations

from openhands_memory.memory import WindowMemory
from openhands_memory.testing.sessions import SessionBuilder


def _session() -> SessionBuilder:
    s = SessionBuilder()
    s.system()  # 0, step 0
    s.user("Fix the parser")  # 1, step 0
    s.turn("pytest", "2 failed")  # 2, 3: step 1
    s.turn("cat src/p.py", "def parse(): ...")  # 4, 5: step 2
    s.turn("pytest", "all passed")  # 6, 7: step 3
    return s


def test_retrieve_sees_only_the_window_and_applies_roles_step_min_and_text() -> None:
    memory = WindowMemory.from_events(_session().events, window_size=4)

    assert [r.event_id for r in memory.retrieve()] == [4, 5, 6, 7]
    assert [r.event_id for r in memory.retrieve({"roles": ["tool"]})] == [5, 7]
    assert [r.event_id for r in memory.retrieve({"step_min": 3})] == [6, 7]
    assert [r.event_id for r in memory.retrieve({"text": "PASSED"})] == [7]
    assert [r.event_id for r in memory.retrieve({"max_items": 1})] == [7]


def test_evict_drops_what_is_outside_the_window_and_counts_it() -> None:
    memory = WindowMemory.from_events(_session().events, window_size=3)

    assert len(memory) == 8
    assert memory.evict() == 5
    assert [r.event_id for r in memory.records] == [5, 6, 7]
    assert memory.evict() == 0


def test_window_zero_keeps_everything() -> None:
    memory = WindowMemory.from_events(_session().events, window_size=0)

    assert len(memory.retrieve()) == 8
    assert memory.evict() == 0


def test_summarize_lists_the_last_records_one_line_each() -> None:
    memory = WindowMemory.from_events(_session().events, window_size=4)

    assert memory.summarize(max_items=2) == "[3] assistant: pytest\n[3] tool: all passed"
