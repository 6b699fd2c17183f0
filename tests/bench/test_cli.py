"""The `bench` subcommand: `run_bench` on parsed arguments, and `openhands-memory bench` once it is wired in."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_SECONDS

from _folders import unwritable  # noqa: F401  (a fixture)

from openhands_memory._progress import ProgressBar
from openhands_memory.cli.bench import add_bench_parser, run_bench

from ._helpers import write_toml
from .test_runner import chat_log, condensing_log, tool_log

REPO = Path(__file__).resolve().parent.parent.parent
"""This clone: the install hints name it."""


def bench(*argv: str | Path) -> int:
    parser = argparse.ArgumentParser(prog="openhands-memory")
    add_bench_parser(parser.add_subparsers(dest="command"))
    return run_bench(parser.parse_args(["bench", *map(str, argv)]))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "chat": chat_log().write(tmp_path / "chat.jsonl"),
        "condensing": condensing_log().write(tmp_path / "condensing.jsonl"),
        "noop": write_toml(tmp_path / "noop.toml", {"type": "noop"}),
        "amortized": write_toml(tmp_path / "amortized.toml", {"type": "amortized", "max_size": 6, "keep_first": 2}),
        "out": tmp_path / "out",
    }


def test_bench_prints_the_table_and_writes_json_csv_and_plot(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # every column in one table (a terminal this wide)
    code = bench(files["chat"], files["condensing"], "--pipeline", files["noop"], "--pipeline", files["amortized"],
                 "--context-limit", "50", "--out", files["out"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0
    assert "logs               2" in out
    assert "tokens counted by  gpt-4o (litellm's tokenizer)" in out  # the default of every command
    assert "context limit      50 tokens" in out
    assert "summarizer" not in out  # no model-backed condenser
    table = out.split("\n\n", 1)[1].splitlines()
    assert table[0].split()[:6] == ["pipeline", "steps", "prompt", "tokens", "peak", "mean"]
    assert [line.split()[0] for line in table[2:]] == ["noop", "amortized"]
    # amortized: condensations and events forgotten, 2 and 8 on the condensing log (see test_runner),
    # 1 and 4 on the chat log (after its last event, 7 events: the 4 after the task go).
    assert table[3].split()[7:9] == ["3", "12"]
    names = sorted(p.name for p in files["out"].iterdir())
    assert names[:2] == ["context_tokens.png", "results.csv"] or "matplotlib" in err
    assert "results.json" in names
    assert json.loads((files["out"] / "results.json").read_text())["context_limit"] == 50
    assert err.startswith("wrote ")
    assert "benchmarking" not in err  # stderr is no terminal: no progress bar


def test_bench_shows_a_progress_bar_only_on_a_terminal(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert bench(files["chat"], files["condensing"], "--pipeline", files["noop"], "--out", files["out"], "--no-plot") == 0
    shown = terminal.getvalue()
    assert "\rbenchmarking [###############...............] 1/2 runs" in shown
    assert "\rbenchmarking [##############################] 2/2 runs" in shown
    assert "wrote " in shown


def test_the_progress_bar_redraws_at_most_ten_times_a_second_and_always_at_the_end() -> None:
    stream, now = io.StringIO(), [0.0]
    bar = ProgressBar(stream, "b", unit="runs", width=4, clock=lambda: now[0])
    bar(1, 4)
    bar(2, 4)  # too soon: skipped
    now[0] = 0.2
    bar(3, 4)
    bar(4, 4)  # the end is always drawn
    assert stream.getvalue() == "\rb [#...] 1/4 runs\rb [###.] 3/4 runs\rb [####] 4/4 runs"
    bar.close()
    assert stream.getvalue().endswith("\r" + " " * 17 + "\r")


def test_model_backed_pipelines_name_the_offline_summarizer(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # every column in one table
    llm = write_toml(
        tmp_path / "llm.toml",
        {"type": "llm", "llm_config": "condenser", "max_size": 6, "keep_first": 2},
        {"model": "m", "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "max_input_tokens": 1000},
    )
    assert bench(files["condensing"], "--pipeline", llm, "--out", files["out"], "--no-plot", "--markdown") == 0
    out = capsys.readouterr().out
    assert "summarizer         offline structured summarizer (deterministic, no model: summaries built from the events" in out
    assert "| llm | 5 |" in out


def test_a_missing_log_is_an_error(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    missing = files["out"] / "missing.json"
    assert bench(missing, "--pipeline", files["noop"], "--out", files["out"]) == 1
    assert capsys.readouterr().err == f"error: {missing}: no such file or folder\n"
    assert not files["out"].exists()


def test_a_bad_pipeline_is_a_usage_error(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_toml(tmp_path / "bad.toml", {"type": "amortised"})
    assert bench(files["chat"], "--pipeline", bad, "--out", files["out"]) == 2
    assert capsys.readouterr().err == f"error: {bad}: Unknown condenser type 'amortised'. Did you mean 'amortized'?\n"


def test_bench_with_pricing_prints_a_cost_table_per_pipeline_and_model(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = bench(files["condensing"], "--pipeline", files["noop"], "--pipeline", files["amortized"],
                 "--pricing", "claude-sonnet-4-5", "--pricing", "gpt-5", "--step-seconds", "1", "--out", files["out"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "prices             claude-sonnet-4-5 (anthropic: breakpoints, cache lives 300 s, from 1,024 tokens)" in out
    assert "request times      the log's timestamps at 0 of 5 steps; 1 s apart at the others" in out
    block = next(b for b in out.split("\n\n") if b.split()[:3] == ["pricing", "rank", "pipeline"])
    table = block.splitlines()
    cells = [line.split() for line in table[2:]]
    assert [row[:2] for row in cells] == [["claude-sonnet-4-5", "1"], ["claude-sonnet-4-5", "2"], ["gpt-5", "1"], ["gpt-5", "2"]]
    for pricing in ("claude-sonnet-4-5", "gpt-5"):  # ranked by dollars, each pricing on its own
        dollars = [float(row[3].lstrip("$").replace(",", "")) for row in cells if row[0] == pricing]
        assert dollars == sorted(dollars) and {row[2] for row in cells if row[0] == pricing} == {"noop", "amortized"}
    written = json.loads((files["out"] / "results.json").read_text())
    assert [p["model"] for p in written["pricings"]] == ["claude-sonnet-4-5", "gpt-5"]
    assert set(written["pipelines"][1]["totals"]["costs"]) == {"claude-sonnet-4-5", "gpt-5"}
    header = (files["out"] / "results.csv").read_text().splitlines()[0].split(",")
    assert "prompt_cost[claude-sonnet-4-5]" in header and "cache_breaks[gpt-5]" in header


def test_an_unknown_pricing_is_a_usage_error_before_any_run(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert bench(files["chat"], "--pipeline", files["noop"], "--pricing", "no-such-model-xyz", "--out", files["out"]) == 2
    assert capsys.readouterr().err== "error: pricing 'no-such-model-xyz': litellm knows no such model.\n"
    assert not files["out"].exists()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (("--jobs", "0"), "--jobs must be at least 1, got 0"),
        (("--context-limit", "0"), "--context-limit must be at least 1, got 0"),
        (("--step-seconds", "-1"), "--step-seconds must be at least 0, got -1.0"),
    ],
)
def test_bad_numbers_are_usage_errors(
    files: dict[str, Path], option: tuple[str, str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench(files["chat"], "--pipeline", files["noop"], *option) == 2
    assert capsys.readouterr().err == f"error: {message}\n"


def test_a_log_that_fails_is_reported_the_rest_written_and_the_exit_code_is_1(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 0, "action": "message"\n')
    assert bench(bad, files["chat"], "--pipeline", files["noop"], "--out", files["out"], "--no-plot") == 1
    out, err = capsys.readouterr()
    assert "logs               2 (1 with errors)" in out
    assert f"error: {bad} (noop): MalformedEventError: " in err
    assert (files["out"] / "results.csv").exists()


def test_without_matplotlib_the_plot_is_skipped_with_a_hint(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert bench(files["chat"], "--pipeline", files["noop"], "--out", files["out"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"no plot: matplotlib is not installed (pip install '{REPO}[plot]')"  # this clone
    assert not (files["out"] / "context_tokens.png").exists()


def test_existing_results_are_refused_before_the_run_and_kept_unless_force(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert bench(files["chat"], "--pipeline", files["noop"], "--out", files["out"], "--no-plot") == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in files["out"].iterdir()}

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the refusal comes before the benchmark")

    with monkeypatch.context() as patch:
        patch.setattr("openhands_memory.bench.runner.run_benchmark", never)
        assert bench(files["condensing"], "--pipeline", files["noop"], "--out", files["out"], "--no-plot") == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"error: {files['out'] / 'results.json'}: already exists; use --force to replace it\n")
    assert {p.name: p.read_bytes() for p in files["out"].iterdir()} == before
    assert bench(files["condensing"], "--pipeline", files["noop"], "--out", files["out"], "--no-plot", "--force") == 0
    assert json.loads((files["out"] / "results.json").read_text())["logs"] == [str(files["condensing"])]
    assert sorted(p.name for p in files["out"].iterdir()) == ["results.csv", "results.json"]  # no temporary file left
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in files["out"].iterdir())


def test_an_existing_plot_is_refused_only_when_a_plot_would_be_drawn(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    files["out"].mkdir()
    (files["out"] / "context_tokens.png").write_bytes(b"mine")
    assert bench(files["chat"], "--pipeline", files["noop"], "--out", files["out"]) == 1
    assert capsys.readouterr().err == f"error: {files['out'] / 'context_tokens.png'}: already exists; use --force to replace it\n"
    assert bench(files["chat"], "--pipeline", files["noop"], "--out", files["out"], "--no-plot") == 0
    assert (files["out"] / "context_tokens.png").read_bytes() == b"mine"


def test_results_never_overwrite_an_input_even_with_force(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    files["out"].mkdir()
    log = chat_log().write(files["out"] / "results.json")
    before = log.read_bytes()
    assert bench(log, "--pipeline", files["noop"], "--out", files["out"], "--no-plot", "--force") == 1
    assert capsys.readouterr().err == (
        f"error: {log}: is the input {log}, and an input is never written to; choose another output\n"
    )
    assert log.read_bytes() == before and sorted(p.name for p in files["out"].iterdir()) == ["results.json"]


@pytest.mark.parametrize("where", ["read-only", "read-only/new"])
def test_results_in_a_folder_that_cannot_be_written_are_refused_before_the_run(
    files: dict[str, Path], unwritable: Path, where: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the refusal comes before the benchmark")

    monkeypatch.setattr("openhands_memory.bench.runner.run_benchmark", never)
    out = unwritable.parent / where
    assert bench(files["chat"], "--pipeline", files["noop"], "--out", out) == 1
    assert capsys.readouterr().err == f"error: {out}: cannot be written: {unwritable} is not writable\n"
    assert list(unwritable.iterdir()) == []


def test_results_through_a_missing_folder_go_where_the_os_puts_them_and_make_no_folder(
    files: dict[str, Path], tmp_path: Path
) -> None:
    assert bench(files["chat"], "--pipeline", files["noop"], "--out", tmp_path / "missing" / ".." / "out", "--no-plot") == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["results.csv", "results.json"]
    assert not (tmp_path / "missing").exists()


def test_a_folder_of_logs_benches_each_log_in_it(files: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in ("chat", "condensing"):
        files[name].rename(folder / files[name].name)
    (folder / "notes.txt").write_text("not a log")
    assert bench(folder, "--pipeline", files["noop"], "--out", files["out"], "--no-plot") == 0
    results = json.loads((files["out"] / "results.json").read_text())
    assert results["logs"] == [str(folder / "chat.jsonl"), str(folder / "condensing.jsonl")]
    assert [run.get("error") for run in results["runs"]] == [None, None]


def test_a_folder_without_logs_is_refused_and_nothing_written(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a log")
    assert bench(folder, "--pipeline", files["noop"], "--out", files["out"]) == 1
    assert capsys.readouterr().err == (
        f"error: {folder}: a folder with no log in it: no *.json or *.jsonl file, no session folder (events/<id>.json)\n"
    )
    assert not files["out"].exists()


def test_when_every_run_fails_nothing_is_written(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 0, "action": "message"\n')
    assert bench(bad, "--pipeline", files["noop"], "--out", files["out"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"error: every run failed: nothing written to {files['out']}"
    assert not files["out"].exists()


def test_small_work_runs_in_this_process_whatever_jobs_says(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_workers(*args: object, **kwargs: object) -> None:
        raise AssertionError("two small logs are not worth starting worker processes")

    monkeypatch.setattr("openhands_memory.bench.runner._run_in_processes", no_workers)
    for jobs in ([], ["--jobs", "4"]):
        code = bench(files["chat"], files["condensing"], "--pipeline", files["noop"], *jobs, "--out", files["out"], "--no-plot", "--force")
        assert code == 0
        err = capsys.readouterr().err
        assert ("note: 0.0 MB of log to replay: running in this process, not 4 (a worker is worth starting for about 16 MB)" in err) == bool(jobs)
        assert json.loads((files["out"] / "results.json").read_text())["jobs"] == 1


def test_the_ray_executor_without_ray_prints_an_install_hint(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as where it is not installed
    assert bench(files["chat"], "--pipeline", files["noop"], "--executor", "ray", "--out", files["out"]) == 1
    assert capsys.readouterr().err == f"error: --executor ray needs Ray: pip install '{REPO}[ray]'\n"  # this clone


def _bench_is_wired() -> bool:
    from openhands_memory import cli

    return "add_bench_parser" in Path(cli.__file__).read_text()


@pytest.mark.slow
@pytest.mark.skipif(not _bench_is_wired(), reason="`bench` is not wired into openhands_memory/cli/ yet")
def test_openhands_memory_bench_runs_from_the_command_line(files: dict[str, Path]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "openhands_memory.cli", "bench", str(files["chat"]), str(files["condensing"]),
         "--pipeline", str(files["noop"]), "--pipeline", str(files["amortized"]), "--jobs", "2", "--out", str(files["out"])],
        check=False, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "amortized" in result.stdout.split("\n\n", 1)[1]
    # Two tiny logs are not worth two worker processes (starting them took 18 times the work).
    assert "note: 0.0 MB of log to replay: running in this process, not 2 " in result.stderr
    assert json.loads((files["out"] / "results.json").read_text())["jobs"] == 1


def test_bench_prints_the_compressions_under_the_table_and_writes_them_to_results_json(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from openhands_memory.bench import PipelineSpec
    from openhands_memory.condenser import Condenser

    from .test_report import OffloadOldTurns

    offload = write_toml(files["out"].parent / "offload.toml", {"type": "noop"})
    monkeypatch.setattr(
        PipelineSpec, "build", lambda self, **_: OffloadOldTurns() if self.name == "offload" else Condenser.from_config(self.config)
    )
    code = bench(files["condensing"], "--pipeline", files["noop"], "--pipeline", offload, "--no-plot", "--out", files["out"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert out.endswith("\n\ncompressions  offload: LARGE_MESSAGE_OFFLOAD 3\n")
    data = json.loads((files["out"] / "results.json").read_text())
    assert [p["totals"]["compressions"] for p in data["pipelines"]] == [{}, {"LARGE_MESSAGE_OFFLOAD": 3}]
    assert [r["compressions"] for r in data["runs"]] == [{}, {"LARGE_MESSAGE_OFFLOAD": 3}]


def test_the_cost_table_compares_with_no_condensation_wherever_it_was_given_and_names_the_cheapest(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # every column in one table
    # no condensation comes last: the comparison is still with it, not with the first pipeline.
    code = bench(files["condensing"], "--pipeline", files["amortized"], "--pipeline", files["noop"],
                 "--pricing", "claude-sonnet-4-5", "--step-seconds", "1", "--out", files["out"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    rows = {line.split()[2]: line.split() for line in out.splitlines() if line.startswith("claude-sonnet-4-5  ")}
    assert rows["noop"][4] == "+0.0%"
    written = json.loads((files["out"] / "results.json").read_text())
    totals = {p["name"]: p["totals"] for p in written["pipelines"]}
    cost = {name: t["costs"]["claude-sonnet-4-5"]["total_cost"] for name, t in totals.items()}
    assert rows["amortized"][4] == f"{100 * (cost['amortized'] / cost['noop'] - 1):+.1f}%"
    cheapest = min(cost, key=lambda name: (cost[name], name))
    kept = {name: t["facts"] - t["facts_forgotten"] + t["facts_retained"] for name, t in totals.items()}
    line = next(line for line in out.splitlines() if line.startswith("claude-sonnet-4-5: cheapest "))
    assert line.startswith(f"claude-sonnet-4-5: cheapest {cheapest} (")
    keeping = min((name for name in cost if kept[name] >= kept["noop"]), key=lambda name: (cost[name], name))
    assert (f"cheapest keeping as many facts as no condensation ({kept['noop']:,}): {keeping} (" in line) or (
        keeping == cheapest and line.endswith(f"; it keeps as many facts as no condensation ({kept['noop']:,})")
    )


def test_with_pricing_and_no_baseline_no_condensation_is_added_and_said(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code = bench(files["condensing"], "--pipeline", files["amortized"], "--pricing", "gpt-5", "--out", files["out"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "note: no_condensation added: the cost table compares every pipeline with it\n" in err
    assert [p["name"] for p in json.loads((files["out"] / "results.json").read_text())["pipelines"]] == ["amortized", "no_condensation"]
    assert "vs no cond." in out


@pytest.mark.parametrize(("model", "close"), [("claude-sonet-4-5", "claude-sonnet-4-5"), ("gpt-5o", "gpt-5")])
def test_a_misspelt_pricing_model_is_refused_with_did_you_mean_never_priced_at_zero(
    model: str, close: str, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench(files["chat"], "--pipeline", files["noop"], "--pricing", model, "--out", files["out"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: pricing {model!r}: litellm knows no such model. Did you mean {close!r}")
    assert err.count("\n") == 1
    assert not files["out"].exists()


def test_several_pipelines_follow_one_pipeline_flag_as_a_shell_glob_gives_them(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # `bench LOG --pipeline pipelines/*.toml`: the shell passes every file after the one flag.
    assert bench(files["chat"], "--pipeline", files["noop"], files["amortized"], "--pipeline", "no_condensation",
                 "--out", files["out"], "--no-plot") == 0  # fmt: skip
    table = capsys.readouterr().out.split("\n\n", 1)[1].splitlines()
    assert [line.split()[0] for line in table[2:5]] == ["noop", "amortized", "no_condensation"]


def test_logs_after_the_pipelines_are_refused_saying_where_they_go(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert bench("--pipeline", files["noop"], files["chat"]) == 2  # the log was taken for a pipeline
    assert capsys.readouterr().err == (
        "error: no LOG given: put the logs before --pipeline, which takes every name after it up to the next "
        "option (or last, after --)\n"
    )
    assert bench("--no-plot", "--out", files["out"], "--pipeline", files["noop"], "--", files["chat"]) == 0


def orphan_result_log(path: Path) -> Path:
    """A log whose first tool result has lost its call (a slice of a longer log, say)."""
    log = tool_log()
    del log.events[2]  # `pytest`'s call; its output stays
    return log.write(path)


def test_a_warning_is_said_once_per_log_naming_it_and_the_pipelines_that_met_it(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    orphan = orphan_result_log(tmp_path / "slice.jsonl")
    again = write_toml(tmp_path / "noop_again.toml", {"type": "noop"})
    assert bench(orphan, files["chat"], "--pipeline", files["noop"], again, "--out", files["out"], "--no-plot") == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "do not all match" in line]
    assert said == [
        f"warning: {orphan}: the view's tool calls and results do not all match (the log lacks one, or a condenser "
        "split an action from its observation); left out of the chat: results without a call: call-1 (all 2 pipelines)"
    ]
    assert err.index(said[0]) < err.index("wrote ")
    runs = json.loads((files["out"] / "results.json").read_text())["runs"]
    assert [len(run.get("warnings", [])) for run in runs] == [1, 1, 0, 0]
    assert err.count("cause 2 is not in the log") == 1  # said loading it, once for both pipelines


@pytest.mark.slow
def test_worker_processes_return_their_warnings_instead_of_printing_them(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from openhands_memory.bench.report import warning_lines
    from openhands_memory.bench.runner import run_benchmark

    orphan = orphan_result_log(tmp_path / "slice.jsonl")
    noop = write_toml(tmp_path / "noop.toml", {"type": "noop"})
    amortized = write_toml(tmp_path / "amortized.toml", {"type": "amortized", "max_size": 6, "keep_first": 2})
    results = run_benchmark([orphan], [noop, amortized], tokenizer="approximate", jobs=2)
    assert results.jobs == 2
    assert capfd.readouterr().err == ""  # nothing from the workers, nothing over a progress bar
    loaded, matched = warning_lines(results)  # each worker loaded the log: said once all the same
    assert loaded.startswith(f"{orphan}:3: warning: id 3: cause 2 is not in the log")
    assert matched.startswith(f"{orphan}: the view's tool calls and results do not all match")
    assert matched.endswith("results without a call: call-1 (all 2 pipelines)")


def test_a_warning_in_the_middle_of_a_run_never_runs_into_the_progress_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openhands_memory.cli import main

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    orphan = orphan_result_log(tmp_path / "slice.jsonl")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr("openhands_memory._progress.time.monotonic", iter(range(0, 10**6, 1)).__next__)  # draws every update
    assert main(["replay", str(orphan), "--tokenizer", "approximate"]) == 0
    shown = terminal.getvalue()
    assert "\rreplaying [" in shown
    pieces = [piece for line in shown.split("\n") for piece in line.split("\r")]
    (said,) = [piece for piece in pieces if "do not all match" in piece]
    assert said.startswith(f"warning: {orphan}: the view's tool calls and results do not all match")
