"""A condensation request's focus (issue 36 item 3): carried by the view, first in every summarizer's prompt, kept
by the offline summary, recorded with the condensation."""

from __future__ import annotations

from typing import Any

import pytest

from openhands_memory.condenser import (
    AutoContextCondenser,
    CompactHistoryCondenser,
    Condensation,
    Condenser,
    LLMSummarizingCondenser,
    StructuredSummaryCondenser,
)
from openhands_memory.condenser.impl.structured_summary_condenser import STATE_SUMMARY_TOOL_NAME
from openhands_memory.condenser.offline_summary import offline_summary
from openhands_memory.events import (
    CondensationAction,
    CondensationRequestAction,
    EventSource,
    FileReadAction,
    FileReadObservation,
)
from openhands_memory.llm.llm import LLM
from openhands_memory.testing.fake_llm import FakeReply
from openhands_memory.view import View, ViewBuilder

from ._model_helpers import fake_llm, prompt_of, session

FOCUS = "the database migration in db/0007.sql"


def _with_request(focus: str | None, turns: int = 8) -> View:
    s = session(turns, output="output " * 40)
    s.add(CondensationRequestAction(focus=focus), EventSource.AGENT)
    return View.from_events(s.events)


def _strategies() -> list[tuple[str, Any, Any]]:
    structured = FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, {"user_context": "u", "completed_tasks": "c", "pending_tasks": "p"})
    return [
        ("llm", lambda llm: LLMSummarizingCondenser(llm, max_size=1_000, keep_first=4), "S"),
        ("structured", lambda llm: StructuredSummaryCondenser(llm, max_size=1_000, keep_first=4), structured),
        ("compact_history", lambda llm: CompactHistoryCondenser(llm, max_tokens=100_000), "S"),
        ("auto_context", lambda llm: AutoContextCondenser(llm, msg_threshold=10**9, max_token=10**9, last_keep=0), "S"),
    ]


@pytest.mark.parametrize(("name", "make", "reply"), _strategies(), ids=[s[0] for s in _strategies()])
def test_every_model_backed_summarizer_puts_the_focus_first_and_records_it(name: str, make: Any, reply: Any) -> None:
    fake, llm = fake_llm(reply, default=reply)
    condenser: Condenser = make(llm)
    result = condenser.condense(_with_request(FOCUS))
    assert isinstance(result, Condensation), name
    prompt = prompt_of(fake, 0)
    assert prompt.startswith(f"<FOCUS>\n{FOCUS}\n</FOCUS>\n"), prompt[:200]
    assert result.metadata is not None and result.metadata.extra["focus"] == FOCUS
    assert result.action.condenser_metadata is not None and result.action.condenser_metadata["extra"]["focus"] == FOCUS


@pytest.mark.parametrize(("name", "make", "reply"), _strategies(), ids=[s[0] for s in _strategies()])
def test_without_a_focus_the_prompt_says_nothing_of_one(name: str, make: Any, reply: Any) -> None:
    fake, llm = fake_llm(reply, default=reply)
    result = make(llm).condense(_with_request(None))
    assert isinstance(result, Condensation)
    assert "<FOCUS>" not in prompt_of(fake, 0)
    assert "focus" not in (result.metadata.extra if result.metadata else {})


def _reads(count: int) -> list[Any]:
    events: list[Any] = []
    for i in range(count):
        action = FileReadAction(path=f"src/mod{i}.py")
        action.id = 2 * i
        observation = FileReadObservation(content="x", path=action.path, cause=action.id)
        observation.id = 2 * i + 1
        events += [action, observation]
    return events


def test_the_offline_summary_writes_the_focus_first_and_keeps_the_lines_it_names() -> None:
    events = _reads(40)
    unfocused = offline_summary(events, fits=lambda text: len(text) < 600)
    assert "src/mod7.py" not in unfocused  # cut to fit without a focus
    focused = offline_summary(events, fits=lambda text: len(text) < 600, focus="what was in src/mod7.py")
    lines = focused.splitlines()
    assert lines[1] == "FOCUS (what this summary was asked to keep): what was in src/mod7.py"
    assert "- src/mod7.py: read (event 14)" in lines
    # Read back as a previous summary, the focus line is not taken for a fact.
    assert "FOCUS" not in offline_summary([], previous=[focused])


def test_the_offline_summarizer_of_a_strategy_without_a_model_uses_the_focus() -> None:
    s = session(0)
    for event in _reads(60)[8:]:
        s.add(event.model_copy(), EventSource.AGENT)
    s.add(CondensationRequestAction(focus="src/mod9.py"), EventSource.AGENT)
    result = LLMSummarizingCondenser(None, max_size=1_000, keep_first=4).condense(View.from_events(s.events))
    assert isinstance(result, Condensation) and result.action.summary is not None
    assert result.action.summary.splitlines()[1] == "FOCUS (what this summary was asked to keep): src/mod9.py"


def test_the_view_carries_the_newest_focus_until_a_condensation_and_the_builder_agrees() -> None:
    s = session(2)
    s.add(CondensationRequestAction(focus="first"), EventSource.AGENT)
    s.add(CondensationRequestAction(), EventSource.AGENT)
    builder = ViewBuilder()
    for event in s.events:
        builder.append(event)
    assert View.from_events(s.events).condensation_focus == "first" == builder.view.condensation_focus
    s.add(CondensationAction(forgotten_event_ids=[]), EventSource.AGENT)
    builder.append(s.events[-1])
    assert View.from_events(s.events).condensation_focus is None is builder.view.condensation_focus
    assert View.from_events(s.events) == builder.view


def test_a_summarizer_without_a_model_records_the_focus_even_when_it_writes_no_prompt() -> None:
    llm: LLM | None = None
    result = LLMSummarizingCondenser(llm, max_size=1_000, keep_first=4).condense(_with_request(FOCUS))
    assert isinstance(result, Condensation) and result.metadata is not None and result.metadata.extra["focus"] == FOCUS
