"""`openhands-memory convert` (and the other commands) with a conversation in PostgreSQL as SRC or DST.

Every command's behaviour on a stored conversation is in the shared feature contract
(`tests/stream/test_postgres_store.py::TestPostgresLogFeatures`); here: moving real logs in and out.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

from openhands_memory.cli import main
from openhands_memory.events import event_to_json, load_events
from conftest import real_log_params, require_real_log

SOURCES = [
    *real_log_params("v0_"),  # JSON lists
    *real_log_params("v1_"),  # OpenHands SDK logs, imported as V0 events
    *real_log_params("v0legacy_"),  # the old flattened form, upcast on read
]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().err


@pytest.mark.parametrize("log", SOURCES)
def test_convert_into_the_database_and_back_out_is_byte_identical_per_event(
    log: Path | None, postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = require_real_log(log)
    url = f"{postgres_url}&conversation={log.stem[:60]}"
    assert _run(capsys, "convert", str(log), url)[0] == 0
    direct, through = tmp_path / "direct.jsonl", tmp_path / "through.jsonl"
    assert _run(capsys, "convert", str(log), str(direct))[0] == 0
    assert _run(capsys, "convert", url, str(through))[0] == 0
    assert through.read_bytes() == direct.read_bytes()
    with psycopg.connect(postgres_url) as conn:
        bodies = [bytes(row[0]) for row in conn.execute("SELECT body FROM openhands_events ORDER BY position")]
    assert bodies == [event_to_json(e) for e in load_events(log)] == direct.read_bytes().splitlines()


def test_convert_jsonl_in_and_out_and_between_conversations(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], real_logs_dir: Path
) -> None:
    source = tmp_path / "source.jsonl"
    assert _run(capsys, "convert", str(real_logs_dir / "v0_oh-tests_wrong_initial_state.json"), str(source))[0] == 0
    first, second = f"{postgres_url}&conversation=a", f"{postgres_url}&conversation=b"
    assert _run(capsys, "convert", str(source), first)[0] == 0
    assert _run(capsys, "convert", first, second)[0] == 0
    out = tmp_path / "out.jsonl"
    assert _run(capsys, "convert", second, str(out))[0] == 0
    assert out.read_bytes() == source.read_bytes()


def test_convert_refuses_a_conversation_that_holds_events_unless_forced(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], real_logs_dir: Path
) -> None:
    small, other = real_logs_dir / "v0_oh-tests_wrong_initial_state.json", real_logs_dir / "v0_oh-tests_basic_gui_mode.json"
    url = f"{postgres_url}&conversation=taken"
    assert _run(capsys, "convert", str(small), url)[0] == 0
    code, err = _run(capsys, "convert", str(other), url)
    assert code == 1
    assert re.fullmatch(
        r"error: postgresql://\S+conversation=taken: the conversation holds 8 events; use --force to replace it\n", err
    )
    out = tmp_path / "still.jsonl"
    assert _run(capsys, "convert", url, str(out))[0] == 0
    assert out.read_bytes().splitlines() == [event_to_json(e) for e in load_events(small)]
    assert _run(capsys, "convert", str(other), url, "--force")[0] == 0
    assert _run(capsys, "convert", url, str(out), "--force")[0] == 0
    assert out.read_bytes().splitlines() == [event_to_json(e) for e in load_events(other)]


def test_convert_never_writes_onto_its_source_conversation(postgres_url: str, capsys: pytest.CaptureFixture[str], real_logs_dir: Path) -> None:
    url = f"{postgres_url}&conversation=self"
    assert _run(capsys, "convert", str(real_logs_dir / "v0_oh-tests_wrong_initial_state.json"), url)[0] == 0
    code, err = _run(capsys, "convert", url, url, "--force")
    assert (code, err) == (1, "error: DST is SRC, and an input is never written to; choose another conversation\n")


def test_a_url_without_conversation_is_one_error_line(postgres_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(capsys, "validate", postgres_url)
    assert code == 1
    assert err.endswith("the URL names no conversation: add ?conversation=ID\n")
    code, err = _run(capsys, "inspect", postgres_url)
    assert code == 1 and err.startswith("error: postgresql://") and err.count("\n") == 1


def test_an_unreachable_database_is_one_error_line_without_the_password(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(capsys, "inspect", "postgresql://me:s3cret-pw@/db?host=/nonexistent-folder&conversation=c")
    assert code == 1
    assert err.startswith("error: postgresql://me:***@/db?host=/nonexistent-folder&conversation=c: open failed: ")
    assert "s3cret-pw" not in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "argv",
    [["replay"], ["inspect"], ["view"], ["validate"], ["convert", "OUT"], ["search", "QUERY"], ["bench", "--pipeline", "no_condensation", "--out", "OUT"]],
    ids=lambda argv: argv[0],
)
def test_a_misspelled_conversation_is_an_error_not_an_empty_log(
    argv: list[str], postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = f"{postgres_url}&conversation=c-42"
    assert _run(capsys, "convert", str(Path(__file__).parent.parent / "fixtures" / "synthetic_session_300.jsonl"), stored)[0] == 0
    typo = f"{postgres_url}&conversation=c-43"
    command, *rest = argv
    rest = [str(tmp_path / "out") if arg == "OUT" else "failing test" if arg == "QUERY" else arg for arg in rest]
    code, err = _run(capsys, command, typo, *rest)
    assert code == 1, err
    assert re.search(r"conversation=c-43: no conversation 'c-43' in table 'openhands_events': it holds no event of it\n", err), err
    assert not (tmp_path / "out").exists()  # nothing written, no zeros
