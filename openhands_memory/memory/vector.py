"""`VectorMemory`: records ranked by the similarity of their embedding to a query text (QitOS' vector memory)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from openhands_memory.errors import MemoryAdapterError
from openhands_memory.memory.base import Memory, MemoryQuery, check_size, format_records, select
from openhands_memory.memory.embedding import Embedder, HashedBagOfWords, SparseVector, sparse
from openhands_memory.memory.records import MemoryRecord

__all__ = ["Similarity", "VectorMemory"]

Similarity = Literal["dot", "cosine"]
"""How a record's vector is scored against the query's: `dot` product (QitOS') or `cosine` of the angle."""


class VectorMemory(Memory):
    """Embeds each record when it is appended; a query with `text` returns the `top_k` most similar.

    `embedder` is any callable from a text to a vector (default: `HashedBagOfWords()`, offline, whose
    vectors have length 1, so `dot` and `cosine` rank alike); `openhands_memory.llm.LiteLLMEmbedder`
    calls a model. Records are ranked as QitOS ranks them: by the dot product of the vectors, best
    first, equal scores in log order (`similarity="cosine"` ranks by the angle alone, for an embedder
    whose vector lengths mean nothing). Without `text`, a query returns the most recent records, as
    QitOS does. `evict` keeps everything (QitOS' vector memory never evicts).
    """

    def __init__(self, embedder: Embedder | None = None, top_k: int = 5, *, similarity: Similarity = "dot") -> None:
        """Raises: MemoryAdapterError: `top_k` is not an integer >= 1, or `similarity` is not `dot` or `cosine`."""
        super().__init__()
        self.embedder: Embedder = embedder if embedder is not None else HashedBagOfWords()
        self.top_k = check_size("top_k", top_k, minimum=1)
        if similarity not in ("dot", "cosine"):
            raise MemoryAdapterError(f"similarity must be 'dot' or 'cosine', not {similarity!r}")
        self.similarity: Similarity = similarity
        self._vectors: list[SparseVector] = []

    def retrieve(
        self, query: Mapping[str, Any] | MemoryQuery | None = None, state: Any = None, observation: Any = None
    ) -> list[MemoryRecord]:
        """With `text`: the best-matching records, best first (ties: in log order, as QitOS sorts), at most `top_k`.

        Without it: the most recent records. `roles` and `step_min` filter first in both cases.

        Raises:
            MemoryAdapterError: the query has an unknown key or a wrong value, or the embedder's vectors differ in length.
        """
        parsed = MemoryQuery.parse(query)
        limit = parsed.limit(self.top_k)
        if parsed.text is None:
            return select(self._records, parsed, default_limit=self.top_k)
        target = sparse(self.embedder(parsed.text))
        score = target.dot if self.similarity == "dot" else target.cosine
        scored = [
            (score(vector), index)
            for index, (record, vector) in enumerate(zip(self._records, self._vectors, strict=True))
            if parsed.matches(record)
        ]
        scored.sort(key=lambda pair: pair[0], reverse=True)  # stable: equal scores stay in log order, as in QitOS
        return parsed.fit_tokens([self._records[index] for _, index in scored[:limit]], newest_last=False)

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
