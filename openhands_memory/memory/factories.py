"""QitOS' four memory factories (`qitos.kit.memory`), with QitOS' defaults."""

from __future__ import annotations

import os

from openhands_memory.memory.markdown_file import MarkdownFileMemory
from openhands_memory.memory.summary import SummaryMemory
from openhands_memory.memory.vector import VectorMemory
from openhands_memory.memory.window import WindowMemory

__all__ = ["markdown_file_memory", "summary_memory", "vector_memory", "window_memory"]


def window_memory(window_size: int = 20) -> WindowMemory:
    """A `WindowMemory` of the last `window_size` records."""
    return WindowMemory(window_size=window_size)


def summary_memory(keep_last: int = 10) -> SummaryMemory:
    """A `SummaryMemory` that keeps the last `keep_last` records verbatim."""
    return SummaryMemory(keep_last=keep_last)


def vector_memory(top_k: int = 5) -> VectorMemory:
    """A `VectorMemory` with the offline embedder, returning `top_k` records a query."""
    return VectorMemory(top_k=top_k)


def markdown_file_memory(path: str | os.PathLike[str] = "memory.md", max_in_memory: int = 200) -> MarkdownFileMemory:
    """A `MarkdownFileMemory` mirrored to `path`, the last `max_in_memory` records in RAM."""
    return MarkdownFileMemory(path=path, max_in_memory=max_in_memory)
