"""Projections of the log for the agent: the full-text search index (SQLite FTS5) behind `search_history`.

Everything here is derived from the log and rebuildable from it; nothing here is a source of truth.
"""

from openhands_memory.recall.index import MAX_QUERY_CHARS, SearchHit, SearchIndex, event_text, sidecar_path
from openhands_memory.recall.search import MAX_ANSWER_CHARS, search_answer, search_log

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_QUERY_CHARS",
    "SearchHit",
    "SearchIndex",
    "event_text",
    "search_answer",
    "search_log",
    "sidecar_path",
]
