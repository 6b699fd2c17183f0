"""History applies its HistoryPolicy to the messages of every step and says what it dropped."""

from __future__ import annotations

from openhands_memory.condenser import LLMTokenCounter, NoOpCondenser
from openhands_memory.conversation_memory import HistoryPolicy
from openhands_memory.events import (
    CmdOutputObservation,
    CmdRunAction,
    EventSource,
    MessageAction,
    SystemMessageAction,
    ToolCallMetadata,
)
from openhands_memory.history import History
from openhands_memory.llm import Message
from openhands_memory.testing.chat import assert_valid_chat


def _turn(history: History, number: int) -> None:
    metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id=f"call-{number}", model_response={"id": f"r{number}"})
    run = CmdRunAction(command=f"cmd {number}", tool_call_metadata=metadata)
    history.add_event(run, EventSource.AGENT)
    output = CmdOutputObservation(content=f"output {number}", command=run.command, tool_call_metadata=metadata, cause=run.id)
    history.add_event(output, EventSource.ENVIRONMENT)


def _history(**options: object) -> History:
    history = History(condenser=NoOpCondenser(), **options)  # type: ignore[arg-type]
    history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    history.add_event(MessageAction(content="Fix the bug"), EventSource.USER)
    for number in range(5):
        _turn(history, number)
    return history


def _shape(messages: list[Message]) -> list[str]:
    return [m.tool_call_id or (m.tool_calls[0].id if m.tool_calls else m.text) for m in messages]


def test_without_a_policy_every_message_is_sent_and_nothing_is_recorded() -> None:
    history = _history()
    messages = history.next_messages()
    assert len(messages) == 12 and history.last_trim.dropped == 0


def test_the_policy_trims_every_step_keeping_system_task_and_whole_tool_pairs() -> None:
    history = _history(history_policy=HistoryPolicy(max_messages=5))
    messages = history.next_messages()
    assert_valid_chat(messages)
    assert _shape(messages) == ["You are an agent.", "Fix the bug", "call-3", "call-3", "call-4", "call-4"]
    assert history.last_trim.dropped_by_max_messages == 6
    _turn(history, 5)
    assert _shape(history.step())[2:] == ["call-4", "call-4", "call-5", "call-5"]  # type: ignore[arg-type]
    assert history.last_trim.dropped == 8


def test_step_window_keeps_the_last_agent_steps() -> None:
    history = _history(history_policy=HistoryPolicy(step_window=2))
    assert _shape(history.next_messages())[2:] == ["call-3", "call-3", "call-4", "call-4"]
    history.add_event(MessageAction(content="Also the docs"), EventSource.USER)
    # The new user message is the current step: with a window of 2, one response before it.
    assert _shape(history.next_messages())[2:] == ["call-4", "call-4", "Also the docs"]
    assert history.last_trim.dropped_by_step_window == 8


class _CountingLLM:
    """Counts each message as 100 tokens, like `LLM.count_tokens` takes a list of messages."""

    def __init__(self) -> None:
        self.calls = 0

    def count_tokens(self, messages: list[Message], *, tools: object = None) -> int:
        self.calls += 1
        return 100 * len(messages)


def test_max_tokens_counts_with_the_model_when_the_token_counter_is_the_models() -> None:
    llm = _CountingLLM()
    counter = LLMTokenCounter(llm, render=lambda events: [])
    history = _history(history_policy=HistoryPolicy(max_messages=None, max_tokens=450), token_counter=counter)
    messages = history.next_messages()
    assert _shape(messages)[2:] == ["call-3", "call-3", "call-4", "call-4"]
    assert history.last_trim.tokens == 400 and llm.calls > 0
