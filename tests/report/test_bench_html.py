"""`bench --html`: one page with a row per log and each pipeline's totals, linking to each log's report page."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from openhands_memory.cli import main

from ._helpers import hostile_log, page_data


def _bench(tmp_path: Path, *extra: str) -> tuple[int, Path, list[Path]]:
    logs = [hostile_log(tmp_path / "first.jsonl", turns=8), hostile_log(tmp_path / "second.jsonl", turns=14)]
    out = tmp_path / "out"
    argv = ["bench", *map(str, logs), "--pipeline", "default", "--pipeline", "no_condensation", "--tokenizer", "approximate"]
    code = main([*argv, "--pricing", "gpt-4o", "--no-plot", "--out", str(out), "--html", *extra])
    return code, out, logs


def test_the_bench_page_links_each_logs_page_with_the_bench_totals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, logs = _bench(tmp_path)
    assert code == 0
    index = (out / "report.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', index)
    assert [name for _, name in links] == [str(log) for log in logs]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for (href, name), log in zip(links, logs):
        page = out / href
        assert stat.S_IMODE(os.stat(page).st_mode) == 0o600
        data = page_data(page.read_text(encoding="utf-8"))
        assert data["source"] == name and [run["name"] for run in data["runs"]] == ["default", "no_condensation"]
        for run in results["runs"]:
            if run["log"] == name:  # the index shows the bench's totals, the page the same replay's
                assert f"{run['total_prompt_tokens']:,}" in index
                (shown,) = [r for r in data["runs"] if r["name"] == run["pipeline"]]
                assert shown["totals"]["total_prompt_tokens"] == run["total_prompt_tokens"]
    assert "report.html and 2 log page(s)" in capsys.readouterr().err


def test_an_existing_page_is_refused_before_any_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.html").write_text("mine", encoding="utf-8")
    code, out, _ = _bench(tmp_path)
    assert code == 1 and "report.html: already exists; use --force" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["report.html"]  # no run, nothing written
    code, out, _ = _bench(tmp_path, "--force")
    assert code == 0 and (out / "report.html").read_text(encoding="utf-8").startswith("<!doctype html>")
