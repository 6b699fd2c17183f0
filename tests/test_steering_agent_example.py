"""`examples/steering_agent.py` and `benchmarks/bench_steering.py`: the offline scripted agent notes facts, resets itself
at 80% with a handoff, finds the fact it did not note by search, and is measured against the default pipeline and none
(issue 36, item 5)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO_ROOT

from openhands_memory.events import CondensationAction, ContextNotesObservation, NewContextAction, SearchHistoryObservation, load_events
from openhands_memory.replay import snapshot_at

SMALL = ["--modules", "24", "--module-tokens", "800", "--input-window", "16000"]
"""The session at a size that runs in a fraction of a second: the reset comes after module 16, the facts by module 12."""


def _module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example() -> ModuleType:
    return _module(REPO_ROOT / "examples" / "steering_agent.py", "steering_agent_example")


def test_the_agent_notes_resets_at_80_percent_and_finds_the_unnoted_fact_by_search(
    example: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "run.jsonl"
    assert example.main([*SMALL, "--log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "resets 1, condensations 1, notes calls 5, searches 1" in out and "facts kept: 6 of 6" in out
    assert "0 over the 16,000-token window" in out
    events = load_events(log)
    (call,) = [e for e in events if isinstance(e, NewContextAction)]
    done = int(re.search(r"Done: modules 1 to (\d+)\. Next: module", call.handoff).group(1))  # type: ignore[union-attr]
    (reset,) = [e for e in events if isinstance(e, CondensationAction)]
    assert reset.summary == call.handoff and reset.condenser_metadata["reason"] == "new_context"
    # Reminded past 80% of the window (12,800 tokens: about 15 modules of 800), not before, and not at the end.
    assert 13 <= done < 20
    # The unnoted fact (the license id) was found again by search after the reset; the others are in the notes.
    (search,) = [e for e in events if isinstance(e, SearchHistoryObservation)]
    assert "LIC-88412-ZX" in search.content and search.id > reset.id
    final = snapshot_at(events, recorded=True).shown  # what the log alone shows after the last event
    notes = [e.content for e in final.events if isinstance(e, ContextNotesObservation)]
    assert notes and all(value in notes[-1] for i, (_, value) in enumerate(example.FACTS) if i != example.UNNOTED)


def test_without_the_tools_the_default_pipeline_loses_facts_and_no_condensation_overflows_the_window(example: ModuleType) -> None:
    small = {"modules": 24, "module_tokens": 800, "input_window": 16_000}
    steering = example.run_session("steering", **small)
    default = example.run_session("cache_aware", **small)
    none = example.run_session("none", **small)
    assert len(steering.facts_reported) == 6 and steering.over_window == 0 and steering.resets == 1
    assert default.notes_calls == default.searches == default.resets == 0 and default.condensations > 0
    assert len(default.facts_reported) < 6  # what its summaries kept, and no way to search for the rest
    assert len(none.facts_reported) == 6 and none.over_window > 0  # it saw everything, in prompts no model takes
    assert none.prompt_tokens > steering.prompt_tokens > default.prompt_tokens
    assert 0 < default.dollars and 0 < steering.dollars < none.dollars
    assert all(r.dollars < r.dollars_without_cache for r in (steering, default, none))


def test_the_benchmark_prints_one_row_per_pipeline_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = _module(REPO_ROOT / "benchmarks" / "bench_steering.py", "bench_steering")
    out = tmp_path / "steering.json"
    assert bench.main([*SMALL, "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("| pipeline | requests | prompt tokens |")
    assert [line.split(" | ")[0] for line in printed[2:5]] == ["| steering", "| cache_aware", "| none"]
    report = json.loads(out.read_text())
    assert report["priced_as"] == "claude-sonnet-4-5" and [run["pipeline"] for run in report["runs"]] == ["steering", "cache_aware", "none"]
    assert report["runs"][0]["facts_kept"] == 6
