"""The table, results.json, results.csv and the plot, for results whose numbers are known by hand."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

from openhands_memory.bench import BenchOptions, BenchResults, PipelineSpec
from openhands_memory.bench.runner import run_events
from openhands_memory.bench.report import (
    CSV_COLUMNS,
    format_compressions,
    format_cost_table,
    format_header,
    format_table,
    write_csv,
    write_json,
    write_plot,
    write_results,
)

from openhands_memory.condenser import (
    COMPRESSION_METADATA_KEY,
    CompressionEventType,
    CompressionRecord,
    Condensation,
    Condenser,
    RollingCondenser,
)
from openhands_memory.condenser._boundaries import condensation_action
from openhands_memory.events import CmdOutputObservation, CmdRunAction
from openhands_memory.view import View

from ._helpers import WordTokenizer
from .test_runner import LLM, chat_log, condensing_log, summarizer

NOOP = PipelineSpec.from_config("noop", {"type": "noop"})
SUMMARIZE = PipelineSpec.from_config("summarize", LLM)
OPTIONS = BenchOptions(context_limit=10, completion_fn=summarizer)


@pytest.fixture
def results() -> BenchResults:
    """Two logs through two pipelines, every run measured in words, condenser time set to 0.25 s."""
    runs = []
    for name, log in (("chat.jsonl", chat_log()), ("condensing.jsonl", condensing_log())):
        for spec in (NOOP, SUMMARIZE):
            run = run_events(log.events, spec, OPTIONS, source=name, tokenizer=WordTokenizer())
            runs.append({**run, "condenser_seconds": 0.25, "seconds": 0.5})
    return BenchResults(["chat.jsonl", "condensing.jsonl"], [NOOP, SUMMARIZE], OPTIONS, runs, seconds=2.0)


def test_the_table_shows_the_totals_of_each_pipeline(results: BenchResults, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # every column in one table
    noop, summarize = results.totals()
    # chat: 3 steps, 42 tokens (23 cached), peak 19, 2 steps over 10; condensing, unchanged: 5 steps,
    # all over 10 but the first (system and task, 9 tokens).
    assert (noop["steps"], summarize["steps"]) == (8, 8)
    lines = format_table(results).splitlines()
    assert lines[0].split() == [
        "pipeline", "steps", "prompt", "tokens", "peak", "mean", ">10", "cached", "cond.", "forgot", "calls",
        "summ.", "tokens", "cost", "cond.", "s", "facts", "retained", "facts", "recoverable",
    ]  # fmt: skip
    assert set(lines[1]) == {"-", " "}
    total = noop["total_prompt_tokens"]
    assert lines[2].split() == [
        "noop", "8", f"{total:,}", f"{noop['peak_context_tokens']:,}", f"{round(total / 8):,}", "6",
        f"{100 * noop['cached_prefix_tokens'] / total:.1f}%", "0", "0", "-", "-", "-", "0.50", "-", "-",
    ]  # fmt: skip
    # summarize (more than 6 events): on the chat log, once after the last event (7 events: 4 go,
    # with the user's "Go on" and "Thanks", which the summary does not name); on the condensing log
    # at steps 4 and 5 (ls and pytest, then cat: 6 events; its summary names `pytest -x`).
    # Each call: 100 + 10 tokens, $0.00012.
    cells = lines[3].split()
    assert cells[0] == "summarize"
    # Every forgotten fact is found again by a search of the log ("Go on", "Thanks", `pytest -x`).
    assert cells[7:] == ["3", "10", "3", "330", "$0.0004", "0.50", "1/3", "(33.3%)", "3/3", "(100.0%)"]


def test_the_markdown_table_has_a_header_a_rule_and_a_row_per_pipeline(results: BenchResults) -> None:
    lines = format_table(results, markdown=True).splitlines()
    assert lines[0].startswith("| pipeline | steps | prompt tokens | peak |")
    assert lines[1] == "|---" + "|---:" * 14 + "|"
    assert lines[0].endswith("| facts retained | facts recoverable |")
    assert [line.split("|")[1].strip() for line in lines[2:]] == ["noop", "summarize"]


def test_the_header_names_the_tokenizer_the_limit_and_the_stand_in(results: BenchResults) -> None:
    header = format_header(results)
    assert "tokens counted by  approximate (4 characters a token, no model tokenizer)" in header
    assert "context limit      10 tokens" in header
    assert "summarizer         completion function summarizer" in header
    assert "pipelines          noop (noop), summarize (llm)" in header


def test_results_json_holds_settings_pipelines_and_every_run_with_its_steps(results: BenchResults, tmp_path: Path) -> None:
    data = json.loads(write_json(results, tmp_path / "r.json").read_text())
    assert data["benchmark"] == "pipelines"
    assert data["context_limit"] == 10
    assert data["summarizer"] == "completion function summarizer"
    assert data["logs"] == ["chat.jsonl", "condensing.jsonl"]
    assert [p["name"] for p in data["pipelines"]] == ["noop", "summarize"]
    assert data["pipelines"][1]["config"]["type"] == "llm"
    assert data["pipelines"][1]["totals"]["summarizer_calls"] == 3
    assert [(r["log"], r["pipeline"]) for r in data["runs"]] == [
        ("chat.jsonl", "noop"), ("chat.jsonl", "summarize"), ("condensing.jsonl", "noop"), ("condensing.jsonl", "summarize"),
    ]  # fmt: skip
    assert data["runs"][0]["per_step"] == {"tokens": [9, 14, 19], "cached": [0, 9, 14]}
    assert data["runs"][0]["total_prompt_tokens"] == 42
    totals = data["pipelines"][1]["totals"]
    assert (totals["facts_retained"], totals["facts_recoverable"], totals["recoverability"]) == (1, 3, 1.0)
    assert data["runs"][1]["facts_by_kind"]["instruction"]["recoverable"] == 2


def test_results_csv_has_a_row_per_pipeline_then_a_row_per_run(results: BenchResults, tmp_path: Path) -> None:
    with write_csv(results, tmp_path / "r.csv").open() as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == CSV_COLUMNS
        rows = list(reader)
    assert [(r["level"], r["pipeline"], r["log"]) for r in rows] == [
        ("pipeline", "noop", "ALL"), ("pipeline", "summarize", "ALL"),
        ("log", "noop", "chat.jsonl"), ("log", "summarize", "chat.jsonl"),
        ("log", "noop", "condensing.jsonl"), ("log", "summarize", "condensing.jsonl"),
    ]  # fmt: skip
    chat = rows[2]
    assert (chat["logs"], chat["steps"], chat["total_prompt_tokens"], chat["steps_over_limit"]) == ("1", "3", "42", "2")
    assert chat["cache_share"] == str(round(23 / 42, 6))
    assert chat["retention"] == "" and chat["error"] == ""
    assert rows[1]["summarizer_calls"] == "3" and rows[1]["retention"] == str(round(1 / 3, 6))
    assert (rows[1]["facts_recoverable"], rows[1]["recoverability"]) == ("3", "1.0")
    assert (rows[3]["facts_recoverable"], rows[3]["recoverability"]) == ("2", "1.0")
    assert chat["facts_recoverable"] == "0" and chat["recoverability"] == ""
    assert float(rows[0]["recall_index_seconds"]) > 0
    assert rows[0]["logs"] == "2" and rows[0]["condenser_seconds"] == "0.5"


def test_the_plot_is_a_png(results: BenchResults, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (the optional 'plot' extra)")
    path = tmp_path / "plot.png"
    assert write_plot(results, path) is True
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_everything_but_the_plot_is_written(
    results: BenchResults, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # importing it now raises ImportError
    written = write_results(results, tmp_path / "out")
    assert written["plot"] is None
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["results.csv", "results.json"]


class OffloadOldTurns(RollingCondenser):
    """Offloads the oldest tool turn (call and output) whenever the view has more than 6 events; records it."""

    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        return "tokens" if len(view) > 6 else None

    def get_condensation(self, view: View) -> Condensation:
        turn = [e for e in view.events if isinstance(e, CmdRunAction | CmdOutputObservation)][:2]
        record = CompressionRecord(
            event_type=CompressionEventType.LARGE_MESSAGE_OFFLOAD, compressed_message_count=2, previous_message_id=1,
            next_message_id=None, over_threshold_after=False, exhausted=False,
        )  # fmt: skip
        self.add_metadata(COMPRESSION_METADATA_KEY, record.to_metadata())
        return Condensation(condensation_action(view, [e.id for e in turn if e.id is not None]))


def test_compressions_are_counted_per_run_and_pipeline_and_printed_under_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # every column in one table
    offload = PipelineSpec.from_config("offload", {"type": "noop"})
    monkeypatch.setattr(PipelineSpec, "build", lambda self, **_: OffloadOldTurns() if self is offload else Condenser.from_config(self.config))
    # condensing_log: system, task, four tool turns, `Done` (11 events): over 6 events before step 4
    # (one turn goes), before step 5 and after the last event (one more each time).
    runs = [run_events(condensing_log().events, spec, OPTIONS, source="c.jsonl", tokenizer=WordTokenizer()) for spec in (NOOP, offload)]
    assert [run["compressions"] for run in runs] == [{}, {"LARGE_MESSAGE_OFFLOAD": 3}]
    results = BenchResults(["c.jsonl"], [NOOP, offload], OPTIONS, runs)
    assert [row["compressions"] for row in results.totals()] == [{}, {"LARGE_MESSAGE_OFFLOAD": 3}]
    assert format_compressions(results) == "compressions  offload: LARGE_MESSAGE_OFFLOAD 3"
    assert len(format_table(results).splitlines()) == 4  # the table itself is unchanged


def test_no_compression_line_without_compressions(results: BenchResults) -> None:
    assert format_compressions(results) == ""


def test_the_cost_table_ranks_the_pipelines_by_dollars_compared_with_no_condensation(results: BenchResults) -> None:
    from .test_runner import ANTHROPIC_LIKE

    assert format_cost_table(results) == ""  # no pricing, no table
    options = BenchOptions(context_limit=10, completion_fn=summarizer, pricings=(ANTHROPIC_LIKE,))
    runs = [
        run_events(log.events, spec, options, source=name, tokenizer=WordTokenizer())
        for name, log in (("chat.jsonl", chat_log()), ("condensing.jsonl", condensing_log()))
        for spec in (NOOP, SUMMARIZE)
    ]
    # no condensation given last: still the one compared with.
    priced = BenchResults(["chat.jsonl", "condensing.jsonl"], [SUMMARIZE, NOOP], options, runs, seconds=1.0)
    totals = {row["pipeline"]: row["costs"]["anthropic-like"] for row in priced.totals()}
    lines = format_cost_table(priced, markdown=True).splitlines()
    assert lines[0].startswith("| pricing | rank | pipeline | total $ | vs no cond. | facts kept | prompts $ | no cache $ | summarizer $ |")
    cells = [line.strip("| ").split(" | ") for line in lines[2:4]]
    ranked = sorted(totals, key=lambda name: totals[name]["total_cost"])
    assert [c[:3] for c in cells] == [["anthropic-like", "1", ranked[0]], ["anthropic-like", "2", ranked[1]]]
    by_name = {c[2]: c for c in cells}
    assert by_name["noop"][4] == "+0.0%"
    change = 100 * (totals["summarize"]["total_cost"] / totals["noop"]["total_cost"] - 1)
    assert by_name["summarize"][4] == f"{change:+.1f}%"
    assert by_name["summarize"][8] == f"${totals['summarize']['summarizer_cost']:,.2f}"  # 3 calls of 100 + 10 tokens
    assert lines[-1].startswith(f"anthropic-like: cheapest {ranked[0]} (")
    assert totals["summarize"]["summarizer_cost"] == pytest.approx(3 * (100 * 3.0 + 10 * 15.0))


def test_text_tables_fit_a_100_column_output_cut_into_panels_each_led_by_the_pipeline(
    results: BenchResults, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # piped output: 100 columns
    wide = format_table(results, width=1000).splitlines()
    panels = [panel.splitlines() for panel in format_table(results).split("\n\n")]
    assert len(panels) >= 2
    for panel in panels:
        assert max(map(len, panel)) <= 100
        assert panel[0].startswith("pipeline ") and [line.split()[0] for line in panel[2:]] == ["noop", "summarize"]
    # every column once, in order: the panels side by side are the wide table
    for row, *pieces in zip(wide, *panels):
        assert row.split() == pieces[0].split() + [cell for piece in pieces[1:] for cell in piece.split()[1:]]
    assert len(format_table(results, markdown=True).splitlines()[0]) > 100  # Markdown: one table, however wide
    header = format_header(results, width=60).splitlines()
    assert max(map(len, header)) <= 60 and header[0].startswith("logs ")


def test_the_bench_command_s_output_fits_100_columns_and_markdown_keeps_every_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from openhands_memory.cli import main

    monkeypatch.delenv("COLUMNS", raising=False)
    log = chat_log().write(tmp_path / "chat.jsonl")
    argv = ["bench", str(log), "--pipeline", "all", "--pricing", "claude-sonnet-4-5", "--tokenizer", "approximate", "--no-plot"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert main([*argv, "--out", str(tmp_path / "b"), "--markdown"]) == 0
    tables = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| pipeline") or line.startswith("| pricing")]
    assert len(tables) == 2 and "facts recoverable" in tables[0] and "cold $" in tables[1]
