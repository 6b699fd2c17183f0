"""`bench --html`: beside the bench's results, `report.html` (one row per log with each pipeline's totals) and one
report page per log (`report-<log>.html`), linked from it.

`bench_page_paths(folder, logs)` names the files (checked with `check_report_output` before any run);
`write_bench_pages(...)` replays each log through the bench's pipelines once more, keeping every step's
messages (the bench keeps only numbers), and writes the pages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from openhands_memory.errors import OpenHandsMemoryError
from openhands_memory.llm.prompt_cache import PromptPricing
from openhands_memory.pipeline import Pipeline
from openhands_memory.replay.costs import DEFAULT_STEP_SECONDS
from openhands_memory.report.bench_index import render_bench_index
from openhands_memory.report.build import DEFAULT_CONTEXT_LIMIT, build_report
from openhands_memory.report.page import render_page
from openhands_memory.report.writing import check_report_output, write_page

__all__ = ["INDEX_NAME", "bench_page_paths", "check_bench_pages", "write_bench_pages"]

INDEX_NAME = "report.html"
"""The bench's page, in the results folder."""


def bench_page_paths(folder: str | os.PathLike[str], logs: Sequence[str]) -> tuple[Path, list[Path]]:
    """The index page and, per log (in order), its page: `report-<log's name>.html`, made unique."""
    target = Path(folder)
    pages: list[Path] = []
    taken: set[str] = set()
    for log in logs:
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(log.split("?")[0].rstrip("/")).stem or "log")
        name, number = f"report-{stem}.html", 1
        while name in taken:
            number += 1
            name = f"report-{stem}-{number}.html"
        taken.add(name)
        pages.append(target / name)
    return target / INDEX_NAME, pages


def check_bench_pages(
    folder: str | os.PathLike[str], logs: Sequence[str], *, inputs: Sequence[Any] = (), overwrite: bool = False
) -> None:
    """Refuse now, before any run, what writing the pages would refuse later (see `check_report_output`)."""
    index, pages = bench_page_paths(folder, logs)
    for path in (index, *pages):
        check_report_output(path, inputs=inputs, overwrite=overwrite)


def write_bench_pages(
    folder: str | os.PathLike[str],
    logs: Sequence[Any],
    shown: Sequence[str],
    pipelines: Sequence[tuple[str, Pipeline]],
    runs: Sequence[Mapping[str, Any]],
    *,
    tokenizer: str | None,
    pricings: Sequence[PromptPricing],
    bench_pricing: str | None,
    context_limit: int = DEFAULT_CONTEXT_LIMIT,
    secrets: Mapping[str, str] | None = None,
    step_seconds: float = DEFAULT_STEP_SECONDS,
    inputs: Sequence[Any] = (),
    overwrite: bool = False,
) -> list[Path]:
    """Write each log's page and the index linking them; returns the paths written, the index first.

    Args:
        logs: the logs to load (paths or URLs), in the bench's order; `shown`: how the bench names them.
        runs: the bench's runs (`BenchResults.runs`), whose totals the index shows.
        bench_pricing: the pricing whose dollars the index shows (one the bench priced), or None.
    """
    from openhands_memory.stream.locations import load_log

    index, pages = bench_page_paths(folder, shown)
    rows = []
    written = []
    for log, name, page in zip(logs, shown, pages):
        by_pipeline = {run["pipeline"]: run for run in runs if run["log"] == name}
        steps = next((run.get("steps") for run in by_pipeline.values() if run.get("steps") is not None), None)
        row: dict[str, Any] = {"log": name, "href": page.name, "steps": steps, "runs": by_pipeline}
        rows.append(row)
        try:
            data = build_report(
                load_log(log),
                pipelines,
                source=name,
                tokenizer=tokenizer,
                pricings=pricings,
                context_limit=context_limit,
                secrets=secrets,
                step_seconds=step_seconds,
            )
        except (OpenHandsMemoryError, OSError) as exc:  # the bench reported this log's failure already: no page
            row["href"], row["error"] = None, str(exc)
            continue
        page_html = render_page(data, title=f"Replay of {name}")
        written.append(write_page(page, page_html, secrets=secrets, inputs=inputs, overwrite=overwrite))
    body = render_bench_index(rows, [label for label, _ in pipelines], pricing=bench_pricing)
    return [write_page(index, body, secrets=secrets, inputs=inputs, overwrite=overwrite), *written]
