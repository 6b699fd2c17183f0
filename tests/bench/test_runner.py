"""Runs of tiny logs whose every number is worked out by hand, and the executors that run many of them."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import HANG_GUARD_SECONDS

from openhands_memory.bench import BenchOptions, PipelineSpec, STAND_IN_NAME, run_benchmark
from openhands_memory.bench.metrics import summarize_runs
from openhands_memory.bench.runner import run_events, without_timings
from openhands_memory.bench.stand_in import stand_in_completion
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARIZER_NAME
from openhands_memory.errors import CondenserConfigError
from openhands_memory.events import CmdRunAction, ToolCallMetadata
from openhands_memory.llm.prompt_cache import CACHE_RULES, PromptPricing
from openhands_memory.replay import load_pipeline
from openhands_memory.stream import Redactor

from ._helpers import Log, WordTokenizer, write_toml

NOOP = PipelineSpec.from_config("noop", {"type": "noop"})
PRICED = {"model": "summarizer-model", "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "max_input_tokens": 1000}


def summarizer(**kwargs: Any) -> dict[str, Any]:
    """A model that always writes the same summary, naming the failed test run; 100 + 10 tokens a call."""
    message = {"role": "assistant", "content": "TESTS: pytest -x failed (exit 1)"}
    return {
        "id": "s", "model": "summarizer-model", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10},
    }  # fmt: skip


def measure(log: Log, config: dict[str, Any], **options: Any) -> dict[str, Any]:
    return run_events(log.events, PipelineSpec.from_config("p", config), BenchOptions(**options), tokenizer=WordTokenizer())


def chat_log() -> Log:
    return Log().header().say("Looking").user("Go on").say("Done now").user("Thanks").say("Bye")


def test_prompt_tokens_peak_mean_and_steps_over_the_limit_by_hand() -> None:
    # Steps come before each agent message. In words: `<|system|> You are an agent.` 5,
    # `<|user|> Fix the bug` 4, `<|assistant|> Looking` 2, `<|user|> Go on` 3, ...
    run = measure(chat_log(), {"type": "noop"}, context_limit=10)
    assert run["per_step"] == {"tokens": [9, 14, 19], "cached": [0, 9, 14]}
    assert run["steps"] == 3
    assert run["total_prompt_tokens"] == 42
    assert run["peak_context_tokens"] == 19 and run["peak_step"] == 3
    assert run["mean_context_tokens"] == 14.0
    assert run["final_context_tokens"] == 19
    assert run["steps_over_limit"] == 2
    assert run["cached_prefix_tokens"] == 23
    assert run["cache_share"] == pytest.approx(23 / 42)
    assert (run["condensations"], run["events_forgotten"], run["summarizer_calls"]) == (0, 0, 0)
    assert run["summarizer"] is None
    assert run["facts"] == 3 and run["facts_forgotten"] == 0 and run["retention"] is None
    assert run["condenser_seconds"] >= 0.0


def tool_log() -> Log:
    return Log().header().run("pytest", "tests/t.py::test_a FAILED", exit_code=1).run("ls").run("cat a.py").say("Done")


def test_masking_an_old_output_cuts_the_cached_prefix_at_the_masked_token() -> None:
    # A command turn is the call, `<|assistant|> <tool_call call-N> execute_bash` + 16 words of
    # arguments (17 for `cat a.py`), then the result, `<|tool|> execute_bash call-N`, the output
    # and `[Command finished with exit code N]` (6): pytest 20+11, ls 20+12, cat 21+13.
    plain = measure(tool_log(), {"type": "noop"})
    assert plain["per_step"] == {"tokens": [9, 40, 72, 106], "cached": [0, 9, 40, 72]}
    # At step 4 the pytest output (2 words) is masked (`<MASKED>`, 1 word): the prompt matches the
    # previous one up to the tool header of that output, 9 + 20 + 3 tokens.
    masked = measure(tool_log(), {"type": "observation_masking", "attention_window": 3})
    assert masked["per_step"] == {"tokens": [9, 40, 72, 105], "cached": [0, 9, 40, 32]}
    assert masked["cache_share"] == pytest.approx(81 / 226)
    # Its facts: the instruction (kept), the failed `pytest` (its output masked, but the command is
    # still in the call) and the test id (only in the masked output).
    assert (masked["facts"], masked["facts_forgotten"], masked["facts_retained"]) == (3, 2, 1)
    assert masked["lost_facts"] == [{"kind": "test", "text": "tests/t.py::test_a"}]
    assert masked["condensations"] == 0 and masked["events_forgotten"] == 0


def condensing_log() -> Log:
    return Log().header().run("ls").run("pytest -x", "1 failed", exit_code=1).run("cat a.py").run("echo ok").say("Done")


def test_condensations_and_forgotten_events_by_hand() -> None:
    # amortized, more than 6 events: before step 4 the view is system, task and three turns
    # (8 events): ls and pytest go (4 events). After the last event, system, task, cat, echo and
    # `Done` (7): cat and echo go (4 more). The failed `pytest -x` is forgotten and not retained.
    run = measure(condensing_log(), {"type": "amortized", "max_size": 6, "keep_first": 2})
    assert run["steps"] == 5
    assert run["condensations"] == 2
    assert run["condensed_by"] == {"amortized": 2}
    assert run["events_forgotten"] == 8
    assert run["final_view_events"] == 3
    assert (run["facts"], run["facts_forgotten"], run["facts_retained"], run["retention"]) == (2, 1, 0, 0.0)
    assert run["lost_facts"] == [{"kind": "failed_command", "text": "pytest -x", "detail": "exit code 1"}]


LLM = {"type": "llm", "max_size": 6, "keep_first": 2, "llm_config": PRICED}


def test_a_forgotten_failing_command_is_retained_only_through_the_summary() -> None:
    run = measure(condensing_log(), LLM, completion_fn=summarizer)
    assert run["condensations"] == 2 and run["summarizer_calls"] == 2
    assert run["summarizer"] == "completion function summarizer"
    # Each call: 100 prompt tokens at 1e-6 and 10 completion tokens at 2e-6.
    assert (run["summarizer_prompt_tokens"], run["summarizer_completion_tokens"]) == (200, 20)
    assert run["summarizer_cost"] == pytest.approx(2 * (100e-6 + 10 * 2e-6))
    assert run["summarizer_cost_known"] is True
    assert (run["facts_forgotten"], run["facts_retained"], run["retention"]) == (1, 1, 1.0)

    placeholder = measure(condensing_log(), LLM, completion_fn=stand_in_completion)  # its summary names no command
    assert placeholder["summarizer"] == STAND_IN_NAME
    assert placeholder["summarizer_calls"] == 2
    assert (placeholder["facts_forgotten"], placeholder["facts_retained"]) == (1, 0)

    offline = measure(condensing_log(), LLM)  # the default: no model; the offline summary lists the failed command
    assert offline["summarizer"] == OFFLINE_SUMMARIZER_NAME
    assert (offline["condensations"], offline["summarizer_calls"], offline["summarizer_cost"]) == (2, 0, 0.0)
    assert (offline["facts_forgotten"], offline["facts_retained"]) == (1, 1)


def test_a_forgotten_fact_is_recoverable_when_a_search_of_the_replayed_log_finds_its_event() -> None:
    # amortized forgets the failed `pytest -x` and its output, and the summary-less view keeps no trace
    # of it; the in-memory index of the whole replayed log finds the output again.
    run = measure(condensing_log(), {"type": "amortized", "max_size": 6, "keep_first": 2})
    assert (run["facts_forgotten"], run["facts_retained"], run["facts_recoverable"]) == (1, 0, 1)
    assert run["recoverability"] == 1.0
    assert run["facts_by_kind"]["failed_command"]["recoverable"] == 1
    assert run["recall_indexed_events"] == 13  # 11 events of the log and the 2 condensations
    assert run["recall_searches"] == 1
    assert 0.0 < run["recall_index_seconds"] < run["seconds"] and 0.0 < run["recall_search_seconds"] < run["seconds"]
    assert "recall_index_seconds" not in without_timings(run)


def test_a_fact_whose_event_the_search_misses_is_not_recoverable() -> None:
    # The failed command's words are everywhere else too: six later outputs repeat them more often,
    # so the one that failed is not among the first five results (and the kept ones still show its
    # text: retained and recoverable are counted apart).
    log = condensing_log()
    for i in range(6):
        log.run(f"echo {i}", "pytest -x pytest -x pytest -x")
    run = measure(log, {"type": "amortized", "max_size": 6, "keep_first": 2})
    assert run["facts_by_kind"]["failed_command"] == {"facts": 1, "forgotten": 1, "retained": 1, "recoverable": 0}
    assert (run["facts_recoverable"], run["recoverability"]) == (0, 0.0)


def test_condenser_time_is_the_time_spent_in_the_pipeline() -> None:
    run = measure(condensing_log(), LLM)
    assert 0.0 < run["condenser_seconds"] <= run["seconds"]


# -- run_benchmark --------------------------------------------------------------------------------


@pytest.fixture
def logs(tmp_path: Path) -> list[Path]:
    return [chat_log().write(tmp_path / "chat.jsonl"), condensing_log().write(tmp_path / "condensing.jsonl")]


@pytest.fixture
def pipelines(tmp_path: Path) -> list[Path]:
    return [
        write_toml(tmp_path / "none.toml", {"type": "noop"}),
        write_toml(tmp_path / "summarize.toml", {"type": "llm", "llm_config": "condenser", "max_size": 6, "keep_first": 2}, PRICED),
    ]


def test_run_benchmark_runs_every_log_through_every_pipeline_in_order(logs: list[Path], pipelines: list[Path]) -> None:
    done: list[tuple[int, int]] = []
    results = run_benchmark(logs, pipelines, progress=lambda d, t: done.append((d, t)))
    assert [(run["log"], run["pipeline"]) for run in results.runs] == [
        (str(logs[0]), "none"), (str(logs[0]), "summarize"), (str(logs[1]), "none"), (str(logs[1]), "summarize"),
    ]  # fmt: skip
    assert done == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert [spec.description for spec in results.pipelines] == ["noop", "llm"]
    totals = {row["pipeline"]: row for row in results.totals()}
    assert totals["none"]["steps"] == 3 + 5
    assert totals["summarize"]["summarizer"] == OFFLINE_SUMMARIZER_NAME
    assert totals["none"]["summarizer"] is None
    assert results.options.tokenizer == "approximate"
    assert results.to_dict()["summarizer"] == OFFLINE_SUMMARIZER_NAME


def test_two_jobs_give_the_same_results_as_one(logs: list[Path], pipelines: list[Path]) -> None:
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "synthetic_session_300.jsonl"
    one = run_benchmark([*logs, fixture], pipelines, jobs=1)
    two = run_benchmark([*logs, fixture], pipelines, jobs=2)
    assert [without_timings(run) for run in two.runs] == [without_timings(run) for run in one.runs]
    assert (two.jobs, one.jobs) == (2, 1)


def test_a_log_that_cannot_be_read_is_reported_and_the_others_still_run(tmp_path: Path, logs: list[Path]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 0, "action": "message"\n')
    results = run_benchmark([bad, logs[0]], [NOOP])
    [failed] = results.errors
    assert failed["log"] == str(bad) and failed["pipeline"] == "noop"
    assert failed["error"].startswith("MalformedEventError: ")
    [row] = results.totals()
    assert (row["logs"], row["errors"], row["steps"]) == (1, 1, 3)


def test_pipelines_with_the_same_name_are_told_apart(logs: list[Path], tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write_toml(tmp_path / "a" / "p.toml", {"type": "noop"})
    second = write_toml(tmp_path / "b" / "p.toml", {"type": "amortized"})
    results = run_benchmark(logs[:1], [first, second])
    assert [spec.name for spec in results.pipelines] == ["p", "p-2"]


def test_a_pipeline_file_that_is_not_a_config_is_a_config_error(tmp_path: Path, logs: list[Path]) -> None:
    bad = write_toml(tmp_path / "bad.toml", {"type": "amortised"})
    with pytest.raises(CondenserConfigError, match="Did you mean 'amortized'"):
        run_benchmark(logs, [bad])
    with pytest.raises(CondenserConfigError, match="no such file"):
        run_benchmark(logs, [tmp_path / "missing.toml"])


def test_the_tokenizer_defaults_to_the_model_and_else_to_the_approximation(logs: list[Path]) -> None:
    assert run_benchmark(logs[:1], [NOOP], model="gpt-4o").options.tokenizer == "gpt-4o"
    results = run_benchmark(logs[:1], [NOOP], tokenizer="gpt-4o")
    assert results.options.tokenizer == "gpt-4o" and results.options.model is None
    assert results.tokenizer_name == "gpt-4o (litellm's tokenizer)"


@pytest.mark.parametrize(
    ("options", "message"),
    [({"jobs": 0}, "jobs must be at least 1"), ({"context_limit": 0}, "context_limit must be at least 1"),
     ({"executor": "dask"}, "unknown executor 'dask'")],
)  # fmt: skip
def test_bad_options_are_rejected(logs: list[Path], options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_benchmark(logs, [NOOP], **options)


def _ray_is_installed() -> bool:
    return importlib.util.find_spec("ray") is not None


def test_the_ray_executor_without_ray_says_how_to_install_it(logs: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as where it is not installed
    clone = Path(__file__).resolve().parent.parent.parent  # the hint names the clone this copy runs from
    with pytest.raises(ImportError, match=re.escape(f"pip install '{clone}[ray]'")):
        run_benchmark(logs, [NOOP], executor="ray")


RAY_REQUIRED = os.environ.get("OPENHANDS_MEMORY_REQUIRE_RAY", "").strip().lower() in {"1", "true", "yes"}
"""Set by `.ci/run`, which installs the `ray` extra: there a missing Ray fails the Ray test instead of skipping it."""


@pytest.mark.slow
def test_the_ray_executor_gives_the_same_results_as_one_process(logs: list[Path], pipelines: list[Path]) -> None:
    if not _ray_is_installed():
        if RAY_REQUIRED:
            pytest.fail("OPENHANDS_MEMORY_REQUIRE_RAY is set but ray cannot be imported: pip install -e '.[ray]'", pytrace=False)
        pytest.skip("ray is not installed (the optional 'ray' extra; .ci/run installs it)")
    in_processes = run_benchmark(logs, pipelines, jobs=2, executor="process")
    on_ray = run_benchmark(logs, pipelines, jobs=2, executor="ray")  # a local Ray with 2 CPUs
    assert len(on_ray.runs) == len(logs) * len(pipelines)
    assert [without_timings(run) for run in on_ray.runs] == [without_timings(run) for run in in_processes.runs]
    assert on_ray.executor == "ray"


def test_an_offline_benchmark_never_loads_litellm(logs: list[Path]) -> None:
    code = (
        "import sys\n"
        "from openhands_memory.bench import PipelineSpec, run_benchmark\n"
        "spec = PipelineSpec.from_config('a', {'type': 'amortized', 'max_size': 6, 'keep_first': 2})\n"
        f"results = run_benchmark([{str(logs[1])!r}], [spec])\n"
        "assert results.runs[0]['condensations'] == 2, results.runs\n"
        "assert 'litellm' not in sys.modules, 'litellm was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert result.returncode == 0, result.stderr


def test_a_pipeline_naming_an_llm_config_it_does_not_hold_fails_before_any_run(tmp_path: Path, logs: list[Path]) -> None:
    bad = write_toml(tmp_path / "llm.toml", {"type": "llm", "llm_config": "summarizer"})
    message = f"{bad}: condenser 'llm': llm_config: unknown LLM config name 'summarizer'. No named LLM configs were given."
    with pytest.raises(CondenserConfigError) as caught:
        run_benchmark(logs, [bad])
    assert str(caught.value) == message
    assert (caught.value.field, caught.value.path) == ("llm_config", bad)


def test_a_view_that_leaves_a_tool_call_unanswered_is_counted_as_a_repair_per_step() -> None:
    log = Log().header()
    metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id="orphan", model_response={"id": "r0", "choices": []})
    log.add(CmdRunAction(command="never answered", tool_call_metadata=metadata))
    log.say("Looking").say("Done")
    run = measure(log, {"type": "noop"})
    assert run["steps"] == 3 and run["tool_call_repairs"] == 2  # the two steps after the orphan call
    assert summarize_runs([run, measure(chat_log(), {"type": "noop"})])["tool_call_repairs"] == 2


def test_the_benchmark_and_replay_name_a_nested_pipeline_alike(tmp_path: Path) -> None:
    config = {
        "type": "pipeline",
        "condensers": [{"type": "pipeline", "condensers": [{"type": "observation_masking"}]}, {"type": "recent"}],
    }
    path = tmp_path / "nested.json"
    path.write_text(json.dumps({"condenser": config}))
    assert PipelineSpec.from_config("p", config).description == "observation_masking, recent"
    assert load_pipeline(path).description == f"{path} (observation_masking, recent)"


# -- prices, with the prompt cache -----------------------------------------------------------------

ANTHROPIC_LIKE = PromptPricing(
    model="anthropic-like",
    rules_name="anthropic",
    input_cost_per_token=3.0,
    output_cost_per_token=15.0,
    cache_read_cost_per_token=0.3,
    cache_write_cost_per_token=3.75,
    min_cache_tokens=0,
    rules=CACHE_RULES["anthropic"],
)


def test_each_steps_prompt_is_priced_with_the_prompt_cache_by_hand() -> None:
    # Steps of 9, 14 and 19 words (see the first test); breakpoints after the system message and at
    # the end: step 1 writes 9, step 2 reads 9 and writes 5, step 3 reads 14 and writes 5.
    run = measure(chat_log(), {"type": "noop"}, pricings=(ANTHROPIC_LIKE,))
    costs = run["costs"]["anthropic-like"]
    assert costs["per_step_cost"] == pytest.approx([9 * 3.75, 9 * 0.3 + 5 * 3.75, 14 * 0.3 + 5 * 3.75])
    assert costs["prompt_cost"] == pytest.approx(78.15)
    assert costs["prompt_cost_without_cache"] == pytest.approx(42 * 3.0)
    assert (costs["cache_read_tokens"], costs["cache_write_tokens"], costs["uncached_tokens"]) == (23, 19, 0)
    assert (costs["cache_breaks"], costs["cold_starts"], costs["summarizer_cost"]) == (0, 0, 0.0)
    assert run["timed_steps"] == 0  # the log has no timestamps: steps 10 s apart
    assert "costs" not in measure(chat_log(), {"type": "noop"})  # no pricing, no costs


def test_a_condensation_breaks_the_cache_and_the_summarizer_is_priced_at_the_same_prices() -> None:
    run = measure(condensing_log(), LLM, completion_fn=summarizer, pricings=(ANTHROPIC_LIKE,))
    costs = run["costs"]["anthropic-like"]
    # The condensations before steps 4 and 5 each rewrite what follows the task: two breaks of 41 words.
    assert run["condensations"] == 2
    assert [(b["step"], b["kind"], b["rewritten_tokens"]) for b in costs["breaks"]] == [(4, "break", 41), (5, "break", 41)]
    assert run["per_step"]["cached"][3:] == [9, 18]
    assert costs["cache_break_cost"] == pytest.approx(2 * 41 * (3.75 - 0.3))
    # Two calls of 100 prompt and 10 completion tokens, at this pricing's input and output prices.
    assert costs["summarizer_cost"] == pytest.approx(2 * (100 * 3.0 + 10 * 15.0))
    assert costs["total_cost"] == pytest.approx(costs["prompt_cost"] + costs["summarizer_cost"])
    assert costs["cache_read_tokens"] + costs["cache_write_tokens"] + costs["uncached_tokens"] == run["total_prompt_tokens"]


def test_an_idle_gap_in_the_logs_timestamps_expires_the_cache() -> None:
    log = chat_log()
    for event, moment in zip(log.events, ["00:00:00", "00:00:01", "00:00:05", "00:00:06", "00:00:10", "00:20:00", "00:20:05"]):
        event.timestamp = f"2025-01-01T{moment}"
    run = measure(log, {"type": "noop"}, pricings=(ANTHROPIC_LIKE,))
    costs = run["costs"]["anthropic-like"]
    # Step 3's request is made when the user's `Thanks` came, 20 minutes after step 2's.
    assert run["timed_steps"] == 3
    assert [(b["step"], b["kind"], b["rewritten_tokens"]) for b in costs["breaks"]] == [(3, "expired", 14)]
    assert costs["per_step_cost"][2] == pytest.approx(19 * 3.75)
    assert costs["cold_start_cost"] == pytest.approx(14 * (3.75 - 0.3))


SECRET = "sk-live-7f3a9c2e51"


def test_secrets_are_hidden_in_the_results_and_in_what_a_summarizer_is_sent(tmp_path: Path) -> None:
    log = Log().header().run("ls").run(f"deploy --token {SECRET}", "1 failed", exit_code=1).run("cat a.py").run("echo ok").say("Done")
    prompts: list[str] = []

    def recording_summarizer(**kwargs: Any) -> dict[str, Any]:
        prompts.append(json.dumps(kwargs["messages"]))
        return summarizer()

    plain = measure(log, LLM, completion_fn=recording_summarizer)
    assert SECRET in json.dumps(plain) and SECRET in "".join(prompts)  # the lost command quotes it
    prompts.clear()
    hidden = measure(log, LLM, completion_fn=recording_summarizer, redactor=Redactor({"TOKEN": SECRET}))
    assert prompts and SECRET not in "".join(prompts)
    assert SECRET not in json.dumps(hidden) and "deploy --token <secret_hidden>" in json.dumps(hidden["lost_facts"])
    results = run_benchmark([str(log.write(tmp_path / "log.json"))], [NOOP], secrets={"TOKEN": SECRET})
    assert SECRET not in json.dumps(results.to_dict()) and "TOKEN" not in json.dumps(results.to_dict())
