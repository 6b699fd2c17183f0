"""Checks of rendered chats (needs nothing beyond the package): DESIGN invariant 4 as an assertion."""

from __future__ import annotations

from collections.abc import Sequence

from openhands_memory.llm import Message

__all__ = ["assert_valid_chat"]


def assert_valid_chat(messages: Sequence[Message]) -> None:
    """The chat is valid for OpenAI- and Anthropic-style APIs (DESIGN invariant 4).

    System first; each assistant message with tool calls is followed directly by one `tool`
    message per call (its id, once each) before anything else; no `tool` message anywhere else.
    """
    assert messages, "no messages"
    assert messages[0].role == "system", f"first message is {messages[0].role}"
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        assert message.role != "tool", f"orphan tool message at {index - 1}: {message.tool_call_id}"
        if message.role != "assistant" or not message.tool_calls:
            assert message.tool_calls is None or not message.tool_calls, f"{message.role} message with tool calls"
            continue
        ids = [call.id for call in message.tool_calls]
        assert len(ids) == len(set(ids)), f"repeated call ids {ids}"
        answered = []
        while index < len(messages) and messages[index].role == "tool":
            answered.append(messages[index].tool_call_id)
            assert messages[index].name is not None
            index += 1
        assert sorted(answered) == sorted(ids), f"calls {ids} answered by {answered}"
