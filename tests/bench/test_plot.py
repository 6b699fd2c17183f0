"""The bench's PNG stays readable with every shipped pipeline: large enough, a full legend, no two lines alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from openhands_memory.bench import BenchOptions, BenchResults, PipelineSpec
from openhands_memory.bench.report import draw_plot, plot_style, write_plot
from openhands_memory.pipelines import shipped_pipelines

pytest.importorskip("matplotlib", reason="matplotlib is not installed (the optional 'plot' extra)")


def _results(pipelines: int, logs: int = 1) -> BenchResults:
    """`pipelines` shipped pipelines' names over `logs` logs, each run with made-up tokens (nothing is replayed)."""
    names = list(shipped_pipelines())[:pipelines]
    specs = [PipelineSpec.from_config(name, {"type": "noop"}) for name in names]
    log_names = [f"session_{n}.jsonl" for n in range(logs)]
    runs = [
        {"log": log, "pipeline": name, "steps": 30, "per_step": {"tokens": [100 * (i + 1) + 50 * k for i in range(30)]}}
        for log in log_names
        for k, name in enumerate(names)
    ]
    return BenchResults(log_names, specs, BenchOptions(), runs)


def test_every_shipped_pipeline_has_its_own_line_and_its_name_in_a_legend_that_fits() -> None:
    count = len(shipped_pipelines())
    assert count >= 16
    figure = draw_plot(_results(count))
    figure.canvas.draw()
    (legend,) = figure.legends
    assert [text.get_text() for text in legend.get_texts()] == list(shipped_pipelines())
    # the whole legend is inside the image (it was clipped to 8 names of 16)
    box, frame = legend.get_window_extent(), figure.bbox
    assert box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
    lines = figure.axes[0].get_lines()
    assert len(lines) == count
    assert len({(line.get_color(), line.get_linestyle()) for line in lines}) == count  # 16 lines shared 10 colours


def test_the_png_is_large_enough_to_read(tmp_path: Path) -> None:
    from matplotlib.image import imread

    path = tmp_path / "plot.png"
    assert write_plot(_results(16), path) is True
    height, width = imread(path).shape[:2]
    assert width >= 700 and height >= 450  # it was 336 x 264 px


def test_styles_differ_for_forty_pipelines() -> None:
    assert len({plot_style(i) for i in range(40)}) == 40
