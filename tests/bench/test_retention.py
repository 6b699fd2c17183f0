"""Facts from forgotten events, and whether the final view's text still holds them."""

from __future__ import annotations

from openhands_memory.bench.retention import (
    FACT_TEXT_CHARS,
    RECALL_LIMIT,
    Fact,
    extract_facts,
    facts_of,
    forgotten_events,
    measure_retention,
    normalize,
    view_text,
)
from openhands_memory.events import (
    CmdOutputObservation,
    CondensationAction,
    EventSource,
    FileEditAction,
    FileReadAction,
    FileWriteAction,
    MessageAction,
)
from openhands_memory.llm import Message, TextContent, ToolCall, ToolCallFunction

from ._helpers import Log


def facts(event: object) -> list[Fact]:
    return list(facts_of(event))  # type: ignore[arg-type]


def test_edited_and_written_files_are_facts_but_viewed_and_read_files_are_not() -> None:
    assert facts(FileEditAction(path="/w/a.py", command="str_replace")) == [Fact("file", "/w/a.py")]
    assert facts(FileEditAction(path="/w/b.py", command="create")) == [Fact("file", "/w/b.py")]
    assert facts(FileEditAction(path="/w/old.py", content="x = 1")) == [Fact("file", "/w/old.py")]
    assert facts(FileWriteAction(path="/w/c.txt", content="hi")) == [Fact("file", "/w/c.txt")]
    assert facts(FileEditAction(path="/w/a.py", command="view")) == []
    assert facts(FileReadAction(path="/w/a.py")) == []


def test_a_command_that_failed_is_a_fact_with_its_exit_code() -> None:
    failed = CmdOutputObservation(content="boom", command="make  test\n", metadata={"exit_code": 2})
    assert facts(failed) == [Fact("failed_command", "make test", "exit code 2")]
    assert facts(CmdOutputObservation(content="ok", command="make", metadata={"exit_code": 0})) == []
    assert facts(CmdOutputObservation(content="?", command="sleep 999", metadata={"exit_code": -1})) == []


def test_pytest_node_ids_in_command_output_are_facts() -> None:
    output = (
        "tests/test_api.py::test_fetch PASSED\n"
        "FAILED tests/unit/test_x.py::TestParser::test_quotes[a-b] - AssertionError\n"
        "see src/app.py line 3; tests/test_api.py::test_fetch again\n"
    )
    found = facts(CmdOutputObservation(content=output, command="pytest", metadata={"exit_code": 0}))
    assert found == [
        Fact("test", "tests/test_api.py::test_fetch"),
        Fact("test", "tests/unit/test_x.py::TestParser::test_quotes[a-b]"),
        Fact("test", "tests/test_api.py::test_fetch"),
    ]


def test_user_messages_are_instructions_cut_to_a_normalized_prefix() -> None:
    long = "Please   fix\nthe failing parser test, then run the whole suite and report what changed in detail"
    [fact] = facts(MessageAction(content=long, source=EventSource.USER))
    assert fact.kind == "instruction"
    assert fact.text == normalize(long)[:FACT_TEXT_CHARS].rstrip()
    assert fact.text.startswith("Please fix the failing parser test")
    assert facts(MessageAction(content="I will fix it", source=EventSource.AGENT)) == []


def test_extract_facts_keeps_each_fact_once_in_order_of_first_appearance() -> None:
    events = [
        FileEditAction(path="/w/a.py", command="str_replace"),
        FileEditAction(path="/w/b.py", command="str_replace"),
        FileEditAction(path="/w/a.py", command="insert"),
    ]
    assert extract_facts(events) == [Fact("file", "/w/a.py"), Fact("file", "/w/b.py")]


def test_forgotten_events_are_those_not_shown_as_they_were() -> None:
    log = Log().header().run("ls").run("pytest", exit_code=1)
    system, task, ls, ls_out, pytest_run, pytest_out = log.events
    masked = ls_out.model_copy(update={"content": "<MASKED>"})
    condensation = CondensationAction(forgotten_event_ids=[4, 5])
    condensation.id, condensation.source = 6, EventSource.AGENT
    history = [*log.events, condensation]
    # The system prompt and the condensation are never candidates; ls_out was masked; 4 and 5 left out.
    assert forgotten_events(history, [system, task, ls, masked]) == [ls_out, pytest_run, pytest_out]
    assert forgotten_events(history, [task, ls, ls_out, pytest_run, pytest_out]) == []


def test_view_text_reads_text_parts_and_decoded_tool_call_arguments() -> None:
    call = ToolCall(id="c1", function=ToolCallFunction(name="execute_bash", arguments='{"command": "grep \\"x y\\" a.py", "n": 3}'))
    messages = [
        Message(role="user", content=(TextContent(text="Summary:\n  pytest   -x failed"),)),
        Message(role="assistant", tool_calls=(call,)),
        Message(role="assistant", tool_calls=(ToolCall(id="c2", function=ToolCallFunction(name="f", arguments="not json")),)),
    ]
    assert view_text(messages) == 'Summary: pytest -x failed execute_bash grep "x y" a.py 3 f not json'


def test_a_forgotten_fact_is_retained_when_its_text_is_in_the_final_view() -> None:
    log = Log().header().run("pytest -x", exit_code=1).run("make lint", exit_code=2)
    kept = log.events[:2]
    summary = Message(role="user", content=(TextContent(text="TESTS: `pytest -x` failed"),))
    result = measure_retention(log.events, kept, [summary])
    assert result.facts == (
        Fact("instruction", "Fix the bug"),
        Fact("failed_command", "pytest -x", "exit code 1"),
        Fact("failed_command", "make lint", "exit code 2"),
    )
    assert result.forgotten == result.facts[1:]
    assert result.retained == (Fact("failed_command", "pytest -x", "exit code 1"),)
    assert result.retention == 0.5
    data = result.to_dict()
    assert data["facts_by_kind"]["failed_command"] == {"facts": 2, "forgotten": 2, "retained": 1}
    assert data["lost_facts"] == [{"kind": "failed_command", "text": "make lint", "detail": "exit code 2"}]


def test_nothing_forgotten_has_no_retention() -> None:
    log = Log().header().run("pytest", exit_code=1)
    assert measure_retention(log.events, log.events, []).retention is None


def test_a_forgotten_fact_is_recoverable_when_a_search_for_it_returns_its_event_and_not_otherwise() -> None:
    log = Log().header().run("pytest -x", exit_code=1).run("make lint", exit_code=2)  # outputs: ids 3 and 5
    answers = {"pytest -x": [7, 3, 1], "make lint": [4, 1]}  # make lint: its call (4) is found, not its output
    asked: list[str] = []

    def search(query: str) -> list[int]:
        asked.append(query)
        return answers[query]

    result = measure_retention(log.events, log.events[:2], [], search=search)
    assert asked == ["pytest -x", "make lint"]
    assert result.retained == ()
    assert result.recoverable == (Fact("failed_command", "pytest -x", "exit code 1"),)
    assert result.recoverability == 0.5
    data = result.to_dict()
    assert (data["facts_recoverable"], data["recoverability"]) == (1, 0.5)
    assert data["facts_by_kind"]["failed_command"] == {"facts": 2, "forgotten": 2, "retained": 0, "recoverable": 1}


def test_only_the_first_results_of_a_search_count() -> None:
    log = Log().header().run("pytest -x", exit_code=1)
    late = measure_retention(log.events, log.events[:2], [], search=lambda query: [10, 11, 12, 13, 14, 3])
    assert RECALL_LIMIT == 5 and late.recoverable == () and late.recoverability == 0.0


def test_without_a_search_recoverability_is_not_measured() -> None:
    log = Log().header().run("pytest -x", exit_code=1)
    result = measure_retention(log.events, log.events[:2], [])
    assert result.recoverable is None and result.recoverability is None
    assert result.to_dict()["facts_recoverable"] is None
