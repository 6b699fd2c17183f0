"""Projections of the log for the agent: the full-text search index (SQLite FTS5) behind `search_history`.

Everything here is derived from the log and rebuildable from it; nothing here is a source of truth.
"""

from openhands_memory.recall.index import SearchHit, SearchIndex, event_text, sidecar_path

__all__ = ["SearchHit", "SearchIndex", "event_text", "sidecar_path"]
