"""A live `History` fed turn by turn, for the loop-guard tests of the QitOS strategies."""

from __future__ import annotations

from openhands_memory.condenser import Condenser
from openhands_memory.events import (
    CmdOutputObservation,
    CmdRunAction,
    EventSource,
    MessageAction,
    SystemMessageAction,
    ToolCallMetadata,
)
from openhands_memory.history import History


def started_history(condenser: Condenser) -> History:
    """A history with the system prompt (id 0) and the task (id 1)."""
    history = History(condenser=condenser)
    history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    history.add_event(MessageAction(content="Fix the bug"), EventSource.USER)
    return history


def add_turn(history: History, number: int, output: str) -> None:
    """One shell call and its result (paired by tool call id and `cause`)."""
    metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id=f"call-{number}", model_response={"id": f"r{number}"})
    run = CmdRunAction(command=f"cmd{number}", tool_call_metadata=metadata)
    history.add_event(run, EventSource.AGENT)
    result = CmdOutputObservation(content=output, command=run.command, tool_call_metadata=metadata, cause=run.id)
    history.add_event(result, EventSource.ENVIRONMENT)
