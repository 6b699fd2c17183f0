"""`MemoryRecord` (QitOS' record: role, content, step id, metadata), how an event becomes one, and how one becomes an event.

An adapter holds records, never events: every record names the event it was made from
(`event_id`), so the log stays the source of truth and any adapter can be rebuilt from it.

Records come two ways. From the log: each event the agent's history holds becomes a record (`system`,
`user`, `assistant`, `tool`). From a QitOS user: `memory.append(MemoryRecord(role=..., content=...,
step_id=..., metadata=...))`, with no event id, is first written to the log as an event of its own
(`record_event`: a hidden `MessageAction`, so no model is shown it, tagged `memory_record` with the
role, step and metadata at the top level of its JSON, where OpenHands' loader ignores it), and the
record held is the one read back from that event: live and rebuilt memories hold the same records.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from openhands_memory.errors import MemoryAdapterError
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
from openhands_memory.events._wire import wire_of

__all__ = [
    "MEMORY_RECORD_FIELD",
    "QITOS_ROLES",
    "MemoryRecord",
    "StepCounter",
    "event_text",
    "is_remembered",
    "record_event",
    "record_text",
]

MEMORY_RECORD_FIELD: Final = "memory_record"
"""The top-level tag of an event written for a record given in QitOS' form: `{role, step_id, metadata}`."""

QITOS_ROLES: Final[dict[str, str]] = {
    "task": "user",
    "decision": "assistant",
    "action": "assistant",
    "observation": "tool",
    "action_result": "tool",
}
"""QitOS' engine roles and the role of ours that holds the same thing, so a `retrieve` filter may name
either: `{"roles": ["observation"]}` also finds the records of observations read from the log (`tool`).
QitOS' `state` and `next_state` have no counterpart in a log (they match records of their own name only)."""

# Fields that are plumbing, not something an agent would want to recall.
_PLUMBING = frozenset(
    {"security_risk", "confirmation_state", "impl_source", "blocking", "is_input", "is_static", "cwd", "hidden",
     "include_extra", "kernel_init_code", "image_urls", "file_urls", "wait_for_response", "activated_microagents",
     "agent_class", "extra_element_properties", "axtree_object", "dom_object"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One remembered event, as QitOS' `MemoryRecord` holds it, plus the id of the event it comes from.

    QitOS' form, `MemoryRecord(role=..., content=..., step_id=..., metadata=...)`, is a record not yet
    in the log (`event_id` None): `Memory.append` writes it there first.
    """

    role: str
    """`system`, `user`, `assistant` (the agent's actions and messages) or `tool` (observations) for a
    record read from the log; any role for one given in QitOS' form (QitOS' engine writes `task`,
    `state`, `decision`, `action`, `action_result`, `observation`, `next_state`)."""
    content: Any
    """The text: a message, a command, a path and edit, an observation's output. QitOS' form may give
    any value; it is held as text once in the log (a string as it is, JSON as JSON text, others `str()`)."""
    step_id: int
    """The agent step: read from the log, 0 before the agent's first action, then one per model response;
    in QitOS' form, the step given."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Read from the log: `kind` (OpenHands' action or observation name), `source`, and `timestamp`, `tool`,
    `cause` when the event has them. In QitOS' form: what was given (JSON values)."""
    event_id: int | None = None
    """The id of the event in the log: what a rebuild starts from, and what keeps records in log order
    (None: a record in QitOS' form, not in the log yet)."""
    timestamp: str | None = None
    """When its event was stored (the event's `timestamp`); None when the event has none or it is not in the log."""


def is_remembered(event: Event) -> bool:
    """True for an event an adapter keeps: what the agent's history holds, minus the condensation
    bookkeeping, plus the events written for records given in QitOS' form (hidden from the agent).

    Condensations do not forget anything here: memory is where forgotten events can still be found.

    Raises:
        MemoryAdapterError: the event's `memory_record` tag is malformed.
    """
    if memory_record_tag(event) is not None:
        return True
    return is_agent_history(event) and not isinstance(event, (CondensationAction, CondensationRequestAction))


def record_text(content: Any) -> str:
    """The text a record in QitOS' form is held as: a string as it is, a JSON value as JSON text, anything else `str()`."""
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(content)


def record_event(record: MemoryRecord) -> MessageAction:
    """The event that puts a record given in QitOS' form into the log (see the module docstring).

    Raises:
        MemoryAdapterError: the record has an event id already, an empty role, a step that is not a
            non-negative integer, or metadata that is not a JSON object.
    """
    if record.event_id is not None:
        raise MemoryAdapterError(f"this record is event {record.event_id} of the log already")
    if not isinstance(record.role, str) or not record.role:
        raise MemoryAdapterError(f"a memory record needs a role (a non-empty string), not {record.role!r}")
    if isinstance(record.step_id, bool) or not isinstance(record.step_id, int) or record.step_id < 0:
        raise MemoryAdapterError(f"a memory record's step_id must be an integer >= 0, not {record.step_id!r}")
    try:
        metadata = orjson.loads(orjson.dumps(record.metadata))
    except (TypeError, orjson.JSONEncodeError) as exc:
        raise MemoryAdapterError(f"a memory record's metadata must be a JSON object (it goes into the log): {exc}") from None
    if not isinstance(metadata, dict):
        raise MemoryAdapterError(f"a memory record's metadata must be a dict, not {type(record.metadata).__name__}")
    tag = {"role": record.role, "step_id": record.step_id, "metadata": metadata}
    return MessageAction(content=record_text(record.content), hidden=True, **{MEMORY_RECORD_FIELD: tag})


def memory_record_tag(event: Event) -> dict[str, Any] | None:
    """The `memory_record` tag of an event written by `record_event` (from its JSON or its extra fields), or None.

    Raises:
        MemoryAdapterError: the tag is there but is not `{role: str, step_id: int >= 0, metadata: dict}`.
    """
    wire = wire_of(event)
    tag = wire.data.get(MEMORY_RECORD_FIELD) if wire is not None else None
    if tag is None:
        extra = event.__pydantic_extra__
        tag = extra.get(MEMORY_RECORD_FIELD) if extra else None
    if tag is None:
        return None
    if (
        not isinstance(tag, dict)
        or not isinstance(tag.get("role"), str)
        or not tag["role"]
        or isinstance(tag.get("step_id"), bool)
        or not isinstance(tag.get("step_id"), int)
        or tag["step_id"] < 0
        or not isinstance(tag.get("metadata", {}), dict)
        or not isinstance(event, MessageAction)
    ):
        raise MemoryAdapterError(
            f"event {event.id}: its {MEMORY_RECORD_FIELD} tag is not {{role, step_id, metadata}} on a message: {tag!r}"
        )
    return tag


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
        """The record of `event` (which must have an id), advancing the step when the event starts one.

        An event written for a record in QitOS' form gives that record back (its role, step and
        metadata); it starts no step.
        """
        tag = memory_record_tag(event)
        if tag is not None:
            assert isinstance(event, MessageAction)
            metadata = dict(tag.get("metadata") or {})
            return MemoryRecord(tag["role"], event.content, tag["step_id"], metadata, event.id, event.timestamp)
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
        return MemoryRecord(_role(event), event_text(event), self.step, metadata, event.id, event.timestamp)
