"""`VectorMemory`: records ranked by the similarity of their embedding to a query text (QitOS' vector memory)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openhands_memory.memory.base import Memory, MemoryQuery, check_size, format_records, select
from openhands_memory.memory.embedding import Embedder, HashedBagOfWords, SparseVector, sparse
from openhands_memory.memory.records import MemoryRecord

__all__ = ["VectorMemory"]


class VectorMemory(Memory):
    """Embeds each record when it is appended; a query with `text` returns the `top_k` most similar.

    `embedder` is any callable from a text to a vector (default: `HashedBagOfWords()`, offline);
    `openhands_memory.llm.LiteLLMEmbedder` calls a model. Without `text`, a query returns the most
    recent records, as QitOS does. `evict` keeps everything (QitOS' vector memory never evicts).
    """

    def __init__(self, embedder: Embedder | None = None, top_k: int = 5) -> None:
        """Raises: MemoryAdapterError: `top_k` is not an integer >= 1."""
        super().__init__()
        self.embedder: Embedder = embedder if embedder is not None else HashedBagOfWords()
        self.top_k = check_size("top_k", top_k, minimum=1)
        self._vectors: list[SparseVector] = []

    def retrieve(
        self, query: Mapping[str, Any] | MemoryQuery | None = None, state: Any = None, observation: Any = None
    ) -> list[MemoryRecord]:
        """With `text`: the best-matching records, best first (ties: the more recent first), at most `top_k`.

        Without it: the most recent records. `roles` and `step_min` filter first in both cases.

        Raises:
            MemoryAdapterError: the query has an unknown key or a wrong value, or the embedder's vectors differ in length.
        """
        parsed = MemoryQuery.parse(query)
        limit = parsed.limit(self.top_k)
        if parsed.text is None:
            return select(self._records, parsed, default_limit=self.top_k)
        target = sparse(self.embedder(parsed.text))
        scored = [
            (target.cosine(vector), index)
            for index, (record, vector) in enumerate(zip(self._records, self._vectors, strict=True))
            if parsed.matches(record)
        ]
        scored.sort(key=lambda pair: (-pair[0], -pair[1]))
        return [self._records[index] for _, index in scored[:limit]]

    def summarize(self, max_items: int = 5) -> str:
        """The last `max_items` records, one line each."""
        return format_records(self._records[-max_items:] if max_items else [])

    def evict(self) -> int:
        """Nothing: a vector memory keeps every record (its use is finding old ones)."""
        return 0

    def _add(self, record: MemoryRecord) -> None:
        self._vectors.append(sparse(self.embedder(record.content)))
        super()._add(record)

    def _clear(self) -> None:
        super()._clear()
        self._vectors.clear()
