"""Our strategy's answer as the SDK expects it: a `Condensation` naming SDK ids, or a new SDK `View`.

- A condensation of ours (`CondensationAction`) becomes the SDK's `Condensation` event: the ids it
  forgets (a list, or a range: the events of the view whose id it names) become the SDK ids of
  those events; a persisting summary is forgotten by its `cause`, which stands for the summary's own
  SDK id. `summary` and `summary_offset` mean the same on both sides (the offset counts the events
  kept). `llm_response_id` is the id of the summarizing model's last response, or a new id of ours.
  Our `condenser_metadata` has no field on the SDK's event (`extra="forbid"`): it stays with the
  condenser (`OpenHandsMemoryCondenser.condensation_records`) and is logged.
- A view of ours (the input unchanged, or transformed) becomes a new SDK `View`: every event the
  strategy left alone is the SDK's own event object; one whose text it changed is a copy of the SDK
  event with the same id (an `ObservationEvent` keeps `tool_call_id` and `action_id` and carries a
  `MemoryViewObservation` with the new text). The input view is never changed.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openhands.sdk.context.view import View as SdkView
from openhands.sdk.event import (
    AgentErrorEvent,
    CondensationSummaryEvent,
    MessageEvent,
    ObservationEvent,
    SystemPromptEvent,
    UserRejectObservation,
)
from openhands.sdk.event.condenser import Condensation as SdkCondensation
from openhands.sdk.llm import ImageContent, TextContent

from openhands_memory.condenser import Condensation
from openhands_memory.condenser._boundaries import forget_id
from openhands_memory.events import (
    AgentCondensationObservation,
    Event,
    MessageAction,
    Observation,
)
from openhands_memory.integrations.openhands_sdk._view_import import ImportedView
from openhands_memory.integrations.openhands_sdk.observation import MemoryViewObservation
from openhands_memory.view import View

__all__ = ["ExportedView", "to_sdk_condensation", "to_sdk_view"]

logger = logging.getLogger(__name__)

_REJECTED = "Action rejected: "
"""How the importer writes a rejection's reason (as the SDK shows it)."""


def to_sdk_condensation(imported: ImportedView, condensation: Condensation) -> SdkCondensation:
    """The SDK `Condensation` for one of ours made for `imported.view` (see the module docstring)."""
    action = condensation.action
    listed = action.forgotten_lookup()  # a range is tested by its bounds, never expanded
    forgotten = {
        sdk.id
        for ours, sdk in zip(imported.view, imported.sdk_events, strict=True)
        if forget_id(ours) in listed
    }
    summary, offset = action.summary, action.summary_offset
    if summary is not None and offset is not None:
        offset = _after_system_prompt(imported.sdk_events, forgotten, offset)
    return SdkCondensation(
        forgotten_event_ids=forgotten,
        summary=summary,
        summary_offset=offset,
        llm_response_id=_response_id(condensation),
    )


def _after_system_prompt(sdk_events: Sequence[Any], forgotten: set[str], offset: int) -> int:
    """`offset`, or just past the system prompt when it would put the summary before it.

    Our chat renderer always puts the system message first; the SDK sends events in view order, so
    a summary at offset 0 (a strategy with `keep_first = 0`) would open the chat with a user message.
    """
    kept = [event for event in sdk_events if event.id not in forgotten]
    system = next((index for index, event in enumerate(kept) if isinstance(event, SystemPromptEvent)), None)
    return offset if system is None or offset > system else system + 1


def _response_id(condensation: Condensation) -> str:
    """The id of the last model response the condensation used, else a new one of ours."""
    usage = condensation.metadata.llm_usage if condensation.metadata is not None else None
    for latency in reversed((usage or {}).get("response_latencies") or []):
        response_id = latency.get("response_id") if isinstance(latency, dict) else None
        if response_id:
            return str(response_id)
    return f"openhands-memory-{uuid.uuid4().hex}"


@dataclass(frozen=True, slots=True)
class ExportedView:
    """The SDK view for a view of ours, and what could not be carried over."""

    view: SdkView
    """The view to hand the SDK."""
    ours: list[Event]
    """Our event behind each of its events, position for position."""
    lost: list[str]
    """One line for each event of ours it could not show the SDK way (each also logged)."""


def to_sdk_view(imported: ImportedView, view: View, *, transformed_by: str) -> ExportedView:
    """The SDK `View` for a view of ours derived from `imported.view`, and what could not be carried over.

    An event of ours it cannot show the SDK way is named in `lost` (and logged): one the strategy
    added that is no summary (left out), or a change to an event whose SDK class has no place for
    it (the SDK's own event is shown then).
    """
    originals = {event.original_id: (event, sdk) for event, sdk in zip(imported.view, imported.sdk_events, strict=True)}
    if view is imported.view:
        shown = SdkView(events=list(imported.sdk_events), unhandled_condensation_request=view.unhandled_condensation_request)
        return ExportedView(shown, list(view), [])
    events: list[Any] = []
    behind: list[Event] = []
    lost: list[str] = []
    for event in view:
        found = originals.get(event.original_id) if event.original_id is not None else None
        if found is None:
            made = _new_event(event)
            if made is None:
                lost.append(f"{event.kind} {event.id}: added by {transformed_by}, has no SDK event")
            else:
                events.append(made)
                behind.append(event)
            continue
        ours, sdk = found
        behind.append(event)
        if event is ours:
            events.append(sdk)
            continue
        replaced = _replaced(sdk, event, transformed_by)
        if replaced is None:
            lost.append(f"{sdk.id} ({type(sdk).__name__}): a change by {transformed_by} the SDK event cannot carry")
            replaced = sdk
        events.append(replaced)
    for line in lost:
        logger.warning("openhands-memory view for the SDK: %s", line)
    shown = SdkView(events=events, unhandled_condensation_request=view.unhandled_condensation_request)
    return ExportedView(shown, behind, lost)


def _text_of(event: Event) -> str:
    return event.content if isinstance(getattr(event, "content", None), str) else ""


def _replaced(sdk: Any, event: Event, transformed_by: str) -> Any | None:
    """A copy of the SDK event `sdk` showing the text of our changed `event` (None: no place for it)."""
    text = _text_of(event)
    if isinstance(sdk, ObservationEvent) and isinstance(event, Observation):
        shown = MemoryViewObservation(
            content=[TextContent(text=text)],
            is_error=sdk.observation.is_error,
            original_kind=type(sdk.observation).__name__,
            transformed_by=transformed_by,
        )
        return sdk.model_copy(update={"observation": shown})
    if isinstance(sdk, AgentErrorEvent) and isinstance(event, Observation):
        return sdk.model_copy(update={"error": text})
    if isinstance(sdk, UserRejectObservation) and isinstance(event, Observation):
        return sdk.model_copy(update={"rejection_reason": text.removeprefix(_REJECTED)})
    if isinstance(sdk, CondensationSummaryEvent) and isinstance(event, AgentCondensationObservation):
        return sdk.model_copy(update={"summary": text})
    if isinstance(sdk, MessageEvent) and isinstance(event, MessageAction):
        images = [part for part in sdk.llm_message.content if isinstance(part, ImageContent)]
        message = sdk.llm_message.model_copy(update={"content": [TextContent(text=text), *images]})
        return sdk.model_copy(update={"llm_message": message, "extended_content": []})
    return None  # an ActionEvent's or a system prompt's change: the SDK computes their text from their fields


def _new_event(event: Event) -> Any | None:
    """An SDK event for one a strategy added to the view (a summary), or None."""
    if isinstance(event, AgentCondensationObservation):
        # The same summary gets the same id at every step: the SDK's views compare equal.
        digest = hashlib.sha256(event.content.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        return CondensationSummaryEvent(id=f"openhands-memory-{digest}-summary", summary=event.content)
    return None
