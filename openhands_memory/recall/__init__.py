"""Projections of the log for the agent: the full-text search index behind `search_history`.

SQLite FTS5 beside a JSONL log (`SearchIndex`); PostgreSQL full-text search beside a conversation
stored in PostgreSQL (`PostgresSearchIndex`).

Everything here is derived from the log and rebuildable from it; nothing here is a source of truth.
"""

from openhands_memory.recall.index import SearchHit, SearchIndex, event_text, sidecar_path
from openhands_memory.recall.postgres_index import PostgresSearchIndex

__all__ = ["PostgresSearchIndex", "SearchHit", "SearchIndex", "event_text", "sidecar_path"]
