"""Checks and builders shared by the ConversationMemory tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from openhands_memory.events import Action, Event, EventSource, Observation, ToolCallMetadata
from openhands_memory.llm import ImageContent, Message, TextContent
from openhands_memory.testing.chat import assert_valid_chat

__all__ = ["Stream", "assert_valid_chat", "completion", "images_of", "text_of"]


def text_of(message: Message) -> str:
    """The message's text parts, joined by newlines."""
    return "\n".join(part.text for part in message.content if isinstance(part, TextContent))


def images_of(message: Message) -> list[str]:
    """Every image URL in the message."""
    return [url for part in message.content if isinstance(part, ImageContent) for url in part.image_urls]


def completion(
    response_id: str, calls: Sequence[tuple[str, str, dict[str, Any]]], content: str | None = None
) -> dict[str, Any]:
    """A litellm completion (as OpenHands records it) making `calls`: (call id, tool name, arguments)."""
    tool_calls = [
        {"index": i, "id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (call_id, name, args) in enumerate(calls)
    ]
    message = {"role": "assistant", "content": content, "tool_calls": tool_calls, "function_call": None}
    return {
        "id": response_id,
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
    }


class Stream:
    """Builds a stream: ids 0, 1, 2, ..., sources set, tool calls wired to a recorded completion."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def add(self, event: Event, source: EventSource | str = EventSource.AGENT) -> Event:
        event.id = len(self.events)
        event.source = EventSource(source)
        event.timestamp = f"2025-01-01T00:00:00.{event.id:06d}"
        self.events.append(event)
        return event

    def calls(
        self, response_id: str, actions: Sequence[tuple[str, str, Action]], content: str | None = None
    ) -> list[Action]:
        """Add the actions of one model response: (call id, tool name, action); the recorded arguments
        are the action's fields that differ from their defaults."""
        calls = []
        for call_id, name, action in actions:
            set_fields = action.model_dump(exclude_defaults=True)
            calls.append((call_id, name, {k: v for k, v in set_fields.items() if k in type(action).payload_fields}))
        recorded = completion(response_id, calls, content)
        added = []
        for call_id, name, action in actions:
            action.tool_call_metadata = ToolCallMetadata(
                function_name=name, tool_call_id=call_id, model_response=recorded, total_calls_in_response=len(actions)
            )
            added.append(self.add(action))
        return added

    def result(self, action: Action, observation: Observation) -> Observation:
        """Add `observation` as the answer to `action`'s tool call."""
        observation.cause = action.id
        observation.tool_call_metadata = action.tool_call_metadata
        return self.add(observation)  # type: ignore[return-value]
