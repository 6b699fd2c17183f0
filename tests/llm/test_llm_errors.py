"""litellm's exceptions reach callers as our `LLMError` tree: every one mapped, the most specific class wins."""

from __future__ import annotations

import re

import httpx
import pytest

from openhands_memory.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMContextWindowExceededError,
    LLMError,
    LLMRateLimitError,
    LLMResponseError,
    LLMServiceUnavailableError,
    LLMTimeoutError,
    LLMUnclassifiedError,
    OpenHandsMemoryError,
)
from openhands_memory.llm._errors import map_exception
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import LLM
from openhands_memory.testing.fake_llm import FakeLLM, litellm_error, litellm_exception_classes

USER_HI = [{"role": "user", "content": "hi"}]


def test_litellm_all_exceptions_mapped() -> None:
    """Every exception class litellm.exceptions has maps to a specific LLMError subclass (httpx's
    test_httpcore_all_exceptions_mapped): a new class in a litellm upgrade fails here, not in production."""
    classes = litellm_exception_classes()
    assert len(classes) >= 25  # the enumeration found litellm's classes, not nothing
    unmapped = []
    for name, cls in sorted(classes.items()):
        mapped = map_exception(litellm_error(cls), model="m")
        if mapped is None or type(mapped) is LLMError:
            unmapped.append(name)
    assert unmapped == []


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("ContextWindowExceededError", LLMContextWindowExceededError),
        ("Timeout", LLMTimeoutError),
        ("RateLimitError", LLMRateLimitError),
        ("AuthenticationError", LLMAuthenticationError),
        ("PermissionDeniedError", LLMAuthenticationError),
        ("BadRequestError", LLMBadRequestError),
        ("ContentPolicyViolationError", LLMBadRequestError),
        ("UnsupportedParamsError", LLMBadRequestError),
        ("NotFoundError", LLMBadRequestError),
        ("ServiceUnavailableError", LLMServiceUnavailableError),
        ("InternalServerError", LLMServiceUnavailableError),
        ("BadGatewayError", LLMServiceUnavailableError),
        ("MidStreamFallbackError", LLMServiceUnavailableError),
        ("APIConnectionError", LLMConnectionError),
        ("APIResponseValidationError", LLMResponseError),
        ("JSONSchemaValidationError", LLMResponseError),
    ],
)
def test_the_most_specific_class_wins(kind: str, expected: type[LLMError]) -> None:
    mapped = map_exception(litellm_error(kind), model="gpt-4o-mini")
    assert type(mapped) is expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, LLMAuthenticationError),
        (408, LLMTimeoutError),
        (429, LLMRateLimitError),
        (400, LLMBadRequestError),
        (500, LLMServiceUnavailableError),
        (529, LLMServiceUnavailableError),
    ],
)
def test_errors_litellm_does_not_classify_are_classified_by_status(status: int, expected: type[LLMError]) -> None:
    for kind in ("APIError", "MockException"):
        mapped = map_exception(litellm_error(kind, status_code=status), model="m")
        assert type(mapped) is expected, kind
        assert mapped.status_code == status


@pytest.mark.parametrize(
    "message",
    [
        "prompt is too long: 210000 tokens > 200000 maximum",
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        "input length and `max_tokens` exceed context limit",
    ],
)
def test_a_bad_request_about_the_prompt_length_is_a_context_window_error(message: str) -> None:
    mapped = map_exception(litellm_error("BadRequestError", message), model="m")
    assert type(mapped) is LLMContextWindowExceededError
    assert type(map_exception(litellm_error("RateLimitError", message), model="m")) is LLMRateLimitError


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("InternalServerError", "OpenAIException - Missing credentials. Please pass an `api_key`, or set the `OPENAI_API_KEY` environment variable."),
        ("APIConnectionError", "The api_key client option must be set either by passing api_key to the client or by setting the OPENAI_API_KEY environment variable"),
        ("APIError", "AuthenticationError: invalid x-api-key"),
        ("BadRequestError", "API key not valid. Please pass a valid API key."),
        ("ServiceUnavailableError", "401 Unauthorized"),
    ],
)  # fmt: skip
def test_a_key_problem_behind_a_generic_class_is_an_authentication_error(kind: str, message: str) -> None:
    mapped = map_exception(litellm_error(kind, message), model="gpt-4o-mini")
    assert type(mapped) is LLMAuthenticationError and not mapped.retryable
    assert message in str(mapped)


def test_only_generic_classes_are_read_for_key_problems() -> None:
    assert type(map_exception(litellm_error("InternalServerError", "upstream overloaded"), model="m")) is LLMServiceUnavailableError
    # A rate limit or a timeout that mentions the key is still what its class says.
    assert type(map_exception(litellm_error("RateLimitError", "API key quota: 3 RPM"), model="m")) is LLMRateLimitError
    assert type(map_exception(litellm_error("Timeout", "api_key check timed out"), model="m")) is LLMTimeoutError


def test_http_client_errors_are_mapped_too() -> None:
    request = httpx.Request("POST", "https://example.invalid")
    assert type(map_exception(httpx.ConnectTimeout("slow", request=request), model="m")) is LLMTimeoutError
    assert type(map_exception(httpx.ConnectError("refused", request=request), model="m")) is LLMConnectionError


def test_errors_from_other_code_are_not_translated() -> None:
    assert map_exception(ValueError("a bug"), model="m") is None
    assert map_exception(KeyError("x"), model="m") is None


def test_retryable_kinds() -> None:
    retried = [LLMRateLimitError, LLMTimeoutError, LLMConnectionError, LLMServiceUnavailableError, LLMResponseError]
    final = [LLMError, LLMAuthenticationError, LLMBadRequestError, LLMContextWindowExceededError, LLMUnclassifiedError]
    assert all(cls.retryable for cls in retried)
    assert not any(cls.retryable for cls in final)


def test_error_keeps_its_facts_and_names_the_model() -> None:
    original = litellm_error("RateLimitError", "too many tokens per minute")
    error = map_exception(original, model="gpt-4o-mini", attempts=4)
    assert isinstance(error, OpenHandsMemoryError)
    assert (error.model, error.status_code, error.attempts) == ("gpt-4o-mini", 429, 4)
    assert re.fullmatch(r"gpt-4o-mini: .*too many tokens per minute \(gave up after 4 attempts\)", str(error))
    assert error.exit_code == 1


def test_completion_raises_our_error_from_litellms() -> None:
    original = litellm_error("AuthenticationError", "invalid x-api-key")
    llm = LLM(LLMConfig(model="claude-sonnet-4-20250514"), completion_fn=FakeLLM([original]))

    with pytest.raises(LLMAuthenticationError, match=re.escape("claude-sonnet-4-20250514: ")) as caught:
        llm.completion(USER_HI)

    assert caught.value.__cause__ is original
    assert "invalid x-api-key" in str(caught.value)


@pytest.mark.parametrize(
    ("raised", "message"),
    [
        (KeyError("choices"), "m: the model call failed with KeyError: 'choices'"),  # a malformed answer
        (RuntimeError("stream closed by peer"), "m: the model call failed with RuntimeError: stream closed by peer"),
        (RuntimeError(), "m: the model call failed with RuntimeError"),
    ],
)
def test_an_unclassified_failure_of_the_completion_function_is_a_model_error_not_retried(
    raised: Exception, message: str
) -> None:
    calls = []

    def failing(**kwargs: object) -> dict[str, object]:
        calls.append(kwargs)
        raise raised

    llm = LLM(LLMConfig(model="m", num_retries=3), completion_fn=failing, sleep=lambda seconds: None)
    with pytest.raises(LLMUnclassifiedError, match=f"^{re.escape(message)}$") as caught:
        llm.completion(USER_HI)
    assert caught.value.__cause__ is raised
    assert len(calls) == 1  # not retried: nothing says an identical call would fare better


def test_an_assertion_of_a_test_fake_is_not_taken_for_a_model_failure() -> None:
    llm = LLM(LLMConfig(model="m", num_retries=3), completion_fn=FakeLLM([]), sleep=lambda seconds: None)
    with pytest.raises(AssertionError):
        llm.completion(USER_HI)


def test_llm_errors_raised_by_a_completion_function_pass_through_with_attempts() -> None:
    fake = FakeLLM([LLMConnectionError("proxy down", model="m")] * 3)
    llm = LLM(LLMConfig(model="m", num_retries=2), completion_fn=fake, sleep=lambda seconds: None)
    with pytest.raises(LLMConnectionError, match=re.escape("m: proxy down (gave up after 3 attempts)")):
        llm.completion(USER_HI)
