"""The offline embedder of `VectorMemory` (a hashed bag of words) and the sparse vectors it ranks by.

An embedder is any callable from a text to a list of floats (`openhands_memory.llm.LiteLLMEmbedder`
calls a model). The offline default needs no model: it hashes each word into a fixed number of buckets, so two
texts that share rare words point the same way. It is no semantic model: it finds the record that
says what the query says, in its words (a test id, a path, an error), which is what an agent's
memory is mostly asked for.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from openhands_memory.errors import MemoryAdapterError

__all__ = ["Embedder", "HashedBagOfWords", "SparseVector", "sparse"]

Embedder = Callable[[str], Sequence[float]]
"""A function from a text to its vector; vectors of one memory must have one length."""

_WORD = re.compile(r"[a-z0-9_]+(?:[.:/-][a-z0-9_]+)*")
_PARTS = re.compile(r"[.:/_-]+")
# Words too common in English and in shell output to tell records apart.
_STOP_WORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were will with "
    "i you we it's not no do does did can".split()
)


class HashedBagOfWords:
    """Feature hashing of words into `dimensions` buckets, with signs, L2-normalized.

    Words are lowercased runs of letters, digits and `_`, kept whole across `.`, `:`, `/`, `-`
    (`tests/test_x.py::test_y` is one word) and also split at them and at `_` (so `test_y` and
    `y` alone match too).
    Counts are dampened (1 + log n). The hash is CRC-32, the same in every process.
    """

    def __init__(self, dimensions: int = 2048) -> None:
        """Raises: MemoryAdapterError: `dimensions` is not an integer >= 8."""
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 8:
            raise MemoryAdapterError(f"dimensions must be an integer >= 8, not {dimensions!r}")
        self.dimensions = dimensions

    def __call__(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for feature, n in Counter(_features(text)).items():
            code = zlib.crc32(feature.encode("utf-8"))
            sign = 1.0 if code & 0x80000000 else -1.0
            vector[code % self.dimensions] += sign * (1.0 + math.log(n))
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector] if norm else vector

    def __repr__(self) -> str:
        return f"HashedBagOfWords(dimensions={self.dimensions})"


def _features(text: str) -> list[str]:
    words: list[str] = []
    for token in _WORD.findall(text.casefold()):
        parts = [p for p in _PARTS.split(token) if p]
        if len(parts) > 1:
            words.append(token)
        words.extend(p for p in parts if p not in _STOP_WORDS)
    return words


@dataclass(frozen=True, slots=True)
class SparseVector:
    """A vector kept as its non-zero entries and its length: hashed vectors are mostly zeros."""

    entries: dict[int, float]
    """Index to value, for the non-zero values."""
    size: int
    """How many dimensions the vector has (zeros included)."""
    norm: float
    """Its Euclidean length."""

    def dot(self, other: SparseVector) -> float:
        """The dot product of the two vectors (QitOS' score).

        Raises:
            MemoryAdapterError: the vectors differ in length (two embedders mixed in one memory).
        """
        if self.size != other.size:
            raise MemoryAdapterError(
                f"vectors of different lengths ({self.size} and {other.size}): one memory needs one embedder"
            )
        small, large = (self.entries, other.entries) if len(self.entries) <= len(other.entries) else (other.entries, self.entries)
        return sum(value * large.get(index, 0.0) for index, value in small.items())

    def cosine(self, other: SparseVector) -> float:
        """The cosine of the angle between the two vectors (0 when either is zero).

        Raises:
            MemoryAdapterError: the vectors differ in length (two embedders mixed in one memory).
        """
        dot = self.dot(other)
        if not self.norm or not other.norm:
            return 0.0
        return dot / (self.norm * other.norm)


def sparse(vector: Sequence[float]) -> SparseVector:
    """`vector` as a `SparseVector`."""
    entries = {index: float(value) for index, value in enumerate(vector) if value}
    return SparseVector(entries, len(vector), math.sqrt(sum(v * v for v in entries.values())))
