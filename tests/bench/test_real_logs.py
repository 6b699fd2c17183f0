"""The benchmark over real OpenHands logs: every run completes, and the numbers hold together."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import real_log_params, require_real_log

from openhands_memory.bench import PipelineSpec, run_benchmark

PRICED = {"model": "m", "max_input_tokens": 10_000, "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}
PIPELINES = [
    PipelineSpec.from_config("noop", {"type": "noop"}),
    PipelineSpec.from_config("masking", {"type": "observation_masking", "attention_window": 20}),
    PipelineSpec.from_config("amortized", {"type": "amortized", "max_size": 40, "keep_first": 4}),
    PipelineSpec.from_config(
        "summarizing",
        {"type": "llm", "max_size": 40, "keep_first": 4, "llm_config": PRICED},
    ),
]


@pytest.mark.parametrize("log", [*real_log_params("v0_"), *real_log_params("v1_")])
def test_every_pipeline_runs_on_a_real_log_and_its_numbers_hold_together(log: Path | None) -> None:
    path = require_real_log(log)
    results = run_benchmark([path], PIPELINES, context_limit=20_000)
    assert results.errors == []
    noop, masking, amortized, summarizing = results.runs
    for run in results.runs:
        tokens, cached = run["per_step"]["tokens"], run["per_step"]["cached"]
        assert len(tokens) == len(cached) == run["steps"] == noop["steps"]
        assert all(0 <= c <= t for c, t in zip(cached, tokens))
        assert all(c <= previous for c, previous in zip(cached[1:], tokens))  # a prefix of the previous prompt
        assert run["steps_over_limit"] == sum(1 for t in tokens if t > 20_000)
        assert 0 <= run["facts_retained"] <= run["facts_forgotten"] <= run["facts"] == noop["facts"]
        assert run["summarizer_calls"] == 0  # offline: the summarizer is the offline one, no model is called
    assert noop["condensations"] == noop["facts_forgotten"] == 0
    assert noop["per_step"]["cached"][1:] == noop["per_step"]["tokens"][:-1]  # the prompt only grows
    for run in (masking, amortized, summarizing):
        assert run["peak_context_tokens"] <= noop["peak_context_tokens"]
