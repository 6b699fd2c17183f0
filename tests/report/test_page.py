"""The page: self-contained, escaped (a log cannot run anything in it), free of secrets, written as files are."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from openhands_memory.cli import main
from openhands_memory.errors import OutputRefusedError
from openhands_memory.report import embed_json, write_page

from ._helpers import HOSTILE, content_text, hostile_log, page_data

SECRET = "hunter2-very-secret-value"


def test_embedded_json_cannot_close_the_script_block_and_reads_back_the_same() -> None:
    text = embed_json({"text": HOSTILE})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text and "\u2029" not in text
    import json

    assert json.loads(text) == {"text": HOSTILE}


def test_a_log_holding_script_tags_adds_no_markup_to_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = hostile_log(tmp_path / "log.jsonl")
    out = tmp_path / "report.html"
    assert main(["report", str(log), "--tokenizer", "approximate", "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.count("</script>") == 3 and page.count("<script") == 3  # the data, uPlot, the page's script
    assert "<img" not in page and "owned" not in page.split('<script id="report-data"')[0]
    data = page_data(page)
    assert any(HOSTILE in content_text(message["content"]) for message in data["messages"])  # shown, as text


def test_the_page_needs_no_network(tmp_path: Path) -> None:
    log = hostile_log(tmp_path / "log.jsonl")
    out = tmp_path / "report.html"
    assert main(["report", str(log), "--tokenizer", "approximate", "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    before_data = page.split('<script id="report-data"')[0]
    assert "src=" not in before_data and "<link" not in page and "@import" not in page
    assert "uPlot" in page


def test_a_secret_named_by_env_never_reaches_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    session = hostile_log(tmp_path / "log.jsonl")
    text = session.read_text(encoding="utf-8").replace("Fix it", f"Fix it with {SECRET}")
    session.write_text(text, encoding="utf-8")
    monkeypatch.setenv("MY_TOKEN", SECRET)
    plain, hidden = tmp_path / "plain.html", tmp_path / "hidden.html"
    assert main(["report", str(session), "--tokenizer", "approximate", "--out", str(plain)]) == 0
    assert SECRET.encode() in plain.read_bytes()  # the log holds it: without the flag it is shown
    args = ["report", str(session), "--tokenizer", "approximate", "--secret-env", "MY_TOKEN", "--out", str(hidden)]
    assert main(args) == 0
    assert SECRET.encode() not in hidden.read_bytes() and b"secret_hidden" in hidden.read_bytes()


def test_a_page_holding_a_secret_is_refused_not_written(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    with pytest.raises(OutputRefusedError, match="secret MY_TOKEN"):
        write_page(out, f"<p>{SECRET}</p>", secrets={"MY_TOKEN": SECRET})
    assert not out.exists()


def test_the_file_is_owner_only_and_never_replaced_without_force_nor_the_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = hostile_log(tmp_path / "log.jsonl", turns=3)
    out = tmp_path / "report.html"
    out.write_text("mine", encoding="utf-8")
    args = ["report", str(log), "--tokenizer", "approximate", "--out", str(out)]
    assert main(args) == 1
    assert "already exists; use --force" in capsys.readouterr().err and out.read_text() == "mine"
    assert main([*args, "--force"]) == 0
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600 and out.read_text().startswith("<!doctype html>")
    before = log.read_bytes()
    assert main(["report", str(log), "--out", str(log), "--force"]) == 1
    assert "an input is never written to" in capsys.readouterr().err and log.read_bytes() == before


def test_several_pipelines_share_one_page_with_their_totals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = hostile_log(tmp_path / "log.jsonl")
    out = tmp_path / "report.html"
    args = ["report", str(log), "--tokenizer", "approximate", "--pipeline", "default", "--pipeline", "no_condensation"]
    assert main([*args, "--pricing", "gpt-4o", "--pricing", "claude-sonnet-4-5", "--out", str(out)]) == 0
    data = page_data(out.read_text(encoding="utf-8"))
    assert [run["name"] for run in data["runs"]] == ["default", "no_condensation"]
    assert data["pricings"] == ["gpt-4o", "claude-sonnet-4-5"]
    for run in data["runs"]:
        assert len(run["pricing"]) == 2 and len(run["tokens"]) == len(run["prompts"]) == run["totals"]["steps"]
        assert [c["total_cost"] > 0 for c in run["costs"]] == [True, True]
