"""`auto_context` in the benchmark: the standard comparison's pipeline file, and a run measured by hand."""

from __future__ import annotations

from pathlib import Path

from openhands_memory.condenser import AutoContextCondenserConfig, load_condenser_config
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARIZER_NAME

from .test_runner import PRICED, condensing_log, measure, summarizer

REPO = Path(__file__).resolve().parents[2]


def test_the_standard_pipeline_file_has_agentscopes_defaults_and_names_its_model() -> None:
    config = load_condenser_config(REPO / "openhands_memory" / "pipelines" / "auto_context.toml")
    assert isinstance(config, AutoContextCondenserConfig)
    assert config.model_dump(exclude={"llm_config"}) == AutoContextCondenserConfig(llm_config="x").model_dump(exclude={"llm_config"})
    assert config.llm_config.model == "gpt-4o"  # type: ignore[union-attr]


def test_a_run_counts_its_compressions_and_model_calls() -> None:
    # 0 system, 1 task, then ls 2-3, pytest 4-5, cat 6-7, echo 8-9 and `Done` 10: one round. Before
    # the steps at 6, 8 and 10 the view has 6 or 7 events (>= 6): the latest call and its result stay,
    # and the current round before it (the earlier summary included) is compressed (strategy 6):
    # 2-3, then that summary and 4-5, then that summary and 6-7 (2 + 3 + 3 events forgotten).
    config = {"type": "auto_context", "msg_threshold": 6, "last_keep": 0, "llm_config": PRICED}
    run = measure(condensing_log(), config, completion_fn=summarizer)
    assert run["steps"] == 5
    assert run["condensed_by"] == {"auto_context": 3}
    assert run["summarizer_calls"] == run["condensations"] == 3
    assert run["events_forgotten"] == 8


def test_offline_by_default_the_compressions_are_written_without_a_model() -> None:
    # The same run with no completion function: the model is taken away (no stand-in), and the three
    # compressions of the current round are the offline structured summarizer's.
    config = {"type": "auto_context", "msg_threshold": 6, "last_keep": 0, "llm_config": PRICED}
    run = measure(condensing_log(), config)
    assert run["summarizer"] == OFFLINE_SUMMARIZER_NAME  # no "; stand-in summarizer for auto_context"
    assert run["condensed_by"] == {"auto_context": 3}
    assert run["compressions"] == {"CURRENT_ROUND_MESSAGE_COMPRESS": 3}
    assert (run["summarizer_calls"], run["summarizer_cost"]) == (0, 0.0)
    assert run["events_forgotten"] == 8
