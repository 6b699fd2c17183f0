"""`SummaryMemory`: the last `keep_last` records verbatim, older ones folded into short summaries (QitOS' summary memory)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openhands_memory.memory.base import Memory, MemoryQuery, check_size, select
from openhands_memory.memory.records import MemoryRecord

__all__ = ["SummaryMemory"]

_SUMMARY_WIDTH = 80
"""Characters of each record's content a summary keeps (QitOS keeps 80)."""


class SummaryMemory(Memory):
    """Keeps the last `keep_last` records; `evict` folds the older ones into a one-line summary each time.

    `summarize(max_items)` is QitOS': `role:content | role:content` of the last `max_items` records,
    each content cut to 80 characters. A summary of evicted records is built without a model:
    `step: role: content` of each folded record, cut to 80 characters, joined by ` | ` (QitOS'
    format with the step added; QitOS folds the last records instead of the evicted ones, we fold
    the evicted ones). `summaries` keeps every one, in order, so nothing evicted vanishes without a
    trace; `reset` clears them.
    """

    def __init__(self, keep_last: int = 10) -> None:
        """Raises: MemoryAdapterError: `keep_last` is not an integer >= 0."""
        super().__init__()
        self.keep_last = check_size("keep_last", keep_last)
        self._summaries: list[str] = []

    @property
    def summaries(self) -> list[str]:
        """The summaries of the evicted records, oldest first (a copy)."""
        return list(self._summaries)

    def retrieve(
        self, query: Mapping[str, Any] | MemoryQuery | None = None, state: Any = None, observation: Any = None
    ) -> list[MemoryRecord]:
        """The records that pass the query, at most `max_items` / `top_k` (default `keep_last`)."""
        return select(self._records, MemoryQuery.parse(query), default_limit=self.keep_last)

    def summarize(self, max_items: int = 5) -> str:
        """QitOS' summary: `role:content | role:content` of the last `max_items` records (contents cut to 80 characters; "" when none)."""
        chunk = self._records[-max_items:] if max_items > 0 else []
        return " | ".join(f"{r.role}:{r.content[:_SUMMARY_WIDTH]}" for r in chunk)

    def evict(self) -> int:
        """Fold the records before the last `keep_last` into one summary; returns how many were folded."""
        excess = len(self._records) - self.keep_last
        if excess <= 0:
            return 0
        folded = self._records[:excess]
        del self._records[:excess]
        self._summaries.append(
            " | ".join(f"{r.step_id}: {r.role}: {' '.join(r.content.split())[:_SUMMARY_WIDTH]}" for r in folded)
        )
        return excess

    def _clear(self) -> None:
        super()._clear()
        self._summaries.clear()
