"""One turn, one object: every entry point shows the model the same prompt (issue 34 items 1 and 4).

Every registered strategy, offline, with and without a history policy, runs over the same session
through `History` (step by step, as a controller does), `replay_events` given the condenser, `replay`
given the pipeline file, and `bench`; at every agent step the messages and their tokens are the same.
(The SDK bridge, the fifth entry point, is checked against `History` in
tests/integrations/openhands_sdk/test_one_turn.py, in the SDK's own venv.) A pipeline's settings reach
every entry point, and a run's tokenizer is the run's: two runs sharing a strategy object count apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openhands_memory import History
from openhands_memory.bench.runner import BenchOptions, PipelineSpec, run_events
from openhands_memory.condenser import Condenser, NoOpCondenser, registered_condenser_types
from openhands_memory.conversation_memory import HistoryPolicy
from openhands_memory.events import Event, EventSource
from openhands_memory.llm import to_litellm_dicts
from openhands_memory.pipeline import Pipeline, load_pipeline
from openhands_memory.replay import replay_events, snapshot_at
from openhands_memory.replay.driver import AgentStep, Replayer, is_agent_step
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
    return _driven(history, events)


def _driven(history: History, events: list[Event]) -> tuple[list[Any], list[int]]:
    """`events` appended to `history` as a controller appends them, the messages asked for at every agent step."""
    chats, tokens = [], []
    previous: str | None = None
    new_ids: dict[int | None, int] = {}
    for event in events:
        if is_agent_step(event, previous):
            messages = history.next_messages()
            chats.append(to_litellm_dicts(messages))
            turn = history.last_turn
            assert turn is not None and turn.messages == messages and turn.tokens is not None
            tokens.append(turn.tokens)  # counted by the pipeline's turn, as replay and bench count
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
    by_condenser = replay_events(events, condenser=given_condenser, tokenizer="approximate")
    by_file = replay_events(events, condenser=load_pipeline(_pipeline_file(tmp_path, config, POLICY if with_policy else None)), tokenizer="approximate")
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
    report = replay_events(events, condenser=Condenser.from_config({"type": "inkeep"}), tokenizer="approximate")
    assert report.messages_trimmed > 0 and max(s.messages for s in report.steps) <= 50 + 1  # 50, and the system prompt
    spec = PipelineSpec.from_config("inkeep", {"type": "inkeep"})
    assert "history_policy(" in spec.description
    assert run_events(events, spec, BenchOptions(tokenizer="approximate"))["history_policy_trimmed_steps"] > 0


def test_history_takes_a_pipeline_file_and_shows_what_replay_shows(tmp_path: Path) -> None:
    events = _session()
    path = _pipeline_file(tmp_path, _config("pipeline"), POLICY)
    with History.open(tmp_path / "log.jsonl", pipeline=path, tokenizer="approximate") as history:
        assert history.history_policy == HistoryPolicy(**POLICY)
        chats, tokens = _driven(history, events)
    by_file = replay_events(events, condenser=load_pipeline(path), tokenizer="approximate")
    assert [s.tokens for s in by_file.steps] == tokens and [s.messages for s in by_file.steps] == [len(c) for c in chats]
    assert History(pipeline="cache_aware").condenser.name.startswith("cache_aware")  # a shipped pipeline, by the name --pipeline takes
    with pytest.raises(ValueError, match="a pipeline or a condenser, not both"):
        History(pipeline=path, condenser=NoOpCondenser())


def _cut(max_message_chars: int | None = 120) -> Pipeline:
    """A pipeline whose renderer cuts long observations (a setting a construction site could drop)."""
    return Pipeline(NoOpCondenser(), max_message_chars=max_message_chars)


def test_a_pipelines_settings_reach_every_entry_point() -> None:
    """Replay with the log's condensations rebuilt the pipeline and dropped its observation cut (and renderer)."""
    events = _session()
    whole = [s.tokens for s in replay_events(events, condenser=_cut(None), tokenizer="approximate").steps]
    fresh = [s.tokens for s in replay_events(events, condenser=_cut(), tokenizer="approximate").steps]
    recorded = [s.tokens for s in replay_events(events, condenser=_cut(), recorded=True, tokenizer="approximate").steps]
    assert fresh == recorded
    _, by_history = _driven(History(pipeline=_cut(), tokenizer="approximate"), events)
    assert by_history == fresh
    limited = Pipeline(NoOpCondenser(), max_condensations_per_step=3, vision_is_active=True)
    for pipeline in (History(pipeline=limited).pipeline, Replayer(limited).pipeline, Pipeline.of(limited, description="x")):
        assert (pipeline.guard.limit, pipeline.vision_is_active) == (3, True)
    assert sum(fresh) < sum(whole)  # the cut is applied
    snapshot = snapshot_at(events, 30, condenser=_cut(), recorded=True)
    cut_chat = to_litellm_dicts(snapshot.messages)
    assert max(len(str(m.get("content"))) for m in cut_chat if m["role"] == "tool") < 400


class _TokenACharacter:
    """A tokenizer counting a token a character: four times the approximate count."""

    name = "a token a character"

    def encode(self, text: str, /) -> list[str]:
        return list(text)


def test_two_runs_sharing_a_strategy_count_with_their_own_tokenizers() -> None:
    """The counter is passed to the run: measuring a second pipeline around one strategy object leaves the first alone."""
    events = _session()
    config = {"type": "recent", "max_events": 1000, "max_tokens": 3000}
    alone = Replayer(Pipeline(Condenser.from_config(config)).measured_by("approximate"))
    expected = [len(item.shown) for item in alone.replay(events) if isinstance(item, AgentStep)]
    shared = Condenser.from_config(config)
    approximate = Replayer(Pipeline(shared).measured_by("approximate"))
    by_character = Replayer(Pipeline(shared).measured_by(_TokenACharacter()))  # set up second, runs interleaved
    steps: dict[str, list[int]] = {"approximate": [], "character": []}
    for first, second in zip(approximate.replay(events), by_character.replay(events), strict=True):
        if isinstance(first, AgentStep):
            steps["approximate"].append(len(first.shown))
        if isinstance(second, AgentStep):
            steps["character"].append(len(second.shown))
    assert steps["approximate"] == expected
    assert steps["character"][-1] < expected[-1]  # 3,000 characters hold fewer events than 3,000 approximate tokens
    assert shared.token_counter.__class__.__name__ == "ApproximateTokenCounter"  # the strategy object is not changed


def test_the_agents_model_names_the_tokenizer_unless_one_is_named() -> None:
    """One rule, as `--model M` / `--tokenizer T` and the SDK bridge's agent LLM: History(model=M) counts with M's tokenizer."""
    from openhands_memory._tokenizer_names import DEFAULT_TOKENIZER, tokenizer_name
    from openhands_memory.prompt_tokens import ApproximateTokenizer

    meter = History(condenser=NoOpCondenser(), model="gpt-4o").pipeline.meter
    assert meter is not None and meter.tokenizer.name == "gpt-4o (litellm's tokenizer)"
    named = History(condenser=NoOpCondenser(), model="gpt-4o", tokenizer="approximate").pipeline.meter
    assert named is not None and isinstance(named.tokenizer, ApproximateTokenizer)
    assert History(condenser=NoOpCondenser()).pipeline.meter is None  # neither: the condenser's own counter
    with pytest.raises(ValueError, match="a tokenizer or a token_counter, not both"):
        History(tokenizer="approximate", token_counter=lambda events: len(events))
    assert tokenizer_name(None, model="gpt-4o") == tokenizer_name("agent", model="gpt-4o") == "gpt-4o"
    assert tokenizer_name("approximate", model="gpt-4o") == "approximate" and tokenizer_name(None, model=None) == DEFAULT_TOKENIZER


def test_replay_events_names_the_agents_model_and_the_tokenizer_as_history_does() -> None:
    """`replay_events(model=M)` is the agent's model (the default pipeline priced for it, its tokenizer counting),
    `tokenizer=` what counts; as History(model=...) and `replay --model M` (it once named the tokenizer alone)."""
    events = _session()
    by_model = replay_events(events, model="gpt-5")
    spelled_out = replay_events(events, condenser=Pipeline.default("gpt-5"), tokenizer="gpt-5")
    assert by_model.model == spelled_out.model == "gpt-5"
    assert by_model.pipeline == spelled_out.pipeline
    assert [s.tokens for s in by_model.steps] == [s.tokens for s in spelled_out.steps]
    assert History(model="gpt-5").pipeline.description == by_model.pipeline
    approximate = replay_events(events, model="gpt-5", tokenizer="approximate")
    assert approximate.model is None and approximate.tokens_estimated
    assert replay_events(events).model == "gpt-4o"  # neither: the default tokenizer
