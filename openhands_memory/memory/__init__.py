"""QitOS-style memory adapters as read models of the event stream.

Each adapter has QitOS' interface (`append`, `retrieve`, `summarize`, `evict`, `reset`) over
`MemoryRecord`s (role, content, step id, metadata) projected from the log's events: fed with
`append_event` / `extend`, rebuilt with `from_events`, kept current with `attach(stream)`.
"""

from openhands_memory.memory.base import Memory, MemoryQuery
from openhands_memory.memory.embedding import Embedder, HashedBagOfWords
from openhands_memory.memory.markdown_file import MarkdownFileMemory
from openhands_memory.memory.records import MemoryRecord
from openhands_memory.memory.summary import SummaryMemory
from openhands_memory.memory.vector import VectorMemory
from openhands_memory.memory.window import WindowMemory

__all__ = [
    "Embedder",
    "HashedBagOfWords",
    "MarkdownFileMemory",
    "Memory",
    "MemoryQuery",
    "MemoryRecord",
    "SummaryMemory",
    "VectorMemory",
    "WindowMemory",
]
