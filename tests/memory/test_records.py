"""How events become memory records: roles, steps, text, and what is skipped."""

from __future__ import annotations

from openhands_memory.events import (
    AgentStateChangedObservation,
    EventSource,
    FileEditAction,
    MessageAction,
)
from openhands_memory.memory import WindowMemory
from openhands_memory.testing.sessions import SessionBuilder


def test_roles_steps_and_text_follow_the_events() -> None:
    s = SessionBuilder()
    s.system()  # 0
    s.user("Fix the parser")  # 1
    a, b = s.calls("pytest -x", "git status")  # 2, 3: one model response, parallel calls
    s.result(a, "1 failed")  # 4
    s.result(b, "clean")  # 5
    s.add(FileEditAction(path="src/p.py", command="str_replace", old_str="x = 1", new_str="x = 2"))  # 6
    s.agent("Done")  # 7

    memory = WindowMemory.from_events(s.events, window_size=0)

    assert [(r.event_id, r.role, r.step_id, r.content) for r in memory.records] == [
        (0, "system", 0, "You are an agent."),
        (1, "user", 0, "Fix the parser"),
        (2, "assistant", 1, "pytest -x"),
        (3, "assistant", 1, "git status"),
        (4, "tool", 1, "1 failed"),
        (5, "tool", 1, "clean"),
        (6, "assistant", 2, "src/p.py\nstr_replace\nx = 1\nx = 2"),
        (7, "assistant", 3, "Done"),
    ]
    assert memory.records[4].metadata == {"kind": "run", "source": "environment", "tool": "execute_bash", "cause": 2}


def test_hidden_state_changes_and_condensations_are_not_remembered_but_are_seen() -> None:
    s = SessionBuilder()
    s.user("task")  # 0
    s.add(AgentStateChangedObservation(agent_state="running"))  # 1
    s.add(MessageAction(content="secret plumbing", hidden=True), EventSource.USER)  # 2
    s.condense(forgotten_event_ids=[0])  # 3: memory keeps what a condensation forgets
    s.agent("ok")  # 4

    memory = WindowMemory.from_events(s.events)

    assert [r.event_id for r in memory.records] == [0, 4]
    assert memory.last_event_id == 4
