"""Projections of the log for the agent: the full-text search index behind `search_history`.

SQLite FTS5 beside a JSONL log (`SearchIndex`); PostgreSQL full-text search beside a conversation
stored in PostgreSQL (`PostgresSearchIndex`).

Everything here is derived from the log and rebuildable from it; nothing here is a source of truth.
"""

from openhands_memory.recall.index import MAX_QUERY_CHARS, SearchHit, SearchIndex, event_text, sidecar_path
from openhands_memory.recall.postgres_index import PostgresSearchIndex
from openhands_memory.recall.search import MAX_ANSWER_CHARS, search_answer, search_log

# The door: the search index of a log; the rest by its module's path.
__all__ = [
    "SearchIndex",
    "search_log",
    "sidecar_path",
]
