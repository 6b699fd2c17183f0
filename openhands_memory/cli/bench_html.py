"""`bench --html`: the bench's results as HTML pages too (`openhands_memory.report.bench_pages`).

`add_html_argument(parser)` adds `--html`; `check_html(args, logs, inputs)` refuses, before any run, the pages
that could not be written; `write_html(...)` replays each log through the bench's pipelines once more (the
bench keeps numbers, a page shows every step's messages) and writes `report.html` and one page per log.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from openhands_memory.cli._models import APPROXIMATE, DEFAULT_TOKENIZER, tokenizer_name

__all__ = ["add_html_argument", "check_html", "write_html"]


def add_html_argument(bench: argparse.ArgumentParser) -> None:
    """Add `--html` to the `bench` subcommand."""
    bench.add_argument(
        "--html",
        action="store_true",
        help="also write report.html to --out, one row per log with each pipeline's totals, linking to each log's "
        "page (report-LOG.html, as 'openhands-memory report' writes it); existing ones are replaced only with --force",
    )


def check_html(args: argparse.Namespace, logs: Sequence[Any], inputs: Sequence[Any]) -> None:
    """With `--html`, refuse now (before any run) the pages that could not be written (`OutputRefusedError`)."""
    if not args.html:
        return
    from openhands_memory.report.bench_pages import check_bench_pages
    from openhands_memory.stream.locations import shown_location

    check_bench_pages(args.out, [shown_location(log) for log in logs], inputs=inputs, overwrite=args.force)


def _pipelines(names: Sequence[str], paths: Sequence[Path], args: argparse.Namespace) -> list[tuple[str, Any]]:
    """(the bench's name, `Pipeline`) of each pipeline file, its model-backed members chosen as the bench chose them."""
    from openhands_memory.bench.stand_in import choose_models, model_backed_members
    from openhands_memory.replay import load_pipeline

    loaded = []
    for name, path in zip(names, paths):
        pipeline = load_pipeline(path, model=args.model)
        if any(True for _ in model_backed_members(pipeline.condenser)):
            choose_models(pipeline.condenser, summarizer_model=args.summarizer_model)
        loaded.append((name, pipeline))
    return loaded


def write_html(
    args: argparse.Namespace,
    logs: Sequence[Any],
    paths: Sequence[Path],
    results: Any,
    pricings: Sequence[Any],
    secrets: Any,
    step_seconds: float,
) -> list[Path]:
    """With `--html`, write the bench's page and each log's page; returns the paths written (the index first)."""
    if not args.html:
        return []
    from openhands_memory.llm.prompt_cache import resolve_pricing
    from openhands_memory.report.bench_pages import write_bench_pages

    name = tokenizer_name(args)
    return write_bench_pages(
        args.out,
        logs,
        results.logs,
        _pipelines([spec.name for spec in results.pipelines], paths, args),
        results.runs,
        tokenizer=None if name == APPROXIMATE else name,
        pricings=list(pricings) or [resolve_pricing(args.model or DEFAULT_TOKENIZER)],
        bench_pricing=pricings[0].name if pricings else None,
        context_limit=args.context_limit,
        secrets=secrets,
        step_seconds=step_seconds,
        inputs=[*args.logs, *paths],
        overwrite=args.force,
    )
