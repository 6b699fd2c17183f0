"""What a model answers is untrusted input: `History.completion` turns any answer into a reply a controller
can store, or an error the model reads, and the log always loads back (DESIGN invariant 8; issue 27, item 1)."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from openhands_memory.condenser import (
    LLMAttentionCondenser,
    LLMSummarizingCondenser,
    NoOpCondenser,
    StructuredSummaryCondenser,
)
from openhands_memory.condenser.impl.llm_attention_condenser import SELECT_EVENTS_TOOL_NAME
from openhands_memory.condenser.impl.structured_summary_condenser import STATE_SUMMARY_TOOL_NAME
from openhands_memory.errors import LLMError, LLMResponseError
from openhands_memory.events import (
    CondensationAction,
    ErrorObservation,
    EventSource,
    MCPAction,
    MessageAction,
    SystemMessageAction,
    ToolCallMetadata,
    event_to_json,
    load_events,
)
from openhands_memory.history import History
from openhands_memory.llm import LLM, LLMConfig, LLMResponse
from openhands_memory.testing.fake_llm import FakeLLM, FakeReply, FakeToolCall
from openhands_memory.testing.model_output import model_responses


def _tool(name: str, parameter: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {parameter: {"type": "string"}}, "required": [parameter]},
        },
    }


TOOLS = [_tool("execute_bash", "command"), _tool("search", "query")]
TOOL_NAMES = ["execute_bash", "search"]


class FirstThen:
    """A completion function that returns `first` as is (anything at all), then asks `fake` for every later reply."""

    def __init__(self, first: Any, fake: FakeLLM) -> None:
        self.first = first
        self.fake = fake
        self.calls = 0

    def __call__(self, **kwargs: Any) -> Any:
        self.calls += 1
        return self.first if self.calls == 1 else self.fake(**kwargs)


OFFLINE_FAKE = LLMConfig(
    model="fake-model", num_retries=0, max_input_tokens=200_000, input_cost_per_token=0.0, output_cost_per_token=0.0,
    caching_prompt=False, disable_vision=True, native_tool_calling=True,
)  # fmt: skip
"""Every fact about the model given, so that nothing asks litellm (importing it takes seconds)."""


def _llm(complete: Callable[..., Any]) -> LLM:
    return LLM(OFFLINE_FAKE, completion_fn=complete)


def _started(path: Path, **options: Any) -> History:
    history = History.open(path, **{"condenser": NoOpCondenser(), **options})
    history.add_event(SystemMessageAction(content="You are an agent.", tools=TOOLS), EventSource.AGENT)
    history.add_event(MessageAction(content="Fix the bug"), EventSource.USER)
    return history


def act_on(history: History, reply: LLMResponse) -> None:
    """What a controller does with a reply: its text as a message, each call as an action with the
    arguments as read (an MCP call holds them as given) and a result, all with the call's metadata."""
    if not reply.tool_calls:
        history.add_event(MessageAction(content=reply.text), EventSource.AGENT)
    for index, call in enumerate(reply.tool_calls):
        metadata = ToolCallMetadata(
            function_name=call.function.name,
            tool_call_id=call.id,
            model_response=reply.raw,
            total_calls_in_response=len(reply.tool_calls),
        )
        arguments = json.loads(call.function.arguments)
        assert isinstance(arguments, dict)
        action = MCPAction(name=call.function.name, arguments=arguments, thought=reply.text if index == 0 else "")
        action.tool_call_metadata = metadata
        history.add_event(action, EventSource.AGENT)
        result = ErrorObservation(content="not run in this test", tool_call_metadata=metadata, cause=action.id)
        history.add_event(result, EventSource.ENVIRONMENT)


def _assert_the_log_loads_back(path: Path, written: list[bytes]) -> None:
    assert [event_to_json(e) for e in load_events(path)] == written
    with History.open(path, condenser=NoOpCondenser()) as again:
        assert again.next_messages()[0].role == "system"  # and renders as a chat


@given(model_responses(TOOL_NAMES))
def test_any_answer_becomes_a_reply_to_store_or_an_error_the_model_reads_and_the_log_loads(answer: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonl"
        complete = FirstThen(answer, FakeLLM(default="Understood, trying again."))
        with _started(path) as history:
            try:
                reply = history.completion(_llm(complete), tools=TOOLS)
            except LLMResponseError as exc:  # no choices, no message, no text and no call: nothing to read
                event(f"outcome: unusable answer, LLMResponseError ({str(exc).split(':')[1].strip()[:40]})")
                assert complete.calls == 1 and len(history.stream) == 2  # not retried (num_retries=0), nothing appended
            else:
                errors = [e for e in history.stream.get_events() if isinstance(e, ErrorObservation)]
                if errors:
                    event("outcome: tool calls that cannot run -> ErrorObservation, asked again")
                    assert complete.calls == 2 and reply.text == "Understood, trying again."
                    assert len(errors) == 1 and errors[0].content.startswith("Your last reply was not carried out")
                    assert history.stream.get_event(2) is errors[0]
                else:
                    event(f"outcome: usable reply with {min(len(reply.tool_calls), 2)}{'+' if len(reply.tool_calls) > 2 else ''} call(s)")
                    assert complete.calls == 1
                    assert all(call.function.name in TOOL_NAMES for call in reply.tool_calls)
                if reply.repairs:
                    event("answer repaired to be storable")
                act_on(history, reply)
            written = [event_to_json(e) for e in history.stream.get_events()]
        _assert_the_log_loads_back(path, written)


def _turns(history: History, count: int) -> None:
    for number in range(count):
        metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id=f"call-{number}", model_response={"id": f"r{number}"})
        action = MCPAction(name="execute_bash", arguments={"command": f"cmd{number}"}, tool_call_metadata=metadata)
        history.add_event(action, EventSource.AGENT)
        history.add_event(ErrorObservation(content=f"output {number}", tool_call_metadata=metadata, cause=action.id), EventSource.ENVIRONMENT)


MODEL_BACKED = {"llm": LLMSummarizingCondenser, "structured": StructuredSummaryCondenser, "llm_attention": LLMAttentionCondenser}


@given(
    model_responses([STATE_SUMMARY_TOOL_NAME, SELECT_EVENTS_TOOL_NAME]),
    st.sampled_from(sorted(MODEL_BACKED)),
    st.sampled_from(["fallback", "skip", "raise"]),
)
def test_any_answer_to_a_condenser_is_a_condensation_a_fallback_or_a_model_error_and_the_log_loads(
    answer: Any, kind: str, policy: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonl"
        summarizer = MODEL_BACKED[kind](
            _llm(FirstThen(answer, FakeLLM())), max_size=12, keep_first=2, on_model_error=policy  # type: ignore[arg-type]
        )
        with _started(path, condenser=summarizer) as history:
            _turns(history, 6)  # 14 events: over 12
            before = len(history.stream)
            try:
                reply = history.completion(_llm(FakeLLM(default="Done.")), tools=TOOLS)
            except LLMError as exc:
                assert policy == "raise", exc  # fallback and skip apply to every failure an answer can cause
                event(f"outcome: {kind} raised {type(exc).__name__}")
                assert len(history.stream) == before
            else:
                assert reply.text == "Done."
                appended = list(history.stream.get_events(before))
                if not appended:
                    assert policy == "skip"
                    event(f"outcome: {kind} skipped")
                else:
                    assert len(appended) == 1 and isinstance(appended[0], CondensationAction)
                    outcome = (appended[0].condenser_metadata or {}).get("extra", {}).get("outcome")
                    event(f"outcome: {kind} condensed ({outcome})")
            written = [event_to_json(e) for e in history.stream.get_events()]
        _assert_the_log_loads_back(path, written)


# -- the cases issue 27 names, each pinned -------------------------------------------------------------


def _answer(arguments: str, *, name: str = "search", text: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    message["tool_calls"] = [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}]
    return {"id": "resp-1", "model": "fake-model", "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ("[" * 70 + "]" * 70, "arguments are JSON list, not an object"),
        ('{"a": ' * 70 + "1" + "}" * 70, "the arguments are nested deeper than 64 levels"),
        ("[" * 5000 + "]" * 5000, "arguments are"),  # too deep for Python's reader, or not an object
        ('{"query": "x", "limit": 18446744073709551616}', "the arguments hold an integer beyond 64 bits (18446744073709551616), which no event can store"),
        ('{"query": "x", "limit": ' + "9" * 50 + "}", "the arguments hold an integer beyond 64 bits (" + "9" * 40 + "...)"),
        ('{"query": NaN}', "arguments are not valid JSON: NaN is not JSON"),
        ('{"query": 1e999}', "arguments are not valid JSON: 1e999 is beyond the range of a float"),
        ('{"query": "x"', "arguments are not valid JSON: Expecting ',' delimiter"),
    ],
)
def test_a_call_no_event_could_hold_is_answered_with_an_error_and_the_model_asked_again(
    tmp_path: Path, arguments: str, problem: str
) -> None:
    path = tmp_path / "events.jsonl"
    fake = FakeLLM([_answer(arguments)], default="ok")
    with _started(path) as history:
        reply = history.completion(_llm(fake), tools=TOOLS)
        error = history.stream.get_event(2)
        written = [event_to_json(e) for e in history.stream.get_events()]
    assert reply.text == "ok" and len(fake.calls) == 2
    assert isinstance(error, ErrorObservation) and error.source == EventSource.AGENT
    assert f"- tool call 'call_1' (search): {problem}" in error.content
    assert "Your last reply was not carried out" in fake.calls[1].messages[-1]["content"][0]["text"]  # the model read it
    _assert_the_log_loads_back(path, written)


def test_lone_surrogates_from_the_model_are_replaced_said_and_stored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "events.jsonl"
    fake = FakeLLM([_answer('{"query": "caf\\ud800 \\ud83d\\ude00"}', text="half a pair: \ud83d")])
    with _started(path) as history:
        reply = history.completion(_llm(fake), tools=TOOLS)
        act_on(history, reply)
        written = [event_to_json(e) for e in history.stream.get_events()]
    assert reply.text == "half a pair: \ufffd"
    assert json.loads(reply.tool_calls[0].function.arguments) == {"query": "caf\ufffd \U0001f600"}  # a whole pair is kept
    assert reply.repairs == ("2 lone surrogate(s) replaced with U+FFFD",)
    assert "the answer was changed so that events can store it: 2 lone surrogate(s)" in caplog.text
    _assert_the_log_loads_back(path, written)


def test_a_call_of_a_tool_not_offered_is_an_error_the_model_reads(tmp_path: Path) -> None:
    fake = FakeLLM([FakeReply.tool_call("rm_rf", {"path": "/"}, id="c1")], default="ok")
    with _started(tmp_path / "events.jsonl") as history:
        assert history.completion(_llm(fake), tools=TOOLS).text == "ok"
        error = history.stream.get_event(2)
    assert isinstance(error, ErrorObservation)
    assert "- tool call 'c1' (rm_rf): there is no tool 'rm_rf' (the tools: execute_bash, search)" in error.content


def test_a_reply_with_one_bad_call_runs_none_of_its_calls(tmp_path: Path) -> None:
    calls = (FakeToolCall("execute_bash", {"command": "ls"}, id="c1"), FakeToolCall("search", '{"query": ', id="c2"))
    fake = FakeLLM([FakeReply(text="Two calls.", tool_calls=calls)], default="ok")
    with _started(tmp_path / "events.jsonl") as history:
        assert history.completion(_llm(fake), tools=TOOLS).text == "ok"
        error = history.stream.get_event(2)
    assert isinstance(error, ErrorObservation)
    assert error.content.startswith("Your last reply was not carried out, none of its tool calls ran: 1 tool call cannot be run.")
    assert "tool call 'c2' (search): arguments are not valid JSON" in error.content and "'c1'" not in error.content


def test_a_model_that_keeps_sending_bad_calls_is_asked_a_bounded_number_of_times(tmp_path: Path) -> None:
    fake = FakeLLM(default=FakeReply.tool_call("search", "not json", id="c1"))
    with _started(tmp_path / "events.jsonl", max_invalid_replies=2) as history:
        with pytest.raises(LLMResponseError, match=re.escape("1 tool call that cannot be run, after 2 errors told the model so; the first: tool call 'c1'")):
            history.completion(_llm(fake), tools=TOOLS)
        errors = [e for e in history.stream.get_events() if isinstance(e, ErrorObservation)]
    assert len(fake.calls) == 3 and len(errors) == 3  # 1 + max_invalid_replies calls, one error appended for each


def test_a_controller_may_still_ask_for_the_error_instead(tmp_path: Path) -> None:
    fake = FakeLLM([FakeReply.tool_call("search", "not json", id="c1")])
    with _started(tmp_path / "events.jsonl") as history:
        with pytest.raises(LLMResponseError, match=re.escape("tool call 'c1' (search): arguments are not valid JSON")):
            history.completion(_llm(fake), tools=TOOLS, keep_invalid_tool_calls=False)
        assert len(history.stream) == 2
