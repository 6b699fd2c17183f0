"""`FakeLLM` scripts replies for `LLM`, and `LLM` rejects replies it cannot use."""

from __future__ import annotations

import re

import pytest

from openhands_memory.errors import LLMRateLimitError, LLMResponseError
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import LLM, ModelRequestsDisallowedError
from openhands_memory.llm.message import Message, TextContent
from openhands_memory.testing.fake_llm import (
    FakeLLM,
    FakeReply,
    FakeToolCall,
    litellm_error,
    override_allow_model_requests,
)

USER_HI = [{"role": "user", "content": "hi"}]


def no_sleep(seconds: float) -> None:
    pass


def quick(fake: FakeLLM, **config: object) -> LLM:
    settings = LLMConfig.model_validate({"model": "fake-model", "retry_min_wait": 0, **config})
    return LLM(settings, completion_fn=fake, sleep=no_sleep)


def test_replies_come_in_script_order_and_calls_are_recorded() -> None:
    fake = FakeLLM(["one", FakeReply.tool_call("think", {"thought": "hm"}, id="t1"), FakeReply(text="three")])
    llm = quick(fake)
    messages = [Message(role="user", content=(TextContent(text="hi"),))]

    tools = [{"type": "function", "function": {"name": "think"}}]
    replies = [llm.completion(messages, tools=tools) for _ in range(3)]

    assert [r.text for r in replies] == ["one", "", "three"]
    assert replies[1].tool_calls[0].id == "t1"
    assert replies[1].tool_calls[0].function.arguments == '{"thought": "hm"}'
    assert replies[1].finish_reason == "tool_calls"
    assert [r.id for r in replies] == ["fake-response-1", "fake-response-2", "fake-response-3"]
    assert len(fake.calls) == 3 and fake.remaining == 0
    assert fake.last_call.messages == [{"role": "user", "content": "hi"}]  # an unknown model gets string content
    assert fake.last_call.tools == tools
    assert fake.last_call.kwargs["model"] == "fake-model"


def test_an_exhausted_script_fails_the_test_loudly_unless_a_default_answers() -> None:
    fake = FakeLLM(["only"])
    llm = quick(fake)
    llm.completion(USER_HI)
    with pytest.raises(AssertionError, match=re.escape("no reply scripted for call #2")):
        llm.completion(USER_HI)

    fake.default = "again"
    assert [quick(fake).completion(USER_HI).text for _ in range(2)] == ["again", "again"]


def test_scripted_errors_and_chaining_helpers() -> None:
    fake = FakeLLM().add_error(litellm_error("RateLimitError")).add_text("ok").add_tool_call("finish", text="done")
    llm = quick(fake, num_retries=0)
    with pytest.raises(LLMRateLimitError):
        llm.completion(USER_HI)
    assert llm.completion(USER_HI).text == "ok"
    finish = llm.completion(USER_HI)
    call = finish.tool_calls[0]
    assert (finish.text, call.function.name, call.function.arguments) == ("done", "finish", "{}")


def test_usage_is_scripted_or_estimated() -> None:
    fake = FakeLLM([FakeReply(text="x", prompt_tokens=123, completion_tokens=7, cache_read_tokens=100), "y" * 40])
    llm = quick(fake)
    first, second = llm.completion(USER_HI), llm.completion(USER_HI)
    assert (first.usage.prompt_tokens, first.usage.completion_tokens, first.usage.cache_read_tokens) == (123, 7, 100)
    assert second.usage.completion_tokens == 10 and second.usage.prompt_tokens > 0


def test_the_fake_builds_its_own_llm() -> None:
    fake = FakeLLM(["hello"], model="gpt-4o-mini")
    llm = fake.llm(sleep=no_sleep)
    response = llm.completion(USER_HI)
    assert response.text == "hello" and response.is_cost_known  # a real model name is priced


def test_a_fake_satisfies_the_model_request_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # past the key check, to the guard
    with override_allow_model_requests(False):
        assert quick(FakeLLM(["fine"])).completion(USER_HI).text == "fine"
        with pytest.raises(ModelRequestsDisallowedError):
            LLM(LLMConfig(model="gpt-4o-mini")).completion(USER_HI)


def test_litellm_model_responses_from_a_completion_function_are_read_too() -> None:
    from openhands_memory.llm._litellm import import_litellm

    litellm = import_litellm()

    def completion(**kwargs: object) -> object:
        return litellm.ModelResponse(
            id="r-9",
            model="gpt-4o-mini",
            choices=[
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "from a ModelResponse"}}
            ],
            usage={"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        )

    response = LLM(LLMConfig(model="gpt-4o-mini"), completion_fn=completion).completion(USER_HI)
    assert (response.id, response.text, response.usage.prompt_tokens) == ("r-9", "from a ModelResponse", 5)
    assert response.is_cost_known


# ------------------------------------------------------------------ replies nobody can use


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ({"id": "r", "model": "m", "choices": [], "usage": {}}, "the response has no choices"),
        ({"id": "r", "model": "m", "choices": [{"index": 0}]}, "the response's first choice has no message"),
        (FakeReply(text="   "), "the reply has no text and no tool call (finish_reason='stop')"),
        (FakeReply(text=None), "the reply has no text and no tool call"),
        (
            FakeReply(tool_calls=(FakeToolCall("run", '{"command": "ls"', id="c1"),)),
            "tool call 'c1' (run): arguments are not valid JSON",
        ),
        (
            FakeReply(tool_calls=(FakeToolCall("run", "[1, 2]", id="c2"),)),
            "tool call 'c2' (run): arguments are JSON list, not an object",
        ),
        (FakeReply(tool_calls=(FakeToolCall("", "{}", id="c3"),)), "tool call 'c3' has no function name"),
    ],
)
def test_unusable_replies_raise_a_clear_response_error(reply: object, message: str) -> None:
    fake = FakeLLM([reply])
    with pytest.raises(LLMResponseError, match=re.escape(f"fake-model: {message}")):
        quick(fake, num_retries=0).completion(USER_HI)


def test_unusable_replies_are_retried_a_bounded_number_of_times() -> None:
    fake = FakeLLM(default=FakeReply(text=""))
    waits: list[float] = []
    llm = LLM(LLMConfig(model="fake-model", num_retries=2), completion_fn=fake, sleep=waits.append)
    with pytest.raises(LLMResponseError, match=re.escape("(gave up after 3 attempts)")):
        llm.completion(USER_HI)
    assert len(fake.calls) == 3 and waits == [8.0, 16.0]


def test_a_flaky_empty_reply_is_retried_until_a_good_one() -> None:
    fake = FakeLLM([FakeReply(text=""), "good"])
    assert quick(fake).completion(USER_HI).attempts == 2


def test_require_text_rejects_a_reply_with_only_tool_calls() -> None:
    fake = FakeLLM([FakeReply.tool_call("think"), FakeReply.tool_call("think")])
    assert quick(fake).completion(USER_HI).tool_calls
    with pytest.raises(LLMResponseError, match=re.escape("the reply has no text, only 1 tool call(s)")):
        quick(fake, num_retries=0).completion(USER_HI, require_text=True)


def test_empty_tool_arguments_mean_no_arguments() -> None:
    fake = FakeLLM([FakeReply(tool_calls=(FakeToolCall("finish", "", id="c"),))])
    assert quick(fake).completion(USER_HI).tool_calls[0].function.arguments == "{}"


def test_litellm_error_builds_every_litellm_exception() -> None:
    from openhands_memory.testing.fake_llm import litellm_exception_classes

    for name, cls in litellm_exception_classes().items():
        error = litellm_error(cls, "boom")
        assert isinstance(error, cls), name
    assert litellm_error("RateLimitError").status_code == 429
    assert litellm_error("PermissionDeniedError").status_code == 403
