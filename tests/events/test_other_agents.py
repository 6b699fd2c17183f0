"""Other agents' logs (Claude Code, Codex, SWE-agent, mini-swe-agent) load as events, detected by content."""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from conftest import REPO_ROOT

from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.errors import MalformedEventError
from openhands_memory.events import (
    AgentDelegateAction,
    AgentDelegateObservation,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    MCPAction,
    MCPObservation,
    MessageAction,
    Scope,
    UnknownObservation,
    agent_history,
    dump_events,
    events_in_scope,
    find_delegations,
    iter_events,
    load_events,
    log_format,
)
from openhands_memory.recall._search_text import event_text
from openhands_memory.replay.calibration import recorded_usages
from openhands_memory.view import View

OTHER_AGENTS = REPO_ROOT.parent / "shared" / "fixtures" / "other-agents"
"""The public sample logs of other agents (MIT, see its INDEX.md); never copied into the repository."""
OURS = REPO_ROOT / "fixtures" / "other-agents"
CLAUDE = OURS / "claude_code_session.jsonl"
CODEX = OURS / "codex_rollout.jsonl"
MINI_V1 = OURS / "mini_swe_agent_v1.traj.json"

FOLDER_FORMAT = {"claude-code": "claude-code", "swe-agent": "swe-agent", "mini-swe-agent": "mini-swe-agent"}


def _shared_logs() -> list[Path]:
    if not OTHER_AGENTS.is_dir():
        return []
    return sorted(p for p in OTHER_AGENTS.rglob("*") if p.is_file() and not p.name.startswith(("LICENSE", "INDEX")))


def _require_shared() -> None:
    if not OTHER_AGENTS.is_dir():
        if os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}:
            pytest.fail(f"{OTHER_AGENTS} is missing under CI")
        pytest.skip(f"{OTHER_AGENTS}: the shared other-agent logs are not here")


@pytest.mark.parametrize("path", _shared_logs() or [None], ids=lambda p: p.name if p else "missing")
def test_every_shared_other_agent_log_loads_as_its_own_format(path: Path | None) -> None:
    _require_shared()
    assert path is not None
    events = load_events(path)
    assert log_format(events) == FOLDER_FORMAT[path.parent.name]
    shown = [e for e in events if not e.hidden]
    assert any(isinstance(e, MessageAction) and e.source == "user" for e in shown)
    if path.parent.name != "claude-code":
        # Every agent turn is answered: the output the model saw is an observation, not dropped.
        outputs = [e for e in shown if isinstance(e, (CmdOutputObservation, MCPObservation, UnknownObservation))]
        assert outputs and all(e.content or e.cause is not None for e in outputs)


def test_a_swe_agent_trajectory_is_no_longer_read_as_a_legacy_openhands_log() -> None:
    _require_shared()
    path = next((OTHER_AGENTS / "swe-agent").glob("replay__marshmallow-code__marshmallow-1867__default__*.traj"))
    events = load_events(path)
    assert log_format(events) == "swe-agent"
    text = sum(len(getattr(e, "content", "") or e.message) for e in events)
    assert text > 11_000  # the session's text, not 14 events' worth of kinds
    outputs = [e for e in events if isinstance(e, UnknownObservation) and e.observation == "swe-agent:output"]
    assert len(outputs) == 13 and all(isinstance(events[e.cause], CmdRunAction) for e in outputs)


def test_a_file_of_no_known_format_is_refused_saying_what_it_holds(tmp_path: Path) -> None:
    obj = tmp_path / "notes.json"
    obj.write_text(json.dumps({"title": "x", "items": [1, 2]}))
    with pytest.raises(MalformedEventError, match=re.escape("not a log of any format read here") + r".*keys \['items', 'title'\]"):
        load_events(obj)
    jsonl = tmp_path / "metrics.jsonl"
    jsonl.write_text('{"type": "metric", "value": 1}\n{"type": "metric", "value": 2}\n')
    with pytest.raises(MalformedEventError, match=r"JSONL of 2 record\(s\).*'type' values 'metric' x2"):
        load_events(jsonl)
    listed = tmp_path / "numbers.json"
    listed.write_text("[[1], [2]]")
    with pytest.raises(MalformedEventError, match=r"a JSON list of 2 element\(s\), the first a list"):
        load_events(listed)


def test_a_claude_code_line_that_is_not_json_names_the_file_and_line(tmp_path: Path) -> None:
    lines = CLAUDE.read_text().splitlines()
    lines[3] = lines[3][:40]
    broken = tmp_path / "session.jsonl"
    broken.write_text("\n".join(lines) + "\n")
    with pytest.raises(MalformedEventError, match=re.escape(f"{broken}:4: invalid JSON")):
        load_events(broken)


def test_claude_code_session_replays_the_branch_it_ended_on_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        events = load_events(CLAUDE)
    said = caplog.text
    assert "read as a claude-code log" in said
    assert "replayed the branch it ended on (to a9); 2 record(s) of other branches left out" in said
    assert "record kinds not known, kept hidden: queue-operation x1" in said
    texts = [e.content for e in events if isinstance(e, MessageAction)]
    assert "Fix add, please" in texts and "Also check mul" not in texts  # the rewound branch is left out
    assert [e.original_id for e in events[:2]] == ["u1", "a1"]
    assert events[0].timestamp == "2025-10-20T09:00:00.000Z"


def test_claude_code_tool_calls_pair_by_id_with_thinking_and_usage_kept() -> None:
    events = load_events(CLAUDE)
    run = next(e for e in events if isinstance(e, CmdRunAction))
    assert run.command == "pytest -q" and run.tool_call_metadata.tool_call_id == "toolu_01"
    message = run.tool_call_metadata.model_response["choices"][0]["message"]
    assert message["reasoning_content"] == "The test fails; run it first."
    assert message["thinking_blocks"][0]["signature"] == "sig01"
    assert run.model == "claude-sonnet-4-5-20250929"
    output = next(e for e in events if isinstance(e, CmdOutputObservation))
    assert output.cause == run.id and output.tool_call_metadata == run.tool_call_metadata
    read = next(e for e in events if isinstance(e, MCPAction) and e.name == "Read")
    assert read.arguments == {"file_path": "/repo/calc.py"}
    # Usage: input + cache creation + cache read is the prompt; one record per response.
    usages = recorded_usages(events)
    assert len(usages) == 7  # msg_04 is on the rewound branch; the sidechain is hidden
    first = usages[0]
    assert (first.prompt_tokens, first.cache_write_tokens, first.cache_read_tokens, first.completion_tokens) == (3204, 3200, 0, 85)
    assert first.event_id == run.id and first.model == "claude-sonnet-4-5-20250929"


def test_claude_code_compaction_becomes_a_condensation_the_view_applies() -> None:
    events = load_events(CLAUDE)
    condensation = next(e for e in events if isinstance(e, CondensationAction))
    assert condensation.original_id == "c1"
    assert (condensation.forgotten_events_start_id, condensation.forgotten_events_end_id) == (0, condensation.id - 1)
    assert condensation.summary.startswith("This session is being continued") and condensation.summary_offset == 0
    view = View.from_events(agent_history(events))
    assert view.events[0].content == condensation.summary
    assert [getattr(e, "content", None) for e in view.events[1:2]] == ["Thanks. Commit it."]


def test_claude_code_chat_renders_matched_tool_calls_and_hides_sidechains() -> None:
    events = load_events(CLAUDE)
    sidechain = [e for e in events if isinstance(e, UnknownObservation) and e.observation == "claude-code:sidechain"]
    assert len(sidechain) == 2 and all(e.hidden for e in sidechain)
    upto = next(e.id for e in events if isinstance(e, CondensationAction))
    messages = ConversationMemory("").process_events(agent_history(events[:upto]))
    calls = [m for m in messages if m.role == "assistant" and m.tool_calls]
    results = [m for m in messages if m.role == "tool"]
    assert [c.tool_calls[0].id for c in calls] == ["toolu_01", "toolu_02", "toolu_03", "toolu_04"]
    assert [r.tool_call_id for r in results] == ["toolu_01", "toolu_02", "toolu_03", "toolu_04"]


def test_codex_rollout_pairs_calls_by_call_id_and_keeps_compaction_usage_and_model(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        events = load_events(CODEX)
    assert log_format(events) == "codex"
    assert "record kinds not known, kept hidden: response_item:web_search_call x1, world_state x1" in caplog.text
    run = next(e for e in events if isinstance(e, CmdRunAction))
    assert run.command == "pytest -q" and run.model == "gpt-5-codex"
    assert run.tool_call_metadata.model_response["choices"][0]["message"]["reasoning_content"] == "**Running the tests**"
    patch = next(e for e in events if isinstance(e, MCPAction))
    assert patch.name == "apply_patch" and "*** Begin Patch" in patch.arguments["input"]
    result = next(e for e in events if isinstance(e, MCPObservation))
    assert result.cause == patch.id and result.content.startswith("Success.")
    condensation = next(e for e in events if isinstance(e, CondensationAction))
    assert condensation.summary.startswith("Fix the failing test\n\nSummary:")
    usages = recorded_usages(events)
    assert [(u.prompt_tokens, u.cache_read_tokens, u.completion_tokens) for u in usages][:2] == [(4100, 3072, 120), (4300, 4096, 80)]


def test_mini_swe_agent_both_layouts() -> None:
    events = load_events(MINI_V1)
    assert log_format(events) == "mini-swe-agent"
    commands = [e.command for e in events if isinstance(e, CmdRunAction)]
    assert commands[:2] == ["cat calc.py", "sed -i 's/a - b/a + b/' calc.py"]
    assert commands[0] and events[2].message.startswith("THOUGHT: Let me look")  # shown as the reply it was
    usages = recorded_usages(events)
    assert [(u.prompt_tokens, u.cache_read_tokens, u.response_id) for u in usages][1] == (1600, 1500, "chatcmpl-02")
    assert events[-1].llm_metrics["accumulated_cost"] == 0.0123
    messages = ConversationMemory("").process_events(agent_history(events))
    assert [m.role for m in messages] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert messages[2].content[0].text == "THOUGHT: Let me look at calc.py.\n\n```bash\ncat calc.py\n```"


def test_a_bare_chat_message_list_is_read_as_legacy_mini_swe_agent(tmp_path: Path) -> None:
    path = tmp_path / "local.traj.json"
    path.write_text(
        json.dumps(
            [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "task"},
                {"role": "assistant", "content": "ok\n```mswea_bash_command\necho hi\n```"},
                {"role": "user", "content": "<returncode>0</returncode>"},
            ]
        )
    )
    events = load_events(path)
    assert [type(e).__name__ for e in events] == ["SystemMessageAction", "MessageAction", "CmdRunAction", "UnknownObservation"]
    assert events[2].command == "echo hi" and events[3].cause == 2


def test_iter_events_reads_a_bare_chat_message_list_too(tmp_path: Path) -> None:
    path = tmp_path / "local.traj.json"
    path.write_text(json.dumps([{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]))
    assert [type(e).__name__ for e in iter_events(path)] == ["SystemMessageAction", "MessageAction"]


def test_a_malformed_trajectory_gets_the_typed_error_naming_the_file_and_message(tmp_path: Path) -> None:
    swe = tmp_path / "run.traj"
    swe.write_text(json.dumps({"history": [{"role": "system", "content": "sys"}, "not a message"], "info": {}}))
    with pytest.raises(MalformedEventError, match=re.escape(f"{swe}: event #1: swe-agent log: message 1 is a str, not an object")):
        load_events(swe)
    mini = tmp_path / "run.traj.json"
    calls = [{"id": "c1", "type": "function"}]
    mini.write_text(json.dumps([{"role": "system", "content": "s"}, {"role": "assistant", "content": "", "tool_calls": calls}]))
    with pytest.raises(MalformedEventError, match=re.escape("mini-swe-agent log: message 1 has a tool call without a function")):
        load_events(mini)


def test_an_unknown_claude_code_record_kind_is_kept_hidden_and_counted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "session.jsonl"
    lines = CLAUDE.read_text().splitlines()[:2] + [json.dumps({"type": "brand-new-kind", "uuid": "z", "data": [1]}), "42"]
    path.write_text("\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING):
        events = load_events(path)
    kept = [e for e in events if isinstance(e, UnknownObservation)]
    assert [(e.observation, e.hidden, e.record) for e in kept] == [
        ("claude-code:brand-new-kind", True, {"type": "brand-new-kind", "uuid": "z", "data": [1]}),
        ("claude-code:int record (not an object)", True, 42),
    ]
    assert "record kinds not known, kept hidden: brand-new-kind x1, int record (not an object) x1" in caplog.text


def test_claude_code_task_calls_are_delegations_and_a_subagent_file_reads_alone(tmp_path: Path) -> None:
    events = load_events(CLAUDE)
    (delegation,) = find_delegations(events)
    action = events[delegation.action_id]
    assert isinstance(action, AgentDelegateAction) and action.agent == "general-purpose"
    assert action.inputs["prompt"] == "Run the test suite and report failures"
    answer = events[delegation.observation_id]
    assert isinstance(answer, AgentDelegateObservation) and answer.content == "All 2 tests pass."
    sidechain = [e for e in events if isinstance(e, UnknownObservation) and e.observation == "claude-code:sidechain"]
    assert {e.delegation_id for e in sidechain} == {action.id}
    # The sub-agent's own file (every record a sidechain) is a conversation of its own.
    records = [json.loads(line) for line in CLAUDE.read_text().splitlines()]
    agent_file = tmp_path / "agent-1.jsonl"
    agent_file.write_text("".join(json.dumps(r) + "\n" for r in records if r.get("isSidechain")))
    alone = load_events(agent_file)
    assert [(type(e).__name__, e.content) for e in alone] == [
        ("MessageAction", "Run the test suite and report failures"),
        ("MessageAction", "All 2 tests pass."),
    ]
    assert alone[1].source == "agent"


def _claude_record(kind: str, uuid: str, parent: str | None, content: object, **fields: object) -> dict[str, object]:
    """A Claude Code record as Claude Code 2.x writes it (its session JSONL: `type`, `uuid`, `parentUuid`,
    `isSidechain`, `sessionId`, `timestamp`, `message` an Anthropic message; a sub-agent's records add `agentId`)."""
    message: dict[str, object] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=f"msg_{uuid}", model="claude-sonnet-4-5-20250929", usage={"input_tokens": 10, "output_tokens": 5})
    record = {"parentUuid": parent, "isSidechain": False, "sessionId": "s-1", "type": kind, "uuid": uuid,
              "timestamp": f"2025-10-20T09:00:{len(uuid):02d}.000Z", "message": message}  # fmt: skip
    record.update(fields)
    return record


def _task_session(folder: Path, *, linked_by: str) -> Path:
    """A session that runs two sub-agents with `Task` and, beside it, their files (`<session>/subagents/agent-<id>.jsonl`),
    plus one file no call names. `linked_by`: `agentId` (the call's result names its sub-agent in `toolUseResult`,
    as Claude Code 2.x writes it) or `prompt` (no `toolUseResult`: the file's first message is the call's task)."""
    def task(call: str, prompt: str) -> dict[str, object]:
        return {"type": "tool_use", "id": call, "name": "Task", "input": {"subagent_type": "Explore", "description": prompt, "prompt": prompt}}

    def result(call: str, agent: str, text: str) -> dict[str, object]:
        extra = {"toolUseResult": {"status": "completed", "agentId": agent, "content": [{"type": "text", "text": text}]}} if linked_by == "agentId" else {}
        return {"content": [{"tool_use_id": call, "type": "tool_result", "content": [{"type": "text", "text": text}]}], **extra}

    session = [
        _claude_record("user", "u1", None, "Find the two bugs"),
        _claude_record("assistant", "a1", "u1", [task("t1", "Find the bug in calc.py"), task("t2", "Find the bug in io.py")]),
        _claude_record("user", "u2", "a1", **result("t1", "aaa111", "calc.py: add subtracts")),
        _claude_record("user", "u3", "u2", **result("t2", "bbb222", "io.py: no bug")),
        _claude_record("assistant", "a2", "u3", [{"type": "text", "text": "One bug, in calc.py."}]),
    ]
    log = folder / "s-1.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in session))
    subagents = folder / "s-1" / "subagents"
    subagents.mkdir(parents=True)
    for agent, prompt, answer in (("aaa111", "Find the bug in calc.py", "add subtracts"), ("bbb222", "Find the bug in io.py", "no bug"),
                                  ("ccc333", "Something no call asked", "done")):  # fmt: skip
        records = [
            _claude_record("user", f"{agent}-1", None, prompt, isSidechain=True, agentId=agent),
            _claude_record("assistant", f"{agent}-2", f"{agent}-1", [{"type": "tool_use", "id": f"{agent}-b", "name": "Bash", "input": {"command": "pytest"}}], isSidechain=True, agentId=agent),
            _claude_record("user", f"{agent}-3", f"{agent}-2", [{"tool_use_id": f"{agent}-b", "type": "tool_result", "content": "1 failed"}], isSidechain=True, agentId=agent),
            _claude_record("assistant", f"{agent}-4", f"{agent}-3", [{"type": "text", "text": answer}], isSidechain=True, agentId=agent),
        ]
        (subagents / f"agent-{agent}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return log


@pytest.mark.parametrize("linked_by", ["agentId", "prompt"])
def test_claude_code_subagent_files_beside_a_session_are_read_into_their_delegations(
    tmp_path: Path, linked_by: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        events = load_events(_task_session(tmp_path, linked_by=linked_by))
    first, second = find_delegations(events)
    for delegation, agent in ((first, "aaa111"), (second, "bbb222")):
        inside = events_in_scope(events, Scope.of_delegation(delegation.action_id))
        # The sub-agent's four records, hidden (the main agent saw only the call's result), between its call and that result.
        assert [e.record["uuid"] for e in inside] == [f"{agent}-{n}" for n in range(1, 5)]
        assert all(isinstance(e, UnknownObservation) and e.hidden and e.delegation_id == delegation.action_id for e in inside)
        assert all(delegation.action_id < e.id < delegation.observation_id for e in inside)
    # The file no call names is kept, hidden, at the end, and said.
    assert [e.record["agentId"] for e in events[-4:]] == ["ccc333"] * 4 and all(e.hidden for e in events[-4:])
    assert "2 sub-agent log(s) beside the session (subagents/agent-*.jsonl) read into their Task calls' delegations" in caplog.text
    assert "1 sub-agent log(s) beside the session that no Task call names (agent-ccc333.jsonl): kept hidden at the end" in caplog.text
    # What the main agent is shown is what it was before: the sub-agents' records are hidden.
    shown = agent_history(events)
    assert [type(e).__name__ for e in shown] == [
        "MessageAction", "AgentDelegateAction", "AgentDelegateAction", "AgentDelegateObservation", "AgentDelegateObservation", "MessageAction",
    ]  # fmt: skip


def test_a_bad_line_in_a_subagent_file_names_that_file_and_line(tmp_path: Path) -> None:
    log = _task_session(tmp_path, linked_by="agentId")
    bad = tmp_path / "s-1" / "subagents" / "agent-bbb222.jsonl"
    bad.write_text(bad.read_text() + "{not json\n")
    with pytest.raises(MalformedEventError, match=re.escape(f"{bad}:5: claude-code sub-agent log: invalid JSON")):
        load_events(log)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += _paths(inner, (*prefix, index))
    return found


def _replaced(value: object, path: tuple, new: object) -> object:
    if not path:
        return new
    head, *rest = path
    copy = dict(value) if isinstance(value, dict) else list(value)  # type: ignore[call-overload]
    copy[head] = _replaced(copy[head], tuple(rest), new)
    return copy


SWE_AGENT = {
    "history": [
        {"role": "system", "content": "sys", "message_type": "system_prompt"},
        {"role": "user", "content": [{"type": "text", "text": "task"}], "message_type": "observation"},
        {"role": "assistant", "content": "look", "thought": "look", "action": "ls", "message_type": "action",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]},
        {"role": "tool", "content": "a.py", "tool_call_ids": ["c1"], "message_type": "observation"},
        {"role": "assistant", "content": "done\n```\nsubmit\n```", "thought": "done", "action": "submit"},
        {"role": "user", "content": "submitted"},
    ],
    "trajectory": [{"action": "ls", "observation": "a.py", "response": "look", "thought": "look"}],
    "info": {"model_stats": {"instance_cost": 0.1, "tokens_sent": 10, "tokens_received": 2, "api_calls": 2}},
    "replay_config": "{\"agent\": {\"model\": {\"name\": \"gpt-4o\"}}}",
}  # fmt: skip


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["claude", "codex", "mini", "swe"]), data=st.data())
def test_any_damaged_value_in_another_agent_s_log_loads_or_gets_the_typed_error(tmp_path: Path, which: str, data: st.DataObject) -> None:
    """A reader never lets another exception out, whatever value a record holds where."""
    source = {"claude": CLAUDE, "codex": CODEX, "mini": MINI_V1, "swe": Path("run.traj")}[which]
    if which in ("mini", "swe"):
        document = json.loads(MINI_V1.read_text()) if which == "mini" else SWE_AGENT
        path = data.draw(st.sampled_from(_paths(document)))
        body = json.dumps(_replaced(document, path, data.draw(_JSON)))
    else:
        records = [json.loads(line) for line in source.read_text().splitlines()]
        index = data.draw(st.integers(0, len(records) - 1))
        path = data.draw(st.sampled_from(_paths(records[index])))
        records[index] = _replaced(records[index], path, data.draw(_JSON))
        body = "".join(json.dumps(r) + "\n" for r in records)
    log = tmp_path / f"damaged-{which}{source.suffix}"
    log.write_text(body)
    try:
        events = load_events(log)
    except MalformedEventError as exc:
        assert exc.path is not None
        return
    ConversationMemory("").process_events(agent_history(events))  # and what loaded renders


def test_a_codex_rollout_of_the_earlier_layout_reads_too(tmp_path: Path) -> None:
    lines = [
        {"id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e", "timestamp": "2025-07-01T10:00:00.000Z", "instructions": "Be brief.", "git": {"branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
        {"type": "function_call", "id": "fc_1", "name": "shell", "arguments": '{"command": ["bash", "-lc", "ls"]}', "call_id": "call_1"},
        {"type": "function_call_output", "call_id": "call_1", "output": '{"output": "a.py\\n", "metadata": {"exit_code": 0}}'},
        {"record_type": "state"},
        {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "a.py"}]},
    ]  # fmt: skip
    path = tmp_path / "rollout-2025-07-01T10-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    events = [e for e in load_events(path) if not e.hidden]
    assert log_format(load_events(path)) == "codex"
    assert [type(e).__name__ for e in events] == ["SystemMessageAction", "MessageAction", "CmdRunAction", "CmdOutputObservation", "MessageAction"]
    assert events[2].command == "ls" and events[3].cause == events[2].id and events[4].content == "a.py"


def test_a_claude_code_synthetic_message_records_no_usage(tmp_path: Path) -> None:
    records = [json.loads(line) for line in CLAUDE.read_text().splitlines()][:2]
    records[1]["message"] |= {"model": "<synthetic>", "content": [{"type": "text", "text": "API Error: 529"}]}
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    events = load_events(path)
    assert events[1].content == "API Error: 529" and events[1].llm_metrics is None
    assert recorded_usages(events) == []


def _rollout(tmp_path: Path, items: list[tuple[str, dict]]) -> Path:
    """A Codex rollout of `(type, payload)` records, one a second (the `RolloutLine` layout)."""
    path = tmp_path / "rollout.jsonl"
    lines = [{"timestamp": f"2025-10-21T14:00:{second:02d}.000Z", "type": kind, "payload": payload} for second, (kind, payload) in enumerate(items)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _token_count(prompt: int, cached: int, output: int) -> tuple[str, dict]:
    last = {"input_tokens": prompt, "cached_input_tokens": cached, "output_tokens": output, "reasoning_output_tokens": 0, "total_tokens": prompt + output}
    return "event_msg", {"type": "token_count", "info": {"total_token_usage": last, "last_token_usage": last, "model_context_window": 272000}, "rate_limits": None}


def test_a_codex_token_count_and_the_ui_copies_are_kept_on_the_response_and_do_not_split_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Codex writes the UI's copies (`agent_reasoning`, `agent_message`) among or after a response's items, and its
    # `token_count` after them; a `token_count` without `info` (rate limits only) reports no request.
    path = _rollout(
        tmp_path,
        [
            ("turn_context", {"model": "gpt-5-codex", "cwd": "/repo"}),
            ("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}),
            ("response_item", {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Looking"}], "content": None}),
            ("event_msg", {"type": "agent_reasoning", "text": "Looking"}),
            ("response_item", {"type": "function_call", "id": "fc_1", "name": "shell", "arguments": '{"command": ["bash", "-lc", "ls"]}', "call_id": "call_1"}),
            ("event_msg", {"type": "token_count", "info": None, "rate_limits": {"primary": {"used_percent": 3.0}}}),
            _token_count(4100, 3072, 120),
            ("response_item", {"type": "function_call_output", "call_id": "call_1", "output": "a.py"}),
            ("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}),
            ("event_msg", {"type": "agent_message", "message": "Done."}),
            _token_count(4200, 4096, 10),
            _token_count(4200, 4096, 10),  # a second report of the same request stays a record of its own
        ],
    )
    with caplog.at_level(logging.WARNING):
        events = load_events(path)
    shown = [e for e in events if not e.hidden]
    assert [type(e).__name__ for e in shown] == ["MessageAction", "CmdRunAction", "CmdOutputObservation", "MessageAction"]
    run, answer = shown[1], shown[3]
    assert run.tool_call_metadata.model_response["choices"][0]["message"]["reasoning_content"] == "Looking"  # one response
    assert run.usage_record["payload"]["info"]["last_token_usage"]["input_tokens"] == 4100
    assert answer.usage_record["timestamp"] == "2025-10-21T14:00:10.000Z"
    assert [(u.prompt_tokens, u.cache_read_tokens, u.completion_tokens) for u in recorded_usages(events)] == [(4100, 3072, 120), (4200, 4096, 10)]
    # The UI's copies are kept on what they copy; the rate-limits record and the second report stay records of their own.
    assert [r["payload"]["type"] for r in run.copy_records] == ["agent_reasoning"]
    assert [r["payload"]["message"] for r in answer.copy_records] == ["Done."]
    assert [(e.observation, e.id > answer.id) for e in events if e.hidden] == [
        ("codex:turn_context", False), ("codex:event_msg:token_count", False), ("codex:event_msg:token_count", True)
    ]  # fmt: skip
    assert "records kept on the event they report or copy: event_msg:token_count x2, event_msg:agent_reasoning x1, event_msg:agent_message x1" in caplog.text
    # Records no model saw are not searched, on an event as in a hidden one.
    assert "event_msg" not in event_text(run) + event_text(answer) and "Done." in event_text(answer)
    # `convert` writes the record on its event, and the converted log reads back the same.
    out = tmp_path / "converted.jsonl"
    dump_events(events, out)
    again = load_events(out)
    assert [e.model_dump() for e in again] == [e.model_dump() for e in events]


def test_a_codex_token_count_after_other_records_is_the_usage_of_the_response_before_them(tmp_path: Path) -> None:
    path = _rollout(
        tmp_path,
        [
            ("response_item", {"type": "message", "role": "user", "content": "hi"}),
            ("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello."}]}),
            ("event_msg", {"type": "task_complete", "last_agent_message": "Hello."}),
            ("response_item", {"type": "web_search_call", "status": "completed"}),
            _token_count(900, 0, 5),
            _token_count(901, 0, 5),  # the response has its usage: this one is kept hidden
        ],
    )
    events = load_events(path)
    answer = events[1]
    assert answer.content == "Hello." and answer.usage_record["payload"]["info"]["last_token_usage"]["input_tokens"] == 900
    assert [(u.prompt_tokens, u.response_id) for u in recorded_usages(events)] == [(900, "codex:1")]
    assert [e.observation for e in events if e.hidden] == ["codex:event_msg:task_complete", "codex:response_item:web_search_call", "codex:event_msg:token_count"]


def test_codex_ui_copies_before_a_response_or_after_a_message_are_kept_on_what_they_copy(tmp_path: Path) -> None:
    # Codex 0.46 wrote the UI's copies of a response before its items; a user's message is copied after it.
    path = _rollout(
        tmp_path,
        [
            ("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "what is 2+2?"}]}),
            ("event_msg", {"type": "user_message", "message": "what is 2+2?", "kind": "plain"}),
            ("turn_context", {"model": "gpt-5-codex"}),
            ("event_msg", {"type": "agent_reasoning", "text": "**Adding**"}),
            ("event_msg", {"type": "agent_message", "message": "4"}),
            ("event_msg", {"type": "agent_message", "message": "not what it said"}),
            ("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Adding**"}], "encrypted_content": "gAAAA"}),
            ("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "4"}]}),
            _token_count(2946, 0, 7),
            ("event_msg", {"type": "agent_message", "message": "a copy of nothing that follows"}),
            ("response_item", {"type": "message", "role": "user", "content": "and 3+3?"}),
            ("event_msg", {"type": "user_message", "message": "and 3+3, said otherwise"}),
        ],
    )
    events = load_events(path)
    shown = [e for e in events if not e.hidden]
    assert [(type(e).__name__, e.content) for e in shown] == [("MessageAction", "what is 2+2?"), ("MessageAction", "4"), ("MessageAction", "and 3+3?")]
    first, answer, second = shown
    assert first.copy_records[0]["payload"]["type"] == "user_message"
    assert [r["payload"]["type"] for r in answer.copy_records] == ["agent_reasoning", "agent_message"]
    assert answer.reasoning_content == "**Adding**" and answer.usage_record is not None
    assert not hasattr(second, "copy_records")
    hidden = [e.record["payload"].get("message") for e in events if e.hidden and e.observation.startswith("codex:event_msg")]
    assert hidden == ["not what it said", "a copy of nothing that follows", "and 3+3, said otherwise"]
    assert [e.id for e in events] == list(range(len(events)))
