"""The command line on other agents' logs: replay (with their own compactions), view, search, convert, bench."""

from __future__ import annotations

import csv
import logging
import shutil
from pathlib import Path

import orjson
import pytest
from conftest import REPO_ROOT

from openhands_memory.cli import main
from openhands_memory.events import load_events, log_format

OURS = REPO_ROOT / "fixtures" / "other-agents"
CLAUDE = OURS / "claude_code_session.jsonl"


def _rows(out: str) -> dict[str, str]:
    rows = {}
    for line in out.splitlines():
        name, _, value = line.partition("  ")
        if value.strip():
            rows.setdefault(name.strip(), value.strip())
    return rows


def test_replay_recorded_replays_claude_code_s_own_compaction(capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert main(["replay", str(CLAUDE), "--recorded", "--tokenizer", "approximate"]) == 0
    captured = capsys.readouterr()
    table = _rows(captured.out)
    assert table["format"] == "claude-code (imported)"
    assert table["agent steps"] == "7"
    assert table["condensations"] == "0 new, 1 recorded"
    assert "read as a claude-code log" in caplog.text


def test_view_search_and_convert_read_a_codex_rollout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "rollout.jsonl"
    shutil.copy(OURS / "codex_rollout.jsonl", log)
    assert main(["view", str(log), "--at", "2"]) == 0
    assert "pytest -q" in capsys.readouterr().out
    assert main(["search", str(log), "apply_patch"]) == 0
    assert "call_tool_mcp" in capsys.readouterr().out
    out = tmp_path / "converted.jsonl"
    assert main(["convert", str(log), str(out)]) == 0
    converted = load_events(out)
    assert log_format(converted) == "codex"  # the converted log still says where it came from
    assert [type(e) for e in converted] == [type(e) for e in load_events(log)]


def test_bench_reports_per_agent_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for path in OURS.iterdir():
        shutil.copy(path, logs / path.name)
    status = main(
        ["bench", str(logs), "--pipeline", "no_condensation", "--tokenizer", "approximate", "--pricing", "claude-sonnet-4-5",
         "--out", str(tmp_path / "out"), "--no-plot"]
    )  # fmt: skip
    assert status == 0
    out = capsys.readouterr().out
    table = out[out.index("format "):]
    formats = [line.split()[0] for line in table.splitlines()[2:] if line.strip()]
    assert formats == ["claude-code", "codex", "mini-swe-agent"]
    with (tmp_path / "out" / "results.csv").open() as handle:
        rows = [row for row in csv.DictReader(handle) if row["level"] == "log"]
    assert sorted(row["format"] for row in rows) == ["claude-code", "codex", "mini-swe-agent"]


def test_a_stream_refuses_to_append_to_another_agent_s_log_and_says_to_convert_it(tmp_path: Path) -> None:
    from openhands_memory import EventStream
    from openhands_memory.errors import CorruptRecordError

    log = tmp_path / "session.jsonl"
    shutil.copy(CLAUDE, log)
    before = log.read_bytes()
    with pytest.raises(CorruptRecordError, match=r"session.jsonl:1: .*this is a claude-code log, .*`openhands-memory convert` it first"):
        EventStream.open(log)
    assert log.read_bytes() == before  # never changed


# -- priced for the model the log records ------------------------------------------------------------


def test_replay_prices_another_agent_s_log_for_the_model_it_records(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(CLAUDE), "--tokenizer", "approximate"]) == 0
    assert _rows(capsys.readouterr().out)["priced for"] == "claude-sonnet-4-5-20250929 (the model the log records)"
    assert main(["replay", str(OURS / "codex_rollout.jsonl"), "--tokenizer", "approximate", "--json"]) == 0
    assert "priced as gpt-5-codex (the model the log records)" in capsys.readouterr().out


def test_replay_prices_for_model_when_given_and_an_openhands_log_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(CLAUDE), "--model", "gpt-4o"]) == 0
    assert _rows(capsys.readouterr().out)["priced for"] == "gpt-4o (the agent's model)"
    assert main(["replay", str(REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"), "--tokenizer", "approximate"]) == 0
    assert _rows(capsys.readouterr().out)["priced for"] == "claude-sonnet-4-5 (no agent model given: the fallback)"


def test_a_recorded_model_without_known_prices_leaves_the_fallback_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "run.traj.json"
    sample = orjson.loads((OURS / "mini_swe_agent_v1.traj.json").read_bytes())
    sample["info"]["config"]["model"]["model_name"] = "my-own-model"
    for message in sample["messages"]:
        message.get("extra", {}).get("response", {})["model"] = "my-own-model"
    log.write_bytes(orjson.dumps(sample))
    assert main(["replay", str(log), "--tokenizer", "approximate"]) == 0
    captured = capsys.readouterr()
    assert _rows(captured.out)["priced for"] == "claude-sonnet-4-5 (no agent model given: the fallback)"
    assert "note: the log records the model 'my-own-model', which has no known prices: the fallback's prices stand" in captured.err


def test_bench_and_report_price_another_agent_s_log_for_the_model_it_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    status = main(["bench", str(CLAUDE), "--pipeline", "cache_aware", "--tokenizer", "approximate", "--out", str(out), "--no-plot"])
    assert status == 0
    printed = capsys.readouterr().out
    assert _rows(printed)["priced for"].startswith("the model the log records, for 1 other agents' log(s)")
    assert "(claude-sonnet-4-5-20250929); no --model given" in printed
    (run,) = orjson.loads((out / "results.json").read_bytes())["runs"]
    assert (run["agent_model"], run["agent_model_recorded"]) == ("claude-sonnet-4-5-20250929", True)

    page = tmp_path / "page.html"
    assert main(["report", str(OURS / "codex_rollout.jsonl"), "--tokenizer", "approximate", "--out", str(page)]) == 0
    assert "note: priced as gpt-5-codex, the model the log records" in capsys.readouterr().err
    assert '"pricings":["gpt-5-codex"]' in page.read_text()
