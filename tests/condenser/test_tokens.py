"""Token counters: the offline estimate, the model-backed counter, and their caches."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence

import pytest

from openhands_memory.condenser import ApproximateTokenCounter, LLMTokenCounter, TokenCounter
from openhands_memory.condenser.tokens import default_token_counter
from openhands_memory.condenser import tokens as tokens_module
from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.events import (
    BrowserOutputObservation,
    CmdRunAction,
    Event,
    MessageAction,
    SystemMessageAction,
    ToolCallMetadata,
)
from openhands_memory.llm.message import Message, TextContent

from ._helpers import Session


def test_the_estimate_is_characters_over_four_plus_an_overhead_per_event() -> None:
    counter = ApproximateTokenCounter()
    assert counter([MessageAction(content="x" * 400)]) == 100 + 4
    assert ApproximateTokenCounter(chars_per_token=2, overhead_per_event=0)([MessageAction(content="x" * 400)]) == 200
    assert counter([]) == 0


def test_the_estimate_counts_what_the_prompt_shows_not_binary_payloads() -> None:
    counter = ApproximateTokenCounter(overhead_per_event=0)
    page = BrowserOutputObservation(content="a" * 40, screenshot="data:image/png;base64," + "A" * 100_000)
    assert counter([page]) == 10
    call = CmdRunAction(command="ls -la", thought="look", tool_call_metadata=ToolCallMetadata(function_name="execute_bash", tool_call_id="c"))
    assert counter([call]) == -(-(len("ls -la") + len("look") + len("execute_bash")) // 4)


def test_each_event_is_measured_once(monkeypatch: pytest.MonkeyPatch) -> None:
    measured: list[Event] = []
    real = tokens_module.event_chars
    monkeypatch.setattr(tokens_module, "event_chars", lambda e: measured.append(e) or real(e))
    s = Session()
    s.header()
    counter = ApproximateTokenCounter()
    counter(s.view)
    s.turn()
    assert counter(s.view) > 0
    assert len(measured) == 6  # 4, then only the 2 new events


def test_the_cache_forgets_events_that_left_the_view() -> None:
    counter = ApproximateTokenCounter()
    for i in range(3000):
        counter([MessageAction(content=str(i))])
    assert len(counter._cache) <= 1024 + 3


class FakeLLM:
    """Counts a token per character of text, and what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, object]] = []

    def count_tokens(self, messages: Sequence[Message], *, tools: object = None) -> int:
        self.asked.append((len(messages), tools))
        return sum(len(m.text) for m in messages)


def test_the_llm_counter_counts_the_rendered_chat_with_its_tools() -> None:
    def render(events: Sequence[Event]) -> list[Message]:
        return [Message(role="user", content=(TextContent(text=e.content),)) for e in events]  # type: ignore[attr-defined]

    llm = FakeLLM()
    counter = LLMTokenCounter(llm, render=render)
    tools = [{"type": "function", "function": {"name": "t"}}]
    assert counter([SystemMessageAction(content="sys", tools=tools), MessageAction(content="de")]) == 5
    assert counter([MessageAction(content="f")]) == 1
    assert llm.asked == [(2, tools), (1, None)]


def test_the_llm_counter_renders_with_the_memory_it_is_given() -> None:
    s = Session()
    s.header()
    s.turn(content="x" * 50)
    llm = FakeLLM()
    total = LLMTokenCounter(llm, memory=ConversationMemory(system_prompt=""))(s.view)
    assert total >= 50 + len("Fix the bug")


def test_the_llm_counter_without_a_renderer_says_what_to_pass() -> None:
    s = Session()
    s.header()
    counter = default_token_counter(FakeLLM())
    with pytest.raises(ValueError, match=re.escape("nothing to render views with: pass render= or memory=")):
        counter(s.view)


def test_the_llm_counter_counts_the_tools_of_a_system_message_that_is_not_first() -> None:
    llm = FakeLLM()
    tools = [{"type": "function", "function": {"name": "t"}}]
    counter = LLMTokenCounter(llm, render=lambda events: [])
    counter([MessageAction(content="u"), SystemMessageAction(content="sys", tools=tools)])
    assert llm.asked == [(0, tools)]


def test_the_llm_counter_works_with_the_real_llm_offline() -> None:
    from openhands_memory.llm.config import LLMConfig
    from openhands_memory.llm.llm import LLM

    s = Session()
    s.header()
    s.turn(content="hello world " * 20)
    counter = LLMTokenCounter(LLM(LLMConfig(model="gpt-4o-mini")), memory=ConversationMemory(system_prompt=""))
    first = counter(s.view)
    s.turn(content="more output")
    assert 40 < first < counter(s.view) < 400


def test_counters_satisfy_the_protocol_and_any_callable_does_too() -> None:
    assert isinstance(ApproximateTokenCounter(), TokenCounter)
    assert isinstance(LLMTokenCounter(FakeLLM()), TokenCounter)
    assert isinstance(lambda events: len(events), TokenCounter)
    assert isinstance(default_token_counter(), ApproximateTokenCounter)
    assert isinstance(default_token_counter(FakeLLM()), LLMTokenCounter)


def test_counting_offline_never_imports_litellm() -> None:
    code = (
        "import sys\n"
        "from openhands_memory.condenser import Condenser\n"
        "from openhands_memory.testing.synthetic import synthetic_session\n"
        "from openhands_memory.view import View\n"
        "c = Condenser.from_config({'type': 'amortized', 'max_size': 20, 'max_tokens': 5000})\n"
        "c.condense(View.from_events(synthetic_session(200)))\n"
        "assert 'litellm' not in sys.modules, 'litellm was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
