"""The agent's `compact_context` call in an SDK view: a request for a condensation with a focus, answered once.

`History` appends a `CondensationRequestAction` carrying the focus after the call; an SDK tool
cannot append to the conversation's log, so `OpenHandsMemoryCondenser` reads the request from the
view itself: the newest `compact_context` call (imported as `CompactContextAction`) whose answer
was not an error. The condensation that answers it forgets the call and its answer too, so the log
alone says it was answered: the next step, or a resumed conversation, does not condense for it
again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openhands.sdk.event.condenser import Condensation as SdkCondensation

from openhands_memory.events import CompactContextAction, ErrorObservation
from openhands_memory.integrations.openhands_sdk._view_import import ImportedView

__all__ = ["forgetting_too", "pending_compact_call"]


def pending_compact_call(imported: ImportedView) -> tuple[str, tuple[str, ...]] | None:
    """(its focus, the SDK ids of the call and its answers) for the `compact_context` call the view asks to
    condense for, or None (no call in view, the newest one refused, or not answered yet)."""
    events = imported.view.events
    for index in range(len(events) - 1, -1, -1):
        call = events[index]
        if not isinstance(call, CompactContextAction):
            continue
        answers = [i for i in range(index + 1, len(events)) if call.id is not None and events[i].cause == call.id]
        if not answers or isinstance(events[answers[0]], ErrorObservation):
            return None
        return call.focus, tuple(imported.sdk_events[i].id for i in (index, *answers))
    return None


def forgetting_too(made: SdkCondensation, sdk_events: Sequence[Any], ids: Sequence[str]) -> SdkCondensation:
    """`made`, forgetting the events `ids` as well, its summary still before the same kept event."""
    forgotten = set(made.forgotten_event_ids)
    update: dict[str, Any] = {"forgotten_event_ids": forgotten | set(ids)}
    if made.summary_offset is not None:
        kept = [event.id for event in sdk_events if event.id not in forgotten]
        update["summary_offset"] = sum(1 for event_id in kept[: made.summary_offset] if event_id not in ids)
    return made.model_copy(update=update)
