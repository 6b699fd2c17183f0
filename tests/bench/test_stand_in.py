"""The stand-in for the model of model-backed condensers, and swapping models in a built pipeline."""

from __future__ import annotations

import json

from openhands_memory.bench.stand_in import (
    model_backed_members,
    stand_in_completion,
    use_model,
    use_offline_summarizer,
    use_stand_in,
)
from openhands_memory.condenser import Condenser, PipelineCondenser
from openhands_memory.llm import LLM, LLMConfig
from openhands_memory.view import View

LLM_CONFIG = {"model": "gpt-4o", "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "max_input_tokens": 1000}


def ask(prompt: str, tool: str | None = None) -> dict:
    tools = [{"type": "function", "function": {"name": tool}}] if tool else None
    return stand_in_completion(model="m", messages=[{"role": "user", "content": prompt}], tools=tools)


def test_the_stand_in_summarizes_by_counting_the_events_in_the_prompt_and_citing_their_ids() -> None:
    prompt = "summarize <EVENT id=3>a</EVENT> <EVENT id=4>b</EVENT>"  # 52 characters
    reply = ask(prompt)
    assert reply["choices"][0]["message"]["content"] == "USER_CONTEXT: the task\nCOMPLETED: 2 events (events 3-4)"
    assert reply["usage"] == {"prompt_tokens": 13, "completion_tokens": 20}
    assert ask(prompt) == reply


def test_the_stand_in_ranks_by_keeping_every_other_event_newest_first() -> None:
    prompt = "<ALWAYS KEPT><EVENT id=0></ALWAYS KEPT> <EVENT id=5> <EVENT id=6> <EVENT id=7> <EVENT id=8>"
    call = ask(prompt, "select_important_events")["choices"][0]["message"]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"ids": [8, 6]}


def test_the_stand_in_fills_the_structured_summary() -> None:
    call = ask("<EVENT id=1>", "create_state_summary")["choices"][0]["message"]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"])["completed_tasks"] == "1 events (event 1)"
    call = ask("nothing to cite", "create_state_summary")["choices"][0]["message"]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"])["completed_tasks"] == "0 events"


def pipeline() -> Condenser:
    return Condenser.from_config(
        {
            "type": "pipeline",
            "condensers": [
                {"type": "observation_masking"},
                {"type": "pipeline", "condensers": [{"type": "llm", "llm_config": LLM_CONFIG}]},
                {"type": "llm_attention", "llm_config": LLM_CONFIG},
            ],
        }
    )


def test_model_backed_members_are_found_in_nested_pipelines() -> None:
    assert [member.name for member in model_backed_members(pipeline())] == ["llm", "llm_attention"]
    assert list(model_backed_members(Condenser.from_config({"type": "amortized"}))) == []


def test_use_stand_in_keeps_each_members_config_and_calls_the_stand_in() -> None:
    condenser = use_stand_in(pipeline())
    for member in model_backed_members(condenser):
        assert member.llm.completion_fn is stand_in_completion  # type: ignore[attr-defined]
        assert member.llm.config.model == "gpt-4o"  # type: ignore[attr-defined]
        assert member.llm.config.input_cost_per_token == 1e-6  # type: ignore[attr-defined]


class _OwnModelCondenser(Condenser):
    """A strategy with a model that is no `ModelBacked` (it may not know how to do without one)."""

    def __init__(self) -> None:
        super().__init__()
        self.llm = LLM(LLMConfig(model="gpt-4o"))

    def condense(self, view: View) -> View:
        return view


def test_use_offline_summarizer_takes_the_model_away_and_gives_any_other_member_the_stand_in() -> None:
    own = _OwnModelCondenser()
    condenser = PipelineCondenser(pipeline(), own)
    assert use_offline_summarizer(condenser) == [own]
    summarizer, attention = [m for m in model_backed_members(condenser) if m is not own]
    assert summarizer.llm is None and attention.llm is None  # type: ignore[attr-defined]
    assert own.llm.completion_fn is stand_in_completion and own.llm.config.model == "gpt-4o"


def test_use_offline_summarizer_takes_auto_contexts_model_away_too() -> None:
    condenser = Condenser.from_config(
        {"type": "pipeline", "condensers": [{"type": "auto_context", "llm_config": LLM_CONFIG}, {"type": "auto_context"}]}
    )
    with_model, without = model_backed_members(condenser)  # one configured without a model counts too
    assert with_model.llm is not None and without.llm is None  # type: ignore[attr-defined]
    assert use_offline_summarizer(condenser) == []  # nothing needs the stand-in
    assert with_model.llm is None  # type: ignore[attr-defined]


def test_use_model_names_the_model_and_drops_the_old_models_prices_and_window() -> None:
    condenser = use_model(pipeline(), "claude-sonnet-4-20250514")
    for member in model_backed_members(condenser):
        config = member.llm.config  # type: ignore[attr-defined]
        assert member.llm.completion_fn is None  # type: ignore[attr-defined]
        assert config.model == "claude-sonnet-4-20250514"
        assert (config.input_cost_per_token, config.output_cost_per_token, config.max_input_tokens) == (None, None, None)
        assert config.caching_prompt is False and config.usage_id == "condenser"
