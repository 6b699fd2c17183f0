"""The replay and inspect reports' text (`openhands_memory/replay/formatting.py`), made without printing."""

from __future__ import annotations

from conftest import REPO_ROOT

from openhands_memory.events import load_events
from openhands_memory.replay import inspect_log, replay_events
from openhands_memory.replay.formatting import compression_lines, format_inspection, format_replay_report, format_rows

BUNDLED = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"


def test_rows_align_their_values_after_the_longest_name() -> None:
    assert format_rows([("log", "a.jsonl"), ("agent steps", "3")]) == "log          a.jsonl\nagent steps  3"


def test_a_replay_report_lists_its_rows_then_one_line_per_condensation() -> None:
    report = replay_events(load_events(BUNDLED), tokenizer="approximate", source="bundled")
    text = format_replay_report(report, summarizer=None)
    lines = text.splitlines()
    assert lines[0] == "log                   bundled"
    assert "tokens counted for    approximate (4 characters a token, no model tokenizer)" in lines
    header = lines.index(f"{'step':>5} {'id':>6}  {'made by':<22} {'reason':<8} {'events':>11} {'est. tokens':>17} {'forgot':>6}")
    assert len(lines) - header - 1 == len(report.condensations) == 4
    assert "summarizer" not in text and compression_lines([]) == []
    reasons = [line[37:45].strip() for line in lines[header + 1 :]]
    decided = [c.metadata["extra"]["cache_decision"]["reason"] for c in report.condensations]
    assert reasons == decided and set(decided) <= {"pays", "cold_cache", "hard_limit", "request"}
    assert all(c.metadata["reason"] == "custom" for c in report.condensations)  # the OpenHands field can say no more


def test_an_inspection_names_the_log_and_its_condensations() -> None:
    text = format_inspection(inspect_log(BUNDLED, top=2))
    assert text.startswith(f"log                 {BUNDLED}\n")
    assert "\ncondensations\n" in text and "forgot 86 events (ids 4-89)" in text
