"""How `History` runs the agent's steering tools (`new_context`, `compact_context`, `context_notes`), kept apart from the facade.

A call is recorded as the memory tools' calls are: its action (source agent, the call's metadata),
then its result (source environment, `cause` the action). Then:

- `new_context(handoff)`: the reset condensation (`reset_action`: the handoff verbatim as the summary,
  everything but the system prompt and the user's messages forgotten by id) is appended at once, so the
  next step shows the new window, and the log alone reproduces it.
- `compact_context(focus)`: a `CondensationRequestAction` carrying the focus is appended; the next step's
  condensation summarizes keeping what it names. Refused (a result saying why, nothing requested) when the
  pipeline answers no request, or when the events other than the system prompt and the user's messages hold fewer than `MIN_COMPACT_TOKENS`.

- `context_notes(operation, text)`: the result holds the notes after the call (`current_notes` of the log);
  a call that would take them over `MAX_NOTES_CHARS` changes nothing and its result names the bound.

A handoff that is empty or too long, a focus too long, is recorded with an `ErrorObservation` result the
agent reads; a call that makes no action (not JSON, a wrong type) gets the same error as a memory tool's.
"""

from __future__ import annotations

from typing import Any

from openhands_memory.condenser.impl.agent_reset_condenser import current_notes, is_kept_by_reset, reset_action
from openhands_memory.events import (
    Action,
    CompactContextAction,
    ContextNotesAction,
    ContextNotesObservation,
    ErrorObservation,
    EventSource,
    NewContextAction,
    Observation,
    SuccessObservation,
)
from openhands_memory.recall.memory_tools import MemoryToolCall, echo, tool_call_metadata
from openhands_memory.recall.steering_tools import (
    MAX_NOTES_CHARS,
    MIN_COMPACT_TOKENS,
    compact_size_problem,
    focus_problem,
    handoff_problem,
    notes_problem,
    parse_steering_call,
)

History = Any
"""The `History` whose call this is (not imported: `history` imports this module)."""

__all__ = ["MIN_COMPACT_TOKENS", "run_steering_call"]



def run_steering_call(history: History, call: MemoryToolCall, response: Any) -> Observation:
    """Run one steering tool call: record it and its result, then reset or request (see the module docstring)."""
    action = parse_steering_call(call)
    if isinstance(action, str):
        return history._invalid_call(f"{echo(call.name, 60)}({echo(call.arguments)}) is not a valid tool call: {action}.")
    try:
        metadata = tool_call_metadata(call, response)
    except ValueError as exc:
        return history._invalid_call(f"{echo(call.name, 60)}: the model's response cannot be recorded: {echo(str(exc))}.")
    action.tool_call_metadata = metadata
    written = history._add_model_event(action, EventSource.AGENT)
    if written is not None:
        return history._invalid_call(f"{echo(call.name, 60)}({echo(call.arguments)}) cannot be recorded: {written}.")
    refusal = _refusal(history, action)
    if refusal is not None:
        result: Observation = ErrorObservation(content=refusal)
    elif isinstance(action, ContextNotesAction):
        notes = current_notes(history.stream.snapshot())  # the log is the notes' only source (this call included)
        done = {"read": "Your notes", "write": "Notes written", "append": "Note appended"}[action.operation]
        shown = notes if notes else "(no notes yet)"
        result = ContextNotesObservation(content=f"{done} ({len(notes)} of {MAX_NOTES_CHARS} characters):\n{shown}")
    elif isinstance(action, NewContextAction):
        result = SuccessObservation(
            content="A new context window starts now: it holds the system prompt, the task, the user's messages and your handoff."
        )
    else:
        assert isinstance(action, CompactContextAction)
        said = f", keeping first: {action.focus}" if action.focus else ""
        result = SuccessObservation(content=f"The older history will be summarized before your next turn{said}.")
    result.cause = action.id
    result.tool_call_metadata = metadata
    history.add_event(result, EventSource.ENVIRONMENT)
    if refusal is None:
        if isinstance(action, NewContextAction):
            history.add_event(reset_action(history.view, action.handoff, metadata={"call_id": action.id}), EventSource.AGENT)
        elif isinstance(action, CompactContextAction):
            history.request_condensation(focus=action.focus or None)
    return history._stored(result)


def _refusal(history: History, action: Action) -> str | None:
    """Why the call is not carried out (the agent reads it), or None."""
    if isinstance(action, NewContextAction):
        problem = handoff_problem(action.handoff)
        return None if problem is None else f"No new context was started: {problem}."
    if isinstance(action, ContextNotesAction):
        before = current_notes(e for e in history.stream.snapshot() if e.id != action.id)
        problem = notes_problem(action, before)
        return None if problem is None else f"The notes were not changed: {problem}."
    assert isinstance(action, CompactContextAction)
    problem = focus_problem(action.focus)
    if problem is not None:
        return f"Nothing was compacted: {problem}."
    if not history.condenser.handles_requests:
        return f"Nothing was compacted: this pipeline ({history.condenser.name}) answers no compaction request."
    view = history.view
    # What a summary could replace: all but the system prompt and the user's messages.
    freeable = [event for event in view.events if not is_kept_by_reset(event) and not isinstance(event, CompactContextAction)]
    return compact_size_problem(history.condenser.token_counter(freeable))
