"""QitOS-style memory adapters as read models of the event stream.

Each adapter has QitOS' interface (`append`, `retrieve`, `summarize`, `evict`, `reset`) over
`MemoryRecord`s (role, content, step id, metadata) projected from the log's events: fed with
`append_event` / `extend`, rebuilt with `from_events`, kept current with `attach(stream)`. A record
appended in QitOS' form goes into the log first. QitOS' factories (`window_memory`, ...) build them.
"""

from openhands_memory.memory.base import Memory, MemoryQuery
from openhands_memory.memory.embedding import Embedder, HashedBagOfWords
from openhands_memory.memory.factories import markdown_file_memory, summary_memory, vector_memory, window_memory
from openhands_memory.memory.markdown_file import MarkdownFileMemory
from openhands_memory.memory.records import QITOS_ROLES, MemoryRecord
from openhands_memory.memory.summary import SummaryMemory
from openhands_memory.memory.vector import Similarity, VectorMemory
from openhands_memory.memory.window import WindowMemory

# The door: QitOS' interface and its factories (each adapter's class stays importable here too).
__all__ = [
    "Memory",
    "MemoryRecord",
    "window_memory",
    "summary_memory",
    "vector_memory",
    "markdown_file_memory",
]
