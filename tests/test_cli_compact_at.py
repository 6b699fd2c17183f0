"""`replay` / `view` `--compact-at STEP --focus TEXT`: a condensation requested at a step, with a focus (issue 36 item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from openhands_memory.cli import main

BUNDLED = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"
FOCUS = "src/mapleleaf/models.py"


@pytest.fixture
def summarizing(tmp_path: Path) -> str:
    pipeline = tmp_path / "llm.toml"  # no llm_config: the offline structured summarizer writes the summaries
    pipeline.write_text('[condenser]\ntype = "llm"\nmax_size = 1000\nkeep_first = 4\n')
    return str(pipeline)


def test_replay_requests_a_condensation_at_the_step_and_records_the_focus(summarizing: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["replay", str(BUNDLED), "--pipeline", summarizing, "--tokenizer", "approximate", "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["condensations"] == 0  # never over its own limit
    assert main([*args, "--compact-at", "50", "--focus", FOCUS]) == 0
    report = json.loads(capsys.readouterr().out)
    (condensation,) = report["condensation_list"]
    assert condensation["step"] == 50 and condensation["metadata"]["reason"] == "request"
    assert condensation["metadata"]["extra"]["focus"] == FOCUS
    assert condensation["summary"].splitlines()[1] == f"FOCUS (what this summary was asked to keep): {FOCUS}"


def test_view_shows_the_focused_summary_at_a_later_step(summarizing: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["view", str(BUNDLED), "--at", "60", "--pipeline", summarizing, "--tokenizer", "approximate", "--json"]
    assert main([*args, "--compact-at", "50", "--focus", FOCUS]) == 0
    summaries = [e["content"] for e in json.loads(capsys.readouterr().out) if e.get("observation") == "condense"]
    assert len(summaries) == 1 and f"FOCUS (what this summary was asked to keep): {FOCUS}" in summaries[0]


def test_a_focus_without_a_step_is_refused(summarizing: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["view", str(BUNDLED), "--pipeline", summarizing, "--focus", FOCUS])
    assert exit_info.value.code == 2 and "--focus needs --compact-at" in capsys.readouterr().err
