"""`auto_context` with no model: strategies 1, 4, 5 and 6 write the offline structured summary, within their size rules."""

from __future__ import annotations

from typing import Any

from openhands_memory.condenser import AutoContextCondenser, Condensation, Condenser
from openhands_memory.condenser._model_backed import render_event
from openhands_memory.condenser.offline_summary import (
    OFFLINE_SUMMARIZER_NAME,
    OFFLINE_SUMMARY_HEADER,
)
from openhands_memory.events import (
    AgentCondensationObservation,
    Event,
    EventSource,
    Observation,
)
from openhands_memory.view import View

from .._helpers import Session

FAILING_RUN = "FAILED tests/test_x.py::test_y - AssertionError: assert 1 == 2\n" + "log line\n" * 100
TESTS_LINE = (
    "- `pytest tests/test_x.py` exit 1; failing: tests/test_x.py::test_y; "
    "first error: FAILED tests/test_x.py::test_y - AssertionError: assert 1 == 2 (events 4-5)"
)
PENDING_LINE = "- make `pytest tests/test_x.py` pass (its latest run failed) (events 4-5)"


def _offline(**options: Any) -> AutoContextCondenser:
    """No model; thresholds out of reach unless a test lowers them; no protected tail; "large" past 2,000 characters."""
    values: dict[str, Any] = {
        "msg_threshold": 10**9,
        "max_token": 10**9,
        "last_keep": 0,
        "large_payload_threshold": 2000,
        "offload_single_preview": 20,
    }
    values.update(options)
    return AutoContextCondenser(**values)


def _failing_test_turn(s: Session) -> None:
    """A pytest run that fails (ids 4-5 after the header)."""
    _, observation = s.turn("pytest tests/test_x.py", FAILING_RUN)
    observation.metadata = {"exit_code": 1}


def _chars(events: list[Event]) -> int:
    """The characters auto_context measures a unit by: an observation's content, an action as a prompt shows it."""
    return sum(len(e.content) if isinstance(e, Observation) else len(render_event(e)) for e in events)


def _condense_offline(condenser: Condenser, view: View) -> tuple[Condensation, str, list[Event]]:
    """The condensation, its summary and the events it compressed; checks that no model was asked and the summarizer is on record."""
    outcome = condenser.condense(view)
    assert isinstance(outcome, Condensation) and outcome.metadata is not None
    extra = outcome.metadata.extra
    assert (extra["summarizer"], extra["outcome"]) == (OFFLINE_SUMMARIZER_NAME, "offline summary")
    assert outcome.metadata.llm_usage is None and outcome.action.llm_metrics is None
    assert outcome.action.summary_persists is True
    summary = outcome.action.summary
    assert summary is not None
    forgotten = set(outcome.action.forgotten)
    return outcome, summary, [e for e in view if e.id in forgotten]


def _within_the_unit_rule(condenser: AutoContextCondenser, summary: str, compressed: list[Event]) -> None:
    """Strategies 1, 4, 5: fewer tokens than the unit, at most half its characters (or 400)."""
    assert condenser.token_counter([AgentCondensationObservation(content=summary)]) < condenser.token_counter(compressed)
    assert len(summary) <= max(400, _chars(compressed) // 2)


def test_a_config_without_llm_config_builds_a_condenser_with_no_model() -> None:
    condenser = Condenser.from_config({"type": "auto_context"})
    assert isinstance(condenser, AutoContextCondenser) and condenser.llm is None
    assert AutoContextCondenser().llm is None


def test_strategy_1_without_a_model_writes_the_offline_summary_of_the_tool_run() -> None:
    s = Session()
    s.header()
    _failing_test_turn(s)  # 4-5
    for i in range(2):
        s.turn(f"cat src/mod{i}.py", f"line {i}\n" * 40)  # 6-9
    s.user("Now the second part")  # 10
    s.agent("On it")  # 11
    condenser = _offline(msg_threshold=12)
    outcome, summary, compressed = _condense_offline(condenser, s.view)
    assert outcome.metadata is not None and outcome.metadata.extra["compression"]["event_type"] == "TOOL_INVOCATION_COMPRESS"
    assert summary.splitlines() == (
        [
            "[compressed tool calls: events 4-9]",
            OFFLINE_SUMMARY_HEADER,
            "PENDING:",
            PENDING_LINE,
            "CURRENT_STATE:",
            "- other commands run: `cat src/mod0.py`, `cat src/mod1.py` (events 6-9)",
            "TESTS:",
            TESTS_LINE,
        ]
    )
    _within_the_unit_rule(condenser, summary, compressed)


def test_strategy_4_without_a_model_folds_an_earlier_offloaded_call_into_the_round_summary() -> None:
    s = Session()
    s.header()
    _failing_test_turn(s)  # 4-5
    s.turn("cat big.log", "y" * 3000)  # 6-7: a large output, offloaded first (strategy 2)
    s.user("Now the second part")  # 8
    s.agent("On it")  # 9
    condenser = _offline(msg_threshold=9)
    events = list(s.events)
    first = condenser.condense(View.from_events(events))
    assert isinstance(first, Condensation) and first.metadata is not None
    assert first.metadata.extra["compression"]["event_type"] == "LARGE_MESSAGE_OFFLOAD"
    assert "summarizer" not in first.metadata.extra  # an offload needs no summarizer
    events.append(first.action.model_copy(update={"id": 10, "source": EventSource.AGENT}))
    outcome, summary, compressed = _condense_offline(condenser, View.from_events(events))
    assert outcome.metadata is not None
    assert outcome.metadata.extra["compression"]["event_type"] == "PREVIOUS_ROUND_CONVERSATION_SUMMARY"
    assert 10 in outcome.action.forgotten  # the offload's condensation: its summary is folded in
    assert summary.splitlines() == (
        [
            "[summary of a past round: events 2-5]",
            OFFLINE_SUMMARY_HEADER,
            "PENDING:",
            PENDING_LINE,
            "CURRENT_STATE:",
            "- offloaded tool call `cat big.log`, its output reloadable by id (events 6-7)",
            "TESTS:",
            TESTS_LINE,
        ]
    )
    summary_event = next(e for e in View.from_events(events) if isinstance(e, AgentCondensationObservation))
    _within_the_unit_rule(condenser, summary, [*compressed, summary_event])


def test_strategy_5_without_a_model_summarizes_the_large_message_and_keeps_its_handle() -> None:
    s = Session()
    s.header()
    analysis = "My analysis: the parser drops the last token. " + "detail " * 400  # 4: 2,846 characters
    s.agent(analysis)
    s.turn("ls", "small")  # 5-6: the latest response
    condenser = _offline(max_token=1, token_ratio=1.0)  # always over the token threshold
    outcome, summary, compressed = _condense_offline(condenser, s.view)
    assert outcome.metadata is not None
    assert outcome.metadata.extra["compression"]["event_type"] == "CURRENT_ROUND_LARGE_MESSAGE_SUMMARY"
    assert list(outcome.action.forgotten) == [4]
    lines = summary.splitlines()
    assert lines[:3] == ["[summary of a large message: event 4]", OFFLINE_SUMMARY_HEADER, "CURRENT_STATE:"]
    assert lines[3].startswith("- the agent's latest message: My analysis: the parser drops the last token. detail")
    assert lines[-1] == f"[event 4: {len(analysis)} characters offloaded; call context_reload with event_id=4 to see all of it]"
    _within_the_unit_rule(condenser, summary, compressed)


def test_strategy_6_without_a_model_stays_within_its_share_of_the_current_round() -> None:
    s = Session()
    s.header()
    _failing_test_turn(s)  # 4-5
    for i in range(3):
        s.turn(f"cat src/mod{i}.py", f"line {i}\n" * 40)  # 6-11
    s.agent("Reading the modules")  # 12: the latest response
    condenser = _offline(msg_threshold=13)
    outcome, summary, compressed = _condense_offline(condenser, s.view)
    assert outcome.metadata is not None
    assert outcome.metadata.extra["compression"]["event_type"] == "CURRENT_ROUND_MESSAGE_COMPRESS"
    assert sorted(outcome.action.forgotten) == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    header, body = summary.split("\n", 1)
    assert header == "[summary of the current round: events 2-11]"
    target = int(0.3 * _chars(compressed))
    assert len(body) <= target
    assert "summary_cut" not in outcome.metadata.extra  # the summary fits whole
    assert body.splitlines() == (
        [
            OFFLINE_SUMMARY_HEADER,
            "PENDING:",
            PENDING_LINE,
            "CURRENT_STATE:",
            "- other commands run: `cat src/mod0.py`, `cat src/mod1.py`, `cat src/mod2.py` (events 6-11)",
            "TESTS:",
            TESTS_LINE,
        ]
    )


def test_strategy_6_without_a_model_keeps_the_newest_lines_of_each_section_to_reach_its_share() -> None:
    s = Session()
    s.header()
    for i in range(10):
        _, observation = s.turn(f"pytest tests/test_{i}.py", f"FAILED tests/test_{i}.py::test_y\n" + "log line\n" * 20)  # 4-23
        observation.metadata = {"exit_code": 1}
    s.agent("Ten suites fail")  # 24: the latest response
    condenser = _offline(msg_threshold=25)
    outcome, summary, compressed = _condense_offline(condenser, s.view)
    assert outcome.metadata is not None and "summary_cut" not in outcome.metadata.extra  # lines dropped, no cut
    body = summary.split("\n", 1)[1]
    assert len(body) <= int(0.3 * _chars(compressed))
    # Ten runs would not fit: each section keeps its newest lines and says how many it left out.
    assert body.splitlines() == [
        OFFLINE_SUMMARY_HEADER,
        "PENDING:",
        "- … 7 lines left out",
        *(f"- make `pytest tests/test_{i}.py` pass (its latest run failed) (events {2 * i + 4}-{2 * i + 5})" for i in (7, 8, 9)),
        "TESTS:",
        "- … 7 lines left out",
        *(
            f"- `pytest tests/test_{i}.py` exit 1; failing: tests/test_{i}.py::test_y; "
            f"first error: FAILED tests/test_{i}.py::test_y (events {2 * i + 4}-{2 * i + 5})"
            for i in (7, 8, 9)
        ),
    ]
