"""Benchmark condenser pipelines across many recorded logs.

`run_benchmark(logs, pipelines)` replays every log through every pipeline (in this process, in
worker processes, or on Ray) and measures each run: prompt tokens summed over the steps, peak and
mean context, steps over a context limit, how much of each prompt a provider's prefix cache could
have served, condensations and what they forgot, summarizer calls with their tokens and cost,
condenser time, how many checkable facts of the forgotten events the final view still holds, and
how many a search of the whole log finds again (`openhands_memory.recall.SearchIndex`).
`format_table` and `write_results` show and save the results; `openhands-memory bench` does it all
from the command line.

Modules: `runner` (tasks and executors), `metrics` (per-step accumulation, totals), `retention`
(facts, the presence check, the search for them), `tokenizer` (prompts as token sequences),
`stand_in` (what model-backed condensers call: no model by default, a stand-in, or a real one), `report` (table, JSON, CSV, plot), `cli` (the
subcommand).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openhands_memory.bench.metrics import RunMetrics
    from openhands_memory.bench.report import format_table, write_results
    from openhands_memory.bench.runner import BenchOptions, BenchResults, PipelineSpec, run_benchmark
    from openhands_memory.bench.stand_in import STAND_IN_NAME

# The names load on first use (PEP 562): `openhands-memory --version` builds the bench parser
# (`cli.bench`) without loading the benchmark itself.
_HOME: dict[str, str] = {
    "STAND_IN_NAME": "openhands_memory.bench.stand_in",
    "BenchOptions": "openhands_memory.bench.runner",
    "BenchResults": "openhands_memory.bench.runner",
    "PipelineSpec": "openhands_memory.bench.runner",
    "RunMetrics": "openhands_memory.bench.metrics",
    "format_table": "openhands_memory.bench.report",
    "run_benchmark": "openhands_memory.bench.runner",
    "write_results": "openhands_memory.bench.report",
}

# The door: run a benchmark and read its results; the rest by its module's path.
__all__ = [
    "run_benchmark",
    "BenchResults",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'openhands_memory.bench' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
