"""The SDK conversation harness itself: its chat check and its tools' guards (no conversation is run here)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from openhands_memory.integrations.openhands_sdk.testing import (  # noqa: E402
    ListFilesAction,
    ListFilesExecutor,
    RunCommandAction,
    RunCommandExecutor,
    ScriptedLLM,
    check_valid_chat,
    write_workspace,
)


@pytest.mark.parametrize(
    ("chat", "message"),
    [
        ([{"role": "user", "content": "hi"}], "the chat does not start with the system message: ['user']"),
        (
            [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}, {"role": "system", "content": "s"}],
            "message 2: a second system message",
        ),
        (
            [{"role": "system", "content": "s"}, {"role": "tool", "tool_call_id": "c1", "content": "r"}],
            "message 1: tool result 'c1' answers no pending call ([])",
        ),
        (
            [{"role": "system", "content": "s"}, _call := {"role": "assistant", "tool_calls": [{"id": "c1"}, {"id": "c2"}]},
             {"role": "tool", "tool_call_id": "c1", "content": "r"}, {"role": "assistant", "content": "next"}],
            "message 3 (assistant): tool calls ['c2'] unanswered before it",
        ),
        (
            [{"role": "system", "content": "s"}, _call, {"role": "tool", "tool_call_id": "c1", "content": "r"},
             {"role": "tool", "tool_call_id": "c1", "content": "r"}],
            "message 3: tool result 'c1' answers no pending call (['c2'])",
        ),
        ([{"role": "system", "content": "s"}, _call], "tool calls ['c1', 'c2'] unanswered at the end"),
        (
            [{"role": "system", "content": "s"}, {"role": "assistant", "tool_calls": [{"id": "c1"}, {"id": "c1"}]}],
            "message 1: repeated tool call ids ['c1', 'c1']",
        ),
    ],
)  # fmt: skip
def test_check_valid_chat_names_what_is_wrong(chat: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(AssertionError, match=re.escape(message)):
        check_valid_chat(chat)


def test_list_files_reads_and_lists_inside_the_workspace_only(tmp_path: Path) -> None:
    names = write_workspace(tmp_path / "ws", files=3)
    (tmp_path / "secret.txt").write_text("outside")
    run = ListFilesExecutor(tmp_path / "ws")
    assert run(ListFilesAction(command="list", path="notes")).text == "\n".join(names)
    assert run(ListFilesAction(command="read", path=names[1])).text == (tmp_path / "ws" / names[1]).read_text()
    outside = run(ListFilesAction(command="read", path="../secret.txt"))
    assert outside.is_error and outside.text == "no such path in the workspace: ../secret.txt"
    assert run(ListFilesAction(command="list", path=names[0])).text == f"not a folder: {names[0]}"
    assert run(ListFilesAction(command="read", path="notes")).text == "not a file: notes"


def test_run_command_runs_only_its_programs_and_reports_their_exit_code(tmp_path: Path) -> None:
    [name] = write_workspace(tmp_path, files=1)
    run = RunCommandExecutor(tmp_path)
    counted = run(RunCommandAction(argv=["wc", "-l", name]))
    assert (counted.text, counted.exit_code, counted.is_error) == (f"3 {name}\n\n[exit code 0]", 0, False)
    failed = run(RunCommandAction(argv=["cat", "missing.txt"]))
    assert failed.is_error and failed.exit_code == 1 and "[stderr]" in failed.text and failed.text.endswith("[exit code 1]")
    refused = run(RunCommandAction(argv=["rm", "-rf", "."]))
    assert refused.is_error and refused.exit_code == -1 and refused.text.startswith("not an allowed program: ['rm']")
    assert (tmp_path / name).exists()


def test_scripted_llm_without_a_script_says_how_to_build_one() -> None:
    llm = ScriptedLLM(model="gpt-4o", usage_id="agent", api_key="sk-offline")
    with pytest.raises(RuntimeError, match=re.escape("ScriptedLLM has no script: build it with ScriptedLLM.scripted(...)")):
        llm._transport_call(messages=[{"role": "user", "content": "hi"}])
