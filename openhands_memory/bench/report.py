"""Show a benchmark's results: a table (plain or Markdown), `results.json`, `results.csv`, and a PNG plot.

- `format_table(results)`: one row per pipeline, totals over every log (see
  `openhands_memory.bench.metrics.summarize_runs`); `markdown=True` for a Markdown table.
  `format_cost_table(results)`: with pricings, for each pricing the pipelines ranked by dollars,
  compared with no condensation: dollars with and without the prompt cache, the summarizer's,
  checkable facts kept, tokens by how they were billed, cache breaks and cold starts with what they
  cost (see `openhands_memory.replay.costs`); then the cheapest pipeline, and the cheapest that keeps
  as many facts as no condensation (`cost_ranking`).
  `format_compressions(results)`: below it, the compressions of a progressive strategy by type.
- `write_json(results, path)`: the settings, every pipeline with its config and totals, and every
  run (log x pipeline) with its per-step token lists (`BenchResults.to_dict`).
- `write_csv(results, path)`: one row per pipeline (`level` = `pipeline`, `log` = `ALL`), then one
  per run (`level` = `log`); the scalar metrics only.
- `write_plot(results, path)`: context tokens per step, one panel per log, one line per pipeline, each
  with its own colour and line style, every name in the legend (`draw_plot` gives the figure). Needs matplotlib (the `plot` extra); without it nothing is written and it returns False.
- `write_results(results, folder)`: all three files, named `results.json`, `results.csv` and
  `context_tokens.png`; `check_results_output(folder)` says beforehand whether it may.

Every file is written whole (a temporary file, then a rename; mode 0600). An existing file is
replaced only with `overwrite=True`, and an input (`inputs=`: the logs, the pipeline configs) never.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from openhands_memory._files import check_writable, make_private_folder, refuse_inputs, resolve_output, write_atomically
from openhands_memory._install import install_hint
from openhands_memory._terminal import text_width, wrap_line
from openhands_memory.bench.runner import BenchResults
from openhands_memory.bench.stand_in import STAND_IN_NAME
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARIZER_NAME
from openhands_memory.errors import OutputExistsError
from openhands_memory.bench.metrics import summarize_runs
from openhands_memory.replay.costs import SUMMED_FIGURES, summarize_costs

__all__ = [
    "CSV_COLUMNS",
    "CSV_NAME",
    "JSON_NAME",
    "PLOT_COLOURS",
    "PLOT_LINESTYLES",
    "PLOT_NAME",
    "check_results_output",
    "cost_columns",
    "cost_ranking",
    "draw_plot",
    "facts_kept",
    "format_compressions",
    "format_cost_table",
    "format_header",
    "format_by_agent",
    "format_table",
    "is_no_condensation",
    "plot_hint",
    "plot_style",
    "warning_lines",
    "write_csv",
    "write_json",
    "write_plot",
    "write_results",
]

JSON_NAME = "results.json"
"""The JSON file `write_results` writes."""
CSV_NAME = "results.csv"
"""The CSV file `write_results` writes."""
PLOT_NAME = "context_tokens.png"
"""The plot `write_results` writes."""



def warning_lines(results: BenchResults) -> list[str]:
    """Each warning the runs logged, once per log, naming the log and the pipelines that met it.

    `LOG: message (pipelines: a, b)`, or `(all N pipelines)`, in the order the runs logged them, after
    what was said loading each log (once, without pipelines; a message that names its log already is kept as is).
    """
    read: dict[tuple[str, str], None] = {}
    met: dict[tuple[str, str], list[str]] = {}
    for run in results.runs:
        for message in run.get("log_warnings", ()):
            read[run["log"], message] = None  # about the log itself, whichever run loaded it
        for message in run.get("warnings", ()):
            met.setdefault((run["log"], message), []).append(run["pipeline"])
    lines = [message if message.startswith(log) else f"{log}: {message}" for log, message in read]
    everyone = len(results.pipelines)
    for (log, message), pipelines in met.items():
        if len(pipelines) == everyone > 1:
            which = f"all {everyone} pipelines"
        else:
            which = f"pipeline{'s' if len(pipelines) > 1 else ''}: {', '.join(pipelines)}"
        lines.append(f"{log}: {message} ({which})")
    return lines


def plot_hint() -> str:
    """The one line said when the plot cannot be drawn: how to install the `plot` extra."""
    return f"no plot: matplotlib is not installed ({install_hint('plot')})"


CSV_COLUMNS = (
    "level",
    "pipeline",
    "log",
    "format",
    "logs",
    "steps",
    "total_prompt_tokens",
    "peak_context_tokens",
    "mean_context_tokens",
    "steps_over_limit",
    "cached_prefix_tokens",
    "cache_share",
    "condensations",
    "events_forgotten",
    "tool_call_repairs",
    "history_policy_dropped",
    "history_policy_hidden_events",
    "summarizer_calls",
    "summarizer_prompt_tokens",
    "summarizer_completion_tokens",
    "summarizer_cost",
    "condenser_seconds",
    "facts",
    "facts_forgotten",
    "facts_retained",
    "retention",
    "facts_recoverable",
    "recoverability",
    "recall_index_seconds",
    "recall_search_seconds",
    "error",
)
"""The columns of `results.csv`, in order."""

_NONE = "-"


def _share(value: float | None) -> str:
    return _NONE if value is None else f"{100 * value:.1f}%"


def _of_forgotten(row: Mapping[str, Any], count: str, share: str) -> str:
    forgotten = row.get("facts_forgotten") or 0
    if not forgotten or row.get(count) is None:
        return _NONE
    return f"{row[count]}/{forgotten} ({_share(row.get(share))})"


def _cost(row: Mapping[str, Any]) -> str:
    if not row.get("summarizer_calls"):
        return _NONE
    text = f"${row['summarizer_cost']:.4f}"
    return text if row.get("summarizer_cost_known", True) else text + "?"


def _row_cells(row: Mapping[str, Any]) -> list[str]:
    summarizer_tokens = (row.get("summarizer_prompt_tokens") or 0) + (row.get("summarizer_completion_tokens") or 0)
    return [
        str(row["pipeline"]),
        f"{row['steps']:,}",
        f"{row['total_prompt_tokens']:,}",
        f"{row['peak_context_tokens']:,}",
        f"{round(row['mean_context_tokens']):,}",
        f"{row['steps_over_limit']:,}",
        _share(row.get("cache_share")),
        f"{row['condensations']:,}",
        f"{row['events_forgotten']:,}",
        f"{row['summarizer_calls']:,}" if row.get("summarizer_calls") else _NONE,
        f"{summarizer_tokens:,}" if summarizer_tokens else _NONE,
        _cost(row),
        f"{row['condenser_seconds']:.2f}",
        _of_forgotten(row, "facts_retained", "retention"),
        _of_forgotten(row, "facts_recoverable", "recoverability"),
    ]


def _headers(context_limit: int) -> list[str]:
    limit = f"{context_limit // 1000}k" if context_limit % 1000 == 0 else f"{context_limit:,}"
    return [
        "pipeline",
        "steps",
        "prompt tokens",
        "peak",
        "mean",
        f">{limit}",
        "cached",
        "cond.",
        "forgot",
        "calls",
        "summ. tokens",
        "cost",
        "cond. s",
        "facts retained",
        "facts recoverable",
    ]


def format_table(results: BenchResults, *, markdown: bool = False, width: int | None = None) -> str:
    """One row per pipeline (totals over every log that ran), as aligned text or a Markdown table.

    Columns: steps; prompt tokens summed over the steps; peak and mean context tokens; steps over
    the context limit; the share of prompt tokens a prefix cache could have served; condensations,
    events they forgot; summarizer calls, their tokens and cost; seconds spent in the condenser;
    forgotten facts still in the final view, and those a search of the log finds again.
    Text wider than `width` (default: `text_width()`) is cut into panels of columns, each
    starting with the pipeline; Markdown is one table, however wide.
    """
    headers = _headers(results.options.context_limit)
    rows = [_row_cells(row) for row in results.totals()]
    return _layout(headers, rows, markdown=markdown, width=width)


_COST_KEYS = SUMMED_FIGURES
"""The cost figures of a run, per pricing: the ones replay's report sums, in its order."""


def _dollars(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.995 or value == 0 else f"${value:.4f}"


def is_no_condensation(spec: Any) -> bool:
    """The pipeline shows the whole history at every step: a `noop` condenser and no history policy (the cost table's baseline)."""
    return getattr(spec.config, "type", None) == "noop" and spec.history_policy is None


def facts_kept(row: Mapping[str, Any]) -> int:
    """The checkable facts a pipeline's final views hold: every fact, less the forgotten ones, plus the retained ones."""
    return int(row.get("facts") or 0) - int(row.get("facts_forgotten") or 0) + int(row.get("facts_retained") or 0)


def cost_ranking(results: BenchResults) -> dict[str, dict[str, Any]]:
    """Per pricing name: the pipelines from the cheapest (total dollars over every log), and what the table names.

    Each value holds `ranked` (the totals rows, cheapest first; ties by name), `baseline` (the
    no-condensation row, or None when no pipeline is one), `cheapest` (the first row) and
    `cheapest_keeping` (the cheapest row that keeps at least as many checkable facts in its final
    views as no condensation: `facts_kept`; None without a baseline).
    """
    totals = results.totals()
    baseline = next((row for row, spec in zip(totals, results.pipelines) if is_no_condensation(spec)), None)
    ranking = {}
    for pricing in results.options.pricings:
        name = pricing.name
        rows = [row for row in totals if name in (row.get("costs") or {})]
        ranked = sorted(rows, key=lambda row: (row["costs"][name]["total_cost"], row["pipeline"]))
        keeping = None
        if baseline is not None:
            keeping = next((row for row in ranked if facts_kept(row) >= facts_kept(baseline)), None)
        ranking[name] = {"ranked": ranked, "baseline": baseline, "cheapest": ranked[0] if ranked else None, "cheapest_keeping": keeping}
    return ranking


def format_cost_table(results: BenchResults, *, markdown: bool = False, width: int | None = None) -> str:
    """For each pricing, the pipelines ranked by dollars (totals over every log), then the cheapest named; empty without pricings.

    Columns: the pricing and the rank; USD in all (the agent's prompts with the prompt cache, and
    the summarizer's calls), and how that compares with no condensation's (the `noop` pipeline,
    whichever place it was given in); the checkable facts the final views keep (`facts_kept`, of
    every fact); USD of the prompts with the cache and without it, of the summarizer's calls; the
    prompt tokens read from the cache, written to it, and sent uncached; cache breaks (the prefix
    rewritten while the cache was warm) and cold starts (the cache expired in an idle gap), each with
    what it cost over reading what the cache held. Below the table, one line per pricing names the
    cheapest pipeline and the cheapest that keeps at least as many facts as no condensation.
    Text is cut to `width` as `format_table` cuts it.
    """
    if not results.options.pricings:
        return ""
    headers = [
        "pricing", "rank", "pipeline", "total $", "vs no cond.", "facts kept", "prompts $", "no cache $", "summarizer $",
        "cache read", "cache write", "uncached", "breaks", "breaks $", "cold starts", "cold $",
    ]  # fmt: skip
    ranking = cost_ranking(results)
    rows = []
    for name, ranked in ranking.items():
        baseline = ranked["baseline"]
        base = baseline["costs"][name]["total_cost"] if baseline is not None and name in (baseline.get("costs") or {}) else None
        for rank, row in enumerate(ranked["ranked"], start=1):
            figures = row["costs"][name]
            change = f"{100 * (figures['total_cost'] / base - 1):+.1f}%" if base else _NONE
            rows.append(
                [
                    name,
                    str(rank),
                    str(row["pipeline"]),
                    _dollars(figures["total_cost"]),
                    change,
                    f"{facts_kept(row):,}/{int(row.get('facts') or 0):,}",
                    _dollars(figures["prompt_cost"]),
                    _dollars(figures["prompt_cost_without_cache"]),
                    _dollars(figures["summarizer_cost"]) if figures["summarizer_cost"] else _NONE,
                    f"{figures['cache_read_tokens']:,}",
                    f"{figures['cache_write_tokens']:,}",
                    f"{figures['uncached_tokens']:,}",
                    f"{figures['cache_breaks']:,}",
                    _dollars(figures["cache_break_cost"]),
                    f"{figures['cold_starts']:,}",
                    _dollars(figures["cold_start_cost"]),
                ]
            )
    table = _layout(headers, rows, markdown=markdown, left=3, width=width)
    said = [_cheapest_line(name, ranked) for name, ranked in ranking.items()]
    if not markdown:
        said = [wrap_line(line, width, indent=2) for line in said]
    return table + "\n\n" + "\n".join(said)


def _cheapest_line(name: str, ranked: Mapping[str, Any]) -> str:
    cheapest, keeping, baseline = ranked["cheapest"], ranked["cheapest_keeping"], ranked["baseline"]
    if cheapest is None:
        return f"{name}: no run was priced"

    def said(row: Mapping[str, Any]) -> str:
        figures = row["costs"][name]
        base = baseline["costs"][name]["total_cost"] if baseline is not None else None
        change = f", {100 * (figures['total_cost'] / base - 1):+.1f}% vs no condensation" if base and row is not baseline else ""
        return f"{row['pipeline']} ({_dollars(figures['total_cost'])}{change}, {facts_kept(row):,} facts kept)"

    line = f"{name}: cheapest {said(cheapest)}"
    if baseline is None:
        return line + "; no pipeline is no condensation (type noop), so none is compared with it"
    if keeping is None:
        return line + "; none keeps as many facts as no condensation"
    if keeping is cheapest:
        return line + f"; it keeps as many facts as no condensation ({facts_kept(baseline):,})"
    return line + f"; cheapest keeping as many facts as no condensation ({facts_kept(baseline):,}): {said(keeping)}"


def _layout(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, markdown: bool, left: int = 1, width: int | None = None
) -> str:
    """A table: Markdown, or aligned text cut into panels of columns no wider than `width`, each led by the `left` columns."""
    if markdown:
        rule = ["---"] * left + ["---:"] * (len(headers) - left)
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(rule) + "|"]
        lines.extend("| " + " | ".join(cells) + " |" for cells in rows)
        return "\n".join(lines)
    limit = text_width() if width is None else width
    widths = [max(len(headers[i]), *(len(cells[i]) for cells in rows)) for i in range(len(headers))]
    panels: list[list[int]] = [[]]
    used = sum(widths[:left]) + 2 * (left - 1)
    for column in range(left, len(headers)):
        if panels[-1] and used + 2 + widths[column] > limit:
            panels.append([])
            used = sum(widths[:left]) + 2 * (left - 1)
        panels[-1].append(column)
        used += 2 + widths[column]

    def line(cells: Sequence[str], columns: Sequence[int]) -> str:
        shown = [cells[i].ljust(widths[i]) if i < left else cells[i].rjust(widths[i]) for i in columns]
        return "  ".join(shown).rstrip()

    blocks = []
    for panel in panels:
        columns = [*range(left), *panel]
        rule = "  ".join("-" * widths[i] for i in columns)
        blocks.append("\n".join([line(headers, columns), rule, *(line(cells, columns) for cells in rows)]))
    return "\n\n".join(blocks)


def cost_columns(results: BenchResults) -> list[str]:
    """The CSV columns of the pricings: `prompt_cost[claude-sonnet-4-5]`, ... for each pricing name, in order."""
    return [f"{key}[{pricing.name}]" for pricing in results.options.pricings for key in _COST_KEYS]


def _cost_cells(row: Mapping[str, Any]) -> dict[str, Any]:
    return {f"{key}[{name}]": figures.get(key) for name, figures in (row.get("costs") or {}).items() for key in _COST_KEYS}


def format_compressions(results: BenchResults, *, width: int | None = None) -> str:
    """The compressions of each pipeline that made some, by type, one line per pipeline (empty when none did).

    `compressions  auto_context: TOOL_INVOCATION_COMPRESS 3, LARGE_MESSAGE_OFFLOAD 1`: the steps of a
    progressive strategy, from each condensation's compression record, over every log.
    """
    lines = []
    for row in results.totals():
        counts = row.get("compressions") or {}
        if counts:
            by_type = ", ".join(f"{kind} {count:,}" for kind, count in counts.items())
            lines.append(f"{row['pipeline']}: {by_type}")
    if not lines:
        return ""
    label = "compressions"
    return "\n".join(
        wrap_line(f"{label if i == 0 else '':<{len(label)}}  {line}", width, indent=len(label) + 4) for i, line in enumerate(lines)
    )


def format_by_agent(results: BenchResults, *, markdown: bool = False) -> str:
    """Per log format (the agent that wrote the logs) and pipeline: logs, steps, prompt tokens, peak, and
    the total dollars under each pricing; "" when every log is an OpenHands log."""
    formats = sorted({run.get("format") or "openhands" for run in results.runs})
    if formats == ["openhands"] or not formats:
        return ""
    names = [pricing.name for pricing in results.options.pricings]
    header = ["format", "logs", "pipeline", "steps", "prompt tokens", "peak", *(f"{name} $" for name in names)]
    rows = []
    for fmt in formats:
        for spec in results.pipelines:
            runs = [r for r in results.runs_of(spec.name) if (r.get("format") or "openhands") == fmt and not r.get("error")]
            if not runs:
                continue
            totals = summarize_runs(runs)
            costs = summarize_costs(r["costs"] for r in runs if "costs" in r) if names else {}
            dollars = [f"${costs[name]['total_cost']:.4f}" if name in costs else "-" for name in names]
            rows.append([fmt, f"{len(runs)}", spec.name, f"{totals['steps']:,}", f"{totals['total_prompt_tokens']:,}", f"{totals['peak_context_tokens']:,}", *dollars])
    if markdown:
        aligned = ["---", "---:", "---", "---:", "---:", "---:", *("---:" for _ in names)]
        return "\n".join("| " + " | ".join(row) + " |" for row in [header, aligned, *rows])
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(header, widths)).rstrip()]
    lines.append("  ".join("-" * width for width in widths))
    lines.extend("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)
    return "\n".join(lines)


def format_header(results: BenchResults, *, width: int | None = None) -> str:
    """The settings a table was made with, one `name  value` line each, wrapped to `width` (default: `text_width()`)."""
    failed = {run["log"] for run in results.errors}
    logs = f"{len(results.logs)}" + (f" ({len(failed)} with errors)" if failed else "")
    rows = [
        ("logs", logs),
        ("pipelines", ", ".join(f"{spec.name} ({spec.description})" for spec in results.pipelines)),
        ("tokens counted by", results.tokenizer_name),
        ("context limit", f"{results.options.context_limit:,} tokens"),
    ]
    if results.uses_summarizer:
        summarizer = results.options.summarizer
        if summarizer == OFFLINE_SUMMARIZER_NAME:
            summarizer += " (deterministic, no model: summaries built from the events; --summarizer-model M for a model's)"
        elif summarizer == STAND_IN_NAME:
            summarizer += " (deterministic, offline; its summaries are placeholders: --model M for a real one)"
        rows.append(("summarizer", summarizer))
    recorded = sorted({str(run["agent_model"]) for run in results.runs if run.get("agent_model_recorded")})
    if recorded:
        logs = len({run["log"] for run in results.runs if run.get("agent_model_recorded")})
        rows.append(("priced for", f"the model the log records, for {logs} other agents' log(s) ({', '.join(recorded)}); no --model given"))
    if results.options.pricings:
        described = []
        for pricing in results.options.pricings:
            rules = pricing.rules
            described.append(
                f"{pricing.name} ({pricing.rules_name}: {rules.matching}, cache lives {pricing.lifetime_seconds:g} s,"
                f" from {pricing.min_cache_tokens:,} tokens)"
            )
        rows.append(("prices", "; ".join(described)))
        first = results.totals()[0] if results.pipelines else {}
        steps, timed = first.get("steps") or 0, first.get("timed_steps") or 0  # the same for every pipeline
        rows.append(
            ("request times", f"the log's timestamps at {timed:,} of {steps:,} steps; {results.options.step_seconds:g} s apart at the others")
        )
    where = "in this process" if results.jobs == 1 and results.executor == "process" else f"{results.jobs} {results.executor} workers"
    rows.append(("time", f"{results.seconds:.1f} s ({where})"))
    names = max(len(name) for name, _ in rows)
    limit = text_width() if width is None else width
    lines = []
    for name, value in rows:
        line = f"{name:<{names}}  {value}"
        if name == "pipelines" and len(line) > limit:  # one a line, rather than a name cut from its description
            items = [f"{spec.name} ({spec.description})" for spec in results.pipelines]
            line = "\n".join(f"{name if i == 0 else '':<{names}}  {item}" for i, item in enumerate(items))
        lines.extend(wrap_line(part, limit, indent=names + 4 if name == "pipelines" else names + 2) for part in line.split("\n"))
    return "\n".join(lines)



def write_json(results: BenchResults, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write `results.to_dict()` as indented JSON; returns the path.

    Raises:
        OutputExistsError: `path` exists and `overwrite` is False; nothing was written.
    """
    body = orjson.dumps(results.to_dict(), option=orjson.OPT_INDENT_2, default=str) + b"\n"
    return write_atomically(path, body, overwrite=overwrite)


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return round(value, 6)
    return value


def write_csv(results: BenchResults, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write one row per pipeline (`level` = `pipeline`) and one per run (`level` = `log`); returns the path.

    The columns are `CSV_COLUMNS`, then with pricings each pricing's figures (`cost_columns`).

    Raises:
        OutputExistsError: `path` exists and `overwrite` is False; nothing was written.
    """
    handle = io.StringIO(newline="")
    writer = csv.DictWriter(handle, fieldnames=[*CSV_COLUMNS, *cost_columns(results)], extrasaction="ignore")
    writer.writeheader()
    for row in results.totals():
        cells = {"level": "pipeline", "log": "ALL", **row, **_cost_cells(row)}
        writer.writerow({key: _csv_value(value) for key, value in cells.items()})
    for run in results.runs:
        cells = {"level": "log", "logs": 1, **run, **_cost_cells(run)}
        writer.writerow({key: _csv_value(value) for key, value in cells.items()})
    return write_atomically(path, handle.getvalue().encode("utf-8"), overwrite=overwrite)


PLOT_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
"""The plot's colours (matplotlib's tab10); past ten pipelines the line styles differ (`plot_style`)."""
PLOT_LINESTYLES = ("-", "--", ":", "-.")
"""The plot's line styles, one per round of the colours."""


def plot_style(index: int) -> tuple[str, str]:
    """(colour, line style) of the `index`-th pipeline: no two of the first 40 pipelines share both."""
    return (
        PLOT_COLOURS[index % len(PLOT_COLOURS)],
        PLOT_LINESTYLES[(index // len(PLOT_COLOURS)) % len(PLOT_LINESTYLES)],
    )


def draw_plot(results: BenchResults, *, logs: Sequence[str] | None = None, columns: int = 2, dpi: int = 100) -> Any:
    """The figure `write_plot` saves (a matplotlib `Figure`): one panel per log, one line per pipeline.

    Every pipeline has its own (colour, line style) and its name in the legend below the panels, however many:
    the legend's rows are added to the figure's height.

    Raises:
        ImportError: matplotlib is not installed.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if logs is None:
        logs = [log for log in results.logs if any(run.get("steps") for run in results.runs if run["log"] == log)]
    if not logs:
        logs = list(results.logs[:1])
    columns = max(1, min(columns, len(logs)))
    rows = max(1, math.ceil(len(logs) / columns))
    width = 7.0 * columns
    names = [spec.name for spec in results.pipelines]
    # A legend entry takes about 0.09 inch a character of its name, plus its line sample.
    entry = 0.9 + 0.09 * max((len(name) for name in names), default=8)
    legend_columns = max(1, min(len(names), int(width // entry)))
    legend_rows = math.ceil(len(names) / legend_columns) if names else 0
    figure = Figure(figsize=(width, 4.2 * rows + 0.3 * legend_rows + 0.4), dpi=dpi, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, columns, squeeze=False)
    by_key = {(run["log"], run["pipeline"]): run for run in results.runs}
    handles: dict[str, Any] = {}
    for position, log in enumerate(logs):
        ax = axes[position // columns][position % columns]
        for index, spec in enumerate(results.pipelines):
            run = by_key.get((log, spec.name))
            tokens = (run or {}).get("per_step", {}).get("tokens") or []
            if not tokens:
                continue
            colour, style = plot_style(index)
            (line,) = ax.plot(
                range(1, len(tokens) + 1), tokens, linewidth=1.4, color=colour, linestyle=style, label=spec.name
            )
            handles.setdefault(spec.name, line)
        ax.set_title(_short(Path(log).stem, 80), fontsize=10)
        ax.tick_params(labelsize=8)
        ax.set_xlabel("agent step", fontsize=9)
        ax.set_ylabel("context tokens", fontsize=9)
        ax.grid(True, alpha=0.3)
    for position in range(len(logs), rows * columns):
        axes[position // columns][position % columns].set_visible(False)
    if handles:
        figure.legend(
            list(handles.values()), list(handles), loc="outside lower center", ncols=legend_columns, fontsize=9, handlelength=3
        )
    return figure


def write_plot(
    results: BenchResults,
    path: str | os.PathLike[str],
    *,
    logs: Sequence[str] | None = None,
    columns: int = 2,
    dpi: int = 100,
    overwrite: bool = False,
) -> bool:
    """Plot context tokens per step: one panel per log, one line per pipeline (`draw_plot`).

    Args:
        results: what to plot.
        path: the PNG to write.
        logs: the logs to draw, in order (default: every log with at least one step).
        columns: panels per row.
        dpi: resolution (a panel is 7 x 4.2 inches, the legend below them).
        overwrite: replace `path` if it exists.

    Returns False (and writes nothing) when matplotlib is not installed.

    Raises:
        OutputExistsError: `path` exists and `overwrite` is False.
    """
    try:
        figure = draw_plot(results, logs=logs, columns=columns, dpi=dpi)
    except ImportError:
        return False
    image = io.BytesIO()
    figure.savefig(image, format="png")
    write_atomically(path, image.getvalue(), overwrite=overwrite)
    return True


def _short(name: str, limit: int = 48) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _results_paths(folder: Path, *, plot: bool) -> list[Path]:
    return [folder / JSON_NAME, folder / CSV_NAME, *([folder / PLOT_NAME] if plot else [])]


def check_results_output(
    folder: str | os.PathLike[str],
    *,
    plot: bool = True,
    inputs: Iterable[str | os.PathLike[str]] = (),
    overwrite: bool = False,
) -> list[Path]:
    """Check that `write_results` may write into `folder`, before any work is done; returns the files it would write.

    Raises:
        OutputIsInputError: a results file is one of `inputs` (by any path), or inside an input folder.
        OutputExistsError: a results file exists and `overwrite` is False.
        NotADirectoryError: `folder` exists and is no folder.
        OutputNotWritableError: `folder` (or the nearest folder that exists, where it is to be made)
            cannot be written.
    """
    target = Path(folder)
    where = resolve_output(target)  # as the OS resolves it: `missing/..` is `.`, and `missing/` is never made
    if os.path.lexists(where) and not where.is_dir():
        raise NotADirectoryError(20, "not a folder", str(target))
    inputs = list(inputs)
    paths = _results_paths(target, plot=plot)
    for path in paths:
        refuse_inputs(path, inputs)
    for path in paths:
        if not overwrite and os.path.lexists(resolve_output(path)):
            raise OutputExistsError(path)
    check_writable(where / JSON_NAME, shown=target)
    return paths


def write_results(
    results: BenchResults,
    folder: str | os.PathLike[str],
    *,
    plot: bool = True,
    inputs: Iterable[str | os.PathLike[str]] = (),
    overwrite: bool = False,
) -> dict[str, Path | None]:
    """Write `results.json`, `results.csv` and (with matplotlib, unless `plot` is False) `context_tokens.png`.

    Returns the paths written by kind (`json`, `csv`, `plot`); `plot` is None when none was drawn.
    Every file is checked before the first is written (see `check_results_output`), so a refusal
    leaves the folder as it was.

    Raises:
        OutputIsInputError: a results file is one of `inputs`, or inside an input folder.
        OutputExistsError: a results file exists and `overwrite` is False.
    """
    target = Path(folder)
    check_results_output(target, plot=plot, inputs=inputs, overwrite=overwrite)
    make_private_folder(resolve_output(target))
    written: dict[str, Path | None] = {
        "json": write_json(results, target / JSON_NAME, overwrite=overwrite),
        "csv": write_csv(results, target / CSV_NAME, overwrite=overwrite),
        "plot": None,
    }
    if plot and write_plot(results, target / PLOT_NAME, overwrite=overwrite):
        written["plot"] = target / PLOT_NAME
    return written
