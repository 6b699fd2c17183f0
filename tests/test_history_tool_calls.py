"""`History.add_tool_call` and `add_tool_result`: a tool call and its result recorded paired, and a warning when they are not."""

from __future__ import annotations

import logging

import pytest

from openhands_memory import CmdOutputObservation, CmdRunAction, EventSource, History, MessageAction, SystemMessageAction
from openhands_memory.llm import to_litellm_dicts

CALL = {"id": "call-1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "pytest"}'}}


def started() -> History:
    history = History()
    history.add_event(SystemMessageAction(content="You are a coding agent."), EventSource.AGENT)
    history.add_event(MessageAction(content="Fix the failing test"), EventSource.USER)
    return history


def test_a_tool_call_and_its_result_render_as_the_call_and_its_answer(caplog: pytest.LogCaptureFixture) -> None:
    history = started()
    with caplog.at_level(logging.WARNING, logger="openhands_memory"):
        action = history.add_tool_call(CmdRunAction(command="pytest"), CALL)
        result = history.add_tool_result(CmdOutputObservation(content="1 passed", command="pytest"), action)
    assert caplog.records == []
    assert (action.source, action.tool_call_metadata.tool_call_id, action.tool_call_metadata.function_name) == ("agent", "call-1", "bash")
    assert (result.source, result.cause, result.tool_call_metadata) == ("environment", action.id, action.tool_call_metadata)
    *_, call, answer = to_litellm_dicts(history.next_messages())
    assert call["role"] == "assistant" and call["tool_calls"][0]["id"] == "call-1"
    assert answer["role"] == "tool" and answer["tool_call_id"] == "call-1" and "1 passed" in str(answer["content"])


def test_a_result_appended_without_its_cause_after_a_tool_call_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    history = started()
    history.add_tool_call(CmdRunAction(command="pytest"), CALL)
    with caplog.at_level(logging.WARNING, logger="openhands_memory"):
        history.add_event(CmdOutputObservation(content="1 passed", command="pytest"), EventSource.ENVIRONMENT)
    (record,) = caplog.records
    assert record.getMessage() == (
        "a run observation with no cause follows the tool call call-1 (event 2): the model reads it as a message, "
        "and the call as unanswered; append it with History.add_tool_result(observation, action)"
    )


def test_an_observation_after_no_tool_call_is_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    history = started()
    with caplog.at_level(logging.WARNING, logger="openhands_memory"):
        history.add_event(CmdRunAction(command="ls"), EventSource.USER)  # a command the user ran: no tool call
        history.add_event(CmdOutputObservation(content="a.py", command="ls"), EventSource.ENVIRONMENT)
    assert caplog.records == []


def test_a_result_of_an_action_not_in_the_log_or_a_call_that_is_none_is_refused() -> None:
    history = started()
    with pytest.raises(ValueError, match="the run action is not in the log: append it first"):
        history.add_tool_result(CmdOutputObservation(content="x", command="ls"), CmdRunAction(command="ls"))
    with pytest.raises(ValueError):
        history.add_tool_call(CmdRunAction(command="ls"), {"id": "c", "function": "not a function"})
    assert len(history.stream) == 2  # nothing appended
