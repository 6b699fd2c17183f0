"""The agent steers its own context (issue 36): `new_context(handoff)`, the `agent_reset` strategy, `compact_context(focus)`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openhands_memory.condenser import Condenser, LLMSummarizingCondenser
from openhands_memory.condenser.impl.agent_reset_condenser import AgentResetCondenser, current_notes
from openhands_memory.events import (
    CmdOutputObservation,
    CmdRunAction,
    CompactContextAction,
    CondensationAction,
    CondensationRequestAction,
    ContextNotesObservation,
    ErrorObservation,
    EventSource,
    MessageAction,
    NewContextAction,
    SuccessObservation,
    SystemMessageAction,
    ToolCallMetadata,
    agent_history,
    load_events,
)
from openhands_memory.events.actions import MAX_NOTES_CHARS
from openhands_memory.history import History
from openhands_memory.replay.replayer import snapshot_at
from openhands_memory.testing.fake_llm import FakeLLM
from openhands_memory.view import View

HANDOFF = "Goal: fix test_quokka.\nDone: found the KeyError in src/app.py line 42 (port 8431).\nLeft: write the fix, run pytest."


def call(name: str, arguments: Any, call_id: str = "call_1") -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def reset_history(path: Path | None = None, *, inner: dict[str, Any] | None = None, **config: Any) -> History:
    condenser = Condenser.from_config({"type": "agent_reset", "condenser": inner or {"type": "noop"}, **config})
    return History.open(path, condenser=condenser) if path is not None else History(condenser=condenser)


def work(history: History, turns: int, *, output: str = "output line\n" * 20, first: int = 0) -> None:
    for i in range(first, first + turns):
        metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id=f"c{i}")
        action = CmdRunAction(command=f"step {i}", tool_call_metadata=metadata)
        history.add_event(action, EventSource.AGENT)
        history.add_event(
            CmdOutputObservation(content=f"{output}{i}", command=action.command, cause=action.id, tool_call_metadata=metadata),
            EventSource.ENVIRONMENT,
        )


def started(history: History) -> History:
    history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    history.add_event(MessageAction(content="Fix the failing test."), EventSource.USER)
    return history


def texts(history: History) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in history.next_messages()]


# -- new_context ------------------------------------------------------------------------------------


def test_agent_reset_offers_the_steering_tools_with_the_memory_tools_and_the_default_pipeline_does_not() -> None:
    names = [tool["function"]["name"] for tool in reset_history().memory_tools()]
    assert names == ["context_reload", "search_history", "new_context", "compact_context", "context_notes"]
    assert [tool["function"]["name"] for tool in History().memory_tools()] == ["context_reload", "search_history"]
    assert History.is_memory_tool("new_context") and History.is_memory_tool("compact_context") and History.is_memory_tool("context_notes")


def test_new_context_keeps_the_system_prompt_the_users_messages_and_the_handoff_verbatim(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    history = started(reset_history(log))
    work(history, 3)
    history.add_event(MessageAction(content="Also keep the changelog."), EventSource.USER)
    work(history, 2, first=3)
    result = history.run_memory_tool(call("new_context", {"handoff": HANDOFF}))
    assert isinstance(result, SuccessObservation) and result.tool_call_metadata is not None
    events = history.stream.snapshot()
    action, reset = events[-3], events[-1]
    assert isinstance(action, NewContextAction) and action.handoff == HANDOFF
    assert isinstance(reset, CondensationAction)
    assert reset.summary == HANDOFF and reset.summary_offset == 3  # after system, task, the later message
    kept = {0, 1, 8}
    assert reset.forgotten_event_ids == [e.id for e in events[:-1] if e.id not in kept]  # listed, every one
    assert reset.condenser_metadata is not None and reset.condenser_metadata["reason"] == "new_context"
    shown = texts(history)
    assert [role for role, _ in shown] == ["system", "user", "user", "user"]
    assert "".join(text for _, text in shown).split("\n\n") == ["You are an agent.Fix the failing test.", "Also keep the changelog.", HANDOFF]
    expected = history.view
    history.close()
    # The log alone gives the new window: the view, and replay with the recorded condensations.
    loaded = load_events(log)
    assert View.from_events(agent_history(loaded)) == expected
    snapshot = snapshot_at(loaded, recorded=True)
    assert [getattr(e, "content", None) for e in snapshot.shown.events][-1] == HANDOFF


def test_a_replay_that_decides_afresh_resets_where_the_agent_did() -> None:
    history = started(reset_history())
    work(history, 3)
    history.run_memory_tool(call("new_context", {"handoff": HANDOFF}))
    recorded = history.view
    # Without the log's condensation, the agent_reset strategy makes the same one from the call.
    snapshot = snapshot_at(history.stream.snapshot(), condenser=AgentResetCondenser(Condenser.from_config({"type": "noop"})), recorded=False)
    assert [type(e).__name__ for e in snapshot.shown.events] == [type(e).__name__ for e in recorded.events]
    assert snapshot.shown.events[-1].content == HANDOFF  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"handoff": ""}, "non-empty handoff"),
        ({"handoff": "   \n"}, "non-empty handoff"),
        ({"handoff": "x" * 20_001}, "over the bound of 20000"),
    ],
)
def test_an_empty_or_oversized_handoff_gets_an_error_the_agent_reads_and_nothing_is_forgotten(
    arguments: dict[str, Any], expected: str
) -> None:
    history = started(reset_history())
    work(history, 2)
    before = history.view
    result = history.run_memory_tool(call("new_context", arguments))
    assert isinstance(result, ErrorObservation) and expected in result.content
    assert result.tool_call_metadata is not None and result.cause == history.stream.snapshot()[-2].id  # the call's result
    assert not any(isinstance(e, CondensationAction) for e in history.stream.snapshot())
    assert len(history.view) == len(before) + 2
    assert expected in texts(history)[-1][1]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [("not json", "not valid JSON"), ({"handoff": 3}, "handoff must be a string"), ({}, "needs a handoff"), ([1], "JSON object")],
)
def test_a_call_that_makes_no_action_gets_an_error_and_never_raises(arguments: Any, expected: str) -> None:
    history = started(reset_history())
    result = history.run_memory_tool(call("new_context", arguments))
    assert isinstance(result, ErrorObservation) and expected in result.content
    assert not any(isinstance(e, NewContextAction | CondensationAction) for e in history.stream.snapshot())


def test_the_agent_is_reminded_past_the_share_of_the_input_window_and_not_before() -> None:
    history = started(reset_history(input_window=1_000, remind_at=0.6))
    work(history, 2)
    assert not any("[Context reminder]" in text for _, text in texts(history))
    work(history, 8, first=2)
    role, text = texts(history)[-1]
    assert role == "tool" and text.endswith("9\n\n" + text.split("\n\n")[-1])  # on the newest result, after its output
    assert text.split("\n\n")[-1].startswith("[Context reminder]") and "new_context" in text
    assert not any("[Context reminder]" in getattr(e, "content", "") for e in history.stream.snapshot())  # a view, not the log


def test_past_the_hard_limit_the_wrapped_strategy_still_condenses() -> None:
    history = started(reset_history(inner={"type": "amortized", "max_size": 8, "keep_first": 2}))
    work(history, 10)
    history.next_messages()
    reasons = [e.condenser_metadata["condenser"] for e in history.stream.snapshot() if isinstance(e, CondensationAction)]
    assert reasons and all(r == "amortized" for r in reasons)


# -- compact_context and the focus ------------------------------------------------------------------


def summarizing_history(fake: FakeLLM) -> History:
    from openhands_memory.llm import LLMConfig

    llm = fake.llm(LLMConfig(model="fake-model", num_retries=0, max_input_tokens=200_000), sleep=lambda s: None)
    return History(condenser=AgentResetCondenser(LLMSummarizingCondenser(llm, max_size=1_000, keep_first=2)))


def test_compact_context_with_too_little_to_free_is_refused_with_the_reason() -> None:
    history = started(summarizing_history(FakeLLM()))
    work(history, 1, output="short")
    result = history.run_memory_tool(call("compact_context", {"focus": "the port"}))
    assert isinstance(result, ErrorObservation) and "too little to free" in result.content
    assert not any(isinstance(e, CondensationRequestAction) for e in history.stream.snapshot())


def test_compact_context_requests_a_summary_that_puts_the_focus_first_and_records_it() -> None:
    fake = FakeLLM(["SUMMARY keeping port 8431"])
    history = started(summarizing_history(fake))
    work(history, 12, output="a long output line about the server\n" * 20)
    result = history.run_memory_tool(call("compact_context", {"focus": "the server port 8431"}))
    assert isinstance(result, SuccessObservation) and "the server port 8431" in result.content
    events = history.stream.snapshot()
    assert isinstance(events[-3], CompactContextAction) and events[-3].focus == "the server port 8431"
    assert isinstance(events[-1], CondensationRequestAction) and events[-1].focus == "the server port 8431"
    assert history.view.condensation_focus == "the server port 8431"
    history.next_messages()
    prompt = fake.calls[0].messages[0]["content"]
    assert prompt.startswith("<FOCUS>\nthe server port 8431\n</FOCUS>")
    condensation = history.stream.snapshot()[-1]
    assert isinstance(condensation, CondensationAction) and condensation.summary == "SUMMARY keeping port 8431"
    assert condensation.condenser_metadata is not None and condensation.condenser_metadata["extra"]["focus"] == "the server port 8431"
    assert history.view.condensation_focus is None


def test_request_condensation_takes_a_focus_and_refuses_one_over_the_bound() -> None:
    history = started(History(condenser=Condenser.from_config({"type": "noop"})))
    request = history.request_condensation(focus="keep the failing test ids")
    assert request.focus == "keep the failing test ids" and history.view.condensation_focus == "keep the failing test ids"
    assert history.request_condensation().focus is None
    assert history.view.condensation_focus == "keep the failing test ids"  # the newest request with a focus
    with pytest.raises(ValueError, match="over the bound of 2000"):
        history.request_condensation(focus="x" * 2_001)


# -- notes ------------------------------------------------------------------------------------------


def notes_of(history: History) -> str:
    return current_notes(history.stream.snapshot())


def test_notes_are_written_appended_and_read_from_the_log() -> None:
    history = started(reset_history())
    written = history.run_memory_tool(call("context_notes", {"operation": "write", "text": "port is 8431"}, "n1"))
    assert isinstance(written, ContextNotesObservation) and written.content.endswith("\nport is 8431")
    history.run_memory_tool(call("context_notes", {"operation": "append", "text": "db at db/0007.sql"}, "n2"))
    read = history.run_memory_tool(call("context_notes", {"operation": "read"}, "n3"))
    assert read.content.endswith("port is 8431\ndb at db/0007.sql") and notes_of(history) == "port is 8431\ndb at db/0007.sql"
    history.run_memory_tool(call("context_notes", {"operation": "write", "text": "only this"}, "n4"))
    assert notes_of(history) == "only this"


def test_a_note_over_the_bound_gets_an_error_naming_it_and_changes_nothing() -> None:
    history = started(reset_history())
    history.run_memory_tool(call("context_notes", {"operation": "write", "text": "keep me"}, "n1"))
    result = history.run_memory_tool(call("context_notes", {"operation": "append", "text": "x" * MAX_NOTES_CHARS}, "n2"))
    assert isinstance(result, ErrorObservation) and f"over the bound of {MAX_NOTES_CHARS}" in result.content
    assert notes_of(history) == "keep me"
    bad = history.run_memory_tool(call("context_notes", {"operation": "erase"}, "n3"))
    assert isinstance(bad, ErrorObservation) and "operation must be one of read, write, append" in bad.content


def test_the_notes_stay_in_view_after_a_reset_and_after_the_wrapped_strategys_condensation(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    history = started(reset_history(log, inner={"type": "llm", "max_size": 12, "keep_first": 2}))
    work(history, 2)
    history.run_memory_tool(call("context_notes", {"operation": "write", "text": "the port is 8431"}, "n1"))
    work(history, 10, first=2)
    history.next_messages()  # the wrapped summarizer (offline) condenses: the notes' events are spared
    condensations = [e for e in history.stream.snapshot() if isinstance(e, CondensationAction)]
    assert condensations and condensations[-1].condenser_metadata["notes_spared"] == 2
    assert any("the port is 8431" in text for _, text in texts(history))
    history.run_memory_tool(call("new_context", {"handoff": HANDOFF}, "r1"))
    shown = texts(history)
    assert any("the port is 8431" in text for _, text in shown) and HANDOFF in shown[-1][1]
    expected = history.view
    history.close()
    with History.open(log, condenser=Condenser.from_config({"type": "agent_reset"})) as resumed:  # equal after resume
        assert resumed.view == expected and notes_of(resumed) == "the port is 8431"
    snapshot = snapshot_at(load_events(log), recorded=True)  # and visible in a replay of the log
    assert any(isinstance(e, ContextNotesObservation) and "the port is 8431" in e.content for e in snapshot.shown.events)


def test_secrets_in_the_notes_are_redacted() -> None:
    history = started(History(condenser=Condenser.from_config({"type": "agent_reset"}), secrets={"token": "sk-SECRET-12345"}))
    result = history.run_memory_tool(call("context_notes", {"operation": "write", "text": "token sk-SECRET-12345"}, "n1"))
    assert "sk-SECRET-12345" not in result.content and "sk-SECRET-12345" not in notes_of(history)
    assert not any("sk-SECRET-12345" in text for _, text in texts(history))


# -- what the model writes is untrusted --------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["new_context", "compact_context", "context_notes"]),
    arguments=st.dictionaries(st.sampled_from(["handoff", "focus", "operation", "text", "x"]), _JSON, max_size=3)
    | st.sampled_from(["", "not json", "[1]", "{", '"text"']),
)
def test_any_arguments_to_a_steering_tool_get_an_answer_and_never_raise(name: str, arguments: Any) -> None:
    history = started(reset_history())
    result = history.run_memory_tool(call(name, arguments))
    assert result.id is not None and result.content
    history.next_messages()  # the history goes on
