"""What `cache_aware` cuts when forgetting cannot bring a view under its hard limit.

Tool outputs first (as `large_output_offload` shows them), then messages (a user's pasted log, an
agent's long answer), each shown as its beginning and a line naming its size and the call that
reloads it whole. The log keeps every event whole; a cut is a copy shown in its place.
"""

from __future__ import annotations

from openhands_memory.condenser.impl.large_output_offload_condenser import LargeOutputOffloadCondenser, offload_notice
from openhands_memory.events import Event, MessageAction


class FitCutter:
    """Cuts the events shown over `preview_chars`: tool outputs, then messages; each cut once, the copy reused."""

    def __init__(self, preview_chars: int) -> None:
        self.preview_chars = preview_chars
        self._outputs = LargeOutputOffloadCondenser(large_payload_threshold=preview_chars + 1, preview_chars=preview_chars)
        self._messages: dict[int, tuple[Event, Event]] = {}  # id(event) -> (event, its cut copy)

    def rank(self, event: Event) -> int | None:
        """When `event` is cut, among those that may be: 0 a tool output, 1 a message; None: never cut."""
        if self._outputs.is_large(event):
            return 0
        if self._is_long_message(event):
            return 1
        return None

    def cut(self, event: Event) -> Event:
        """The cut copy of `event` (the event itself when it is not cut)."""
        if not self._is_long_message(event):
            return self._outputs.offload_if_large(event)
        kept = self._messages.get(id(event))
        if kept is not None and kept[0] is event:
            return kept[1]
        assert isinstance(event, MessageAction) and event.id is not None
        notice = offload_notice(len(event.content), event.id)
        copy = event.model_copy(update={"content": f"{event.content[: self.preview_chars]}\n{notice}"})
        self._messages[id(event)] = (event, copy)
        return copy

    def _is_long_message(self, event: Event) -> bool:
        return (
            isinstance(event, MessageAction)
            and event.id is not None
            and not event.hidden
            and len(event.content) > self.preview_chars + 1
        )
