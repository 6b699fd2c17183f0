"""`WindowMemory`: the last `window_size` records (QitOS' window memory)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openhands_memory.memory.base import Memory, MemoryQuery, check_size, format_records, select
from openhands_memory.memory.records import MemoryRecord

__all__ = ["WindowMemory"]


class WindowMemory(Memory):
    """Returns the most recent `window_size` records; `evict` drops the older ones (0: no window).

    Records older than the window stay until `evict` runs, as in QitOS, so a query sees only the
    window either way.
    """

    def __init__(self, window_size: int = 20) -> None:
        """Raises: MemoryAdapterError: `window_size` is not an integer >= 0."""
        super().__init__()
        self.window_size = check_size("window_size", window_size)

    def _window(self) -> list[MemoryRecord]:
        return self._records[-self.window_size :] if self.window_size else list(self._records)

    def retrieve(
        self, query: Mapping[str, Any] | MemoryQuery | None = None, state: Any = None, observation: Any = None
    ) -> list[MemoryRecord]:
        """The window's records that pass the query (roles, step_min, text), at most `max_items` / `top_k`."""
        return select(self._window(), MemoryQuery.parse(query), default_limit=None)

    def summarize(self, max_items: int = 5) -> str:
        """The last `max_items` records of the window, one line each."""
        return format_records(self._window()[-max_items:] if max_items else [])

    def evict(self) -> int:
        """Drop the records older than the window; returns how many."""
        excess = len(self._records) - self.window_size if self.window_size else 0
        if excess <= 0:
            return 0
        del self._records[:excess]
        return excess
