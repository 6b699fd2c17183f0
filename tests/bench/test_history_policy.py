"""The benchmark applies a pipeline file's [history_policy] to the messages it measures, and counts what it dropped."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO_ROOT

from openhands_memory.bench import BenchOptions, PipelineSpec, run_benchmark
from openhands_memory.bench.metrics import summarize_runs
from openhands_memory.bench.runner import hidden_events, run_events
from openhands_memory.conversation_memory import ConversationMemory, HistoryPolicy

from ._helpers import Log, WordTokenizer

FIXED_LIMIT = REPO_ROOT / "openhands_memory" / "pipelines" / "fixed_limit.toml"
BUNDLED = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"


def measure(log: Log, policy: HistoryPolicy | None) -> dict[str, object]:
    spec = PipelineSpec.from_config("p", {"type": "noop"}, history_policy=policy)
    return run_events(log.events, spec, BenchOptions(), tokenizer=WordTokenizer())


def chat_log() -> Log:
    return Log().header().say("Looking").user("Go on").say("Done now").user("Thanks").say("Bye")


def test_each_step_is_measured_after_the_trim_and_the_hidden_instructions_count_as_forgotten() -> None:
    # In words: `<|system|> You are an agent.` 5, `<|user|> Fix the bug` 4, then one message kept:
    # step 2 `<|user|> Go on` 3, step 3 `<|user|> Thanks` 2.
    run = measure(chat_log(), HistoryPolicy(max_messages=1))
    assert run["per_step"]["tokens"] == [9, 12, 11]  # type: ignore[index]
    assert (run["history_policy_dropped"], run["history_policy_trimmed_steps"], run["history_policy_over_limit_steps"]) == (4, 2, 0)
    assert run["history_policy"] == "max_messages=1"
    # The final chat keeps `Bye`: `Looking`, `Go on`, `Done now` and `Thanks` are hidden; the
    # instructions `Go on` and `Thanks` are forgotten and not in the chat; the task stays.
    assert run["history_policy_hidden_events"] == 4
    assert (run["facts"], run["facts_forgotten"], run["facts_retained"]) == (3, 2, 0)
    assert run["events_forgotten"] == 0  # the view forgot nothing: the trim is counted apart


def test_without_a_policy_nothing_is_trimmed() -> None:
    run = measure(chat_log(), None)
    assert run["per_step"]["tokens"] == [9, 14, 19]  # type: ignore[index]
    assert run["history_policy"] is None
    assert (run["history_policy_dropped"], run["history_policy_hidden_events"], run["facts_forgotten"]) == (0, 0, 0)


def test_max_tokens_is_counted_with_the_benchmarks_tokenizer() -> None:
    # Each command turn is 31 to 34 words (see test_runner); 40 tokens hold one turn.
    log = Log().header().run("pytest", "tests/t.py::test_a FAILED", exit_code=1).run("ls").run("cat a.py").say("Done")
    run = measure(log, HistoryPolicy(max_messages=None, max_tokens=40))
    head = 9
    assert run["per_step"]["tokens"] == [head, head + 31, head + 32, head + 34]  # type: ignore[index]
    assert run["history_policy_over_limit_steps"] == 0
    # The final chat keeps `cat a.py` (34) and `Done` (2): the pytest and ls turns (4 events) are
    # hidden, and the failed pytest run's facts with them (its command and the test id).
    assert run["history_policy_hidden_events"] == 4
    assert run["facts_forgotten"] == 2 and run["facts_retained"] == 0


def test_hidden_events_are_those_whose_messages_were_dropped() -> None:
    log = Log().header().run("ls").user("Go on").say("ok")
    events = log.events
    full = ConversationMemory("").process_events(events)
    kept = HistoryPolicy(max_messages=2).apply(full).messages
    assert [m.text for m in kept][2:] == ["Go on", "ok"]
    assert [e.id for e in hidden_events(events, full, kept)] == [2, 3]


def test_the_fixed_limit_pipeline_file_runs_over_the_bundled_session() -> None:
    spec = PipelineSpec.from_file(FIXED_LIMIT)
    assert spec.history_policy == HistoryPolicy.fixed_limit()
    assert spec.description == "noop + history_policy(max_messages=50, max_tokens=8000, pin_first_user=False (inkeep_fixed_limit))"
    results = run_benchmark([BUNDLED], [spec, PipelineSpec.from_config("noop", {"type": "noop"})])
    fixed, whole = results.runs
    assert not results.errors and fixed["steps"] == whole["steps"]
    assert fixed["history_policy_dropped"] > 0 and fixed["history_policy_hidden_events"] > 0
    assert fixed["peak_context_tokens"] < whole["peak_context_tokens"] // 4
    assert fixed["facts_forgotten"] > 0 and whole["facts_forgotten"] == 0
    totals = summarize_runs([fixed])
    assert totals["history_policy_dropped"] == fixed["history_policy_dropped"]
    dumped = results.to_dict()["pipelines"][0]
    assert dumped["history_policy"]["max_tokens"] == 8000 and dumped["history_policy"]["preset"] == "inkeep_fixed_limit"


def test_names_made_unique_keep_the_policy(tmp_path: Path) -> None:
    results = run_benchmark([], [FIXED_LIMIT, FIXED_LIMIT])
    assert [spec.name for spec in results.pipelines] == ["fixed_limit", "fixed_limit-2"]
    assert all(spec.history_policy == HistoryPolicy.fixed_limit() for spec in results.pipelines)
