"""One turn, one object: every entry point shows the model the same prompt (issue 34 item 1).

Every registered strategy, offline, with and without a history policy, runs over the same session
through `History` (step by step, as a controller does), `replay_events` given the condenser, `replay`
given the pipeline file, and `bench`; at every agent step the messages and their tokens are the same.
(The SDK bridge's turn is checked in tests/integrations/openhands_sdk, in the SDK's own venv.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openhands_memory import History
from openhands_memory.bench.runner import BenchOptions, PipelineSpec, run_events
from openhands_memory.condenser import Condenser, registered_condenser_types
from openhands_memory.conversation_memory import HistoryPolicy
from openhands_memory.events import Event, EventSource
from openhands_memory.llm import to_litellm_dicts
from openhands_memory.pipeline import Pipeline, load_pipeline
from openhands_memory.replay import replay_events
from openhands_memory.replay.driver import is_agent_step
from openhands_memory.testing.sessions import SessionBuilder

POLICY = {"max_messages": 24, "max_tokens": 6000}


def _session() -> list[Event]:
    """A task and 45 tool calls with outputs of growing size: ids 0.., no condensation of its own."""
    builder = SessionBuilder()
    builder.header()
    for number in range(45):
        builder.turn(f"cat part_{number}.txt", f"line {number}\n" * (20 + 7 * (number % 9)))
    return builder.events


def _config(type_name: str) -> dict[str, Any]:
    """`type_name` offline (no model), with small limits so that it condenses within the session."""
    config: dict[str, Any] = {"type": type_name}
    if type_name == "pipeline":
        config["condensers"] = [{"type": "observation_masking", "attention_window": 6}, {"type": "amortized", "max_size": 40}]
    if type_name == "cache_aware":
        config["condenser"] = {"type": "llm", "max_size": 40}
        config["hard_limit"] = 5000
    return config


def _toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {_toml(item)}" for key, item in value.items()) + " }"
    if isinstance(value, list):
        return "[ " + ", ".join(_toml(item) for item in value) + " ]"
    return f'"{value}"' if isinstance(value, str) else str(value)


def _pipeline_file(folder: Path, config: dict[str, Any], policy: dict[str, Any] | None) -> Path:
    path = folder / "pipeline.toml"
    lines = ["[condenser]", *(f"{key} = {_toml(value)}" for key, value in config.items())]
    if policy is not None:
        lines += ["", "[history_policy]", *(f"{key} = {_toml(value)}" for key, value in policy.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def _through_history(events: list[Event], config: dict[str, Any], policy: HistoryPolicy | None) -> tuple[list[Any], list[int]]:
    history = History(condenser=Condenser.from_config(config), history_policy=policy, tokenizer="approximate")
    chats, tokens = [], []
    previous: str | None = None
    new_ids: dict[int | None, int] = {}
    for event in events:
        if is_agent_step(event, previous):
            messages = history.next_messages()
            chats.append(to_litellm_dicts(messages))
            view = history.last_view
            assert view is not None
            tokens.append(history.pipeline.prompt_tokens(history.pipeline.show(view, history.initial_user_action), view))
        if event.source == EventSource.AGENT:
            previous = event.response_id
        # As a controller appends: the stream gives the id, and a result names its action by that id.
        cause = new_ids.get(event.cause) if event.cause is not None else None
        copy = event.model_copy(update={"id": None, "cause": cause})
        new_ids[event.id] = history.add_event(copy, copy.source or EventSource.AGENT)
    return chats, tokens


STRATEGIES = registered_condenser_types()


@pytest.mark.parametrize("with_policy", [False, True], ids=["strategy's own policy", "policy file"])
@pytest.mark.parametrize("type_name", STRATEGIES)
def test_every_entry_point_shows_the_same_prompt_at_every_step(type_name: str, with_policy: bool, tmp_path: Path) -> None:
    events = _session()
    config = _config(type_name)
    policy = HistoryPolicy(**POLICY) if with_policy else None

    given_condenser = Pipeline(Condenser.from_config(config), None, policy) if with_policy else Condenser.from_config(config)
    by_condenser = replay_events(events, condenser=given_condenser, model=None)
    by_file = replay_events(events, condenser=load_pipeline(_pipeline_file(tmp_path, config, POLICY if with_policy else None)), model=None)
    spec = PipelineSpec.from_config(type_name, config, history_policy=policy)
    by_bench = run_events(events, spec, BenchOptions(tokenizer="approximate"))
    chats, history_tokens = _through_history(events, config, policy)

    steps = [(s.messages, s.tokens, s.messages_trimmed) for s in by_condenser.steps]
    assert steps == [(s.messages, s.tokens, s.messages_trimmed) for s in by_file.steps]
    assert [tokens for _, tokens, _ in steps] == by_bench["per_step"]["tokens"] == history_tokens
    assert [messages for messages, _, _ in steps] == [len(chat) for chat in chats]
    assert by_bench["history_policy_trimmed_steps"] == sum(1 for _, _, trimmed in steps if trimmed)


def test_the_inkeep_strategy_trims_through_every_entry_point() -> None:
    """The issue's case: `{"type": "inkeep"}` trimmed to 50 messages / 8,000 tokens through History only."""
    events = _session()
    report = replay_events(events, condenser=Condenser.from_config({"type": "inkeep"}), model=None)
    assert report.messages_trimmed > 0 and max(s.messages for s in report.steps) <= 50 + 1  # 50, and the system prompt
    spec = PipelineSpec.from_config("inkeep", {"type": "inkeep"})
    assert "history_policy(" in spec.description
    assert run_events(events, spec, BenchOptions(tokenizer="approximate"))["history_policy_trimmed_steps"] > 0
