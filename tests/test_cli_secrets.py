"""`--secret-env NAME`: every command that shows a log hides the secret it names, wherever the log holds it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from openhands_memory.cli import main

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "fixtures" / "synthetic_session_300.jsonl"
PIPELINE = REPO / "openhands_memory" / "pipelines" / "amortized.toml"
SECRET = "mapleleaf"
"""A word the bundled session holds in 209 of its lines (the project's name): the log was written without it as a secret."""


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "session.jsonl"
    shutil.copyfile(FIXTURE, copy)
    monkeypatch.setenv("PROJECT_TOKEN", SECRET)
    return copy


def _shown(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0
    captured = capsys.readouterr()
    return captured.out + captured.err


@pytest.mark.parametrize(
    "command",
    [
        ["view", "{log}", "--json"],
        ["view", "{log}", "--messages", "--json"],
        ["inspect", "{log}", "--json", "--top", "50"],
        ["search", "{log}", "split_payload", "--json", "--limit", "50"],
    ],
    ids=["view", "view-messages", "inspect", "search"],
)
def test_a_secret_named_by_env_is_hidden_in_what_a_command_shows(
    command: list[str], log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [part.format(log=log) for part in command]
    assert SECRET in _shown(argv, capsys)  # the log holds it: without the flag it is shown
    shown = _shown([*argv, "--secret-env", "PROJECT_TOKEN"], capsys)
    assert SECRET not in shown
    assert "<secret_hidden>" in shown


def test_replay_writes_and_reports_the_log_with_the_secret_hidden(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "replayed.jsonl"
    _shown(["replay", str(log), "--secret-env", "PROJECT_TOKEN", "--out", str(out), "--json"], capsys)
    written = out.read_text(encoding="utf-8")
    assert SECRET not in written and "<secret_hidden>" in written
    assert SECRET in log.read_text(encoding="utf-8")  # the input is only read


def test_bench_runs_with_the_secrets_named(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The bench's own redaction is tested in tests/bench/test_runner.py; here: the flag reaches it.
    import openhands_memory.bench.runner as runner

    seen: dict[str, object] = {}
    real = runner.run_benchmark

    def spy(*args: object, **kwargs: object) -> object:
        seen["secrets"] = kwargs.get("secrets")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "run_benchmark", spy)
    results = tmp_path / "results"
    shown = _shown(
        ["bench", str(log), "--pipeline", str(PIPELINE), "--secret-env", "PROJECT_TOKEN", "--out", str(results), "--no-plot",
         "--jobs", "1"],
        capsys,
    )
    assert seen["secrets"] == {"PROJECT_TOKEN": SECRET}
    assert SECRET not in shown and json.loads((results / "results.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("command", ["replay", "view", "inspect", "bench"])
def test_an_unset_secret_variable_is_a_usage_error_before_any_work(
    command: str, log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("NOT_SET_TOKEN", raising=False)
    argv = [command, str(log), "--secret-env", "NOT_SET_TOKEN"]
    if command == "bench":
        argv += ["--pipeline", str(PIPELINE), "--out", str(tmp_path / "results")]
    assert main(argv) == 2
    assert capsys.readouterr().err == "error: --secret-env NOT_SET_TOKEN: the environment variable NOT_SET_TOKEN is not set\n"
    assert not (tmp_path / "results").exists()


def test_a_secret_too_short_to_hide_is_refused_naming_it_not_its_value(
    log: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SHORT_TOKEN", "abc")
    assert main(["view", str(log), "--secret-env", "SHORT_TOKEN"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "SHORT_TOKEN" in err and "abc" not in err
