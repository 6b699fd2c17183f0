"""`LLM`: completion through litellm's mock, retries, usage and cost, token counting, context window, config."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import textwrap

import pytest
from _openhands_interpreter import OPENHANDS_PYTHON, require_openhands
from conftest import HANG_GUARD_SECONDS
from pydantic import ValidationError

from openhands_memory.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMContextWindowExceededError,
    LLMRateLimitError,
    LLMServiceUnavailableError,
    LLMTimeoutError,
)
from openhands_memory.events import CondensationAction, event_from_dict, event_to_dict
from openhands_memory.llm._litellm import import_litellm
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import DEFAULT_CONTEXT_WINDOW, LLM, InvalidToolCall, ModelRequestsDisallowedError
from openhands_memory.llm.message import Message, TextContent, ToolCall, ToolCallFunction
from openhands_memory.llm.metrics import LLMMetrics
from openhands_memory.testing.fake_llm import FakeLLM, FakeReply, FakeToolCall, litellm_error, override_allow_model_requests

USER_HI = [{"role": "user", "content": "hi"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "execute_bash",
            "description": "Run a shell command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        },
    }
]


class Waits(list[float]):
    """Records the waits `LLM` asks for instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def quick_retries(**overrides: object) -> LLMConfig:
    values: dict[str, object] = {
        "model": "gpt-4o-mini",
        "num_retries": 3,
        "retry_min_wait": 1.0,
        "retry_max_wait": 4.0,
        "retry_multiplier": 1.0,
    }
    values.update(overrides)
    return LLMConfig.model_validate(values)


def litellm():  # type: ignore[no-untyped-def]
    return import_litellm()


# ---------------------------------------------------------------- completion through litellm's mock


def test_completion_with_litellm_mock_response_reads_text_usage_and_cost() -> None:
    llm = LLM(LLMConfig(model="gpt-4o-mini", mock_response="hello there"))

    response = llm.completion(USER_HI)

    assert response.text == "hello there"
    assert response.tool_calls == ()
    assert response.finish_reason == "stop"
    assert response.id.startswith("chatcmpl")
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (10, 20)  # litellm's mock usage
    prompt_cost, completion_cost = litellm().cost_per_token(model="gpt-4o-mini", prompt_tokens=10, completion_tokens=20)
    assert response.cost == pytest.approx(prompt_cost + completion_cost)
    assert response.is_cost_known
    assert response.latency >= 0
    assert response.attempts == 1
    assert response.raw["choices"][0]["message"]["content"] == "hello there"
    assert llm.metrics.accumulated_cost == pytest.approx(response.cost)
    assert [usage.response_id for usage in llm.metrics.token_usages] == [response.id]


def test_completion_with_litellm_mock_tool_calls_reads_the_calls() -> None:
    llm = LLM(LLMConfig(model="gpt-4o-mini", mock_response=""))
    mock_calls = [{"id": "call_7", "type": "function", "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'}}]

    response = llm.completion(USER_HI, tools=TOOLS, mock_tool_calls=mock_calls)

    assert response.tool_calls == (
        ToolCall(id="call_7", function=ToolCallFunction(name="execute_bash", arguments='{"command": "ls"}')),
    )
    assert response.message == Message(role="assistant", tool_calls=response.tool_calls)


def test_per_call_mock_response_runs_even_when_model_requests_are_disallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # past the key check, to the guard
    llm = LLM(LLMConfig(model="gpt-4o-mini"))
    with override_allow_model_requests(False):
        assert llm.completion(USER_HI, mock_response="offline").text == "offline"
        with pytest.raises(ModelRequestsDisallowedError, match=re.escape("'gpt-4o-mini' was blocked")):
            llm.completion(USER_HI)


def test_call_arguments_come_from_the_config_and_call_kwargs_win() -> None:
    fake = FakeLLM(default="ok")
    config = LLMConfig(
        model="gpt-4o-mini",
        api_key="sk-secret",
        base_url="http://localhost:4000",
        temperature=0.3,
        max_output_tokens=512,
        timeout=12.5,
        completion_kwargs={"seed": 7, "reasoning_effort": "low"},
    )
    llm = LLM(config, completion_fn=fake)

    llm.completion(USER_HI, tools=TOOLS, tool_choice="auto", seed=8)

    kwargs = fake.last_call.kwargs
    assert kwargs["api_key"] == "sk-secret" and kwargs["base_url"] == "http://localhost:4000"
    assert (kwargs["temperature"], kwargs["max_tokens"], kwargs["timeout"]) == (0.3, 512, 12.5)
    assert (kwargs["seed"], kwargs["reasoning_effort"]) == (8, "low")
    assert kwargs["num_retries"] == 0  # we retry; litellm must not retry too
    assert "top_p" not in kwargs and "mock_response" not in kwargs
    assert fake.last_call.tools == TOOLS and fake.last_call.tool_choice == "auto"
    assert "sk-secret" not in repr(config)


def test_message_objects_are_sent_as_litellm_dicts() -> None:
    messages = [
        Message(role="system", content=(TextContent(text="be brief"),)),
        Message(role="user", content=(TextContent(text="hi"),)),
    ]
    fake = FakeLLM(default="ok")

    # gpt-4o-mini supports tools and vision: content goes as a list of parts (OpenHands' rule).
    LLM(LLMConfig(model="gpt-4o-mini"), completion_fn=fake).completion(messages)
    assert fake.last_call.messages[1] == {"role": "user", "content": [{"type": "text", "text": "hi"}]}

    # A model litellm knows nothing about gets plain string content.
    LLM(LLMConfig(model="openai/my-local-model"), completion_fn=fake).completion(messages)
    assert fake.last_call.messages == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


# ---------------------------------------------------------------- retries


def test_tool_calls_that_cannot_run_are_returned_apart_when_asked_and_not_retried() -> None:
    calls = (
        FakeToolCall("run", {"command": "ls"}, id="c1"),
        FakeToolCall("run", '{"command": ', id="c2"),
        FakeToolCall("run", {"command": "pwd"}, id="c1"),
        FakeToolCall("", "{}", id="c3"),
    )
    fake = FakeLLM([FakeReply(text="Three calls.", tool_calls=calls)])
    llm = fake.llm(quick_retries(num_retries=3), sleep=lambda seconds: None)
    reply = llm.completion(USER_HI, keep_invalid_tool_calls=True)
    assert len(fake.calls) == 1
    assert [(c.id, c.function.arguments) for c in reply.tool_calls] == [("c1", '{"command": "ls"}')]
    assert reply.invalid_tool_calls == (
        InvalidToolCall(
            1, "c2", "run", '{"command": ',
            "tool call 'c2' (run): arguments are not valid JSON: Expecting value: line 1 column 13 (char 12): '{\"command\": '",
        ),
        InvalidToolCall(2, "c1", "run", '{"command": "pwd"}', "tool call #2 (run) repeats the id 'c1' of an earlier call"),
        InvalidToolCall(3, "c3", "", "{}", "tool call 'c3' has no function name"),
    )  # fmt: skip
    assert reply.message.tool_calls == reply.tool_calls  # what the conversation gets back: the calls that ran


def test_rate_limit_twice_then_success_makes_three_calls_with_growing_waits() -> None:
    fake = FakeLLM([litellm_error("RateLimitError"), litellm_error("RateLimitError"), "finally"])
    waits = Waits()
    llm = LLM(quick_retries(), completion_fn=fake, sleep=waits)

    response = llm.completion(USER_HI)

    assert response.text == "finally"
    assert response.attempts == 3
    assert len(fake.calls) == 3
    assert waits == [1.0, 2.0]
    assert len(llm.metrics.token_usages) == 1  # failed attempts cost nothing and are not recorded


def test_default_waits_are_openhands_exponential_backoff() -> None:
    config = LLMConfig(model="m")
    assert [config.retry_wait(n) for n in range(1, 7)] == [8.0, 16.0, 32.0, 64.0, 64.0, 64.0]
    assert LLMConfig(model="m", retry_min_wait=20).retry_wait(1) == 20.0
    assert config.retry_wait(10_000) == 64.0


def test_gives_up_after_num_retries_with_the_last_error_chained() -> None:
    errors = [litellm_error("RateLimitError", f"slow down {n}") for n in range(10)]
    fake = FakeLLM(errors)
    waits = Waits()
    llm = LLM(quick_retries(num_retries=5), completion_fn=fake, sleep=waits)

    with pytest.raises(LLMRateLimitError, match=re.escape("(gave up after 6 attempts)")) as caught:
        llm.completion(USER_HI)

    assert len(fake.calls) == 6
    assert waits == [1.0, 2.0, 4.0, 4.0, 4.0]  # bounded by retry_max_wait
    assert caught.value.attempts == 6
    assert caught.value.__cause__ is errors[5]
    assert llm.metrics.token_usages == []


def test_num_retries_zero_makes_one_call() -> None:
    fake = FakeLLM([litellm_error("ServiceUnavailableError")])
    with pytest.raises(LLMServiceUnavailableError):
        LLM(quick_retries(num_retries=0), completion_fn=fake, sleep=Waits()).completion(USER_HI)
    assert len(fake.calls) == 1


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("BadRequestError", LLMBadRequestError),
        ("AuthenticationError", LLMAuthenticationError),
        ("NotFoundError", LLMBadRequestError),
        ("ContextWindowExceededError", LLMContextWindowExceededError),
    ],
)
def test_errors_that_retrying_cannot_fix_are_raised_at_once(kind: str, expected: type[Exception]) -> None:
    fake = FakeLLM([litellm_error(kind), "never reached"])
    waits = Waits()
    with pytest.raises(expected):
        LLM(quick_retries(), completion_fn=fake, sleep=waits).completion(USER_HI)
    assert len(fake.calls) == 1 and waits == []


def test_timeout_from_litellm_is_an_llm_timeout_and_is_retried() -> None:
    waits = Waits()
    llm = LLM(quick_retries(num_retries=1, timeout=0.01, mock_response="never"), sleep=waits)

    with pytest.raises(LLMTimeoutError, match=r"gpt-4o-mini: .*[Tt]imeout") as caught:
        llm.completion(USER_HI, mock_timeout=True)

    assert type(caught.value.__cause__).__name__ == "Timeout"
    assert caught.value.attempts == 2 and waits == [1.0]


def test_context_window_exceeded_from_litellm_is_specific_and_not_retried() -> None:
    waits = Waits()
    llm = LLM(quick_retries(mock_response="litellm.ContextWindowExceededError"), sleep=waits)

    with pytest.raises(LLMContextWindowExceededError) as caught:
        llm.completion(USER_HI)

    assert isinstance(caught.value, LLMBadRequestError)
    assert caught.value.attempts == 1 and waits == []


def test_rate_limit_from_litellm_mock_is_retried_then_raised() -> None:
    waits = Waits()
    llm = LLM(quick_retries(num_retries=2, mock_response="litellm.RateLimitError"), sleep=waits)
    with pytest.raises(LLMRateLimitError, match=re.escape("gave up after 3 attempts")):
        llm.completion(USER_HI)
    assert waits == [1.0, 2.0]


# ---------------------------------------------------------------- usage and cost


def test_cost_of_a_known_model_comes_from_litellms_cost_map_cached_tokens_included() -> None:
    fake = FakeLLM(
        [
            FakeReply(text="a", prompt_tokens=1000, completion_tokens=100),
            FakeReply(text="b", prompt_tokens=1000, completion_tokens=100, cache_read_tokens=400),
        ]
    )
    llm = LLM(LLMConfig(model="gpt-4o-mini"), completion_fn=fake)

    plain = llm.completion(USER_HI)
    cached = llm.completion(USER_HI)

    prompt_cost, completion_cost = litellm().cost_per_token(model="gpt-4o-mini", prompt_tokens=1000, completion_tokens=100)
    assert plain.cost == pytest.approx(prompt_cost + completion_cost)
    assert plain.is_cost_known
    assert cached.usage.cache_read_tokens == 400
    assert 0 < cached.cost < plain.cost  # cache hits are billed cheaper
    assert llm.metrics.accumulated_cost == pytest.approx(plain.cost + cached.cost)
    assert llm.metrics.accumulated_token_usage.prompt_tokens == 2000
    assert llm.metrics.accumulated_token_usage.cache_read_tokens == 400


def test_cost_of_an_unknown_model_is_zero_and_flagged_never_an_error() -> None:
    fake = FakeLLM([FakeReply(text="a", prompt_tokens=1000, completion_tokens=100)])
    llm = LLM(LLMConfig(model="openai/my-local-model"), completion_fn=fake)

    response = llm.completion(USER_HI)

    assert response.cost == 0.0
    assert not response.is_cost_known
    assert llm.metrics.costs == [] and llm.metrics.accumulated_cost == 0.0
    assert llm.metrics.token_usages[0].prompt_tokens == 1000  # usage is still recorded


def test_config_prices_override_the_cost_map() -> None:
    fake = FakeLLM([FakeReply(text="a", prompt_tokens=1000, completion_tokens=100)])
    config = LLMConfig(model="openai/my-local-model", input_cost_per_token=1e-6, output_cost_per_token=2e-6)

    response = LLM(config, completion_fn=fake).completion(USER_HI)

    assert response.cost == pytest.approx(1000 * 1e-6 + 100 * 2e-6)
    assert response.is_cost_known


def test_latency_is_measured_on_the_successful_attempt() -> None:
    now = [100.0]

    def clock() -> float:
        return now[0]

    def advance(seconds: float) -> None:
        now[0] += seconds

    fake = FakeLLM([FakeReply(error=litellm_error("Timeout"), delay=5.0), FakeReply(text="ok", delay=0.25)], sleep=advance)
    llm = LLM(quick_retries(), completion_fn=fake, sleep=advance, clock=clock)

    response = llm.completion(USER_HI)

    assert response.latency == pytest.approx(0.25)
    assert [r.latency for r in llm.metrics.response_latencies] == [pytest.approx(0.25)]


def test_metrics_diff_attributes_usage_to_one_piece_of_work() -> None:
    fake = FakeLLM(default=FakeReply(text="x", prompt_tokens=100, completion_tokens=10))
    llm = LLM(LLMConfig(model="gpt-4o-mini"), completion_fn=fake)
    llm.completion(USER_HI)
    before = llm.metrics.snapshot()

    llm.completion(USER_HI)
    llm.completion(USER_HI)
    work = llm.metrics.diff(before)

    assert len(work.token_usages) == 2 and len(work.costs) == 2 and len(work.response_latencies) == 2
    assert work.accumulated_token_usage.prompt_tokens == 200
    assert work.accumulated_cost == pytest.approx(sum(c.cost for c in work.costs))
    assert len(before.token_usages) == 1  # the snapshot did not move
    with pytest.raises(ValueError, match="not an earlier snapshot"):
        before.diff(llm.metrics)


def test_metrics_load_as_a_condensation_actions_llm_metrics_and_round_trip() -> None:
    fake = FakeLLM(default=FakeReply(text="summary", prompt_tokens=1200, completion_tokens=80, cache_read_tokens=200))
    llm = LLM(LLMConfig(model="gpt-4o-mini"), completion_fn=fake)
    llm.completion(USER_HI)
    metrics = llm.metrics.to_dict()

    assert list(metrics) == ["accumulated_cost", "max_budget_per_task", "accumulated_token_usage", "costs", "response_latencies", "token_usages"]  # fmt: skip
    assert list(metrics["token_usages"][0]) == [
        "model", "prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens",
        "context_window", "per_turn_token", "response_id",
    ]  # fmt: skip
    action = CondensationAction(id=9, forgotten_event_ids=[2, 3], summary="s", summary_offset=1, llm_metrics=metrics)
    data = json.loads(json.dumps(event_to_dict(action)))

    loaded = event_from_dict(data)

    assert loaded == action
    assert event_to_dict(loaded) == data
    assert LLMMetrics.from_dict(loaded.llm_metrics).to_dict() == metrics


_OPENHANDS_LOAD = """
import json, sys
from openhands.events.serialization import event_from_dict
event = event_from_dict(json.load(sys.stdin))
print(json.dumps({"kind": type(event).__name__, "metrics": event.llm_metrics.get()}))
"""


@pytest.mark.slow
def test_openhands_loads_our_metrics() -> None:
    require_openhands()
    fake = FakeLLM(default=FakeReply(text="summary", prompt_tokens=1200, completion_tokens=80))
    llm = LLM(LLMConfig(model="gpt-4o-mini"), completion_fn=fake)
    llm.completion(USER_HI)
    llm.completion(USER_HI)
    metrics = llm.metrics.to_dict()
    action = CondensationAction(id=9, forgotten_events_start_id=2, forgotten_events_end_id=5, llm_metrics=metrics)

    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run(
        [str(OPENHANDS_PYTHON), "-c", _OPENHANDS_LOAD],
        input=json.dumps(event_to_dict(action)), capture_output=True, text=True, env=env, timeout=HANG_GUARD_SECONDS,
    )  # fmt: skip

    assert out.returncode == 0, out.stderr[-2000:]
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded["kind"] == "CondensationAction"
    assert loaded["metrics"] == metrics


# ---------------------------------------------------------------- token counting


def _chat() -> list[Message]:
    return [
        Message(role="system", content=(TextContent(text="You are a careful engineer. " * 40),)),
        Message(role="user", content=(TextContent(text="Fix the failing test in tests/test_x.py"),)),
        Message(
            role="assistant",
            content=(TextContent(text="Let me look."),),
            tool_calls=(ToolCall(id="c1", function=ToolCallFunction(name="execute_bash", arguments='{"command": "pytest -x"}')),),
        ),
        Message(role="tool", tool_call_id="c1", name="execute_bash", content=(TextContent(text="1 failed, 3 passed\n" * 30),)),
    ]


@pytest.mark.parametrize("with_tools", [False, True])
def test_count_tokens_matches_litellms_counter_for_the_whole_chat(with_tools: bool) -> None:
    llm = LLM(LLMConfig(model="gpt-4o-mini"))
    chat = _chat()
    tools = TOOLS if with_tools else None

    expected = litellm().token_counter(model="gpt-4o-mini", messages=llm.format_messages(chat), tools=tools)
    counted = llm.count_tokens_detailed(chat, tools=tools)

    assert counted.tokens == expected
    assert not counted.is_estimate
    # dicts count the same as the messages they come from
    assert llm.count_tokens(llm.format_messages(chat), tools=tools) == expected


def test_encode_gives_litellms_token_ids_for_the_model_offline() -> None:
    llm = LLM(LLMConfig(model="gpt-4o"))
    text = "def main():\n    return 42"
    assert llm.encode(text) == list(import_litellm().encode(model="gpt-4o", text=text))
    assert llm.encode("") == []


@pytest.mark.parametrize("model", ["openai/my-local-model", "gpt-4o-mini"])  # counted by litellm; by tiktoken directly
def test_count_tokens_counts_each_message_once(model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from openhands_memory.llm._openai_tokens import OpenAITokens

    lib = litellm()
    llm = LLM(LLMConfig(model=model))
    chat = _chat()
    first = llm.count_tokens(chat)
    calls: list[int] = []
    owner, name = (OpenAITokens, "count_message") if llm._tokens_without_litellm() is not None else (lib, "token_counter")
    real = getattr(owner, name)

    def counting(*args: object, **kwargs: object) -> int:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)

    assert llm.count_tokens(chat) == first
    assert calls == []
    grown = [*chat, Message(role="user", content=(TextContent(text="and now?"),))]
    assert llm.count_tokens(grown) > first
    assert len(calls) == 1  # only the new message


def test_count_tokens_falls_back_to_an_estimate_when_litellm_cannot_count(monkeypatch: pytest.MonkeyPatch) -> None:
    lib = litellm()

    def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError("no tokenizer for this model")

    monkeypatch.setattr(lib, "token_counter", broken)
    llm = LLM(LLMConfig(model="openai/my-local-model"))
    text = "x" * 400

    counted = llm.count_tokens_detailed([{"role": "user", "content": text}])

    assert counted.is_estimate
    assert counted.tokens == 400 // 4 + 3 + 3  # characters / 4, plus the message's and the reply's framing
    assert llm.count_tokens([]) == 3


def test_count_tokens_estimates_only_the_message_litellm_rejects(monkeypatch: pytest.MonkeyPatch) -> None:
    lib = litellm()
    llm = LLM(LLMConfig(model="openai/my-local-model"))  # counted by litellm (not by tiktoken directly)
    real = lib.token_counter

    def picky(*args: object, **kwargs: object) -> int:
        messages = kwargs.get("messages") or []
        if any("poison" in str(m.get("content")) for m in messages):
            raise ValueError("unsupported content")
        return real(*args, **kwargs)

    monkeypatch.setattr(lib, "token_counter", picky)
    good = {"role": "user", "content": "hello world"}
    bad = {"role": "user", "content": "poison " * 10}

    assert not llm.count_tokens_detailed([good]).is_estimate
    mixed = llm.count_tokens_detailed([good, bad])
    assert mixed.is_estimate
    assert mixed.tokens == llm.count_tokens([good]) + math.ceil(len(bad["content"]) / 4) + 3


# ---------------------------------------------------------------- context window and capabilities


def test_context_window_of_a_known_model_comes_from_litellms_map() -> None:
    llm = LLM(LLMConfig(model="claude-sonnet-4-20250514"))
    assert llm.context_window() == litellm().get_model_info("claude-sonnet-4-20250514")["max_input_tokens"] == 200_000
    assert llm.is_context_window_known()


def test_context_window_of_an_unknown_model_is_the_documented_default() -> None:
    llm = LLM(LLMConfig(model="openai/my-local-model"))
    assert llm.context_window() == DEFAULT_CONTEXT_WINDOW == 128_000
    assert not llm.is_context_window_known()
    assert not llm.is_function_calling_active() and not llm.is_vision_active()


def test_context_window_override_wins() -> None:
    assert LLM(LLMConfig(model="claude-sonnet-4-20250514", max_input_tokens=30_000)).context_window() == 30_000
    assert LLM(LLMConfig(model="openai/x", max_input_tokens=8_000)).is_context_window_known()


def test_capabilities_follow_litellm_unless_the_config_decides() -> None:
    assert LLM(LLMConfig(model="gpt-4o-mini")).is_function_calling_active()
    assert not LLM(LLMConfig(model="gpt-4o-mini", native_tool_calling=False)).is_function_calling_active()
    assert LLM(LLMConfig(model="openai/my-local-model", native_tool_calling=True)).is_function_calling_active()
    assert LLM(LLMConfig(model="claude-sonnet-4-20250514")).is_caching_prompt_active()
    assert not LLM(LLMConfig(model="claude-sonnet-4-20250514", caching_prompt=False)).is_caching_prompt_active()
    assert not LLM(LLMConfig(model="gpt-4o-mini", disable_vision=True)).is_vision_active()


# ---------------------------------------------------------------- config


def test_config_rejects_an_unknown_field_by_name() -> None:
    with pytest.raises(ValidationError, match="temprature") as caught:
        LLMConfig.model_validate({"model": "gpt-4o-mini", "temprature": 0.2})
    assert caught.value.errors()[0]["type"] == "extra_forbidden"


def test_config_rejects_inverted_retry_waits_and_needs_a_model() -> None:
    with pytest.raises(ValidationError, match=re.escape("retry_min_wait (10.0) is greater than retry_max_wait (5.0)")):
        LLMConfig(model="m", retry_min_wait=10, retry_max_wait=5)
    with pytest.raises(ValidationError, match="model"):
        LLMConfig.model_validate({})


def test_config_field_names_are_openhands_where_openhands_has_them() -> None:
    openhands_names = {
        "model", "api_key", "base_url", "api_version", "num_retries", "retry_multiplier", "retry_min_wait",
        "retry_max_wait", "timeout", "temperature", "top_p", "custom_llm_provider", "max_input_tokens",
        "max_output_tokens", "input_cost_per_token", "output_cost_per_token", "drop_params", "disable_vision",
        "caching_prompt", "native_tool_calling", "completion_kwargs",
    }  # fmt: skip
    assert openhands_names <= set(LLMConfig.model_fields)
    assert LLMConfig.model_json_schema()["properties"]["mock_response"]["description"].startswith("A fixed reply")


# ---------------------------------------------------------------- laziness


@pytest.mark.slow
def test_building_configs_and_fakes_does_not_import_litellm() -> None:
    code = textwrap.dedent(
        """
        import sys
        from openhands_memory.llm.config import LLMConfig
        import openhands_memory.llm.llm
        from openhands_memory.testing.fake_llm import FakeLLM
        config = LLMConfig(model="gpt-4o-mini", api_key="k", temperature=0.1)
        FakeLLM(["x"]).llm(config)
        print("litellm" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_first_use_imports_litellm_offline_and_quiet() -> None:
    code = textwrap.dedent(
        """
        import os, sys
        from openhands_memory.llm.config import LLMConfig
        from openhands_memory.llm.llm import LLM
        # A model counted by litellm (gpt-4o-mini would not import it: see test_openai_tokens).
        assert LLM(LLMConfig(model="claude-sonnet-4-20250514")).context_window() == 200000
        import litellm
        print(os.environ["LITELLM_LOCAL_MODEL_COST_MAP"], litellm.suppress_debug_info, litellm.disable_hf_tokenizer_download)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=HANG_GUARD_SECONDS)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True"]
    assert "cost map" not in out.stderr  # no remote fetch was attempted


def test_a_model_litellm_prices_at_zero_is_flagged_as_unpriced(monkeypatch: pytest.MonkeyPatch) -> None:
    # litellm answers 0.0 for a model it knows by name but has no price for.
    monkeypatch.setattr(litellm(), "cost_per_token", lambda **kwargs: (0.0, 0.0))
    fake = FakeLLM([FakeReply(text="a", prompt_tokens=1000, completion_tokens=100)])

    response = LLM(LLMConfig(model="gpt-4o-mini"), completion_fn=fake).completion(USER_HI)

    assert (response.cost, response.is_cost_known) == (0.0, False)


def test_images_are_counted_without_fetching_them() -> None:
    from openhands_memory.llm.message import ImageContent

    llm = LLM(LLMConfig(model="gpt-4o-mini"))
    text_only = Message(role="user", content=(TextContent(text="what is this?"),))
    with_image = Message(
        role="user",
        content=(TextContent(text="what is this?"), ImageContent(image_urls=("https://example.invalid/cat.png",))),
    )

    counted = llm.count_tokens_detailed([with_image])

    assert not counted.is_estimate
    assert counted.tokens > llm.count_tokens([text_only])  # the image counts, at litellm's default size
