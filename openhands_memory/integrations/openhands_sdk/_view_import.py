"""An SDK `View` as our `View`: its events through the one SDK importer, with ids that stay put from step to step.

`import_sdk_events` (the V1 import, `openhands_memory.events._sdk_import`) converts the view's
events, dumped as the SDK writes them; it keeps each SDK UUID in `original_id`. The importer numbers
events by position, which changes whenever a condensation forgets some, while our strategies keep
caches by event and by id from step to step. So `SdkViewImporter` gives every SDK id one int for the
life of the condenser, in the order first seen: events appended to a conversation get ever larger
ids, as in our own log, and an event seen before is handed back as the same object (an unchanged
SDK event is immutable), so the strategies' caches keep working.

A `CondensationSummaryEvent` (id `<condensation uuid>-summary`) becomes what a persisting summary is
in our views: an `AgentCondensationObservation` without id whose `cause` is the int of the
condensation that wrote it, so forgetting it (listing that `cause`) maps back to the summary's own
SDK id. The SDK keeps summaries until a condensation forgets them, which is our `summary_persists`
semantics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openhands_memory.events import Event
from openhands_memory.events._sdk_import import import_sdk_events
from openhands_memory.view import View

__all__ = ["ImportedView", "SdkViewImporter"]

_SUMMARY_KIND = "CondensationSummaryEvent"
_SUMMARY_SUFFIX = "-summary"


@dataclass(frozen=True, slots=True)
class ImportedView:
    """An SDK view and our view of the same events, position for position."""

    sdk_events: list[Any]
    """The SDK view's events (never changed)."""
    view: View
    """Our view: one event of ours for each SDK event, in the same order."""


class SdkViewImporter:
    """Converts SDK views to ours, giving each SDK id one int for good (see the module docstring)."""

    __slots__ = ("_ids", "_sdk_ids", "_records", "_events")

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._sdk_ids: dict[int, str] = {}
        self._records: dict[str, dict[str, Any]] = {}
        """SDK id -> its JSON dump (SDK events are frozen: dumped once)."""
        self._events: dict[str, Event] = {}
        """SDK id -> our event for it last time, handed back again while it converts the same."""

    def our_id(self, sdk_id: str) -> int:
        """The int standing for `sdk_id` (a new one, larger than all before, the first time)."""
        our = self._ids.get(sdk_id)
        if our is None:
            our = self._ids[sdk_id] = len(self._ids)
            self._sdk_ids[our] = sdk_id
        return our

    def sdk_id(self, our_id: int) -> str | None:
        """The SDK id `our_id` stands for (None: none)."""
        return self._sdk_ids.get(our_id)

    def import_view(self, sdk_events: Sequence[Any], *, unhandled_condensation_request: bool) -> ImportedView:
        """Our view of `sdk_events` (an SDK view's events), with the request flag of the SDK view.

        Raises:
            MalformedEventError: an event the importer cannot read (it names the event's position and id).
        """
        records = []
        for sdk in sdk_events:
            record = self._records.get(sdk.id)
            if record is None:
                record = sdk.model_dump(mode="json")
            records.append(record)
        fresh = import_sdk_events(records)
        events: list[Event] = []
        seen: dict[str, Event] = {}
        for record, event in zip(records, fresh, strict=True):
            sdk_id = record["id"]
            if record.get("kind") == _SUMMARY_KIND:
                made_by = sdk_id.removesuffix(_SUMMARY_SUFFIX)
                event.id = None
                event.cause = self.our_id(made_by)
            else:
                event.id = self.our_id(sdk_id)
                if event.cause is not None:  # the importer's cause is a position in `records`
                    event.cause = self.our_id(records[event.cause]["id"])
            before = self._events.get(sdk_id)
            if before is not None and before == event:
                event = before
            seen[sdk_id] = event
            events.append(event)
        # Only what this view holds is remembered: memory follows the view, not the conversation.
        self._records = {record["id"]: record for record in records}
        self._events = seen
        view = View(events, unhandled_condensation_request=unhandled_condensation_request)
        return ImportedView(list(sdk_events), view)
