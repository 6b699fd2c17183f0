"""Where the tests find the real OpenHands logs: OPENHANDS_MEMORY_LOGS, else ../shared; never a silent skip in CI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import conftest
import pytest


def test_the_variable_names_the_folder_and_an_unset_or_empty_one_leaves_the_shared_folder(tmp_path: Path) -> None:
    assert conftest.real_logs_location({"OPENHANDS_MEMORY_LOGS": str(tmp_path)}) == tmp_path
    assert conftest.real_logs_location({"OPENHANDS_MEMORY_LOGS": " "}) == conftest.SHARED_LOGS_DIR
    assert conftest.real_logs_location({}) == conftest.SHARED_LOGS_DIR


@pytest.mark.parametrize(
    ("environ", "outcome"),
    [
        ({}, pytest.skip.Exception),
        ({"CI": "true"}, pytest.fail.Exception),
        ({"OPENHANDS_MEMORY_LOGS": "/named/but/missing"}, pytest.fail.Exception),
    ],
)
def test_missing_logs_skip_only_outside_ci_and_when_not_asked_for(
    environ: dict[str, str], outcome: type[BaseException], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("CI", "OPENHANDS_MEMORY_LOGS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(conftest, "REAL_LOGS_DIR", tmp_path / "missing")
    with pytest.raises(outcome, match="real OpenHands logs not found at"):
        conftest.require_real_logs_dir()


def test_a_clone_runs_the_real_log_tests_from_the_folder_the_variable_names(tmp_path: Path) -> None:
    # One SDK log of the three: a test parametrized over the SDK logs then runs once, from that folder.
    source = conftest.require_real_logs_dir() / "v1_oh-sdk_goal-fixture_events.json"
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / source.name).symlink_to(source)  # read in place, never copied
    env = {**os.environ, "OPENHANDS_MEMORY_LOGS": str(logs), "CI": "true"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/events/test_sdk_import.py", "-k", "test_ids_are_positions"],
        cwd=conftest.REPO_ROOT, env=env, capture_output=True, text=True, timeout=conftest.HANG_GUARD_SECONDS,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout and "skipped" not in result.stdout
