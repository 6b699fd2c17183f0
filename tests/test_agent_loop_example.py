"""`examples/agent_loop.py` runs offline, recovers from a context-window overflow, recalls what it forgot, and leaves a log to replay;
with a real model and no key it stops at once, in one line."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import HANG_GUARD_SECONDS, REPO_ROOT

from openhands_memory.cli import main
from openhands_memory.events import (
    CmdOutputObservation,
    CondensationAction,
    CondensationRequestAction,
    ContextReloadObservation,
    SearchHistoryObservation,
    agent_history,
    load_events,
)
from openhands_memory.view import View

EXAMPLE = REPO_ROOT / "examples" / "agent_loop.py"


def _example_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_loop_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_as_a_script(tmp_path: Path) -> None:
    # As a user starts it; `--help` stops before any model is built (nothing here imports litellm).
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--help"], capture_output=True, text=True, cwd=tmp_path, timeout=HANG_GUARD_SECONDS
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: agent_loop.py") and "--model MODEL" in result.stdout


def test_the_example_agent_loop_runs_offline_and_its_log_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # In this process (litellm, which the example's model uses, is imported once for the suite).
    monkeypatch.delenv("AGENT_LOOP_MODEL", raising=False)
    log = tmp_path / "run.jsonl"
    code = _example_module().main(["--log", str(log), "--workspace", str(tmp_path / "project")])
    stdout = capsys.readouterr().out
    assert code == 0, stdout
    assert "answer: `average` divides by `len(values) + 1`" in stdout
    assert "AssertionError: 3.0" in stdout  # the bash tool really ran the test
    assert "1 condensation(s)" in stdout
    events = load_events(log)
    kinds = [type(e).__name__ for e in events]
    # The overflow: a request, then the condensation that answered it, then the model was asked again.
    request = kinds.index("CondensationRequestAction")
    assert kinds[request + 1] == "CondensationAction"
    assert isinstance(events[request], CondensationRequestAction) and events[request].tool_call_metadata is None
    assert kinds[-1] == "AgentFinishAction"
    condensation = events[request + 1]
    assert isinstance(condensation, CondensationAction) and condensation.condenser_metadata["reason"] == "request"  # type: ignore[index]
    assert len(View.from_events(agent_history(events))) < len(events)
    # After the condensation, the agent found the forgotten test output again and reloaded it whole.
    search = kinds.index("SearchHistoryAction")
    assert search > request + 1 and kinds[search : search + 4] == [
        "SearchHistoryAction", "SearchHistoryObservation", "ContextReloadAction", "ContextReloadObservation",
    ]  # fmt: skip
    failure = next(e for e in events if isinstance(e, CmdOutputObservation))
    assert failure.id in condensation.forgotten
    found, reloaded = events[search + 1], events[search + 3]
    assert isinstance(found, SearchHistoryObservation) and isinstance(reloaded, ContextReloadObservation)
    assert found.content.splitlines()[1].startswith(f"- event {failure.id} (run observation, forgotten): ")
    assert reloaded.reloaded_event_id == failure.id and reloaded.content.split("\n", 1)[1] == failure.content
    assert reloaded.tool_call_metadata is not None and reloaded.tool_call_metadata.function_name == "context_reload"
    assert (tmp_path / "run.jsonl.search.sqlite").is_file()
    # The log replays with its own condensation.
    assert main(["replay", str(log), "--recorded", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["condensations"] == 1 and report["steps"] == 6  # two of them the memory tools


def test_the_example_with_a_real_model_and_no_key_fails_at_once_in_one_line(
    tmp_path: Path, real_requests: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AGENT_LOOP_MODEL", raising=False)
    code = _example_module().main(["--model", "gpt-4o-mini", "--workspace", str(tmp_path / "project")])
    captured = capsys.readouterr()
    assert (code, captured.out) == (1, "")
    assert captured.err == "error: gpt-4o-mini: no API key: set OPENAI_API_KEY (or api_key in the LLM config)\n"
    assert real_requests == []  # the key check comes first: no request, so no retry and no wait
