"""What `context_notes` and `compact_context` answer in an SDK conversation, read from its own event log.

The notes are events of the log, as in `History`: each `context_notes` call is an SDK `ActionEvent`
the V1 import reads as a `ContextNotesAction`, and the notes are `current_notes` of the imported
log, the one rule `History`, the `agent_reset` strategy (which keeps those events through every
condensation and reset) and a resumed conversation all apply. A call's answer holds the notes just
after it in the log's order (parallel calls of one response apply in turn).

`compact_context` only answers here (the condensation is the condenser's: `OpenHandsMemoryCondenser`
finds the call in the view at the next step and condenses with its focus); it is refused, with the
reason, as `History` refuses it: a focus too long, a condenser that answers no request, too little
to free. Nothing here imports the SDK: the conversation is read by its attributes.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from openhands_memory.condenser.impl.agent_reset_condenser import current_notes, is_kept_by_reset
from openhands_memory.events import CompactContextAction, ContextNotesAction, Event, agent_history
from openhands_memory.integrations.openhands_sdk._event_log import SdkEventLogStore
from openhands_memory.recall.memory_tools import MemoryToolCall
from openhands_memory.recall.steering_tools import (
    COMPACT_CONTEXT,
    CONTEXT_NOTES,
    MAX_NOTES_CHARS,
    compact_size_problem,
    focus_problem,
    notes_problem,
    parse_steering_call,
)
from openhands_memory.view import View

__all__ = ["SteeringAnswer", "SteeringLog"]


@dataclass(frozen=True, slots=True)
class SteeringAnswer:
    """What a steering tool tells the agent, and whether the call was refused."""

    text: str
    is_error: bool = False


class SteeringLog:
    """One conversation's log, imported for the steering tools (read again at each call); thread-safe."""

    def __init__(self, state: Any) -> None:
        self._store = SdkEventLogStore(state.events, where=f"conversation {getattr(state, 'id', '?')}")
        self._lock = threading.Lock()

    def events(self) -> list[Event]:
        """The log as imported now (what the SDK appended since the last call taken in).

        Raises:
            MalformedEventError: an event the V1 import cannot read.
        """
        with self._lock:
            self._store.refresh()
            return self._store.snapshot()

    def notes(self, operation: Any, text: Any) -> SteeringAnswer:
        """What `context_notes` answers for these arguments as the agent wrote them (any JSON values)."""
        action = _parsed(CONTEXT_NOTES, {"operation": operation, "text": text} if text is not None else {"operation": operation})
        if isinstance(action, str):
            return SteeringAnswer(f"The notes were not changed: {action}.", is_error=True)
        assert isinstance(action, ContextNotesAction)
        events = self.events()
        position = _this_call(events, action)
        before = current_notes(events[:position])
        problem = notes_problem(action, before)
        if problem is not None:
            return SteeringAnswer(f"The notes were not changed: {problem}.", is_error=True)
        notes = action.applied_to(before) or ""
        done = {"read": "Your notes", "write": "Notes written", "append": "Note appended"}[action.operation]
        shown = notes if notes else "(no notes yet)"
        return SteeringAnswer(f"{done} ({len(notes)} of {MAX_NOTES_CHARS} characters):\n{shown}")

    def compact(self, focus: Any, condenser: Any, agent_llm: Any) -> SteeringAnswer:
        """What `compact_context` answers for `focus` as the agent wrote it, with the agent's `condenser` and model."""
        action = _parsed(COMPACT_CONTEXT, {} if focus is None else {"focus": focus})
        if isinstance(action, str):
            return SteeringAnswer(f"Nothing was compacted: {action}.", is_error=True)
        assert isinstance(action, CompactContextAction)
        problem = focus_problem(action.focus)
        if problem is not None:
            return SteeringAnswer(f"Nothing was compacted: {problem}.", is_error=True)
        strategy = getattr(condenser, "strategy", None)
        handles = getattr(condenser, "handles_condensation_requests", None)
        if not callable(strategy) or not callable(handles) or not handles():
            name = type(condenser).__name__ if condenser is not None else "none"
            return SteeringAnswer(
                f"Nothing was compacted: this agent's condenser ({name}) answers no compaction request "
                "(an OpenHandsMemoryCondenser whose strategy summarizes does).",
                is_error=True,
            )
        view = View.from_events(agent_history(self.events()))
        # What a summary could replace: all but the system prompt and the user's messages.
        freeable = [event for event in view.events if not is_kept_by_reset(event) and not isinstance(event, CompactContextAction)]
        problem = compact_size_problem(strategy(agent_llm).token_counter(freeable))
        if problem is not None:
            return SteeringAnswer(problem, is_error=True)
        said = f", keeping first: {action.focus}" if action.focus else ""
        return SteeringAnswer(f"The older history will be summarized before your next turn{said}.")

    def close(self) -> None:
        with self._lock:
            self._store.close()


def _this_call(events: list[Event], action: ContextNotesAction) -> int:
    """The position of the call `action` is in the log: the first unanswered `context_notes` call with its arguments
    (the SDK logs a call before running it); the log's end when there is none (a call made outside a run)."""
    answered = {event.cause for event in events if event.cause is not None}
    for position, event in enumerate(events):
        if (
            isinstance(event, ContextNotesAction)
            and event.id not in answered
            and (event.operation, event.text) == (action.operation, action.text)
        ):
            return position
    return len(events)


def _parsed(tool: str, arguments: dict[str, Any]) -> Any:
    """The action `History` would make of these arguments, or what is wrong with them (the same checks and words)."""
    try:
        text = json.dumps(arguments, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return "the arguments cannot be read back as JSON"
    return parse_steering_call(MemoryToolCall("sdk", tool, text))
