"""Summaries that point back: the model-backed summarizers see each event's id and are asked to cite them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openhands_memory.condenser import Condensation, LLMSummarizingCondenser, StateSummary, StructuredSummaryCondenser
from openhands_memory.condenser._model_backed import CITE_EVENT_IDS, ModelSummarizingCondenser
from openhands_memory.condenser.impl.structured_summary_condenser import STATE_SUMMARY_TOOL_NAME
from openhands_memory.events import AgentCondensationObservation, CondensationAction, load_events
from openhands_memory.llm.llm import LLM
from openhands_memory.stream import JsonlEventStore
from openhands_memory.testing.fake_llm import FakeReply, Scripted

from ._model_helpers import fake_llm, prompt_of, round_trips, session

CITED = "CHANGES: edited src/x.py (events 5-9)\nTESTS: cmd4 failed (event 13)"
"""A summary that cites the ids of the events it stands for."""

STRATEGIES: list[tuple[type[ModelSummarizingCondenser], Scripted]] = [
    (LLMSummarizingCondenser, CITED),
    (StructuredSummaryCondenser, FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, {"user_context": "u", "completed_tasks": "c", "pending_tasks": "p"})),
]


def _condense(strategy: type[ModelSummarizingCondenser], llm: LLM, **options: object) -> Condensation:
    result = strategy(llm, max_size=12, keep_first=4, **options).condense(session(6).view)  # type: ignore[arg-type]
    assert isinstance(result, Condensation)
    return result


@pytest.mark.parametrize(("strategy", "reply"), STRATEGIES, ids=["llm", "structured"])
def test_the_prompt_tags_every_summarized_event_with_its_id_and_asks_for_citations_before_the_closing(
    strategy: type[ModelSummarizingCondenser], reply: Scripted
) -> None:
    fake, llm = fake_llm(reply)
    result = _condense(strategy, llm)
    prompt = prompt_of(fake)
    assert re.findall(r"<EVENT id=(\d+)>", prompt) == [str(i) for i in result.action.forgotten]
    assert prompt.endswith(f"</EVENT>\n\n{CITE_EVENT_IDS}\n\n{strategy.closing}")
    assert "(events 120-131)" in CITE_EVENT_IDS and "Keep the ids the previous summary cites" in CITE_EVENT_IDS


@pytest.mark.parametrize(("strategy", "reply"), STRATEGIES, ids=["llm", "structured"])
def test_a_custom_summary_prompt_still_asks_for_citations(strategy: type[ModelSummarizingCondenser], reply: Scripted) -> None:
    fake, llm = fake_llm(reply)
    _condense(strategy, llm, summary_prompt="Only the facts.")
    prompt = prompt_of(fake)
    assert prompt.startswith("Only the facts.\n\n<PREVIOUS SUMMARY>")
    assert f"\n\n{CITE_EVENT_IDS}\n\n" in prompt


def test_the_state_summary_fields_ask_for_event_ids_where_a_fact_comes_from_an_event() -> None:
    properties = StateSummary.tool()["function"]["parameters"]["properties"]
    for name in ("completed_tasks", "files_modified", "failing_tests", "error_messages"):
        assert re.search(r"\bids? of (the|its) event", properties[name]["description"]), name
    assert "(events 12-19)" in properties["completed_tasks"]["description"]


def test_a_summary_citing_ids_round_trips_through_the_log_and_is_handed_on_with_the_request_to_keep_them(
    tmp_path: Path,
) -> None:
    s = session(6)  # ids 0-15
    fake, llm = fake_llm(CITED, "S2")
    condenser = LLMSummarizingCondenser(llm, max_size=12, keep_first=4)
    first = condenser.condense(s.view)
    assert isinstance(first, Condensation)
    action = first.action
    assert action.summary == CITED
    cited = {int(n) for span in re.findall(r"\(events? (\d+(?:-\d+)?)\)", CITED) for n in span.split("-")}
    assert cited <= set(action.forgotten)  # every cited id names an event the agent can reload
    assert round_trips(action)
    path = tmp_path / "events.jsonl"
    store = JsonlEventStore(path)
    for event in [*s.events, action.model_copy(update={"id": s.next_id})]:
        store.append(event)
    store.close()
    reloaded = [e for e in load_events(path) if isinstance(e, CondensationAction)]
    assert [e.summary for e in reloaded] == [CITED]
    s.add(action)
    shown = [e for e in s.view if isinstance(e, AgentCondensationObservation)]
    assert [e.content for e in shown] == [CITED]
    for i in range(6):
        s.turn(f"more{i}")
    second = condenser.condense(s.view)
    assert isinstance(second, Condensation)
    prompt = prompt_of(fake)
    assert f"<PREVIOUS SUMMARY>\n{CITED}\n</PREVIOUS SUMMARY>" in prompt and CITE_EVENT_IDS in prompt
