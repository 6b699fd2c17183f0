"""The agent's steering tools, `new_context`, `compact_context` and `context_notes`: their schemas, arguments and what is wrong with them.

The agent steers its own context with them: `new_context(handoff)` ends its context window (all but
the system prompt, the user's messages and the handoff is forgotten, the handoff kept verbatim as
the condensation's summary: `openhands_memory.condenser.impl.agent_reset_condenser`), and
`compact_context(focus)` asks for a summary now that keeps what `focus` names, and
`context_notes(operation, text)` reads, writes or appends to the agent's notes, which every
condensation and reset keeps in view (bounded by `MAX_NOTES_CHARS`). `History.run_memory_tool`
records the calls and their results as it does the memory tools'; what the model wrote is untrusted
input, and every problem with it becomes a result the model reads.
"""

from __future__ import annotations

import json
from typing import Any, Final

from openhands_memory.events import Action, CompactContextAction, ContextNotesAction, NewContextAction
from openhands_memory.events.actions import MAX_NOTES_CHARS
from openhands_memory.recall.memory_tools import MemoryToolCall, call_arguments, echo

__all__ = [
    "COMPACT_CONTEXT",
    "CONTEXT_NOTES",
    "MAX_NOTES_CHARS",
    "NOTES_OPERATIONS",
    "MAX_FOCUS_CHARS",
    "MAX_HANDOFF_CHARS",
    "MIN_COMPACT_TOKENS",
    "compact_size_problem",
    "NEW_CONTEXT",
    "STEERING_TOOL_NAMES",
    "focus_problem",
    "handoff_problem",
    "notes_problem",
    "parse_steering_call",
    "steering_tool_schemas",
]

NEW_CONTEXT: Final = "new_context"
"""The name of the tool that ends the agent's context window, keeping its handoff."""
COMPACT_CONTEXT: Final = "compact_context"
"""The name of the tool that asks for a summary of the history now, with a focus."""
CONTEXT_NOTES: Final = "context_notes"
"""The name of the tool that reads, writes or appends to the agent's notes."""
NOTES_OPERATIONS: Final = ("read", "write", "append")
"""What `context_notes` does."""
STEERING_TOOL_NAMES: Final = frozenset({NEW_CONTEXT, COMPACT_CONTEXT, CONTEXT_NOTES})
"""The names of the steering tools."""
MAX_HANDOFF_CHARS: Final = 20_000
"""The longest handoff accepted: it is kept verbatim in every later prompt, so it must stay far below a window."""
MAX_FOCUS_CHARS: Final = 2_000
"""The longest focus accepted (it goes first in the summarizer's prompt)."""
MIN_COMPACT_TOKENS: Final = 2_000
"""`compact_context` is refused when the events a summary could replace hold fewer tokens than this."""


def steering_tool_schemas() -> list[dict[str, Any]]:
    """The litellm (OpenAI function-calling) schemas of `new_context`, `compact_context` and `context_notes`, fresh copies."""
    return [
        {
            "type": "function",
            "function": {
                "name": NEW_CONTEXT,
                "description": (
                    "End your context window and start a new one. Everything you see now except the system "
                    "prompt, the task, the user's messages and your handoff is forgotten (it stays searchable "
                    "with search_history). Write in the handoff everything the next window needs: the goal, "
                    "what is done, what is left, the facts (paths, ids, numbers, errors) you will need."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "handoff": {
                            "type": "string",
                            "description": f"What the next context window starts from, kept verbatim (at most {MAX_HANDOFF_CHARS} characters).",
                        },
                    },
                    "required": ["handoff"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": COMPACT_CONTEXT,
                "description": (
                    "Summarize the older part of this conversation now, to free room in your context. The "
                    "summary keeps first what the focus names. Refused when there is too little to free."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "focus": {
                            "type": "string",
                            "description": f"What the summary must keep (at most {MAX_FOCUS_CHARS} characters); empty: no focus.",
                        },
                    },
                    "required": [],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": CONTEXT_NOTES,
                "description": (
                    "Your notes, kept in view through every compaction and new context window: read them, write "
                    "(replace) them, or append a line. Keep there what you must not lose: decisions, facts, ids, "
                    f"what is left to do. At most {MAX_NOTES_CHARS} characters in all."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "operation": {"type": "string", "enum": list(NOTES_OPERATIONS), "description": "read, write or append."},
                        "text": {"type": "string", "description": "What to write or append (not for read)."},
                    },
                    "required": ["operation"],
                },
            },
        },
    ]


def parse_steering_call(call: MemoryToolCall) -> Action | str:
    """The action a steering tool call asks for, or what is wrong with the call (for the model to read).

    Arguments of the right type make an action even when their value is wrong (an empty handoff, one
    too long): its result says what is wrong (`handoff_problem`, `focus_problem`).
    """
    arguments = call_arguments(call, STEERING_TOOL_NAMES, "steering")
    if isinstance(arguments, str):
        return arguments
    if call.name == CONTEXT_NOTES:
        operation, text = arguments.get("operation"), arguments.get("text", "")
        if operation not in NOTES_OPERATIONS:
            return f"operation must be one of {', '.join(NOTES_OPERATIONS)}, got {echo(json.dumps(operation, default=str), 60)}"
        if text is None:
            text = ""
        if not isinstance(text, str):
            return f"text must be a string, got {type(text).__name__}"
        return ContextNotesAction(operation=operation, text=_text(text))
    if call.name == NEW_CONTEXT:
        handoff = arguments.get("handoff")
        if not isinstance(handoff, str):
            return "new_context needs a handoff (a string)" if handoff is None else f"handoff must be a string, got {type(handoff).__name__}"
        return NewContextAction(handoff=_text(handoff))
    focus = arguments.get("focus", "")
    if focus is None:
        focus = ""
    if not isinstance(focus, str):
        return f"focus must be a string, got {type(focus).__name__}"
    return CompactContextAction(focus=_text(focus))


def _text(text: str) -> str:
    """`text` as a log can store it (lone surrogates escaped)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") if any("\ud800" <= c <= "\udfff" for c in text) else text


def handoff_problem(handoff: str) -> str | None:
    """What is wrong with a handoff (empty, too long), or None."""
    if not handoff.strip():
        return (
            "new_context needs a non-empty handoff: everything else you see now would be forgotten. "
            "Write the goal, what is done, what is left and the facts you will need"
        )
    if len(handoff) > MAX_HANDOFF_CHARS:
        return f"the handoff has {len(handoff)} characters, over the bound of {MAX_HANDOFF_CHARS}: write a shorter one"
    return None


def notes_problem(action: ContextNotesAction, notes: str) -> str | None:
    """Why a `context_notes` call changes nothing (its notes would be over the bound), or None."""
    if action.applied_to(notes) is not None:
        return None
    size = len(action.text) if action.operation == "write" else len(notes) + 1 + len(action.text)
    return f"the notes would hold {size} characters, over the bound of {MAX_NOTES_CHARS}: nothing was changed; write shorter notes"


def focus_problem(focus: str) -> str | None:
    """What is wrong with a focus (too long), or None."""
    if len(focus) > MAX_FOCUS_CHARS:
        return f"the focus has {len(focus)} characters, over the bound of {MAX_FOCUS_CHARS}"
    return None


def compact_size_problem(freeable_tokens: int) -> str | None:
    """Why `compact_context` is refused when the events a summary could replace hold `freeable_tokens` (too few), or None."""
    if freeable_tokens >= MIN_COMPACT_TOKENS:
        return None
    return (
        f"Nothing was compacted: too little to free (the history past the task holds about {freeable_tokens} tokens, "
        f"under {MIN_COMPACT_TOKENS}). Go on working; compact when it has grown."
    )
