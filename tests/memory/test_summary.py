"""`SummaryMemory`: recent records verbatim, evicted ones folded into summaries."""

from __future__ import annotations

from openhands_memory.memory import SummaryMemory
from openhands_memory.testing.sessions import SessionBuilder


def _memory(keep_last: int) -> SummaryMemory:
    s = SessionBuilder()
    s.user("Fix the parser")  # 0
    s.turn("pytest", "2 failed:\n  test_parse")  # 1, 2
    s.turn("cat src/p.py", "def parse(): ...")  # 3, 4
    return SummaryMemory.from_events(s.events, keep_last=keep_last)


def test_evict_folds_older_records_into_one_summary() -> None:
    memory = _memory(keep_last=2)

    assert memory.evict() == 3
    assert [r.event_id for r in memory.records] == [3, 4]
    assert memory.summaries == ["0: user: Fix the parser | 1: assistant: pytest | 1: tool: 2 failed: test_parse"]
    assert memory.summarize(max_items=1) == "tool:def parse(): ..."


def test_summarize_is_qitos_role_content_pipe_string() -> None:
    s = SessionBuilder()
    s.user("Fix the parser")  # 0
    s.turn("pytest", "2 failed:\n  test_parse " + "x" * 100)  # 1, 2
    memory = SummaryMemory.from_events(s.events, keep_last=10)

    # QitOS: " | ".join(f"{r.role}:{str(r.content)[:80]}" for r in the last max_items records).
    assert memory.summarize(max_items=2) == "assistant:pytest | tool:" + ("2 failed:\n  test_parse " + "x" * 100)[:80]
    assert memory.summarize() == "user:Fix the parser | assistant:pytest | tool:" + ("2 failed:\n  test_parse " + "x" * 100)[:80]
    assert SummaryMemory().summarize() == ""
    assert memory.summaries == []  # summarizing folds nothing away


def test_retrieve_defaults_to_keep_last_records() -> None:
    memory = _memory(keep_last=2)

    assert [r.event_id for r in memory.retrieve()] == [3, 4]
    assert [r.event_id for r in memory.retrieve({"max_items": 4, "roles": ["assistant", "user"]})] == [0, 1, 3]


def test_reset_clears_records_and_summaries() -> None:
    memory = _memory(keep_last=1)
    memory.evict()
    memory.reset()

    assert memory.records == [] and memory.summaries == [] and memory.summarize() == ""
