"""Tool results written out for a handoff to another agent, as Inkeep writes them into conversation memory.

Inkeep's conversation memory stores each tool result as an assistant message that reads::

    ## Tool: search_knowledge_base

    **Input:**
    {
      "query": "API authentication methods"
    }

    **Output:**
    <the tool's output>

so an agent that is handed the conversation (a delegate, a transfer) reads what was done without
needing the tools that did it. `to_handoff_messages` turns a valid chat into that shape: no message
makes or answers a tool call any more.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from openhands_memory.llm.message import Message, TextContent, ToolCall

__all__ = ["HandoffRenderer", "handoff_text"]

NO_INPUT = "No input"
"""What `**Input:**` shows for a call without arguments (as Inkeep writes it)."""


def _input_text(arguments: str) -> str:
    """The call's arguments as JSON indented by two spaces; text that is not JSON as it is."""
    if not arguments.strip():
        return NO_INPUT
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    return json.dumps(value, indent=2, ensure_ascii=False)


def handoff_text(name: str, arguments: str, output: str) -> str:
    """One tool result as Inkeep writes it: `## Tool: name`, `**Input:**` and the arguments as JSON, `**Output:**` and the output."""
    return f"## Tool: {name}\n\n**Input:**\n{_input_text(arguments)}\n\n**Output:**\n{output}"


class HandoffRenderer:
    """Rewrites chats for a handoff, reusing what it wrote at the last call (messages are immutable and reused)."""

    __slots__ = ("_cache",)

    def __init__(self) -> None:
        # id(source message) -> (source, the assistant message it answers or None, what it became)
        self._cache: dict[int, tuple[Message, Message | None, Message]] = {}

    def convert(self, messages: Sequence[Message]) -> list[Message]:
        """The chat with every tool exchange written out (see the module docstring).

        An assistant message that makes calls keeps its text (and goes if it has none); each
        `tool` message becomes an assistant message with the call's name and arguments, then its
        output (its images kept after the text). The input is a valid chat (`ConversationMemory`'s).
        """
        out: list[Message] = []
        calls: dict[str, ToolCall] = {}
        assistant: Message | None = None
        cache = self._cache
        used: dict[int, tuple[Message, Message | None, Message]] = {}
        for message in messages:
            if message.role == "assistant" and message.tool_calls:
                assistant = message
                calls = {call.id: call for call in message.tool_calls}
                if message.content:
                    entry = cache.get(id(message))
                    if entry is None or entry[0] is not message:
                        entry = (message, None, message.model_copy(update={"tool_calls": None}))
                    used[id(message)] = entry
                    out.append(entry[2])
                continue
            if message.role == "tool" and assistant is not None and message.tool_call_id in calls:
                entry = cache.get(id(message))
                if entry is None or entry[0] is not message or entry[1] is not assistant:
                    call = calls[message.tool_call_id]  # type: ignore[index]
                    text = TextContent(text=handoff_text(call.function.name, call.function.arguments, message.text))
                    images = tuple(part for part in message.content if not isinstance(part, TextContent))
                    entry = (message, assistant, Message(role="assistant", content=(text, *images)))
                used[id(message)] = entry
                out.append(entry[2])
                continue
            assistant = None
            calls = {}
            out.append(message)
        self._cache = used  # only what this chat used: the cache never outgrows one chat
        return out
