"""`LiteLLMEmbedder`: litellm's embedding call, faked; errors mapped; real requests blocked under test."""

from __future__ import annotations

import re
from typing import Any

import pytest

from openhands_memory.errors import LLMRateLimitError, LLMResponseError, LLMUnclassifiedError
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


def test_an_unclassified_failure_is_a_model_error_with_its_cause() -> None:
    raised = RuntimeError("the transport closed the stream")

    def failing(**kwargs: Any) -> Any:
        raise raised

    with pytest.raises(LLMUnclassifiedError, match=re.escape("m: the model call failed with RuntimeError: the transport")) as caught:
        LiteLLMEmbedder("m", embedding_fn=failing)("text")
    assert caught.value.__cause__ is raised


@pytest.mark.parametrize(
    "response",
    [{}, {"data": []}, {"data": [{"vector": [1.0]}]}, {"data": [{"embedding": ["a", "b"]}]}, {"data": [{"embedding": []}]}, None, 3],
)
def test_an_answer_of_another_shape_is_an_unusable_answer(response: Any) -> None:
    with pytest.raises(LLMResponseError, match=re.escape("m: the embedding response")):
        LiteLLMEmbedder("m", embedding_fn=lambda **kwargs: response)("text")


def test_real_requests_are_blocked_under_test() -> None:
    with pytest.raises(ModelRequestsDisallowedError, match="a real embedding request to 'm' was blocked"):
        LiteLLMEmbedder("m")("text")
