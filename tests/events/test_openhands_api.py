"""The OpenHands 0.62 event API: `Action.runnable`, `error`, the file edit diff, output truncation and `str()`.

Every expected value was observed on openhands-ai 0.62.0 with the same inputs and written out here.
"""

from __future__ import annotations

from typing import Any

import pytest

from openhands_memory.events import (
    BrowserOutputObservation,
    CmdOutputObservation,
    CmdRunAction,
    ContextReloadAction,
    ErrorObservation,
    FileEditObservation,
    IPythonRunCellObservation,
    MCPAction,
    MessageAction,
    SuccessObservation,
    event_from_dict,
    event_to_dict,
)
from openhands_memory.events.actions import ACTION_CLASSES

# -- runnable, error -------------------------------------------------------------------------------

RUNNABLE = {"run", "run_ipython", "read", "write", "edit", "browse", "browse_interactive", "call_tool_mcp"}
"""The kinds whose class has `runnable = True` in OpenHands 0.62 (every other one: False)."""


@pytest.mark.parametrize("kind", sorted(ACTION_CLASSES))
def test_runnable_is_openhands_class_flag(kind: str) -> None:
    assert ACTION_CLASSES[kind].runnable is (kind in RUNNABLE)


@pytest.mark.parametrize(
    ("metadata", "error"),
    [({}, True), ({"exit_code": 0}, False), ({"exit_code": 2}, True), ({"exit_code": -1}, True)],
)
def test_a_command_output_is_an_error_unless_its_exit_code_is_0(metadata: dict[str, int], error: bool) -> None:
    observation = CmdOutputObservation(content="x", command="ls", metadata=metadata)
    assert observation.error is error and observation.success is not error


def test_error_on_other_observations_is_as_in_openhands() -> None:
    assert IPythonRunCellObservation(content="x", code="1").error is False
    assert BrowserOutputObservation(content="", url="u", error=True).error is True  # a field there
    # OpenHands 0.62 has no `error` on the other kinds, ErrorObservation included.
    assert not hasattr(ErrorObservation(content="boom"), "error")
    assert not hasattr(SuccessObservation(content="ok"), "error")


# -- FileEditObservation.get_edit_groups / visualize_diff ------------------------------------------

OLD = "\n".join(f"line {i}" for i in range(1, 16))
NEW = OLD.replace("line 3", "LINE three").replace("line 12\n", "").replace("line 15", "line 15\nline 16")


def _edit(**fields: object) -> FileEditObservation:
    return FileEditObservation(**{"content": "diff", "path": "/w/a.py", "prev_exist": True, **fields})  # type: ignore[arg-type]


def test_edit_groups_number_and_mark_the_lines_as_openhands_does() -> None:
    edit = _edit(old_content=OLD, new_content=NEW)
    assert edit.get_edit_groups() == [
        {"before_edits": [" 1|line 1", " 2|line 2", "-3|line 3", " 4|line 4", " 5|line 5"],
         "after_edits": [" 1|line 1", " 2|line 2", "+3|LINE three", " 4|line 4", " 5|line 5"]},
        {"before_edits": [" 10|line 10", " 11|line 11", "-12|line 12", " 13|line 13", " 14|line 14", " 15|line 15"],
         "after_edits": [" 10|line 10", " 11|line 11", " 12|line 13", " 13|line 14", " 14|line 15", "+15|line 16"]},
    ]  # fmt: skip
    assert edit.get_edit_groups(n_context_lines=0) == [
        {"before_edits": ["-3|line 3"], "after_edits": ["+3|LINE three"]},
        {"before_edits": ["-12|line 12"], "after_edits": []},
        {"before_edits": [], "after_edits": ["+15|line 16"]},
    ]
    assert _edit(old_content=None, new_content="a").get_edit_groups() == []


def test_visualize_diff_applied_and_attempted() -> None:
    edit = _edit(old_content=OLD, new_content=NEW)
    assert edit.visualize_diff() == (
        "[Existing file /w/a.py is edited with 2 changes.]\n[begin of edit 1 / 2]\n(content before edit)\n"
        " 1|line 1\n 2|line 2\n-3|line 3\n 4|line 4\n 5|line 5\n(content after edit)\n"
        " 1|line 1\n 2|line 2\n+3|LINE three\n 4|line 4\n 5|line 5\n[end of edit 1 / 2]\n-------------------------\n"
        "[begin of edit 2 / 2]\n(content before edit)\n 10|line 10\n 11|line 11\n-12|line 12\n 13|line 13\n 14|line 14\n"
        " 15|line 15\n(content after edit)\n 10|line 10\n 11|line 11\n 12|line 13\n 13|line 14\n 14|line 15\n"
        "+15|line 16\n[end of edit 2 / 2]"
    )
    attempted = edit.visualize_diff(change_applied=False)
    assert attempted.startswith(
        "[Changes are NOT applied to /w/a.py - Here's how the file looks like if changes are applied.]\n"
        "[begin of ATTEMPTED edit 1 / 2]\n(content before ATTEMPTED edit)\n 1|line 1\n"
    )
    assert attempted.endswith("+15|line 16\n[end of ATTEMPTED edit 2 / 2]")
    assert str(edit) == edit.visualize_diff() + "\n"
    unchanged = "(no changes detected. Please make sure your edits change the content of the existing file.)\n"
    assert _edit(old_content="a", new_content="a").visualize_diff() == unchanged
    assert _edit(old_content=None, new_content="a").visualize_diff() == "[Existing file /w/a.py is edited with 0 changes.]"


def test_a_new_file_diff_and_its_text() -> None:
    created = _edit(path="/w/new.py", prev_exist=False, content="", old_content="", new_content="print(1)\nprint(2)")
    assert created.get_edit_groups() == [{"before_edits": ["-1|"], "after_edits": ["+1|print(1)", "+2|print(2)"]}]
    assert created.visualize_diff() == (
        "[Existing file /w/new.py is edited with 1 changes.]\n[begin of edit 1 / 1]\n(content before edit)\n-1|\n"
        "(content after edit)\n+1|print(1)\n+2|print(2)\n[end of edit 1 / 1]"
    )
    assert str(created) == "[New file /w/new.py is created with the provided content.]\n"
    assert str(_edit(content="ACI report", impl_source="oh_aci")) == "ACI report"


def test_a_recorded_diff_is_returned_as_recorded() -> None:
    loaded = event_from_dict(
        {"observation": "edit", "content": "x", "extras": {"path": "/p", "prev_exist": True, "old_content": "a",
                                                            "new_content": "b", "_diff_cache": "recorded diff\n\n"}}
    )  # fmt: skip
    assert isinstance(loaded, FileEditObservation)
    assert loaded.visualize_diff() == "recorded diff\n\n" and str(loaded) == "recorded diff\n"


# -- CmdOutputObservation truncation ---------------------------------------------------------------


def test_a_long_command_output_built_in_code_is_cut_in_the_middle() -> None:
    cut = CmdOutputObservation(content="a" * 20_000 + "b" * 20_000, command="x")
    assert cut.content == "a" * 15_000 + "\n[... Observation truncated due to length ...]\n" + "b" * 15_000
    assert len(cut.content) == 30_047
    assert len(CmdOutputObservation(content="a" * 30_000, command="x").content) == 30_000
    assert len(CmdOutputObservation(content="a" * 30_001, command="x").content) == 30_047
    assert len(CmdOutputObservation(content="a" * 40_000, command="x", hidden=True).content) == 40_000


def test_a_long_command_output_read_from_a_log_is_kept_as_written() -> None:
    # OpenHands cuts it on load too; the log is the source of truth here, so it round-trips exactly.
    data = {"id": 1, "observation": "run", "content": "a" * 40_000, "extras": {"command": "x", "metadata": {}}}
    loaded = event_from_dict(dict(data))
    assert len(loaded.content) == 40_000 and event_to_dict(loaded) == data
    assert len(CmdOutputObservation.model_validate({"content": "a" * 40_000}).content) == 40_000


# -- str() -----------------------------------------------------------------------------------------

STR_FORMS: list[tuple[dict[str, Any], str]] = [
    ({"action": "think", "args": {"thought": "hmm"}}, "AgentThinkAction(thought='hmm', action=<ActionType.THINK: 'think'>)"),
    ({"action": "finish", "args": {"final_thought": "done", "outputs": {}, "thought": ""}},
     "AgentFinishAction(final_thought='done', outputs={}, thought='', action=<ActionType.FINISH: 'finish'>)"),
    ({"action": "message", "args": {"content": "hi", "image_urls": ["u1"], "file_urls": ["f1"], "wait_for_response": False}},
     "**MessageAction** (source=EventSource.AGENT)\nCONTENT: hi\nIMAGE_URL: u1\nFILE_URL: f1"),
    ({"action": "null", "args": {}}, "NullAction(action=<ActionType.NULL: 'null'>)"),
    ({"action": "read", "args": {"path": "/a", "thought": "t"}},
     "FileReadAction(path='/a', start=0, end=-1, thought='t', action=<ActionType.READ: 'read'>, "
     "security_risk=<ActionSecurityRisk.UNKNOWN: -1>, impl_source=<FileReadSource.DEFAULT: 'default'>, view_range=None)"),
    ({"action": "change_agent_state", "args": {"agent_state": "running"}},
     "ChangeAgentStateAction(agent_state='running', thought='', action=<ActionType.CHANGE_AGENT_STATE: 'change_agent_state'>)"),
    ({"action": "delegate", "args": {"agent": "X", "inputs": {"a": 1}}},
     "AgentDelegateAction(agent='X', inputs={'a': 1}, thought='', action=<ActionType.DELEGATE: 'delegate'>)"),
    ({"action": "reject", "args": {"outputs": {"reason": "no"}}},
     "AgentRejectAction(outputs={'reason': 'no'}, thought='', action=<ActionType.REJECT: 'reject'>)"),
    ({"action": "condensation", "args": {"forgotten_event_ids": [1, 2]}},
     "CondensationAction(action=<ActionType.CONDENSATION: 'condensation'>, forgotten_event_ids=[1, 2], "
     "forgotten_events_start_id=None, forgotten_events_end_id=None, summary=None, summary_offset=None)"),
    ({"action": "condensation_request", "args": {}},
     "CondensationRequestAction(action=<ActionType.CONDENSATION_REQUEST: 'condensation_request'>)"),
    ({"action": "task_tracking", "args": {"command": "plan", "task_list": [{"id": "1"}]}},
     "TaskTrackingAction(command='plan', task_list=[{'id': '1'}], thought='', action=<ActionType.TASK_TRACKING: 'task_tracking'>)"),
    ({"action": "loop_recovery", "args": {"option": 2}}, "LoopRecoveryAction(option=2, action=<ActionType.LOOP_RECOVERY: 'loop_recovery'>)"),
    ({"action": "recall", "args": {"recall_type": "knowledge", "query": "q" * 60}}, "**RecallAction**\nQUERY: " + "q" * 50),
    ({"action": "edit", "args": {"path": "/a", "command": "str_replace", "old_str": "x", "new_str": "y", "thought": "fix"}},
     "**FileEditAction**\nPath: [/a]\nThought: fix\nCommand: str_replace\nOld String: ```\nx\n```\nNew String: ```\ny\n```\n"),
    ({"action": "edit", "args": {"path": "/a", "command": "create", "file_text": "t"}},
     "**FileEditAction**\nPath: [/a]\nThought: \nCommand: create\nCreated File with Text:\n```\nt\n```\n"),
    ({"action": "edit", "args": {"path": "/a", "command": "insert", "insert_line": 3, "new_str": "y"}},
     "**FileEditAction**\nPath: [/a]\nThought: \nCommand: insert\nInsert Line: 3\nNew String: ```\ny\n```\n"),
    ({"action": "edit", "args": {"path": "/a", "command": "undo_edit"}},
     "**FileEditAction**\nPath: [/a]\nThought: \nCommand: undo_edit\nUndo Edit\n"),
    ({"action": "edit", "args": {"path": "/a", "content": "body", "start": 2, "end": 5, "impl_source": "llm_based_edit"}},
     "**FileEditAction**\nPath: [/a]\nThought: \nRange: [L2:L5]\nContent:\n```\nbody\n```\n"),
    ({"action": "write", "args": {"path": "/a", "content": "body", "thought": "w"}},
     "**FileWriteAction**\nPath: /a\nRange: [L0:L-1]\nThought: w\nContent:\n```\nbody\n```\n"),
    ({"action": "run", "args": {"command": "ls -la", "thought": "look", "is_input": False}},
     "**CmdRunAction (source=EventSource.AGENT, is_input=False)**\nTHOUGHT: look\nCOMMAND:\nls -la"),
    ({"action": "run_ipython", "args": {"code": "print(1)", "thought": ""}}, "**IPythonRunCellAction**\nCODE:\nprint(1)"),
    ({"action": "browse", "args": {"url": "https://x", "thought": "go"}}, "**BrowseURLAction**\nTHOUGHT: go\nURL: https://x"),
    ({"action": "browse_interactive", "args": {"browser_actions": "click('1')"}},
     "**BrowseInteractiveAction**\nBROWSER_ACTIONS: click('1')"),
    ({"action": "call_tool_mcp", "args": {"name": "fetch", "arguments": {"url": "https://x", "n": [1, 2]}, "thought": "get it"}},
     "**MCPAction**\nTHOUGHT: get it\nNAME: fetch\nARGUMENTS: {'url': 'https://x', 'n': [1, 2]}"),
    ({"action": "system", "args": {"content": "You are X", "tools": [{"a": 1}, {"b": 2}], "agent_class": "CodeActAgent"}},
     "**SystemMessageAction** (source=EventSource.AGENT)\nCONTENT: You are X\nTOOLS: 2 tools available\nAGENT_CLASS: CodeActAgent"),
    ({"observation": "success", "content": "ok", "extras": {}}, "SuccessObservation(content='ok', observation=<ObservationType.SUCCESS: 'success'>)"),
    ({"observation": "null", "content": "", "extras": {}}, "NullObservation(content='', observation=<ObservationType.NULL: 'null'>)"),
    ({"observation": "think", "content": "logged", "extras": {}},
     "AgentThinkObservation(content='logged', observation=<ObservationType.THINK: 'think'>)"),
    ({"observation": "condense", "content": "sum", "extras": {}},
     "AgentCondensationObservation(content='sum', observation=<ObservationType.CONDENSE: 'condense'>)"),
    ({"observation": "delegate", "content": "d", "extras": {"outputs": {"x": 1}}},
     "AgentDelegateObservation(content='d', outputs={'x': 1}, observation=<ObservationType.DELEGATE: 'delegate'>)"),
    ({"observation": "user_rejected", "content": "no", "extras": {}},
     "UserRejectObservation(content='no', observation=<ObservationType.USER_REJECTED: 'user_rejected'>)"),
    ({"observation": "agent_state_changed", "content": "", "extras": {"agent_state": "running"}},
     "AgentStateChangedObservation(content='', agent_state='running', reason='', "
     "observation=<ObservationType.AGENT_STATE_CHANGED: 'agent_state_changed'>)"),
    ({"observation": "mcp", "content": "res", "extras": {"name": "t", "arguments": {"a": 1}}},
     "MCPObservation(content='res', observation=<ObservationType.MCP: 'mcp'>, name='t', arguments={'a': 1})"),
    ({"observation": "task_tracking", "content": "tt", "extras": {"command": "view", "task_list": []}},
     "TaskTrackingObservation(content='tt', observation=<ObservationType.TASK_TRACKING: 'task_tracking'>, command='view', task_list=[])"),
    ({"observation": "loop_detection", "content": "loop", "extras": {}},
     "LoopDetectionObservation(content='loop', observation=<ObservationType.LOOP_DETECTION: 'loop_detection'>)"),
    ({"observation": "error", "content": "boom", "extras": {"error_id": "E"}}, "**ErrorObservation**\nboom"),
    ({"observation": "download", "content": "", "extras": {"file_path": "/f"}},
     "**FileDownloadObservation**\nLocation of downloaded file: /f\n"),
    ({"observation": "read", "content": "text", "extras": {"path": "/a"}}, "[Read from /a is successful.]\ntext"),
    ({"observation": "write", "content": "text", "extras": {"path": "/a"}}, "[Write to /a is successful.]\ntext"),
    ({"observation": "recall", "content": "", "extras": {
        "recall_type": "workspace_context", "repo_name": "r", "repo_instructions": "i" * 30, "runtime_hosts": {"h": 1},
        "additional_agent_instructions": "add", "date": "2025-01-01", "custom_secrets_descriptions": {"K": "d"},
        "conversation_instructions": "ci", "microagent_knowledge": [{"name": "m1", "trigger": "t", "content": "c"},
                                                                    {"name": "m2", "trigger": "t", "content": "c"}]}},
     "**RecallObservation**\nrecall_type=RecallType.WORKSPACE_CONTEXT, repo_name=r, repo_instructions=iiiiiiiiiiiiiiiiiiii..., "
     "runtime_hosts={'h': 1}, additional_agent_instructions=add..., date=2025-01-01custom_secrets_descriptions={'K': 'd'}, "
     "conversation_instructions=ci..., microagent_knowledge=m1, m2"),
    ({"observation": "recall", "content": "", "extras": {"recall_type": "knowledge", "microagent_knowledge": []}},
     "**RecallObservation**\nrecall_type=RecallType.KNOWLEDGE"),
    ({"observation": "run", "content": "out", "extras": {"command": "ls", "metadata": {
        "exit_code": 1, "pid": 5, "username": "u", "hostname": "h", "working_dir": "/w", "py_interpreter_path": "/py",
        "prefix": "[P]", "suffix": "[S]", "extra_key": 1}, "hidden": False}},
     '**CmdOutputObservation (source=EventSource.AGENT, exit code=1, metadata={\n  "exit_code": 1,\n  "pid": 5,\n'
     '  "username": "u",\n  "hostname": "h",\n  "working_dir": "/w",\n  "py_interpreter_path": "/py",\n  "prefix": "[P]",\n'
     '  "suffix": "[S]"\n})**\n--BEGIN AGENT OBSERVATION--\n[P]out[S]\n[Current working directory: /w]\n'
     "[Python interpreter: /py]\n[Command finished with exit code 1]\n--END AGENT OBSERVATION--"),
    ({"observation": "run", "content": "out2", "extras": {"command": "ls", "metadata": {}}},
     '**CmdOutputObservation (source=EventSource.AGENT, exit code=-1, metadata={\n  "exit_code": -1,\n  "pid": -1,\n'
     '  "username": null,\n  "hostname": null,\n  "working_dir": null,\n  "py_interpreter_path": null,\n  "prefix": "",\n'
     '  "suffix": ""\n})**\n--BEGIN AGENT OBSERVATION--\nout2\n--END AGENT OBSERVATION--'),
    ({"observation": "run_ipython", "content": "x", "extras": {"code": "1", "image_urls": ["a", "b"]}},
     "**IPythonRunCellObservation**\nx\nImages: 2"),
    ({"observation": "browse", "content": "page", "extras": {
        "url": "u", "trigger_by_action": "browse", "screenshot_path": "/s.png", "open_pages_urls": ["u", "v"],
        "active_page_index": 1, "last_browser_action": "goto('u')", "error": True}},
     "**BrowserOutputObservation**\nURL: u\nError: True\nOpen pages: ['u', 'v']\nActive page index: 1\n"
     "Last browser action: goto('u')\nLast browser action error: \nFocused element bid: \nScreenshot saved to: /s.png\n"
     "--- Agent Observation ---\npage"),
    ({"observation": "edit", "content": "ACI report", "extras": {"path": "/a", "impl_source": "oh_aci"}}, "ACI report"),
]  # fmt: skip
"""An OpenHands JSON event (source agent, id 3 added) and `str()` of it as openhands-ai 0.62.0 prints it."""


@pytest.mark.parametrize(("data", "text"), STR_FORMS, ids=[f"{i}-{d.get('action', d.get('observation'))}" for i, (d, _) in enumerate(STR_FORMS)])
def test_str_is_openhands_text(data: dict[str, Any], text: str) -> None:
    assert str(event_from_dict({**data, "source": "agent", "id": 3})) == text


def test_str_of_events_built_in_code_without_a_source() -> None:
    assert str(CmdRunAction(command="ls")) == "**CmdRunAction (source=None, is_input=False)**\nCOMMAND:\nls"
    assert str(MessageAction(content="hi")) == "**MessageAction** (source=None)\nCONTENT: hi"
    assert str(MCPAction(name="fetch", arguments={"url": "https://x"})) == "**MCPAction**\nNAME: fetch\nARGUMENTS: {'url': 'https://x'}"


def test_str_of_kinds_openhands_does_not_have_lists_their_fields() -> None:
    # OpenHands 0.62 refuses these kinds (so has no text for them): the same dataclass-like form, kind last.
    unknown = event_from_dict({"action": "chat", "args": {"content": "hi", "npc": "Chen"}, "source": "agent"})
    assert str(unknown) == "UnknownAction(content='hi', npc='Chen', action='chat')"
    assert str(ContextReloadAction(event_id=3)) == "ContextReloadAction(event_id=3, action='context_reload')"
    assert str(ContextReloadAction(event_id=3, offset=8)) == "ContextReloadAction(event_id=3, offset=8, action='context_reload')"
    observation = event_from_dict({"observation": "chat", "content": "yo", "extras": {"npc": "Chen"}})
    assert str(observation) == "UnknownObservation(content='yo', npc='Chen', observation='chat')"
