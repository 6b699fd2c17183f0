"""The `str()` of events, as OpenHands 0.62 prints them (its prompts and logs use this text).

Kinds with a text form of their own in OpenHands define `__str__` next to their fields; every
other kind prints as OpenHands' dataclass would: `ClassName(field=repr, ...)`, its fields in
OpenHands' order, the kind and the enum-typed fields shown as OpenHands' enum members.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openhands_memory.events.base import Event

_DATACLASS_FIELDS: dict[str, tuple[str, ...]] = {
    "AgentDelegateAction": ("agent", "inputs", "thought", "action"),
    "AgentFinishAction": ("final_thought", "outputs", "thought", "action"),
    "AgentRejectAction": ("outputs", "thought", "action"),
    "AgentThinkAction": ("thought", "action"),
    "ChangeAgentStateAction": ("agent_state", "thought", "action"),
    "CondensationAction": (
        "action", "forgotten_event_ids", "forgotten_events_start_id", "forgotten_events_end_id", "summary", "summary_offset",
    ),
    "CondensationRequestAction": ("action",),
    "FileReadAction": ("path", "start", "end", "thought", "action", "security_risk", "impl_source", "view_range"),
    "LoopRecoveryAction": ("option", "action"),
    "NullAction": ("action",),
    "TaskTrackingAction": ("command", "task_list", "thought", "action"),
    "AgentCondensationObservation": ("content", "observation"),
    "AgentDelegateObservation": ("content", "outputs", "observation"),
    "AgentStateChangedObservation": ("content", "agent_state", "reason", "observation"),
    "AgentThinkObservation": ("content", "observation"),
    "LoopDetectionObservation": ("content", "observation"),
    "MCPObservation": ("content", "observation", "name", "arguments"),
    "NullObservation": ("content", "observation"),
    "SuccessObservation": ("content", "observation"),
    "TaskTrackingObservation": ("content", "observation", "command", "task_list"),
    "UserRejectObservation": ("content", "observation"),
}  # fmt: skip
"""OpenHands' dataclass fields (those its repr shows), in its order, for the kinds without a text form of their own."""

_SECURITY_RISKS = {-1: "UNKNOWN", 0: "LOW", 1: "MEDIUM", 2: "HIGH"}
_FILE_READ_SOURCES = {"default": "DEFAULT", "oh_aci": "OH_ACI"}


def source_text(event: Event) -> str:
    """`event.source` as OpenHands formats it in an f-string (Python 3.12: `EventSource.AGENT`, or `None`)."""
    source = event.source
    return "None" if source is None else f"EventSource.{source.name}"


def dataclass_text(event: Event) -> str:
    """`ClassName(field=value, ...)`, as OpenHands' dataclass repr prints the event."""
    cls = type(event)
    names = _DATACLASS_FIELDS.get(cls.__name__)
    if names is None:  # our own kinds and unknown ones: their fields, those we do not model, then the kind
        extra = tuple(name for name in event.__pydantic_extra__ or () if name not in cls.model_fields)
        # A field left out of the JSON when None (a page or cursor not asked for) is left out here too.
        fields = tuple(name for name in cls.payload_fields if not (name in cls.omit_if_none and getattr(event, name) is None))
        names = (*(("content",) if cls.kind_key == "observation" else ()), *fields, *extra, cls.kind_key)
        known_kind = False
    else:
        known_kind = True
    values = {**(event.__pydantic_extra__ or {}), **event.__dict__}
    parts = [f"{name}={_value_text(name, values.get(name), known_kind)}" for name in names]
    return f"{cls.__name__}({', '.join(parts)})"


def _value_text(name: str, value: Any, known_kind: bool) -> str:
    if known_kind and name == "action":
        return f"<ActionType.{value.upper()}: {value!r}>"
    if known_kind and name == "observation":
        return f"<ObservationType.{value.upper()}: {value!r}>"
    if name == "security_risk" and type(value) is int and value in _SECURITY_RISKS:
        return f"<ActionSecurityRisk.{_SECURITY_RISKS[value]}: {value}>"
    if name == "impl_source" and isinstance(value, str) and value in _FILE_READ_SOURCES:
        return f"<FileReadSource.{_FILE_READ_SOURCES[value]}: {value!r}>"
    return repr(value)
