"""`openhands-memory search LOG QUERY`: a table or JSON of the best-matching events; the log is only read."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from openhands_memory.cli import main
from openhands_memory.recall import index as index_module
from openhands_memory.recall import sidecar_path

REPO = Path(__file__).resolve().parent.parent.parent
BUNDLED = REPO / "fixtures" / "synthetic_session_300.jsonl"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """A copy of the bundled log: searching writes the sidecar beside the log, never into the repository."""
    path = tmp_path / "session.jsonl"
    shutil.copyfile(BUNDLED, path)
    return path


@pytest.fixture
def enyst(real_logs_dir: Path, tmp_path: Path) -> Path:
    path = tmp_path / "enyst.json"
    shutil.copyfile(real_logs_dir / "v0_enyst-playground_issue10730_trajectory_297ev.json", path)
    return path


def snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def test_search_prints_a_table_of_the_best_events(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(log)
    assert main(["search", str(log), "FAILED", "test_validate_client", "--limit", "3"]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[0].split() == ["id", "kind", "score", "snippet"]
    assert 2 <= len(lines) <= 4
    ident, kind, score, snippet = lines[1].split(maxsplit=3)
    assert (ident, kind) == ("232", "run") and float(score) > 0
    assert "test_validate_client" in snippet
    assert out.err == ""
    assert snapshot(log) == before  # the log is only read
    assert stat.S_IMODE(sidecar_path(log).stat().st_mode) == 0o600


def test_search_json_is_a_list_of_hits(enyst: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(enyst), "oauth", "token", "--json", "--limit", "5"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert 1 <= len(hits) <= 5
    assert all(set(hit) == {"id", "kind", "score", "snippet"} for hit in hits)
    assert [hit["score"] for hit in hits] == sorted((hit["score"] for hit in hits), reverse=True)
    assert all(isinstance(hit["id"], int) and len(hit["snippet"]) <= 200 for hit in hits)


def test_search_uses_the_sidecar_again_and_follows_a_grown_log(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(log), "pytest", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert sidecar_path(log).exists()
    assert main(["search", str(log), "pytest", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == first
    with log.open("a") as out:  # the log grew since: the index catches up on the new event
        out.write(json.dumps({"id": 300, "source": "agent", "message": "", "action": "think",
                              "args": {"thought": "remember the kookaburra"}}) + "\n")  # fmt: skip
    assert main(["search", str(log), "kookaburra", "--json"]) == 0
    assert [hit["id"] for hit in json.loads(capsys.readouterr().out)] == [300]


def test_no_match_is_an_empty_table_and_exit_0(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(log), "(", "*", "-", ":"]) == 0  # no word at all
    out = capsys.readouterr()
    assert out.out == "" and out.err == "no matching event\n"
    assert main(["search", str(log), "zzzunmatched", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_a_read_only_folder_gets_an_index_in_memory_and_says_so(
    log: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = log.parent
    if os.geteuid() == 0:
        # root writes into a read-only folder anyway: give the refusal the kernel gives everyone else.
        def refuse(path: Path) -> None:
            raise PermissionError(13, "Permission denied", str(path))

        monkeypatch.setattr(index_module, "_prepare_sidecar", refuse)
    before = snapshot(log)
    folder.chmod(0o555)
    try:
        assert main(["search", str(log), "test_validate_client", "--json", "--limit", "1"]) == 0
    finally:
        folder.chmod(0o755)
    out = capsys.readouterr()
    assert [hit["id"] for hit in json.loads(out.out)] == [232]
    assert out.err.startswith(f"note: no search index beside {log} (")
    assert out.err.endswith("); using one in memory\n")
    assert "Permission denied" in out.err
    assert sorted(p.name for p in folder.iterdir()) == [log.name]
    assert snapshot(log) == before


def test_a_session_folder_is_searched_in_memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "session"
    assert main(["convert", str(BUNDLED), str(folder)]) == 0
    capsys.readouterr()
    assert main(["search", str(folder), "test_validate_client", "--json", "--limit", "1"]) == 0
    assert [hit["id"] for hit in json.loads(capsys.readouterr().out)] == [232]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "LOG"], "the following arguments are required: QUERY"),
        (["search", "LOG", "x", "--limit", "0"], "--limit must be >= 1"),
    ],
)
def test_search_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_search_of_a_missing_log_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.jsonl"
    assert main(["search", str(missing), "x"]) == 1
    assert capsys.readouterr().err == f"error: {missing}: no such file or folder\n"
    assert list(tmp_path.iterdir()) == []
