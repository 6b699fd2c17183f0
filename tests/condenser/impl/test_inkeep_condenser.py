"""`inkeep`: one config, model-aware compression with a summarizer and Inkeep's fixed limits without one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openhands_memory.condenser import Condensation, Condenser, InkeepCondenser
from openhands_memory.conversation_memory import HistoryPolicy
from openhands_memory.errors import CondenserConfigError
from openhands_memory.events import CmdOutputObservation, CmdRunAction, EventSource, MessageAction, SystemMessageAction, ToolCallMetadata
from openhands_memory.history import History
from openhands_memory.pipeline import load_pipeline
from openhands_memory.pipeline import load_pipeline_config
from openhands_memory.testing.chat import assert_valid_chat

SUMMARIZER = {"model": "gpt-4o-mini", "mock_response": "The agent ran cmd 0 to cmd 39.", "num_retries": 0}


def _conversation(history: History, turns: int, *, output: str = "ok") -> None:
    history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    history.add_event(MessageAction(content="Fix the bug"), EventSource.USER)
    for number in range(turns):
        metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id=f"c{number}", model_response={"id": f"r{number}"})
        run = history.add_event(CmdRunAction(command=f"cmd {number}", tool_call_metadata=metadata), EventSource.AGENT)
        observation = CmdOutputObservation(content=f"{output} {number}", command=f"cmd {number}", tool_call_metadata=metadata, cause=run)
        history.add_event(observation, EventSource.ENVIRONMENT)


def test_without_a_summarizer_the_same_config_falls_back_to_50_messages_and_8000_tokens() -> None:
    condenser = Condenser.from_config({"type": "inkeep", "model": "openai/gpt-5.2"})
    history = History(condenser=condenser)  # no policy given: the one the strategy comes with
    _conversation(history, 40)

    messages = history.next_messages()

    assert isinstance(condenser, InkeepCondenser) and condenser.compressor is None and condenser.max_tokens is None
    assert history.history_policy == HistoryPolicy.fixed_limit()
    assert_valid_chat(messages)
    assert len(messages) == 51 and messages[0].role == "system"  # the system prompt and 50 conversation messages
    assert messages[1].tool_call_id == "c15" or (messages[1].tool_calls and messages[1].tool_calls[0].id == "c15")
    assert history.last_trim.dropped == 81 - 50


def test_without_a_summarizer_8000_tokens_of_conversation_at_most() -> None:
    history = History(condenser=Condenser.from_config({"type": "inkeep"}))
    _conversation(history, 20, output="x" * 2000)  # about 500 tokens a result

    messages = history.next_messages()

    assert history.last_trim.tokens is not None and history.last_trim.tokens <= 8000
    assert history.last_trim.dropped_by_max_tokens > 0 and len(messages) < 41


def test_with_a_summarizer_it_compresses_at_half_the_agents_window_and_retrieves_up_to_10000_messages() -> None:
    condenser = Condenser.from_config({"type": "inkeep", "llm_config": SUMMARIZER, "model": "openai/gpt-5.2"})
    history = History(condenser=condenser)

    assert isinstance(condenser, InkeepCondenser) and condenser.compressor is not None
    assert condenser.max_tokens == 200_000  # Inkeep: 50% of gpt-5.2's 400K window
    assert condenser.threshold is not None and condenser.threshold["window_rule"] == "whole"
    assert history.history_policy == HistoryPolicy(preset="inkeep_compression")
    assert (history.history_policy.max_messages, history.history_policy.max_tokens) == (10_000, None)


def test_with_a_summarizer_over_the_threshold_it_writes_a_summary() -> None:
    config = {
        "type": "inkeep",
        "llm_config": SUMMARIZER,
        "max_tokens": {"preset": "conversation", "context_window": 2_000},  # compress past 1,000 tokens
        "keep_last": 4,
    }
    history = History(condenser=Condenser.from_config(config))
    _conversation(history, 40, output="y" * 100)

    first = history.step()

    assert isinstance(first, Condensation) and first.action.summary == "The agent ran cmd 0 to cmd 39."
    assert first.metadata is not None and first.metadata.condenser == "token_budget_summary"
    assert first.metadata.extra["threshold"]["limit"] == 1_000
    history.add_event(first.action, EventSource.AGENT)
    messages = history.next_messages()
    assert_valid_chat(messages)
    assert len(messages) < 20


def test_a_pipeline_file_without_a_history_policy_gets_inkeeps(tmp_path: Path) -> None:
    fallback = tmp_path / "fallback.toml"
    fallback.write_text('[condenser]\ntype = "inkeep"\n', encoding="utf-8")
    compressing = tmp_path / "compressing.toml"
    compressing.write_text(
        '[llm.summarizer]\nmodel = "gpt-4o-mini"\n\n[condenser]\ntype = "inkeep"\nllm_config = "summarizer"\nmodel = "anthropic/claude-sonnet-4-5"\n',
        encoding="utf-8",
    )
    own = tmp_path / "own.toml"
    own.write_text('[condenser]\ntype = "inkeep"\n[history_policy]\nmax_messages = 7\n', encoding="utf-8")

    # The file holds only its own table; the pipeline built from it trims with the strategy's (as any pipeline does).
    assert load_pipeline_config(fallback).history_policy is None
    assert load_pipeline(fallback).history_policy == HistoryPolicy.fixed_limit()
    assert load_pipeline(compressing).history_policy == HistoryPolicy(preset="inkeep_compression")
    assert load_pipeline(own).history_policy == HistoryPolicy(max_messages=7)  # a table of its own wins


def test_an_unknown_agent_model_is_named() -> None:
    message = "condenser 'inkeep': max_tokens: the context window of model 'no-such-model' is unknown"
    with pytest.raises(CondenserConfigError, match=re.escape(message)):
        Condenser.from_config({"type": "inkeep", "llm_config": SUMMARIZER, "model": "no-such-model"})
