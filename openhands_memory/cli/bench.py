"""The `bench` subcommand: `add_bench_parser(subparsers)` adds it, `run_bench(args)` runs it.

    openhands-memory bench LOG... --pipeline NAME|A.toml [B.toml ...] [--pipeline C.toml ...] [--model M]
        [--summarizer-model M] [--tokenizer T] [--context-limit N] [--pricing M ...] [--step-seconds S] [--jobs N]
        [--executor process|ray] [--out DIR] [--force] [--no-plot] [--markdown] [--html]

The table goes to stdout; the progress bar (on a terminal only), notes and errors go to stderr.
Exit codes: 0 when every run succeeded, 1 when a log or run failed (the others are still
reported and written; when every run failed nothing is written), for a missing file or a folder
holding no log, or when a results file exists (without `--force`), is an input (always) or cannot
be written; 2 for bad usage or a bad pipeline config. Refusals come before any run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from openhands_memory.cli._models import DEFAULT_TOKENIZER, add_model_arguments, check_model_arguments, tokenizer_name
from openhands_memory.cli._secrets import SecretEnvError, add_secret_argument, secrets_from_env
from openhands_memory._locations import log_location
from openhands_memory._progress import ProgressBar

__all__ = ["DEFAULT_CONTEXT_LIMIT", "add_bench_parser", "run_bench"]

DEFAULT_OUT = Path("bench-results")
"""Where results go unless `--out` says otherwise."""

DEFAULT_CONTEXT_LIMIT = 128_000
"""`--context-limit` unless given: `llm.llm.DEFAULT_CONTEXT_WINDOW` (a test keeps them equal), written
here so that building the parser (`openhands-memory --version` too) does not load the llm package."""

_USAGE_ERROR = 2


def add_bench_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the `bench` subcommand to an argparse subparsers object; returns its parser."""
    from openhands_memory.bench.work import WORK_PER_WORKER

    bench = subparsers.add_parser(
        "bench",
        help="benchmark condenser pipelines over many logs: tokens, cache friendliness, condensations, retention, recovery",
        description=(
            "Replay every LOG through every pipeline (the logs' own condensations are dropped) and report, per "
            "pipeline and per log: prompt tokens summed over the steps, peak and mean context, steps over the "
            "context limit, the share of prompt tokens a prefix cache could serve, condensations, events "
            "forgotten, summarizer calls with their tokens and cost, condenser time, and how many checkable facts "
            "of the forgotten events (files edited, failed commands, test ids, user instructions) the final view "
            "still holds. Writes results.json, results.csv and context_tokens.png (with matplotlib) to --out; "
            "existing ones are replaced only with --force. "
            "Offline by default: model-backed condensers run without a model (the summarizers write the offline "
            f"structured summary, built from the events), and tokens are counted with {DEFAULT_TOKENIZER}'s "
            "tokenizer (shipped with litellm, nothing is downloaded)."
        ),
    )
    bench.add_argument(
        # "*" so that a missing LOG gets the hint below, not argparse's "the following arguments are required".
        "logs", type=log_location, nargs="*", metavar="LOG",
        help="logs to replay (never changed); a folder that is no session folder stands for the logs in it; "
        "a postgresql://...?conversation=ID URL for a conversation in PostgreSQL",
    )  # fmt: skip
    bench.add_argument(
        "--pipeline",
        dest="pipelines",
        action="extend",
        nargs="+",
        required=True,
        metavar="CONFIG",
        help="shipped pipelines by name (cache_aware, no_condensation, ...; 'all' for every one) or pipeline "
        "files (TOML [condenser] table, or JSON), each named after its file: several after one --pipeline "
        "(a shell glob: --pipeline my/*.toml), or --pipeline repeated; give the LOGs before it",
    )
    add_model_arguments(bench, counts="every prompt and the condensers' budgets")
    bench.add_argument(
        "--context-limit",
        type=int,
        default=DEFAULT_CONTEXT_LIMIT,
        metavar="N",
        help=f"count the steps whose prompt has more tokens than N (default: {DEFAULT_CONTEXT_LIMIT:,})",
    )
    bench.add_argument(
        "--pricing",
        dest="pricings",
        action="append",
        default=[],
        metavar="M",
        help="also price every run as model M's provider bills it, prompt cache included (litellm's prices, offline): "
        "dollars with and without the cache, the summarizer's, cache breaks; repeat for several models. M may be a "
        "TOML/JSON pricing file (model = ..., and fields to override, such as lifetime_seconds)",
    )
    bench.add_argument(
        "--step-seconds",
        type=float,
        default=None,
        metavar="S",
        help="with --pricing: seconds between requests where a log has no timestamps (default: 10)",
    )
    bench.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="run logs in at most N parallel processes, started only when the work is worth it (about one per "
        f"{WORK_PER_WORKER >> 20} MB of log per pipeline; small work runs in this process); default: as many as "
        "the work is worth, up to the CPUs",
    )
    bench.add_argument(
        "--executor",
        choices=("process", "ray"),
        default="process",
        help="'process' (default) or 'ray': the same tasks on a Ray cluster (RAY_ADDRESS) or a local one with N CPUs",
    )
    bench.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"where to write the results (default: {DEFAULT_OUT}); existing result files are refused unless --force",
    )
    bench.add_argument(
        "--force", action="store_true", help="replace existing results.json, results.csv, context_tokens.png in --out"
    )
    bench.add_argument("--no-plot", action="store_true", help="do not draw context_tokens.png")
    bench.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    add_secret_argument(bench)
    from openhands_memory.cli.bench_html import add_html_argument

    add_html_argument(bench)
    return bench  # type: ignore[no-any-return]


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def _jobs(args: argparse.Namespace, logs: list[Path], pipelines: int) -> int:
    """The workers to run on: for processes, what the work is worth (at most --jobs, said when fewer); for Ray, --jobs or the CPUs."""
    from openhands_memory.bench.work import WORK_PER_WORKER, available_cpus, log_bytes, workers_for

    if args.executor != "process":
        return args.jobs or available_cpus()
    jobs = workers_for(logs, pipelines, args.jobs)
    if args.jobs is not None and jobs < args.jobs:
        size = sum(log_bytes(log) for log in logs) * pipelines
        where = "in this process" if jobs == 1 else f"in {jobs} worker processes"
        print(
            f"note: {size / 2**20:.1f} MB of log to replay: running {where}, not {args.jobs} "
            f"(a worker is worth starting for about {WORK_PER_WORKER >> 20} MB)",
            file=sys.stderr,
        )
    return jobs


def _summarizer_note(args: argparse.Namespace, pipelines: list[Any]) -> str | None:
    """What the model-backed condensers call, said once: M for real, or (offline) the note `stand_in.summarizer_note` writes."""
    from openhands_memory.bench.stand_in import OFFLINE_SUMMARIZER_NAME, model_backed_members, summarizer_note

    members = [member.name for spec in pipelines for member in model_backed_members(spec.build(model=args.model))]
    if members and args.summarizer_model is not None:
        return f"note: model-backed condensers call {args.summarizer_model} for real"
    return summarizer_note(members, OFFLINE_SUMMARIZER_NAME, summarizer_model=args.summarizer_model, model=args.model)


def run_bench(args: argparse.Namespace) -> int:
    """Run the `bench` subcommand for parsed `args`; returns the exit code (see the module docstring)."""
    from openhands_memory.bench.report import (
        check_results_output,
        format_compressions,
        format_cost_table,
        format_by_agent,
        format_header,
        format_table,
        plot_hint,
        warning_lines,
        write_results,
    )
    from openhands_memory.bench.runner import PipelineSpec, run_benchmark
    from openhands_memory.bench.work import find_logs
    from openhands_memory.llm.prompt_cache import resolve_pricing
    from openhands_memory.bench.report import is_no_condensation
    from openhands_memory.pipelines import resolve_pipelines, shipped_pipelines
    from openhands_memory.replay.costs import DEFAULT_STEP_SECONDS
    from openhands_memory.errors import OpenHandsMemoryError
    from openhands_memory.cli.bench_html import check_html, write_html

    if args.jobs is not None and args.jobs < 1:
        _error(f"--jobs must be at least 1, got {args.jobs}")
        return _USAGE_ERROR
    if args.context_limit < 1:
        _error(f"--context-limit must be at least 1, got {args.context_limit}")
        return _USAGE_ERROR
    step_seconds = DEFAULT_STEP_SECONDS if args.step_seconds is None else args.step_seconds
    if not step_seconds >= 0:
        _error(f"--step-seconds must be at least 0, got {args.step_seconds}")
        return _USAGE_ERROR
    if not args.logs:
        _error("no LOG given: put the logs before --pipeline, which takes every name after it up to the next option (or last, after --)")
        return _USAGE_ERROR
    try:
        secrets = secrets_from_env(args.secret_envs)
    except SecretEnvError as exc:
        _error(str(exc))
        return _USAGE_ERROR
    missing = [log for log in args.logs if isinstance(log, Path) and not log.exists()]
    if missing:
        _error(f"{missing[0]}: no such file or folder")
        return 1
    try:
        check_model_arguments(args)  # a model litellm does not know would be counted with its default tokenizer
        logs = find_logs(args.logs)  # a folder of logs stands for its logs; one with none is refused here
        paths = resolve_pipelines(args.pipelines)  # a shipped pipeline's name stands for its file
        pipelines = [PipelineSpec.from_file(path) for path in paths]
    except OpenHandsMemoryError as exc:
        _error(str(exc))
        return exc.exit_code
    try:
        pricings = [resolve_pricing(spec) for spec in args.pricings]  # refused now, not after the runs
    except OpenHandsMemoryError as exc:
        _error(str(exc))
        return exc.exit_code
    if pricings and not any(is_no_condensation(spec) for spec in pipelines):
        # The cost table compares every pipeline with no condensation, not with whichever came first.
        baseline = shipped_pipelines()["no_condensation"]
        pipelines.append(PipelineSpec.from_file(baseline))
        paths.append(baseline)
        print("note: no_condensation added: the cost table compares every pipeline with it", file=sys.stderr)
    inputs = [*args.logs, *paths]
    plot = not args.no_plot
    try:  # refused now, not after the benchmark has run
        check_results_output(args.out, plot=plot, inputs=inputs, overwrite=args.force)
        check_html(args, logs, inputs)
    except OpenHandsMemoryError as exc:
        _error(str(exc))
        return exc.exit_code
    except NotADirectoryError as exc:
        _error(f"{exc.filename}: {exc.strerror}")
        return 1
    jobs = _jobs(args, logs, len(pipelines))
    note = _summarizer_note(args, pipelines)
    if note is not None:
        print(note, file=sys.stderr)
    bar = ProgressBar(sys.stderr, "benchmarking", unit="runs") if sys.stderr.isatty() else None
    printer = getattr(args, "warnings", None)  # the command line's (see `cli.main`): never into the bar
    if printer is not None:
        printer.bar = bar
    try:
        results = run_benchmark(
            logs,
            pipelines,
            tokenizer=tokenizer_name(args),
            model=args.model,
            summarizer_model=args.summarizer_model,
            context_limit=args.context_limit,
            jobs=jobs,
            executor=args.executor,
            progress=bar,
            pricing=pricings,
            step_seconds=step_seconds,
            secrets=secrets,
        )
    except ImportError as exc:
        _error(str(exc))
        return 1
    except OpenHandsMemoryError as exc:
        _error(str(exc))
        return exc.exit_code
    finally:
        if bar is not None:
            bar.close()
        if printer is not None:
            printer.bar = None
    for line in warning_lines(results):  # once per log, with the pipelines that met it
        print(f"warning: {line}", file=sys.stderr)
    print(format_header(results))
    print()
    print(format_table(results, markdown=args.markdown))
    costs = format_cost_table(results, markdown=args.markdown)
    if costs:
        print()
        print(costs)
    by_agent = format_by_agent(results, markdown=args.markdown)
    if by_agent:
        print()
        print(by_agent)
    compressions = format_compressions(results)
    if compressions:
        print()
        print(compressions)
    for run in results.errors:
        _error(f"{run['log']} ({run['pipeline']}): {run['error']}")
    if len(results.errors) == len(results.runs):
        _error(f"every run failed: nothing written to {args.out}")  # all-zero results would only mislead
        return 1
    try:
        written = write_results(results, args.out, plot=plot, inputs=inputs, overwrite=args.force)
    except OpenHandsMemoryError as exc:  # a results file appeared while the benchmark ran
        _error(str(exc))
        return exc.exit_code
    try:
        pages = write_html(args, logs, paths, results, pricings, secrets, step_seconds)
    except OpenHandsMemoryError as exc:
        _error(str(exc))
        return exc.exit_code
    files = [str(path) for path in [*written.values(), *pages[:1]] if path is not None]
    print(f"wrote {', '.join(files)}" + (f" and {len(pages) - 1} log page(s)" if pages else ""), file=sys.stderr)
    if not args.no_plot and written["plot"] is None:
        print(plot_hint(), file=sys.stderr)
    return 1 if results.errors else 0
