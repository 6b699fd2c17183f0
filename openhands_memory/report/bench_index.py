"""The bench's HTML page: one row per log with each pipeline's totals, linking to that log's report page.

Static HTML (no script): every value is HTML-escaped, the links are relative (the pages sit beside it).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from openhands_memory.report.page import read_asset

__all__ = ["render_bench_index"]

_LAYOUT = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>{css}
.scroll {{ overflow-x: auto; }}
td.num {{ text-align: right; white-space: nowrap; }}</style>
</head>
<body>
<h1>{title}</h1>
<p>{note}</p>
<div class="scroll"><table id="logs">
<thead><tr><th rowspan="2">log</th><th rowspan="2">steps</th>{pipeline_heads}</tr>
<tr>{figure_heads}</tr></thead>
<tbody>
{rows}
</tbody>
</table></div>
</body>
</html>
"""


def _number(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"
    return f"{value:,}"


def render_bench_index(
    logs: Sequence[Mapping[str, Any]], pipelines: Sequence[str], *, pricing: str | None, title: str = "Benchmark"
) -> str:
    """The page: `logs` (each `log`, `href` or None with `error`, `steps`, and `runs`: pipeline -> its bench run) in
    rows, `pipelines` in column groups.

    Each group shows the pipeline's total prompt tokens, its peak and, with `pricing`, its total dollars.
    """
    figures = ["total tokens", "peak"] + (["total $"] if pricing else [])
    pipeline_heads = "".join(f'<th colspan="{len(figures)}">{html.escape(name)}</th>' for name in pipelines)
    figure_heads = "".join(f"<th>{html.escape(f)}</th>" for _ in pipelines for f in figures)
    rows = []
    for log in logs:
        name = html.escape(log["log"])
        if log.get("href"):
            link = f'<a href="{html.escape(log["href"], quote=True)}">{name}</a>'
        else:
            link = f"{name} (no page: {html.escape(str(log.get('error') or 'not replayed'))})"
        cells = [
            f"<td>{link}</td>",
            f'<td class="num">{_number(log.get("steps"))}</td>',
        ]
        for name in pipelines:
            run = log["runs"].get(name) or {}
            values = [run.get("total_prompt_tokens"), run.get("peak_context_tokens")]
            if pricing:
                values.append(((run.get("costs") or {}).get(pricing) or {}).get("total_cost"))
            if run.get("error"):
                cells.append(f'<td colspan="{len(figures)}">error: {html.escape(str(run["error"]))}</td>')
                continue
            cells.extend(f'<td class="num">{_number(value)}</td>' for value in values)
        rows.append("<tr>" + "".join(cells) + "</tr>")
    note = "Each log's page shows its pipelines step by step: tokens, cache, dollars, condensations and the messages sent."
    if pricing:
        note += f" Dollars as {pricing} bills them, prompt cache included."
    return _LAYOUT.format(
        title=html.escape(title),
        css=read_asset("report.css"),
        note=html.escape(note),
        pipeline_heads=pipeline_heads,
        figure_heads=figure_heads,
        rows="\n".join(rows),
    )
