"""`examples/agent_loop.py` runs offline, recovers from a context-window overflow, recalls what it forgot, and leaves a log to replay;
with a real model and no key it stops at once, in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT

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


def test_the_example_agent_loop_runs_offline_and_its_log_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "run.jsonl"
    env = {key: value for key, value in os.environ.items() if key != "AGENT_LOOP_MODEL"}
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--log", str(log), "--workspace", str(tmp_path / "project")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "answer: `average` divides by `len(values) + 1`" in result.stdout
    assert "AssertionError: 3.0" in result.stdout  # the bash tool really ran the test
    assert "1 condensation(s)" in result.stdout
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


def test_the_example_with_a_real_model_and_no_key_fails_at_once_in_one_line(tmp_path: Path) -> None:
    env = {
        name: value
        for name, value in os.environ.items()
        if name != "AGENT_LOOP_MODEL" and not name.startswith("OPENAI_") and not name.endswith(("_API_KEY", "_AUTH_TOKEN"))
    }
    started = time.monotonic()
    result = subprocess.run(  # no request is made: the key check comes first
        [sys.executable, str(EXAMPLE), "--model", "gpt-4o-mini", "--workspace", str(tmp_path / "project")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=90,
    )
    elapsed = time.monotonic() - started
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "error: gpt-4o-mini: no API key: set OPENAI_API_KEY (or api_key in the LLM config)\n"
    assert elapsed < 45  # seconds: importing litellm, not 185 s of retries
