"""One self-contained HTML page: the packed data as embedded JSON, uPlot and the page's script and styles inline.

Nothing is fetched when the page is viewed: the charting library (uPlot, vendored in `assets/`, see
`assets/README.md`) and the page's own script (`assets/report.js`) are written into the page.

Text from a log never becomes markup: the data goes in a `<script type="application/json">` block
with `<`, `>`, `&` and U+2028/U+2029 written as JSON escapes (`embed_json`), so `</script>` or
`<!--` in a log cannot end the block, and the page's script sets text only as `textContent`. The
only other text from outside, the page's title, is HTML-escaped.
"""

from __future__ import annotations

import html
from functools import cache
from importlib import resources
from typing import Any

import orjson

__all__ = ["embed_json", "read_asset", "render_page"]

_JSON_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}

_LAYOUT = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{uplot_css}
{page_css}</style>
</head>
<body>
<h1>{title}</h1>
<p id="source"></p>
<h2>Totals per pipeline</h2>
<table id="totals"></table>
<div id="chart-tokens"></div>
<p class="controls">
<label>Pipeline <select id="run"></select></label>
<label>Pricing <select id="pricing"></select></label>
<span class="hint">Click a chart, or use the arrow keys (Page Up/Down: 10 steps), to choose a step.</span>
</p>
<div id="chart-cache"></div>
<div id="chart-dollars"></div>
<h2>Condensations, cache breaks and cold starts</h2>
<table id="marks"></table>
<h2>Step <input id="step-input" type="number" min="1" value="1"> of <span id="step-count"></span></h2>
<div id="step-facts"></div>
<div class="columns"><div id="messages"></div><div id="forgotten"></div></div>
<script id="report-data" type="application/json">{data}</script>
<script>{uplot_js}</script>
<script>{page_js}</script>
</body>
</html>
"""


def embed_json(data: Any) -> str:
    """`data` as JSON that is safe inside a `<script>` block of HTML (see the module docstring)."""
    return orjson.dumps(data).decode("utf-8").translate(_JSON_ESCAPES)


@cache
def read_asset(name: str) -> str:
    """The text of a file of `assets/` (read once)."""
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def render_page(data: Any, *, title: str) -> str:
    """The page of one log: `data` (`packing.pack_runs`) embedded as JSON, uPlot and the page's script and styles inline."""
    return _LAYOUT.format(
        title=html.escape(title),
        uplot_css=read_asset("uPlot.min.css"),
        page_css=read_asset("report.css"),
        data=embed_json(data),
        uplot_js=read_asset("uPlot.iife.min.js"),
        page_js=read_asset("report.js"),
    )
