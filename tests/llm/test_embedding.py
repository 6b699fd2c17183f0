"""`LiteLLMEmbedder`: litellm's embedding call, faked; errors mapped; real requests blocked under test."""

from __future__ import annotations

from typing import Any

import pytest

from openhands_memory.errors import LLMRateLimitError
from openhands_memory.llm import LiteLLMEmbedder, ModelRequestsDisallowedError
from openhands_memory.memory import VectorMemory
from openhands_memory.testing.fake_llm import litellm_error
from openhands_memory.testing.sessions import SessionBuilder


def test_the_vector_comes_from_the_response_and_options_are_passed() -> None:
    calls: list[dict[str, Any]] = []

    def fake_embedding(**kwargs: Any) -> dict[str, Any]:
        calls.append(kwargs)
        return {"data": [{"embedding": [1.0, float(len(kwargs["input"][0]))]}]}

    embed = LiteLLMEmbedder("text-embedding-3-small", embedding_fn=fake_embedding, dimensions=2)

    assert embed("four") == [1.0, 4.0]
    assert calls == [{"model": "text-embedding-3-small", "input": ["four"], "dimensions": 2}]


def test_it_plugs_into_vector_memory() -> None:
    s = SessionBuilder()
    s.user("short")
    s.user("a much longer message")
    embed = LiteLLMEmbedder("m", embedding_fn=lambda **kw: {"data": [{"embedding": [1.0, len(kw["input"][0]) / 10]}]})

    memory = VectorMemory.from_events(s.events, embedder=embed, top_k=1)

    assert memory.retrieve({"text": "x" * 21})[0].content == "a much longer message"


def test_provider_errors_become_llm_errors() -> None:
    def failing(**kwargs: Any) -> Any:
        raise litellm_error("RateLimitError", model="m")

    with pytest.raises(LLMRateLimitError):
        LiteLLMEmbedder("m", embedding_fn=failing)("text")


def test_real_requests_are_blocked_under_test() -> None:
    with pytest.raises(ModelRequestsDisallowedError, match="a real embedding request to 'm' was blocked"):
        LiteLLMEmbedder("m")("text")
