"""`LiteLLMEmbedder`: a text embedder for `VectorMemory` that calls `litellm.embedding` (imported on first use)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openhands_memory.errors import LLMResponseError
from openhands_memory.llm import llm as _llm_module
from openhands_memory.llm._errors import map_exception, unclassified_error
from openhands_memory.llm._litellm import import_litellm
from openhands_memory.llm.llm import ModelRequestsDisallowedError

__all__ = ["EmbeddingFn", "LiteLLMEmbedder"]

EmbeddingFn = Callable[..., Any]
"""Stands in for `litellm.embedding`: takes `model=`, `input=` (a list of texts) and options, returns
litellm's `EmbeddingResponse` or a dict of the same shape (`{"data": [{"embedding": [...]}]}`)."""


class LiteLLMEmbedder:
    """Embeds one text with a model through litellm; one request per call, no retries.

    Options (`api_key`, `api_base`, `dimensions`, ...) are passed to `litellm.embedding`. Provider
    errors arrive as the `LLMError` subclass that fits, as from `LLM.completion`.
    """

    def __init__(self, model: str, *, embedding_fn: EmbeddingFn | None = None, **options: Any) -> None:
        self.model = model
        self.embedding_fn = embedding_fn
        """Called instead of `litellm.embedding` when set (tests, a cache, a local model)."""
        self.options = options

    def __call__(self, text: str) -> list[float]:
        """The vector of `text`.

        Raises:
            LLMError: the provider failed (the most specific subclass; the original is chained).
            ModelRequestsDisallowedError: `ALLOW_MODEL_REQUESTS` is False and no `embedding_fn` is set.
        """
        embed = self.embedding_fn
        if embed is None:
            if not _llm_module.ALLOW_MODEL_REQUESTS:
                raise ModelRequestsDisallowedError(
                    f"a real embedding request to {self.model!r} was blocked: ALLOW_MODEL_REQUESTS is False "
                    "(pass embedding_fn, or use the offline HashedBagOfWords)"
                )
            embed = import_litellm().embedding
        try:
            response = embed(model=self.model, input=[text], **self.options)
        except AssertionError:
            raise  # a test's fake, not the provider
        except Exception as exc:  # every failure of the call is a model error
            mapped = map_exception(exc, model=self.model)
            raise (mapped if mapped is not None else unclassified_error(exc, model=self.model)) from exc
        try:
            data = response["data"] if isinstance(response, dict) else response.data
            first = data[0]
            vector = list(first["embedding"] if isinstance(first, dict) else first.embedding)
        except Exception as exc:  # any shape but the expected one: the answer is unusable
            raise LLMResponseError(
                f"the embedding response has no vector ({type(exc).__name__}: {exc})", model=self.model
            ) from exc
        if not vector or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in vector):
            raise LLMResponseError("the embedding response's vector is not a list of numbers", model=self.model)
        return [float(x) for x in vector]

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder(model={self.model!r})"
