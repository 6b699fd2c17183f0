"""The pipeline (`openhands_memory/pipeline.py`): THE step that `History`, replay and bench all run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from openhands_memory.condenser import Condensation
from openhands_memory.condenser.config import read_config_file
from openhands_memory.events import EventSource, load_events
from openhands_memory.history import History
from openhands_memory.llm import Message
from openhands_memory.pipeline import Pipeline, load_pipeline, load_pipeline_config
from openhands_memory.replay import replay_events, snapshot_at
from openhands_memory.view import View

BUNDLED = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"

# Condenses often and trims by messages and tokens, so every part of the step is exercised early.
PIPELINE_FILE = """
[condenser]
type = "pipeline"
condensers = [
    { type = "observation_masking", attention_window = 6 },
    { type = "amortized", max_size = 24, keep_first = 2 },
]

[history_policy]
max_messages = 14
max_tokens = 3000
"""


def _pipeline_file(tmp_path: Path) -> Path:
    path = tmp_path / "pipeline.toml"
    path.write_text(PIPELINE_FILE)
    return path


def test_replaying_a_log_shows_step_for_step_the_messages_history_sends(tmp_path: Path) -> None:
    path = _pipeline_file(tmp_path)
    events = load_events(BUNDLED)[:90]
    report = replay_events(events, condenser=load_pipeline(path), tokenizer="approximate")
    assert len(report.steps) >= 20 and len(report.condensations) >= 3, "the prefix must condense and have many steps"
    assert any(step.messages_trimmed for step in report.steps), "the policy must trim at some step"

    # History gets the same events as the replay (its renumbered copies, so `cause` names the same
    # ids), but makes its condensations itself, where a controller would ask it for messages.
    made = {condensation.id for condensation in report.condensations}
    steps = {step.replayed_id: step.number for step in report.steps}
    config = load_pipeline_config(path)
    history = History(condenser=Pipeline.from_config(config).condenser, history_policy=config.history_policy)
    sent: dict[int, list[Message]] = {}
    for event in report.history:
        if event.id in made:
            continue
        if event.id in steps:
            sent[steps[event.id]] = history.next_messages()
        history.add_event(event.model_copy(update={"id": None}), event.source or EventSource.AGENT)

    assert [e.id for e in history.stream.snapshot()] == [e.id for e in report.history]
    assert len(sent) == len(report.steps)
    for number, messages in sent.items():
        replayed = snapshot_at(events, number, condenser=load_pipeline(path), recorded=False)
        assert replayed.messages == messages, f"step {number}"
        assert report.steps[number - 1].messages == len(messages)


def test_a_pipeline_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _pipeline_file(tmp_path)
    reads: list[Path] = []

    def counting_read(file: Path) -> dict:
        reads.append(Path(file))
        return read_config_file(file)

    monkeypatch.setattr("openhands_memory.pipeline.read_config_file", counting_read)
    monkeypatch.setattr("openhands_memory.condenser.config.read_config_file", counting_read)
    load_pipeline(path)
    assert reads == [path]


def test_a_turn_appends_each_condensation_and_shows_the_settled_view(tmp_path: Path) -> None:
    pipeline = load_pipeline(_pipeline_file(tmp_path)).replace(max_condensations_per_step=10)
    history = History(condenser=pipeline.condenser)
    for event in load_events(BUNDLED)[:60]:
        history.add_event(event.model_copy(update={"id": None}), event.source or EventSource.AGENT)
    made: list[Condensation] = []
    counts: list[int] = []

    def append(condensation: Condensation, _view: object) -> int:
        made.append(condensation)
        counts.append(pipeline.guard.count)  # the pipeline's one guard counts the turn's condensations
        return history.add_event(condensation.action, EventSource.AGENT)

    turn = pipeline.turn(lambda: history.view, append, history.initial_user_action)
    assert made and list(turn.condensations) == [e.id for e in history.stream.snapshot()[-len(made):]]
    assert counts == list(range(1, len(made) + 1)) and pipeline.guard.count == 0  # settled: a new step next
    assert turn.messages == pipeline.show(turn.view, history.initial_user_action).messages and turn.tokens is None
    assert not isinstance(pipeline.condense(history.view), Condensation)


# --- one prompt counter: replay's report and the bench count the same tokens -------------------


def _bench_tokens(events: list, spec: object, tokenizer: str) -> list[int]:
    from openhands_memory.bench import BenchOptions
    from openhands_memory.bench.runner import run_events

    result = run_events(events, spec, BenchOptions(tokenizer=tokenizer), source="bundled")  # type: ignore[arg-type]
    return list(result["per_step"]["tokens"])


@pytest.mark.parametrize("tokenizer", ["approximate", "gpt-4o"])
@pytest.mark.parametrize("with_policy", [False, True], ids=["default_pipeline", "pipeline_file_with_policy"])
def test_replay_and_bench_count_the_same_prompt_tokens_step_for_step(tmp_path: Path, tokenizer: str, with_policy: bool) -> None:
    from openhands_memory.bench import PipelineSpec
    from openhands_memory.pipeline import DEFAULT_CONDENSER_CONFIG

    events = list(load_events(BUNDLED))
    if with_policy:
        path = _pipeline_file(tmp_path)
        condenser, spec = load_pipeline(path), PipelineSpec.from_file(path)
    else:
        condenser, spec = Pipeline.default(), PipelineSpec.from_config("default", dict(DEFAULT_CONDENSER_CONFIG))
    report = replay_events(events, condenser=condenser, tokenizer=tokenizer)
    replayed = [step.tokens for step in report.steps]
    benched = _bench_tokens(events, spec, tokenizer)
    assert len(replayed) == 120
    assert replayed == benched
    assert report.total_prompt_tokens == sum(benched)
    if with_policy:
        assert sum(step.messages_trimmed for step in report.steps) > 0  # the policy's max_tokens counted with the same meter


def test_prompt_tokens_count_what_is_sent_the_tool_definitions_and_every_message() -> None:
    import orjson

    from openhands_memory.condenser.tokens import tools_of
    from openhands_memory.prompt_tokens import ApproximateTokenizer, prompt_text

    events = list(load_events(BUNDLED))[:12]
    pipeline = Pipeline.default().measured_by(None)
    view = View.from_events(events)
    tools = tools_of(view)
    assert tools  # the bundled log's system message carries the agent's tools
    shown = pipeline.show(view, None)
    encode = ApproximateTokenizer().encode
    tools_tokens = len(encode(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS, default=str).decode()))
    message_tokens = sum(len(encode(prompt_text(m.to_litellm_dict()))) for m in shown.messages)
    assert pipeline.prompt_tokens(shown, view) == tools_tokens + message_tokens


def test_prompt_tokens_without_a_meter_says_how_to_choose_one() -> None:
    pipeline = Pipeline.default()
    view = View.from_events(list(load_events(BUNDLED))[:3])
    with pytest.raises(ValueError, match=re.escape("use pipeline.measured_by(tokenizer)")):
        pipeline.prompt_tokens(pipeline.show(view, None), view)


# --- the condensers' token budgets count with the same counter -----------------------------------

TOKEN_TRIGGERED = {"type": "amortized", "max_size": 10_000, "keep_first": 2, "max_tokens": 9_000}
"""Condenses by tokens only: whenever the prompt passes 9,000 tokens, down to about half."""


@pytest.mark.parametrize("tokenizer", ["approximate", "gpt-4o"])
def test_a_token_triggered_condenser_counts_a_view_as_replay_and_bench_count_its_prompt(tokenizer: str) -> None:
    from openhands_memory.bench import BenchOptions, PipelineSpec
    from openhands_memory.bench.runner import run_events
    from openhands_memory.condenser import Condenser
    from openhands_memory.replay.driver import AgentStep, CondensationMade, Replayer

    events = list(load_events(BUNDLED))
    pipeline = Pipeline(Condenser.from_config(TOKEN_TRIGGERED)).measured_by(tokenizer)
    replayer = Replayer(pipeline)
    counted, reported, made = [], [], []
    for item in replayer.replay(events):
        if isinstance(item, AgentStep):
            assert item.turn is not None
            reported.append(item.turn.tokens)  # the turn counted its prompt
            counted.append(pipeline.counter(item.shown))
        elif isinstance(item, CondensationMade):
            assert item.condensation.metadata is not None
            made.append((item.condensation.metadata.tokens_before, pipeline.counter(item.view)))
    assert len(reported) == 120 and len(made) >= 3
    assert counted == reported  # the budget's count of every view is the prompt the report counts
    assert all(before == count > TOKEN_TRIGGERED["max_tokens"] for before, count in made)  # the records too
    assert max(reported) <= TOKEN_TRIGGERED["max_tokens"]  # so no step the report shows is over the budget
    replay = replay_events(events, condenser=Condenser.from_config(TOKEN_TRIGGERED), tokenizer=tokenizer)
    spec = PipelineSpec.from_config("amortized", TOKEN_TRIGGERED)
    bench = run_events(events, spec, BenchOptions(tokenizer=tokenizer), source="bundled")
    assert [step.tokens for step in replay.steps] == list(bench["per_step"]["tokens"]) == reported
    assert len(replay.condensations) == bench["condensations"] == len(made)


def test_a_history_given_a_tokenizer_counts_its_budgets_as_replay_does(tmp_path: Path) -> None:
    from openhands_memory.condenser import ApproximateTokenCounter, Condenser

    events = load_events(BUNDLED)[:40]
    plain = History(condenser=Condenser.from_config(TOKEN_TRIGGERED))
    assert isinstance(plain.condenser.token_counter, ApproximateTokenCounter)  # unchanged without a tokenizer
    history = History.open(tmp_path / "log.jsonl", condenser=Condenser.from_config(TOKEN_TRIGGERED), tokenizer="gpt-4o")
    with history:
        for event in events:
            history.add_event(event.model_copy(update={"id": None}), event.source or EventSource.AGENT)
        view = history.view
        pipeline = history.pipeline
        tokens = pipeline.prompt_tokens(pipeline.show(view, history.initial_user_action), view)
        assert pipeline.counter(view) == tokens
        assert tokens != plain.pipeline.counter(view)  # not the approximate estimate
        assert isinstance(history.condenser.token_counter, ApproximateTokenCounter)  # passed to the run, not set on it


def test_the_default_fits_a_small_models_input_limit_and_keeps_its_limits_for_a_large_one() -> None:
    from openhands_memory.llm import LLM, LLMConfig
    from openhands_memory.pipeline import DEFAULT_CONDENSER_CONFIG, DEFAULT_INPUT_SHARE, default_condenser_config

    window = LLM(LLMConfig(model="gpt-3.5-turbo")).context_window()
    small = default_condenser_config("gpt-3.5-turbo")
    assert small["hard_limit"] == int(window * DEFAULT_INPUT_SHARE) < 100_000
    assert small["condenser"]["condensers"][-1]["max_tokens"] < small["hard_limit"] // 2
    assert small["min_cut"] < small["hard_limit"]
    assert default_condenser_config("claude-sonnet-4-5") == default_condenser_config() == dict(DEFAULT_CONDENSER_CONFIG)
