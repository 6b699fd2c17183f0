"""Models and tokens inside the SDK's loop: the agent's model when configured so, its tokenizer, and bounded model calls.

Models are faked at the litellm boundary (`litellm.completion` replaced by a `FakeLLM`): no network, no key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

import litellm  # noqa: E402
from openhands.sdk import LLM  # noqa: E402
from openhands.sdk.context.view import View  # noqa: E402
from openhands.sdk.event import CondensationRequest  # noqa: E402
from openhands.sdk.event.condenser import Condensation  # noqa: E402
from pydantic import SecretStr  # noqa: E402

from openhands_memory.condenser import ApproximateTokenCounter  # noqa: E402
from openhands_memory.condenser._model_backed import SHRINK_TRIES  # noqa: E402
from openhands_memory.events import AgentCondensationObservation  # noqa: E402
from openhands_memory.errors import CondensationStalledError, LLMContextWindowExceededError  # noqa: E402
from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser  # noqa: E402
from openhands_memory.prompt_tokens import ApproximateTokenizer, PromptTokenCounter  # noqa: E402
from openhands_memory.testing.fake_llm import FakeLLM, litellm_error, override_allow_model_requests  # noqa: E402

from .sdk_events import conversation, long_conversation  # noqa: E402

SUMMARIZER = {"type": "llm", "llm_config": "agent", "max_size": 12, "keep_first": 2}


@pytest.fixture(autouse=True)
def litellm_is_faked() -> Iterator[None]:
    # Each test replaces `litellm.completion` with a fake: requests "to a provider" reach only it.
    with override_allow_model_requests(True):
        yield


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    model = FakeLLM(default="The agent read the files and found the failing assertion.")
    monkeypatch.setattr(litellm, "completion", model)
    return model


def agent_llm() -> LLM:
    return LLM(model="gpt-4o-mini", api_key=SecretStr("sk-agent-key"), base_url="http://models.internal:4000", usage_id="agent")


def run(condenser: OpenHandsMemoryCondenser, events: list[Any], *, steps: int = 30) -> list[Any]:
    """The SDK agent's loop around a condenser: append each condensation and ask again until it shows a view."""
    for _ in range(steps):
        outcome = condenser.condense(View.from_events(events), agent_llm=agent_llm())
        if not isinstance(outcome, Condensation):
            return events
        events = [*events, outcome]
    raise AssertionError(f"still condensing after {steps} steps")


def test_a_strategy_naming_the_agent_llm_summarizes_with_its_model_key_and_base_url(fake: FakeLLM) -> None:
    condenser = OpenHandsMemoryCondenser(condenser=SUMMARIZER, tokenizer="approximate")
    made = condenser.condense(View.from_events(long_conversation(12)), agent_llm=agent_llm())
    assert isinstance(made, Condensation)
    assert made.summary is not None and made.summary.startswith("The agent read the files")
    assert len(fake.calls) == 1
    sent = fake.calls[0].kwargs
    assert (sent["model"], sent["api_key"], sent["base_url"]) == ("gpt-4o-mini", "sk-agent-key", "http://models.internal:4000")
    record = condenser.condensation_records[-1]
    assert record.condensation_id == made.id and record.metadata["condenser"] == "llm"
    assert record.metadata["llm_usage"] is not None  # our metadata stays with the condenser: the SDK event has no field for it


def test_its_own_llm_config_wins_over_the_agents(fake: FakeLLM) -> None:
    condenser = OpenHandsMemoryCondenser(
        condenser=SUMMARIZER, llm_configs={"agent": {"model": "claude-3-5-haiku-20241022", "api_key": "sk-own"}}, tokenizer="approximate"
    )
    condenser.condense(View.from_events(long_conversation(12)), agent_llm=agent_llm())
    assert fake.calls[0].kwargs["model"] == "claude-3-5-haiku-20241022"


def test_token_budgets_count_with_the_agents_tokenizer() -> None:
    condenser = OpenHandsMemoryCondenser(condenser={"type": "amortized", "max_size": 100, "max_tokens": 5000})
    counter = condenser.pipeline(agent_llm()).counter  # the run's counter (the strategy object is not changed)
    assert isinstance(counter, PromptTokenCounter) and counter.meter.tokenizer.name == "gpt-4o-mini (litellm's tokenizer)"
    approximate = OpenHandsMemoryCondenser(condenser={"type": "amortized"}, tokenizer="approximate")
    counter = approximate.pipeline(agent_llm()).counter  # as History(tokenizer="approximate") and replay --tokenizer approximate count
    assert isinstance(counter, PromptTokenCounter) and isinstance(counter.meter.tokenizer, ApproximateTokenizer)
    assert isinstance(approximate.strategy(agent_llm()).token_counter, ApproximateTokenCounter)  # the strategy object unchanged


def test_a_model_that_always_overflows_stops_with_a_typed_error_after_a_bounded_number_of_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeLLM(default=litellm_error("ContextWindowExceededError", "prompt is too long"))
    monkeypatch.setattr(litellm, "completion", fake)
    condenser = OpenHandsMemoryCondenser(condenser=SUMMARIZER, tokenizer="approximate")
    with pytest.raises(LLMContextWindowExceededError, match=re.escape("gpt-4o-mini")):
        run(condenser, long_conversation(12))
    assert len(fake.calls) == SHRINK_TRIES + 1  # the prompt shrunk three times, then the error


def test_with_fallback_an_overflowing_model_gives_the_offline_summary_and_the_loop_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeLLM(default=litellm_error("ContextWindowExceededError", "prompt is too long"))
    monkeypatch.setattr(litellm, "completion", fake)
    condenser = OpenHandsMemoryCondenser(condenser={**SUMMARIZER, "on_model_error": "fallback"}, tokenizer="approximate")
    events = run(condenser, long_conversation(30))
    made = [e for e in events if isinstance(e, Condensation)]
    assert made and all(e.summary for e in made)
    assert len(fake.calls) == len(made) * (SHRINK_TRIES + 1)


def test_a_summary_longer_than_its_budget_is_cut_inside_the_sdks_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    huge = "word " * 20_000
    monkeypatch.setattr(litellm, "completion", FakeLLM(default=huge))
    condenser = OpenHandsMemoryCondenser(condenser=SUMMARIZER, tokenizer="approximate")
    events = long_conversation(12)
    made = condenser.condense(View.from_events(events), agent_llm=agent_llm())
    assert isinstance(made, Condensation) and made.summary is not None
    assert len(made.summary) < len(huge) // 10
    assert "summary_cut" in condenser.condensation_records[-1].metadata["extra"]


def test_a_summarizer_that_cannot_shrink_the_prompt_is_stopped_by_the_loop_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tiny events and a budget no view can meet: each summary (at least 128 tokens are allowed) is
    # longer than what it replaces, so the prompt grows; the guard stops the second ask.
    fake = FakeLLM(default="summary " * 60)
    monkeypatch.setattr(litellm, "completion", fake)
    condenser = OpenHandsMemoryCondenser(
        condenser={"type": "llm", "llm_config": "agent", "keep_first": 0, "max_size": 2, "max_event_length": 1},
        tokenizer="approximate",
    )
    events = conversation([("tools", [("terminal", "ok", False)]), ("tools", [("terminal", "ok", False)])])
    with pytest.raises(CondensationStalledError, match=re.escape("did not make the prompt smaller")):
        run(condenser, events)
    assert 1 <= len(fake.calls) <= 2


def test_a_hard_context_reset_summarizes_with_the_strategys_model_within_its_budget(fake: FakeLLM) -> None:
    # keep_first covers the view: the request cannot be met by the strategy, so the SDK resets.
    condenser = OpenHandsMemoryCondenser(
        condenser={**SUMMARIZER, "max_size": 200, "keep_first": 90}, tokenizer="approximate", hard_reset_summary_tokens=100
    )
    events = [*long_conversation(8), CondensationRequest()]
    view = View.from_events(events)
    reset = condenser.condense(view, agent_llm=agent_llm())
    assert isinstance(reset, Condensation) and reset.summary_offset == 1
    assert reset.summary == "The agent read the files and found the failing assertion."
    assert len(fake.calls) == 1 and "cat file0.txt" in str(fake.calls[0].messages)
    assert reset.forgotten_event_ids == {e.id for e in view.events[1:]}


def test_a_hard_context_reset_falls_back_to_the_offline_summary_when_the_model_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeLLM(default=litellm_error("ContextWindowExceededError", "prompt is too long"))
    monkeypatch.setattr(litellm, "completion", fake)
    condenser = OpenHandsMemoryCondenser(
        condenser={**SUMMARIZER, "max_size": 200, "keep_first": 90}, tokenizer="approximate", hard_reset_summary_tokens=100
    )
    reset = condenser.condense(View.from_events([*long_conversation(8), CondensationRequest()]), agent_llm=agent_llm())
    assert isinstance(reset, Condensation) and reset.summary
    assert ApproximateTokenCounter()([AgentCondensationObservation(content=reset.summary)]) <= 100
    assert len(fake.calls) == SHRINK_TRIES + 1
