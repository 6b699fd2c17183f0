"""The replay report: one self-contained HTML page per log, pipelines side by side, step by step.

- `build_report(events, [(name, pipeline), ...])`: replays the log through each pipeline and packs
  what the page shows (`packing`): per step the prompt tokens, split by how each pricing bills them,
  the dollars, the condensations, cache breaks and cold starts, and the exact messages sent.
- `render_page(data, title=...)`: the page, with uPlot and its script inline (opens offline).
- `write_page(path, page, secrets=...)`: owner-only, never over an input or (without overwrite) a file.
- `render_bench_index(rows)`: the bench's page, one row per log linking to each log's page.

The command is `openhands-memory report LOG --out report.html` (`bench --html` for many logs).
"""

from openhands_memory.report.bench_index import render_bench_index
from openhands_memory.report.build import DEFAULT_CONTEXT_LIMIT, build_report
from openhands_memory.report.capture import RunCapture, capture_run
from openhands_memory.report.packing import pack_runs, prompt_refs
from openhands_memory.report.page import embed_json, render_page
from openhands_memory.report.writing import check_report_output, write_page

# The door: build a report page and write it; the rest by its module's path.
__all__ = [
    "build_report",
    "write_page",
]
