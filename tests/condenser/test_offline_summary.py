"""The offline structured summarizer: OpenHands' sections filled from built event lists, folding, the size bound."""

from __future__ import annotations

from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARY_HEADER, SECTIONS, USER_MESSAGE_CHARS, offline_summary
from openhands_memory.events import (
    ErrorObservation,
    EventSource,
    FileEditAction,
    FileEditObservation,
    FileReadAction,
    FileReadObservation,
    MessageAction,
    TaskTrackingAction,
)
from openhands_memory.testing.sessions import SessionBuilder

PYTEST_FAILURE = """\
============================= test session starts ==============================
collected 3 items

tests/test_parser.py::test_empty FAILED                                  [ 33%]
tests/test_parser.py::test_one PASSED                                    [ 66%]
tests/test_parser.py::test_two PASSED                                    [100%]

=================================== FAILURES ===================================
__________________________________ test_empty __________________________________
    def test_empty():
>       assert parse("") == []
E       AssertionError: assert None == []
=========================== short test summary info ============================
FAILED tests/test_parser.py::test_empty - AssertionError: assert None == []
========================= 1 failed, 2 passed in 0.12s =========================
"""


def _run(s: SessionBuilder, command: str, output: str, exit_code: int) -> None:
    _, observation = s.turn(command, output)
    observation.metadata = {"exit_code": exit_code}


def _section(summary: str, name: str) -> list[str]:
    """The lines of one section (`- ` items), in order."""
    lines = summary.splitlines()
    start = lines.index(f"{name}:") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].rstrip(":") in SECTIONS), len(lines))
    return lines[start:end]


def test_a_failing_pytest_run_gives_its_command_exit_code_failing_test_id_and_first_error_line() -> None:
    s = SessionBuilder()
    s.next_id = 10
    _run(s, "python -m pytest tests/test_parser.py", PYTEST_FAILURE, 1)
    summary = offline_summary(s.events)
    assert _section(summary, "TESTS") == [
        "- `python -m pytest tests/test_parser.py` exit 1; 1 failed, 2 passed in 0.12s; failing: "
        "tests/test_parser.py::test_empty; first error: E AssertionError: assert None == [] (events 10-11)"
    ]
    assert _section(summary, "PENDING") == [
        "- make `python -m pytest tests/test_parser.py` pass (its latest run failed) (events 10-11)"
    ]
    assert summary.startswith(OFFLINE_SUMMARY_HEADER + "\n")


def test_a_later_passing_run_moves_the_test_command_to_completed_and_says_what_failed_before() -> None:
    s = SessionBuilder()
    _run(s, "pytest tests/test_parser.py", PYTEST_FAILURE, 1)
    _run(s, "pytest tests/test_parser.py", "3 passed in 0.10s", 0)
    summary = offline_summary(s.events)
    assert _section(summary, "TESTS") == [
        "- `pytest tests/test_parser.py` exit 0; 3 passed in 0.10s; failed before: tests/test_parser.py::test_empty (events 0-3)"
    ]
    assert _section(summary, "COMPLETED") == ["- `pytest tests/test_parser.py` passes (events 2-3)"]
    assert "PENDING:" not in summary


def test_edits_and_reads_give_code_state_and_changes_by_path_and_a_failed_edit_says_so() -> None:
    s = SessionBuilder()
    edit = s.add(FileEditAction(path="src/parser.py", command="str_replace", old_str="def parse(text):\n    return None",
                                new_str="def parse(text):\n    return []"))  # fmt: skip
    s.add(FileEditObservation(content="edited", path="src/parser.py", cause=edit.id))
    read = s.add(FileReadAction(path="src/util.py"))
    s.add(FileReadObservation(content="...", path="src/util.py", cause=read.id))
    new = s.add(FileEditAction(path="src/new.py", command="create", file_text="a = 1\nb = 2\n"))
    bad = s.add(FileEditAction(path="src/parser.py", command="insert", insert_line=99, new_str="x = 1"))
    s.add(ErrorObservation(content="Invalid `insert_line` parameter: 99", cause=bad.id))
    summary = offline_summary(s.events)
    assert _section(summary, "CODE_STATE") == [
        "- src/util.py: read (event 2)",
        f"- src/new.py: created (event {new.id})",
        "- src/parser.py: edited (events 0, 5)",  # a file's line moves to the end when it is touched again
    ]
    assert _section(summary, "CHANGES") == [
        "- src/parser.py: replaced `return None` with `return []` (event 0)",
        "- src/new.py: created (2 lines) (event 4)",
        "- src/parser.py: inserted 1 line after line 99: `x = 1` — failed: Invalid `insert_line` parameter: 99 (events 5-6)",
    ]


def test_a_replacement_is_described_from_its_first_changed_line() -> None:
    s = SessionBuilder()
    s.add(FileEditAction(path="a.py", command="str_replace", old_str="def f():\n    pass", new_str="def f():\n    pass\n\n\ndef g():\n    pass"))
    s.add(FileEditAction(path="a.py", command="str_replace", old_str="import os\nimport sys", new_str="import os"))
    s.add(FileEditAction(path="a.py", command="str_replace", old_str="x = 1", new_str="x = 2\ny = 3"))
    assert _section(offline_summary(s.events), "CHANGES") == [
        "- a.py: added 4 lines: `def g():`… (event 0)",
        "- a.py: removed 1 line: `import sys` (event 1)",
        "- a.py: replaced `x = 1` with `x = 2`… (event 2)",
    ]


def test_the_latest_task_list_fills_task_tracking_completed_and_pending() -> None:
    s = SessionBuilder()
    s.add(TaskTrackingAction(command="plan", task_list=[{"id": "1", "title": "Old plan", "status": "todo"}]))
    s.add(TaskTrackingAction(command="plan", task_list=[
        {"id": "1", "title": "Reproduce the bug", "status": "done"},
        {"id": "2", "title": "Fix parse()", "status": "in_progress", "notes": "empty input"},
        {"id": "3", "title": "Add a test", "status": "todo"},
    ]))  # fmt: skip
    summary = offline_summary(s.events)
    assert _section(summary, "TASK_TRACKING") == [
        "- 1 [done] Reproduce the bug (event 1)",
        "- 2 [in_progress] Fix parse() — empty input (event 1)",
        "- 3 [todo] Add a test (event 1)",
    ]
    assert _section(summary, "COMPLETED") == ["- task 1: Reproduce the bug (event 1)"]
    assert _section(summary, "PENDING") == ["- task 2: Fix parse() (event 1)", "- task 3: Add a test (event 1)"]


def test_git_commands_give_version_control_status_the_branch_and_commits() -> None:
    s = SessionBuilder()
    _run(s, "git checkout -b fix-parser", "Switched to a new branch 'fix-parser'", 0)
    _run(s, 'git commit -am "Fix parse"', "[fix-parser 1a2b3c4] Fix parse\n 1 file changed", 0)
    _run(s, "git push origin fix-parser", "fatal: could not read Username", 128)
    summary = offline_summary(s.events)
    assert _section(summary, "VERSION_CONTROL_STATUS") == [
        "- `git checkout -b fix-parser` exit 0: Switched to a new branch 'fix-parser' (events 0-1)",
        "- branch: fix-parser (events 0-1)",
        '- `git commit -am "Fix parse"` exit 0: [fix-parser 1a2b3c4] Fix parse (events 2-3)',
        "- `git push origin fix-parser` exit 128: fatal: could not read Username (events 4-5)",
    ]
    assert _section(summary, "COMPLETED") == ['- committed: `git commit -am "Fix parse"` (events 2-3)']


def test_user_messages_are_quoted_verbatim_when_short_and_cut_when_long_and_installs_go_to_deps() -> None:
    s = SessionBuilder()
    s.add(MessageAction(content="Keep the public API   stable."), EventSource.USER)
    s.add(MessageAction(content="x" * 2000), EventSource.USER)
    _run(s, "pip install hypothesis", "ERROR: No matching distribution found for hypothesis", 1)
    _run(s, "make build", "gcc: error: foo.c: No such file or directory", 2)
    summary = offline_summary(s.events)
    assert _section(summary, "USER_CONTEXT") == [
        "- user: Keep the public API stable. (event 0)",
        f"- user: {'x' * (USER_MESSAGE_CHARS - 1)}… (event 1)",
    ]
    assert _section(summary, "DEPS") == [
        "- `pip install hypothesis` exit 1; first error: ERROR: No matching distribution found for hypothesis (events 2-3)"
    ]
    assert _section(summary, "CURRENT_STATE") == [
        "- `make build` failed, exit 2; first error: gcc: error: foo.c: No such file or directory (events 4-5)"
    ]


def test_the_previous_summary_is_folded_in_by_section_its_citations_kept() -> None:
    first = SessionBuilder()
    first.add(MessageAction(content="Fix the parser"), EventSource.USER)
    first.add(FileReadAction(path="src/parser.py"))
    _run(first, "pytest -x", PYTEST_FAILURE, 1)
    previous = offline_summary(first.events)
    assert offline_summary([], previous=[previous]) == previous  # read back as written

    later = SessionBuilder()
    later.next_id = 50
    later.add(FileEditAction(path="src/parser.py", command="str_replace", old_str="None", new_str="[]"))
    summary = offline_summary(later.events, previous=[previous])
    assert _section(summary, "USER_CONTEXT") == ["- user: Fix the parser (event 0)"]
    assert _section(summary, "CODE_STATE") == ["- src/parser.py: read, edited (events 1, 50)"]
    assert "failing: tests/test_parser.py::test_empty" in _section(summary, "TESTS")[0]

    model_written = "USER_CONTEXT: Make the CSV reader accept newlines\nCOMPLETED: Rewrote split_rows() (events 41-43)\nnotes"
    folded = offline_summary([], previous=[model_written])
    assert _section(folded, "USER_CONTEXT") == ["- Make the CSV reader accept newlines"]
    assert _section(folded, "COMPLETED") == ["- Rewrote split_rows() (events 41-43)", "- notes"]


def test_a_huge_input_is_cut_to_the_budget_newest_lines_kept_and_left_out_ones_counted() -> None:
    s = SessionBuilder()
    for i in range(3000):
        s.add(FileEditAction(path=f"src/m{i}.py", command="create", file_text="x = 1\n"))
        _run(s, f"python -m pytest tests/test_{i}.py", f"FAILED tests/test_{i}.py::test_it - E assert 0\n", 1)
        _run(s, f"./tool {i}", "error: it broke", 3)
    unbounded = offline_summary(s.events)
    assert len(unbounded) > 1_000_000
    summary = offline_summary(s.events, fits=lambda text: len(text) <= 8_000)
    assert len(summary) <= 8_000
    for name in ("CODE_STATE", "TESTS", "CHANGES", "CURRENT_STATE", "PENDING"):
        lines = _section(summary, name)
        assert lines[0].startswith("- … ") and lines[0].endswith(" lines left out")
        assert len(lines) >= 2
    assert _section(summary, "CODE_STATE")[-1] == f"- src/m2999.py: created (event {s.events[-5].id})"  # the newest


def test_a_budget_nothing_fits_stops_after_a_bounded_number_of_rounds() -> None:
    s = SessionBuilder()
    _run(s, "pytest", PYTEST_FAILURE, 1)
    calls: list[int] = []

    def never(text: str) -> bool:
        calls.append(len(text))
        return False

    summary = offline_summary(s.events, fits=never)
    assert len(calls) == 11  # the full text, then 10 rounds
    assert "TESTS:" in summary  # every section keeps at least its newest line; the caller cuts the rest


def test_no_events_and_no_previous_summary_say_there_is_nothing_to_report() -> None:
    assert offline_summary([]) == f"{OFFLINE_SUMMARY_HEADER}\nCURRENT_STATE:\n- nothing to report from these events"
