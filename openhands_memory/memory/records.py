"""`MemoryRecord` (QitOS' record: role, content, step id, metadata) and how an event becomes one.

An adapter holds records, never events: the record names the event it was made from
(`event_id`), so the log stays the source of truth and any adapter can be rebuilt from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openhands_memory.events import (
    Action,
    CondensationAction,
    CondensationRequestAction,
    Event,
    EventSource,
    MessageAction,
    Observation,
    SystemMessageAction,
    is_agent_history,
)

__all__ = ["MemoryRecord", "StepCounter", "event_text", "is_remembered"]

# Fields that are plumbing, not something an agent would want to recall.
_PLUMBING = frozenset(
    {"security_risk", "confirmation_state", "impl_source", "blocking", "is_input", "is_static", "cwd", "hidden",
     "include_extra", "kernel_init_code", "image_urls", "file_urls", "wait_for_response", "activated_microagents",
     "agent_class", "extra_element_properties", "axtree_object", "dom_object"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One remembered event, as QitOS' `MemoryRecord` holds it, plus the id of the event it comes from."""

    role: str
    """`system`, `user`, `assistant` (the agent's actions and messages) or `tool` (observations)."""
    content: str
    """The event's text: a message, a command, a path and edit, an observation's output."""
    step_id: int
    """The agent step the event belongs to: 0 before the agent's first action, then one per model response."""
    event_id: int
    """The id of the event in the log: what a rebuild starts from, and what keeps records in log order."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """`kind` (OpenHands' action or observation name), `source`, and `timestamp`, `tool`, `cause` when the event has them."""


def is_remembered(event: Event) -> bool:
    """True for an event an adapter keeps: what the agent's history holds, minus the condensation bookkeeping.

    Condensations do not forget anything here: memory is where forgotten events can still be found.
    """
    return is_agent_history(event) and not isinstance(event, (CondensationAction, CondensationRequestAction))


def event_text(event: Event) -> str:
    """The text a record keeps: the content of messages and observations, the string arguments of actions."""
    if isinstance(event, Observation | MessageAction | SystemMessageAction):
        return event.content
    values = event.__dict__
    parts = []
    for name in event.payload_fields:
        value = values.get(name)
        if name in _PLUMBING or value is None or value == "":
            continue
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict) and value:  # a delegate's inputs, an MCP call's arguments
            parts.append(" ".join(f"{k}={v}" for k, v in value.items()))
    return "\n".join(parts) or event.message


def _role(event: Event) -> str:
    if isinstance(event, SystemMessageAction):
        return "system"
    if isinstance(event, Observation):
        return "tool"
    return "user" if event.source == EventSource.USER else "assistant"


class StepCounter:
    """Numbers agent steps: a step starts at each agent action from a new model response.

    Parallel tool calls share their model response, so they share a step; an agent action with no
    tool call (a message) is a step of its own. Events before the first agent action are step 0.
    """

    def __init__(self) -> None:
        self.step = 0
        self._response: str | None = None

    def record_for(self, event: Event) -> MemoryRecord:
        """The record of `event` (which must have an id), advancing the step when the event starts one."""
        if isinstance(event, Action) and event.source == EventSource.AGENT and not isinstance(event, SystemMessageAction):
            response = event.response_id
            if response is None or response != self._response:
                self.step += 1
            self._response = response
        metadata: dict[str, Any] = {"kind": event.kind, "source": str(event.source) if event.source else None}
        if event.tool_call_metadata is not None:
            metadata["tool"] = event.tool_call_metadata.function_name
        if event.timestamp is not None:
            metadata["timestamp"] = event.timestamp
        if event.cause is not None:
            metadata["cause"] = event.cause
        assert event.id is not None  # callers pass stored events
        return MemoryRecord(_role(event), event_text(event), self.step, event.id, metadata)
