"""`structured`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import real_log_params, require_real_log

from openhands_memory.condenser import Condensation, Condenser, StateSummary, StructuredSummaryCondenser
from openhands_memory.condenser.impl.structured_summary_condenser import (
    STATE_SUMMARY_TOOL_NAME,
    STRUCTURED_SUMMARY_PROMPT,
)
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARY_HEADER
from openhands_memory.errors import CondenserConfigError, LLMResponseError
from openhands_memory.events import AgentCondensationObservation
from openhands_memory.llm.llm import LLM
from openhands_memory.testing.condenser_replay import replay_with_condenser
from openhands_memory.testing.fake_llm import FakeLLM, FakeReply

from .._helpers import history_of
from ._model_helpers import NumberedSummaries, check_llm_metrics, fake_llm, prompt_of, round_trips, session

STATE = {
    "user_context": "Fix the bug in the parser",
    "completed_tasks": ["Found the cause", "Patched split_rows()"],
    "pending_tasks": "Open a PR",
    "files_modified": "reader.py",
    "tests_passing": True,
    "branch_name": "fix-parser",
    "pr_status": "unknown",
}
FORCED = {"type": "function", "function": {"name": STATE_SUMMARY_TOOL_NAME}}


def test_the_summary_is_a_forced_tool_call_written_out_as_sections() -> None:
    s = session(6)
    fake, llm = fake_llm(FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, STATE))
    result = StructuredSummaryCondenser(llm, max_size=12, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    call = fake.last_call
    assert call.tool_choice == FORCED
    assert call.tools == [StateSummary.tool()]
    parameters = call.tools[0]["function"]["parameters"]
    assert list(parameters["properties"]) == [
        "user_context", "completed_tasks", "pending_tasks", "current_state", "files_modified", "function_changes",
        "data_structures", "tests_written", "tests_passing", "failing_tests", "error_messages", "branch_created",
        "branch_name", "commits_made", "pr_created", "pr_status", "dependencies", "other_relevant_context",
    ]  # fmt: skip
    assert parameters["required"] == ["user_context", "completed_tasks", "pending_tasks"]
    assert all(p["type"] == "string" and p["description"] for p in parameters["properties"].values())
    assert result.action.summary == (
        "# State Summary\n\n## Core Information\n\n**User context**: Fix the bug in the parser\n\n"
        "**Completed tasks**: - Found the cause\n- Patched split_rows()\n\n**Pending tasks**: Open a PR\n\n"
        "## Code Changes\n\n**Files modified**: reader.py\n\n## Testing Status\n\n**Tests passing**: True\n\n"
        "## Version Control\n\n**Branch name**: fix-parser\n\n**PR status**: unknown"
    )
    assert (result.action.forgotten_events_start_id, result.action.forgotten_events_end_id, result.action.summary_offset) == (4, 13, 4)
    assert result.metadata.condenser == "structured"
    prompt = prompt_of(fake)
    assert prompt.startswith(STRUCTURED_SUMMARY_PROMPT)
    assert re.findall(r"<EVENT id=(\d+)>", prompt) == [str(i) for i in range(4, 14)]
    assert prompt.endswith(f"Now call {STATE_SUMMARY_TOOL_NAME} with the new summary.")


def test_the_previous_state_is_folded_into_the_next() -> None:
    s = session(6)
    fake, llm = fake_llm(
        FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, {"user_context": "first state"}),
        FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, {"user_context": "second state"}),
    )
    condenser = StructuredSummaryCondenser(llm, max_size=12, keep_first=4)
    first = condenser.condense(s.view)
    assert isinstance(first, Condensation)
    s.add(first.action)
    for i in range(6):
        s.turn(f"more{i}")
    second = condenser.condense(s.view)
    assert isinstance(second, Condensation) and second.action.summary is not None
    assert f"<PREVIOUS SUMMARY>\n{first.action.summary}\n</PREVIOUS SUMMARY>" in prompt_of(fake)
    s.add(second.action)
    assert [e.content for e in s.view if isinstance(e, AgentCondensationObservation)] == [second.action.summary]
    assert "second state" in second.action.summary


def test_a_json_object_as_text_is_read_as_the_arguments() -> None:
    _, llm = fake_llm(FakeReply(text='```json\n{"user_context": "from text", "pending_tasks": ["a"]}\n```'))
    result = StructuredSummaryCondenser(llm, max_size=12, keep_first=4).condense(session(6).view)
    assert isinstance(result, Condensation) and result.action.summary is not None
    assert "**User context**: from text" in result.action.summary and "**Pending tasks**: - a" in result.action.summary


GARBAGE: dict[str, tuple[Any, str]] = {
    "arguments not JSON": (FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, '{"user_context": "cut'), "arguments are not valid JSON"),
    "arguments a list": (FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, "[1, 2]"), "arguments are JSON list, not an object"),
    "nested object": (FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, {"user_context": {"a": 1}}), "create_state_summary: user_context: expected text, got dict"),
    "every field empty": (FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, {"user_context": " ", "other": "x"}), "create_state_summary: every field is empty"),
    "another tool": (FakeReply.tool_call("finish", {}), "the reply calls finish, not create_state_summary"),
    "prose": (FakeReply(text="Here is the summary: all good."), "the reply does not call create_state_summary: 'Here is the summary"),
    "empty": (FakeReply(text=""), "the reply has no text and no tool call"),
}  # fmt: skip


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
def test_garbage_raises_and_leaves_the_log_as_it_was(garbage: str) -> None:
    reply, message = GARBAGE[garbage]
    s = session(6)
    before = [e.model_copy() for e in s.events]
    _, llm = fake_llm(reply)
    condenser = StructuredSummaryCondenser(llm, max_size=12, keep_first=4, strict_response=True)
    with pytest.raises(LLMResponseError, match=re.escape(message)):
        condenser.condense(s.view)
    assert s.events == before and condenser.last_condensation is None


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
def test_garbage_falls_back_to_the_offline_summary(garbage: str) -> None:
    reply, _ = GARBAGE[garbage]
    _, llm = fake_llm(reply)
    result = StructuredSummaryCondenser(llm, max_size=12, keep_first=4, on_model_error="fallback", strict_response=True).condense(
        session(6).view
    )
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.action.summary == (
        f"{OFFLINE_SUMMARY_HEADER}\nCURRENT_STATE:\n- other commands run: `cmd0`, `cmd1`, `cmd2`, `cmd3`, `cmd4` (events 4-13)"
    )
    assert result.action.forgotten == list(range(4, 14))
    assert result.metadata.extra["outcome"] == "fallback"


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
def test_garbage_is_skipped(garbage: str) -> None:
    reply, _ = GARBAGE[garbage]
    _, llm = fake_llm(reply)
    view = session(6).view
    condenser = StructuredSummaryCondenser(llm, max_size=12, keep_first=4, on_model_error="skip", strict_response=True)
    assert condenser.condense(view) is view
    assert isinstance(condenser.last_error, LLMResponseError)


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
def test_garbage_condenses_with_an_empty_summary_as_openhands_does(garbage: str, caplog: pytest.LogCaptureFixture) -> None:
    # OpenHands 0.62 (structured_summary_condenser.py): no create_state_summary call, or arguments it
    # cannot parse, give `StateSummary()`: the same events are forgotten under an empty summary.
    reply, message = GARBAGE[garbage]
    _, llm = fake_llm(reply)
    result = StructuredSummaryCondenser(llm, max_size=12, keep_first=4).condense(session(6).view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.action.forgotten == list(range(4, 14))
    assert result.action.summary == "# State Summary" and result.action.summary_offset == 4
    assert message in result.metadata.extra["unusable_model_answer"]
    assert result.metadata.extra["outcome"] == "summary"
    assert "writing an empty summary" in caplog.text


def test_usage_of_a_garbage_answer_is_recorded_when_falling_back() -> None:
    _, llm = fake_llm(FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, {}, text=None))
    result = StructuredSummaryCondenser(llm, max_size=12, keep_first=4, on_model_error="fallback", strict_response=True).condense(
        session(6).view
    )
    assert isinstance(result, Condensation)
    check_llm_metrics(result.action.llm_metrics, calls=1)  # the call was made and billed, its answer unusable
    assert round_trips(result.action.model_copy(update={"id": 16}))


def test_a_model_without_native_tool_calling_is_refused_when_built() -> None:
    message = (
        "condenser 'structured': llm_config.native_tool_calling: the structured summary is a forced tool call, "
        "but model 'fake-model' is set up without native tool calling (native_tool_calling = false); "
        "turn it on, or use the 'llm' condenser"
    )
    with pytest.raises(CondenserConfigError, match=re.escape(message)):
        StructuredSummaryCondenser(fake_llm(native_tool_calling=False)[1])
    with pytest.raises(CondenserConfigError, match=re.escape(message)):
        Condenser.from_config({"type": "structured", "llm_config": {"model": "fake-model", "native_tool_calling": False}})
    assert isinstance(StructuredSummaryCondenser(fake_llm(native_tool_calling=None)[1]), StructuredSummaryCondenser)


def test_from_config_with_a_custom_prompt() -> None:
    condenser = Condenser.from_config(
        {"type": "structured", "llm_config": {"model": "fake-model"}, "max_size": 12, "keep_first": 4,
         "summary_prompt": "Only the facts.", "on_model_error": "skip"},
    )  # fmt: skip
    assert isinstance(condenser, StructuredSummaryCondenser) and condenser.on_model_error == "skip"
    fake = FakeLLM([FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, {"user_context": "u"})])
    condenser.llm = LLM(condenser.llm.config, completion_fn=fake)
    result = condenser.condense(session(6).view)
    assert isinstance(result, Condensation)
    assert prompt_of(fake).startswith("Only the facts.\n\n<PREVIOUS SUMMARY>")
    assert fake.last_call.tool_choice == FORCED


def test_a_state_summary_longer_than_what_it_replaces_is_cut_to_its_share() -> None:
    s = session(12, output="x" * 400)
    fake, llm = fake_llm(FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, {"user_context": "U" * 100_000, "completed_tasks": "done"}))
    condenser = Condenser.from_config(
        {"type": "structured", "llm_config": "m", "max_size": 24, "keep_first": 4, "max_summary_share": 0.3},
        llm_configs={"m": {"model": "fake-model"}},
    )
    assert isinstance(condenser, StructuredSummaryCondenser) and condenser.max_summary_share == 0.3
    condenser.llm = llm
    plan = condenser.plan(s.view)
    budget = int(0.3 * condenser.token_counter(plan.forgotten_events))
    result = condenser.condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None and result.action.summary is not None
    assert result.action.summary.startswith("# State Summary\n\n## Core Information\n\n**User context**: UUU")
    assert condenser.token_counter([AgentCondensationObservation(content=result.action.summary)]) <= budget
    assert result.metadata.extra["summary_cut"]["budget"] == budget
    assert len(fake.calls) == 1


def test_state_summary_fields_take_text_numbers_and_lists() -> None:
    state = StateSummary.model_validate({"user_context": "u", "tests_written": False, "failing_tests": ["a", 2, None], "x": 1})
    assert (state.tests_written, state.failing_tests) == ("False", "- a\n- 2")
    assert state.to_text() == (
        "# State Summary\n\n## Core Information\n\n**User context**: u\n\n"
        "## Testing Status\n\n**Tests written**: False\n\n**Failing tests**: - a\n- 2"
    )
    assert str(state) == state.to_text()
    assert StateSummary().is_empty and not state.is_empty


@pytest.mark.parametrize("log", real_log_params("v0_"))
def test_real_logs_replay_step_by_step(log: Path | None) -> None:
    history = history_of(require_real_log(log))
    model = NumberedSummaries(lambda n: FakeReply.tool_call(STATE_SUMMARY_TOOL_NAME, {"user_context": f"state #{n}"}))
    condenser = StructuredSummaryCondenser(model.llm(), max_size=30, keep_first=4, max_event_length=2000)
    replay = replay_with_condenser(history, condenser, keep_first=4)
    assert replay.largest_view <= 31
    for n, call in enumerate(model.fake.calls):
        assert call.tool_choice == FORCED
        if n:
            previous = prompt_of(model.fake, n).split("<PREVIOUS SUMMARY>\n", 1)[1]
            assert previous.startswith(f"# State Summary\n\n## Core Information\n\n**User context**: state #{n}\n") or not previous.startswith("# State"), n
    for record in replay.condensations:
        if record.extra.get("outcome") == "summary":
            check_llm_metrics(record.llm_usage, calls=1)
