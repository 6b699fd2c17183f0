"""`History.memory_tools` and `History.run_memory_tool`: context_reload and search_history over the whole log (issue 11, item 2)."""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from openhands_memory.condenser import Condenser
from openhands_memory.events import (
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    ContextReloadAction,
    ContextReloadObservation,
    ErrorObservation,
    Event,
    EventSource,
    FileEditAction,
    MessageAction,
    SearchHistoryAction,
    SearchHistoryObservation,
    SystemMessageAction,
    ToolCallMetadata,
    dump_events,
    event_from_dict,
    event_to_dict,
    load_events,
)
from openhands_memory.history import History
from openhands_memory.llm import ToolCall, ToolCallFunction
from openhands_memory.recall import SearchIndex, event_text
from openhands_memory.recall.search import MAX_ANSWER_CHARS
from openhands_memory.stream import EventStream

REAL_LOG = "v0_enyst-playground_issue10730_trajectory_297ev.json"
"""A real OpenHands session whose own condensations forget events 9-74 and 75-160."""
FORGOTTEN_OUTPUT = 14
"""A 14,533-character command output of that log, forgotten by its first condensation."""


def call(name: str, arguments: Any, call_id: str = "call_1") -> dict[str, Any]:
    """A litellm tool-call dict; `arguments` is dumped to JSON unless it is already text."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def noop_history(stream: EventStream | None = None) -> History:
    return History(stream, condenser=Condenser.from_config({"type": "noop"}))


def tool_pair(history: History, name: str, content: str, *, call_id: str) -> tuple[CmdRunAction, CmdOutputObservation]:
    """Append a command and its output as one tool call of the model."""
    metadata = ToolCallMetadata(function_name=name, tool_call_id=call_id)
    action = CmdRunAction(command=f"run {call_id}", tool_call_metadata=metadata)
    history.add_event(action, EventSource.AGENT)
    observation = CmdOutputObservation(content=content, command=action.command, cause=action.id, tool_call_metadata=metadata)
    history.add_event(observation, EventSource.ENVIRONMENT)
    return action, observation


def small_history() -> History:
    """A system prompt, a task, three command outputs (ids 3, 5, 7); the first two forgotten by a condensation (id 8)."""
    history = noop_history()
    history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    history.add_event(MessageAction(content="Fix the failing test."), EventSource.USER)
    tool_pair(history, "execute_bash", "collected 12 items\nFAILED tests/test_quokka.py::test_marsupial - KeyError", call_id="c1")
    tool_pair(history, "execute_bash", "diff --git a/src/app.py b/src/app.py\n+    return total", call_id="c2")
    tool_pair(history, "execute_bash", "1 failed, 11 passed", call_id="c3")
    history.add_event(CondensationAction(forgotten_event_ids=[2, 3, 4, 5]), EventSource.AGENT)
    return history


@pytest.fixture
def real_events(real_logs_dir: Path) -> tuple[list[Event], list[dict[str, Any]]]:
    path = real_logs_dir / REAL_LOG
    return load_events(path), json.loads(path.read_bytes())


# -- context_reload --------------------------------------------------------------------------------


def test_reload_returns_the_byte_exact_content_of_a_forgotten_observation_of_a_real_log(
    real_events: tuple[list[Event], list[dict[str, Any]]],
) -> None:
    events, records = real_events
    original = next(r for r in records if r.get("id") == FORGOTTEN_OUTPUT)["content"]
    with noop_history(EventStream.from_events(events)) as history:
        assert FORGOTTEN_OUTPUT not in [e.id for e in history.view]  # the log's own condensation forgot it
        latest = history.stream.get_latest_event_id()
        result = history.run_memory_tool(call("context_reload", {"event_id": FORGOTTEN_OUTPUT}))
        assert isinstance(result, ContextReloadObservation) and result.reloaded_event_id == FORGOTTEN_OUTPUT
        header, body = result.content.split("\n", 1)
        assert header == f"[event {FORGOTTEN_OUTPUT}: run observation, forgotten; its content as logged follows]"
        assert body == original and body.encode() == original.encode() and len(body) == 14_533
        # The call and its result are in the log, as a tool call and its answer.
        action, observation = history.stream.get_events(latest + 1)
        assert isinstance(action, ContextReloadAction) and action.event_id == FORGOTTEN_OUTPUT
        assert action.source == EventSource.AGENT and observation is result
        assert result.source == EventSource.ENVIRONMENT and result.cause == action.id
        assert action.tool_call_metadata == result.tool_call_metadata
        assert action.tool_call_metadata is not None and action.tool_call_metadata.tool_call_id == "call_1"
        assert action.tool_call_metadata.function_name == "context_reload"


def test_reload_in_a_jsonl_history_survives_reopening_and_the_search_index_with_it(
    real_events: tuple[list[Event], list[dict[str, Any]]], tmp_path: Path
) -> None:
    events, records = real_events
    original = next(r for r in records if r.get("id") == FORGOTTEN_OUTPUT)["content"]
    log = tmp_path / "session.jsonl"
    dump_events(events, log)
    with History.open(log, condenser=Condenser.from_config({"type": "noop"})) as history:
        first = history.run_memory_tool(call("context_reload", {"event_id": FORGOTTEN_OUTPUT}))
        found = history.run_memory_tool(call("search_history", {"query": "_has_token_expired", "limit": 3}, "call_2"))
    assert (tmp_path / "session.jsonl.search.sqlite").is_file()  # the index's sidecar, beside the log
    assert not (tmp_path / "session.jsonl.search.sqlite-wal").exists()  # closed with the history
    reloaded = load_events(log)
    assert reloaded[-4:] == history_tail(first, found, reloaded)
    with History.open(log, condenser=Condenser.from_config({"type": "noop"})) as again:
        assert again.stream.get_event(first.id).content.split("\n", 1)[1] == original  # type: ignore[arg-type,union-attr]
        second = again.run_memory_tool(call("search_history", {"query": "_has_token_expired", "limit": 3}, "call_3"))
        assert second.content == found.content  # the same index, reopened, answers the same
        assert isinstance(second, SearchHistoryObservation)


def history_tail(first: Event, found: Event, reloaded: list[Event]) -> list[Event]:
    """The four events the two tool calls appended, as they read back from the file."""
    kinds = [type(e) for e in reloaded[-4:]]
    assert kinds == [ContextReloadAction, ContextReloadObservation, SearchHistoryAction, SearchHistoryObservation]
    assert reloaded[-3].content == first.content and reloaded[-1].content == found.content  # type: ignore[attr-defined]
    return reloaded[-4:]


def test_reload_of_an_event_still_in_view_says_so_and_an_action_shows_what_it_did() -> None:
    history = small_history()
    in_view = history.run_memory_tool(call("context_reload", {"event_id": 7}))
    assert in_view.content == "[event 7: run observation, still in your view; its content as logged follows]\n1 failed, 11 passed"
    command = history.run_memory_tool(call("context_reload", {"event_id": 2}))
    assert command.content == "[event 2: run action, forgotten; its content as logged follows]\nrun c1"
    task = history.run_memory_tool(call("context_reload", {"event_id": 1}))
    assert task.content.endswith("still in your view; its content as logged follows]\nFix the failing test.")
    # An action with no one field that says it all is shown by its arguments.
    history.add_event(FileEditAction(path="a.py", command="str_replace", old_str="x", new_str="y"), EventSource.AGENT)
    edit_id = history.stream.get_latest_event_id()
    edit = history.run_memory_tool(call("context_reload", {"event_id": edit_id}))
    assert json.loads(edit.content.split("\n", 1)[1])["new_str"] == "y"


def test_reload_says_when_the_model_was_shown_a_shortened_copy() -> None:
    history = History(condenser=Condenser.from_config({"type": "observation_masking", "attention_window": 2}))
    history.add_event(MessageAction(content="task"), EventSource.USER)
    tool_pair(history, "execute_bash", "a long output that the masking hides", call_id="c1")
    tool_pair(history, "execute_bash", "recent", call_id="c2")
    tool_pair(history, "execute_bash", "more recent", call_id="c3")
    history.next_messages()
    result = history.run_memory_tool(call("context_reload", {"event_id": 2}))
    assert result.content.startswith("[event 2: run observation, in view, shortened;")
    assert result.content.endswith("\na long output that the masking hides")


# -- search_history --------------------------------------------------------------------------------


def test_search_ranks_the_event_with_a_unique_token_first_forgotten_ones_included() -> None:
    history = small_history()
    result = history.run_memory_tool(call("search_history", {"query": "quokka marsupial"}))
    assert isinstance(result, SearchHistoryObservation)
    lines = result.content.splitlines()
    assert lines[0] == '1 event matches "quokka marsupial", best first (call context_reload with an event_id to see one in full):'
    assert re.fullmatch(r"- event 3 \(run observation, forgotten\): .*test_quokka.*", lines[1])
    # The search itself is in the log now, and never found by a later search.
    again = history.run_memory_tool(call("search_history", {"query": "quokka", "limit": 10}, "call_2"))
    assert [line.split(" (")[0] for line in again.content.splitlines()[1:]] == ["- event 3"]
    in_view = history.run_memory_tool(call("search_history", {"query": "passed"}, "call_3"))
    assert in_view.content.splitlines()[1] == "- event 7 (run observation, in view): 1 failed, 11 passed run c3"


def test_search_of_a_real_log_ranks_a_forgotten_event_with_a_unique_word_first(
    real_events: tuple[list[Event], list[dict[str, Any]]],
) -> None:
    events, _ = real_events
    # Words of 10+ letters found in one event only, in an event the log's condensations forgot.
    counts: Counter[str] = Counter()
    words_of: dict[int, set[str]] = {}
    for event in events:
        words = {w.lower() for w in re.findall(r"[A-Za-z]{10,}", event_text(event))}
        words_of[event.id] = words  # type: ignore[index]
        counts.update(words)
    with noop_history(EventStream.from_events(events)) as history:
        in_view = {e.id for e in history.view}
        forgotten = [i for i in sorted(words_of) if 9 <= i <= 160 and i not in in_view]
        checked = 0
        for event_id in forgotten:
            unique = sorted(w for w in words_of[event_id] if counts[w] == 1)
            if not unique:
                continue
            result = history.run_memory_tool(call("search_history", {"query": unique[0], "limit": 3}, f"c{event_id}"))
            first = result.content.splitlines()[1]
            assert first.startswith(f"- event {event_id} (") and ", forgotten): " in first, (unique[0], result.content)
            checked += 1
            if checked == 5:
                break
        assert checked == 5


def test_search_finds_nothing_and_says_so() -> None:
    result = small_history().run_memory_tool(call("search_history", {"query": "nonexistentword"}))
    assert result.content == 'No event matches "nonexistentword".'


def test_search_limit_caps_the_matches() -> None:
    history = noop_history()
    history.add_event(MessageAction(content="start"), EventSource.USER)
    for number in range(8):
        tool_pair(history, "execute_bash", f"wombat sighting {number}", call_id=f"c{number}")
    result = history.run_memory_tool(call("search_history", {"query": "wombat", "limit": 3}))
    assert result.content.startswith('3 events match "wombat"') and len(result.content.splitlines()) == 4
    default = history.run_memory_tool(call("search_history", {"query": "wombat"}, "call_2"))
    assert len(default.content.splitlines()) == 1 + 5


# -- pages and cursors, shaped as the OpenHands SDK's conversation_history tool (issue 36, item 4) ------


def long_output_history(size: int = 40_000) -> tuple[History, str]:
    """A history whose event 3 is a command output of `size` characters (a different letter each 1,000)."""
    history = noop_history()
    history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    history.add_event(MessageAction(content="Read the build log."), EventSource.USER)
    text = "".join(chr(ord("a") + (k // 1_000) % 26) * 1_000 for k in range(0, size, 1_000))[:size]
    metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id="c1")
    action = CmdRunAction(command="cat build.log", tool_call_metadata=metadata)
    history.add_event(action, EventSource.AGENT)
    # Validated, not constructed: construction cuts a long output (as OpenHands does), a loaded log keeps it whole.
    output = CmdOutputObservation.model_validate({"content": text, "command": action.command, "cause": action.id})
    output.tool_call_metadata = metadata
    history.add_event(output, EventSource.ENVIRONMENT)
    return history, text


def test_reload_pages_a_long_event_saying_what_remains_and_the_next_offset() -> None:
    history, text = long_output_history()
    first = history.run_memory_tool(call("context_reload", {"event_id": 3}))
    header, body = first.content.split("\n", 1)
    assert header == (
        "[event 3: run observation, still in your view; characters 0 to 16,000 of its 40,000 as logged follow; "
        "24,000 characters remain: call context_reload with offset=16000 for the next page]"
    )
    assert body == text[:16_000] and first.reloaded_event_id == 3
    pages, offset = [body], 16_000
    while True:
        page = history.run_memory_tool(call("context_reload", {"event_id": 3, "offset": offset, "limit": 10_000}, f"p{offset}"))
        header, body = page.content.split("\n", 1)
        pages.append(body)
        found = re.search(r"offset=(\d+) for the next page", header)
        if found is None:
            assert header.endswith("characters 36,000 to 40,000 of its 40,000 as logged follow; nothing remains after it]")
            break
        offset = int(found.group(1))
    assert "".join(pages) == text  # the pages, read in turn, are the event as logged
    action = history.stream.get_event(page.cause)  # type: ignore[arg-type]
    assert isinstance(action, ContextReloadAction) and (action.offset, action.limit) == (36_000, 10_000)
    # A short event, or one that fits in the page asked for, is shown whole as before.
    whole = history.run_memory_tool(call("context_reload", {"event_id": 3, "limit": 64_000}, "whole"))
    assert whole.content == f"[event 3: run observation, still in your view; its content as logged follows]\n{text}"


def test_search_before_an_event_id_finds_only_older_events() -> None:
    history = noop_history()
    history.add_event(MessageAction(content="start"), EventSource.USER)
    for number in range(6):
        tool_pair(history, "execute_bash", f"wombat sighting {number}", call_id=f"c{number}")  # outputs at ids 2, 4, ..., 12
    every = history.run_memory_tool(call("search_history", {"query": "wombat", "limit": 10}))
    assert {line.split(" (")[0] for line in every.content.splitlines()[1:]} == {f"- event {i}" for i in (2, 4, 6, 8, 10, 12)}
    older = history.run_memory_tool(call("search_history", {"query": "wombat", "limit": 10, "before_event_id": 8}, "c_b"))
    assert {line.split(" (")[0] for line in older.content.splitlines()[1:]} == {"- event 2", "- event 4", "- event 6"}
    action = history.stream.get_event(older.cause)  # type: ignore[arg-type]
    assert isinstance(action, SearchHistoryAction) and action.before_event_id == 8
    none = history.run_memory_tool(call("search_history", {"query": "wombat", "before_event_id": 0}, "c_0"))
    assert none.content == 'No event matches "wombat".'


def test_the_new_arguments_are_in_the_schemas_and_left_out_of_a_call_that_does_not_give_them() -> None:
    reload, search = (t["function"]["parameters"]["properties"] for t in noop_history().memory_tools())
    assert reload["offset"]["minimum"] == 0 and reload["limit"] == {
        "type": "integer", "description": "How many characters to show at most, 1 to 64000.", "default": 16_000,
        "minimum": 1, "maximum": 64_000,
    }  # fmt: skip
    assert search["before_event_id"]["type"] == "integer"
    history = small_history()
    history.run_memory_tool(call("context_reload", {"event_id": 3}, "call_r"))
    history.run_memory_tool(call("search_history", {"query": "app.py"}, "call_s"))
    reload_args, search_args = (event_to_dict(e)["args"] for e in history.stream.get_events(9) if e.source == EventSource.AGENT)
    assert reload_args == {"event_id": 3} and search_args == {"query": "app.py", "limit": 5}


# -- bad calls -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_call", "kind", "text"),
    [
        (call("context_reload", {"event_id": 99}), ContextReloadObservation,
         "There is no event 99 in the history: event ids go from 0 to 9. Use search_history to find the id of what you are looking for."),
        (call("context_reload", {"event_id": -1}), ContextReloadObservation, "There is no event -1 in the history"),
        (call("search_history", {"query": "  "}), SearchHistoryObservation,
         "No search was made: search_history needs a non-empty query: the words to look for."),
        (call("search_history", {"query": "x", "limit": 0}), SearchHistoryObservation,
         "No search was made: limit must be from 1 to 50, got 0."),
        (call("search_history", {"query": "x", "limit": 51}), SearchHistoryObservation,
         "No search was made: limit must be from 1 to 50, got 51."),
        (call("context_reload", {"event_id": "7"}), ErrorObservation,
         'context_reload({"event_id": "7"}) is not a valid tool call: event_id must be an integer, got "7".'),
        (call("context_reload", {"event_id": 7.5}), ErrorObservation, "event_id must be an integer, got 7.5"),
        (call("context_reload", {"event_id": True}), ErrorObservation, "event_id must be an integer, got true"),
        (call("context_reload", {}), ErrorObservation, "context_reload needs an event_id (an integer)"),
        (call("context_reload", '{"event_id": 7'), ErrorObservation, "is not a valid tool call: the arguments are not valid JSON ("),
        (call("context_reload", "[7]"), ErrorObservation, "the arguments must be a JSON object, got list"),
        (call("search_history", {"limit": 3}), ErrorObservation, "search_history needs a query (a string)"),
        (call("search_history", {"query": ["a"]}), ErrorObservation, 'query must be a string, got ["a"]'),
        (call("search_history", {"query": "x", "limit": "3"}), ErrorObservation, 'limit must be an integer from 1 to 50, got "3"'),
        (call("context_reload", {"event_id": 7, "offset": -1}), ContextReloadObservation,
         "No event was reloaded: offset must be 0 or more (a number of characters), got -1."),
        (call("context_reload", {"event_id": 7, "offset": 19}), ContextReloadObservation,
         "No event was reloaded: offset 19 is past the end of event 7, whose content as logged holds 19 characters."),
        (call("context_reload", {"event_id": 7, "limit": 0}), ContextReloadObservation,
         "No event was reloaded: limit must be from 1 to 64000 characters, got 0."),
        (call("context_reload", {"event_id": 7, "limit": 10**9}), ContextReloadObservation,
         "No event was reloaded: limit must be from 1 to 64000 characters, got 1000000000."),
        (call("context_reload", {"event_id": 7, "offset": 2.5}), ErrorObservation,
         "offset must be an integer (a number of characters), got 2.5"),
        (call("context_reload", {"event_id": 7, "limit": "10"}), ErrorObservation,
         'limit must be an integer (a number of characters), got "10"'),
        (call("context_reload", {"event_id": 7, "offset": 2**64}), ErrorObservation, f"offset must be an integer (a number of characters), got {2**64}"),
        (call("search_history", {"query": "x", "before_event_id": 99}), SearchHistoryObservation,
         "No search was made: there is no event 99 in the history to search before: event ids go from 0 to 9."),
        (call("search_history", {"query": "x", "before_event_id": -3}), SearchHistoryObservation,
         "No search was made: there is no event -3 in the history to search before"),
        (call("search_history", {"query": "x", "before_event_id": "8"}), ErrorObservation,
         'before_event_id must be an integer (an event_id), got "8"'),
        (call("search_history", {"query": "x", "before_event_id": 2**70}), ErrorObservation,
         f"before_event_id {2**70} is out of range: event ids are 64-bit integers"),
        (call("recall_everything", {}), ErrorObservation,
         "recall_everything({}) is not a valid tool call: there is no memory tool named 'recall_everything' "
         "(the memory tools are context_reload and search_history)."),
        ({"type": "function", "function": {"name": "context_reload"}}, ErrorObservation, "Invalid tool call: the tool call has no id."),
        ({"id": "c9", "function": {"arguments": "{}"}}, ErrorObservation, "Invalid tool call: the tool call 'c9' names no function."),
        ("context_reload", ErrorObservation, "Invalid tool call: the tool call has no id."),
    ],
)  # fmt: skip
def test_a_bad_call_gets_a_result_that_says_what_is_wrong(tool_call: Any, kind: type, text: str) -> None:
    history = small_history()
    before = len(history.stream)
    result = history.run_memory_tool(tool_call)
    assert type(result) is kind and text in result.content
    appended = list(history.stream.get_events(before))
    if kind is ErrorObservation:
        # No action can be made of it: not recorded as a call (as OpenHands does), the error is a message the model reads.
        assert appended == [result] and result.tool_call_metadata is None and result.cause is None
        assert result.source == EventSource.AGENT  # as OpenHands' controller records an invalid call's error
        messages = history.next_messages()
        assert messages[-1].role == "user" and text in str(messages[-1].content)
    else:
        assert [type(e) for e in appended] == [ContextReloadAction if kind is ContextReloadObservation else SearchHistoryAction, kind]
        assert result.cause == appended[0].id


# -- the schemas, the call forms, the rendering ----------------------------------------------------


def test_memory_tools_are_two_litellm_function_schemas() -> None:
    tools = noop_history().memory_tools()
    assert [t["type"] for t in tools] == ["function", "function"]
    reload, search = (t["function"] for t in tools)
    assert reload["name"] == "context_reload" and reload["parameters"]["required"] == ["event_id"]
    assert reload["parameters"]["properties"]["event_id"]["type"] == "integer"
    assert search["name"] == "search_history" and search["parameters"]["required"] == ["query"]
    assert search["parameters"]["properties"]["limit"] == {
        "type": "integer", "description": "How many matches to return, 1 to 50.", "default": 5, "minimum": 1, "maximum": 50,
    }  # fmt: skip
    assert all(len(t["function"]["description"]) > 80 for t in tools)
    tools[0]["function"]["name"] = "changed"
    assert noop_history().memory_tools()[0]["function"]["name"] == "context_reload"  # a fresh copy each time
    assert History.is_memory_tool("search_history") and not History.is_memory_tool("execute_bash")


def test_a_tool_call_object_and_its_response_are_recorded_in_the_metadata() -> None:
    history = small_history()
    calls = (
        ToolCall(id="call_a", function=ToolCallFunction(name="search_history", arguments='{"query": "quokka"}')),
        ToolCall(id="call_b", function=ToolCallFunction(name="context_reload", arguments='{"event_id": 3}')),
    )
    response = {"id": "resp_1", "choices": [{"message": {"role": "assistant", "content": "Looking back.", "tool_calls": [c.to_litellm_dict() for c in calls]}}]}
    for tool_call in calls:
        history.run_memory_tool(tool_call, response=response)
    actions = [e for e in history.stream.get_events() if isinstance(e, SearchHistoryAction | ContextReloadAction)]
    metadata = [a.tool_call_metadata for a in actions]
    assert [(m.tool_call_id, m.function_name, m.total_calls_in_response, m.response_id) for m in metadata if m] == [
        ("call_a", "search_history", 2, "resp_1"),
        ("call_b", "context_reload", 2, "resp_1"),
    ]
    # Parallel calls of one response render as one assistant message with both calls, then both results.
    messages = history.next_messages()
    assert [m.role for m in messages[-3:]] == ["assistant", "tool", "tool"]
    assert [c.id for c in messages[-3].tool_calls or ()] == ["call_a", "call_b"]
    assert [m.tool_call_id for m in messages[-2:]] == ["call_a", "call_b"]


def test_the_new_events_render_as_a_matched_tool_call_and_its_result() -> None:
    history = small_history()
    history.run_memory_tool(call("context_reload", {"event_id": 3}, "call_r"))
    history.run_memory_tool(call("search_history", {"query": "app.py"}, "call_s"))
    messages = history.next_messages()
    tail = messages[-4:]
    assert [m.role for m in tail] == ["assistant", "tool", "assistant", "tool"]
    assert tail[0].tool_calls is not None and tail[0].tool_calls[0].function.name == "context_reload"
    assert json.loads(tail[0].tool_calls[0].function.arguments) == {"event_id": 3}
    assert tail[1].tool_call_id == "call_r" and tail[1].name == "context_reload"
    assert "FAILED tests/test_quokka.py::test_marsupial" in str(tail[1].content)
    assert tail[2].tool_calls is not None and tail[2].tool_calls[0].id == "call_s"
    assert json.loads(tail[2].tool_calls[0].function.arguments) == {"query": "app.py", "limit": 5}
    assert tail[3].tool_call_id == "call_s" and "- event 5 (run observation, forgotten)" in str(tail[3].content)


def test_a_history_over_a_stream_others_append_to_searches_their_events_too() -> None:
    stream = EventStream()
    history = noop_history(stream)
    stream.add_event(MessageAction(content="the platypus report"), EventSource.USER)  # not through the history
    result = history.run_memory_tool(call("search_history", {"query": "platypus"}))
    assert result.content.splitlines()[1].startswith("- event 0 (message action, in view): ")


def test_reload_returns_the_byte_exact_content_of_an_offloaded_observation_of_a_real_log(
    real_events: tuple[list[Event], list[dict[str, Any]]],
) -> None:
    events, records = real_events
    content_of = {r["id"]: r["content"] for r in records if "observation" in r}
    offload = Condenser.from_config({"type": "large_output_offload", "last_keep": 20})
    with History(EventStream.from_events(events), condenser=offload) as history:
        history.next_messages()
        assert history.last_view is not None
        offloaded = [e for e in history.last_view if e.id in content_of and e.content != content_of[e.id]]  # type: ignore[attr-defined]
        assert offloaded
        target = offloaded[0]
        assert f"call context_reload with event_id={target.id}" in target.content  # type: ignore[attr-defined]
        result = history.run_memory_tool(call("context_reload", {"event_id": target.id}))
        header, body = result.content.split("\n", 1)
        assert header == f"[event {target.id}: {target.kind} observation, in view, shortened; its content as logged follows]"
        assert body == content_of[target.id] and len(body) > 5_120  # type: ignore[index]


def test_the_search_index_is_built_when_the_memory_tools_are_first_offered(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    sidecar = tmp_path / "session.jsonl.search.sqlite"
    with History.open(log, condenser=Condenser.from_config({"type": "noop"})) as history:
        history.add_event(MessageAction(content="Find the flaky test in tests/test_io.py"), EventSource.USER)
        history.next_messages()
        assert not sidecar.exists()  # a history whose model never searches never indexes
    with History.open(log, condenser=Condenser.from_config({"type": "noop"})) as history:
        tools = history.memory_tools()  # offering the tools opens the index and catches it up
        assert {tool["function"]["name"] for tool in tools} == {"context_reload", "search_history"}
        assert sidecar.is_file()
        history.add_event(MessageAction(content="The flaky one is test_reads_twice"), EventSource.USER)
        found = history.run_memory_tool(call("search_history", {"query": "flaky", "limit": 5}))
    # Event 0 was indexed when the tools were offered, event 1 when it was appended.
    assert "event 1 (message action" in found.content and "event 0 (message action" in found.content


# -- hostile calls: the model's output is untrusted input (issue 27, item 1) ------------------------

BIG = 2**64
DEEP = 5_000


def jsonl_history(tmp_path: Path) -> History:
    """A JSONL history (events are written as JSON, so what cannot be written shows) with a few events to find."""
    history = History.open(tmp_path / "session.jsonl", condenser=Condenser.from_config({"type": "noop"}))
    history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    history.add_event(MessageAction(content="Fix the failing test."), EventSource.USER)
    tool_pair(history, "execute_bash", "apple pie recipe", call_id="c1")
    tool_pair(history, "execute_bash", "banana split recipe", call_id="c2")
    return history


@pytest.mark.parametrize(
    ("name", "arguments", "text"),
    [
        ("context_reload", "[" * 70 + "]" * 70, "the arguments nest more than 16 levels"),
        ("context_reload", "[" * DEEP + "]" * DEEP, "the arguments nest more than 16 levels"),
        ("search_history", '{"query": ' + "[" * DEEP, "the arguments nest more than 16 levels"),
        ("context_reload", json.dumps({"event_id": BIG}), f"event_id {BIG} is out of range: event ids are 64-bit integers"),
        ("context_reload", json.dumps({"event_id": -(2**63) - 1}), "is out of range"),
        ("search_history", json.dumps({"query": "apple", "limit": 10**30}), f"limit must be an integer from 1 to 50, got {10**30}"),
        ("search_history", '{"query": "\\ud800"}', "query must be text: it holds a lone surrogate (\\ud800) at character 0"),
        ("search_history", '{"query": "apple \\udfff pie"}', "lone surrogate (\\udfff) at character 6"),
        ("search_history", '{"query": "apple \ud800"}', "lone surrogate"),  # the surrogate itself, not its escape
        ("\ud800tool", "{}", "there is no memory tool named '\\ud800tool'"),
        ("search_history", "x" * 1_000_000, "the arguments are not valid JSON"),
        ("context_reload", '"\\f\\udb4c\\ud905"', "the arguments must be a JSON object, got str"),
    ],
    ids=["70-deep", "5000-deep", "5000-deep-unclosed", "event-id-2**64", "event-id-below-int64", "limit-10**30",
         "surrogate-escape", "surrogate-in-words", "surrogate-raw", "surrogate-name", "1MB-not-json", "a-json-string"],
)  # fmt: skip
def test_a_hostile_call_becomes_an_error_observation_appended_to_a_loadable_log(
    tmp_path: Path, name: str, arguments: str, text: str
) -> None:
    history = jsonl_history(tmp_path)
    before = len(history.stream)
    result = history.run_memory_tool({"id": "call_x", "type": "function", "function": {"name": name, "arguments": arguments}})
    assert type(result) is ErrorObservation and text in result.content, result.content[:300]
    assert len(result.content) < 1_000  # what the model wrote is quoted back cut short
    assert list(history.stream.get_events(before)) == [result]
    assert history.next_messages()[-1].role == "user"
    history.close()
    loaded = load_events(tmp_path / "session.jsonl")
    assert len(loaded) == before + 1 and loaded[-1].content == result.content  # type: ignore[attr-defined]


def test_a_call_whose_response_cannot_be_written_becomes_an_error_observation(tmp_path: Path) -> None:
    history = jsonl_history(tmp_path)
    before = len(history.stream)
    response = {"id": "r1", "usage": {"prompt_tokens": BIG}, "choices": []}  # beyond what a log holds
    result = history.run_memory_tool(call("search_history", {"query": "apple"}), response=response)
    assert type(result) is ErrorObservation
    assert 'search_history({"query": "apple"}) cannot be recorded: cannot be written as JSON: Integer exceeds 64-bit range.' == result.content
    assert list(history.stream.get_events(before)) == [result]
    surrogate_id = history.run_memory_tool(call("context_reload", {"event_id": 2}, call_id="call_\ud800"))
    assert type(surrogate_id) is ErrorObservation and "cannot be recorded" in surrogate_id.content
    history.close()
    assert len(load_events(tmp_path / "session.jsonl")) == before + 2


# Strategies for what a model may write as a tool call: JSON with hostile values, not-JSON, deep nesting.
_SURROGATE = st.integers(0xD800, 0xDFFF).map(chr)  # st.characters leaves them out of text
_TEXT = st.text(st.one_of(st.characters(), _SURROGATE), max_size=30)
_INTS = st.one_of(
    st.integers(min_value=-3, max_value=40),
    st.integers(min_value=2**63 - 2, max_value=2**64 + 2),
    st.integers(min_value=-(2**80), max_value=2**80),
)
_SCALARS = st.one_of(st.none(), st.booleans(), _INTS, st.floats(), _TEXT)
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=8)
_SHAPED = st.fixed_dictionaries(
    {}, optional={"event_id": _INTS | _JSON, "query": _TEXT | st.sampled_from(["apple", "apple banana", "recipe"]) | _JSON,
                  "limit": _INTS | _JSON, "other": _JSON, "offset": _INTS | _JSON, "before_event_id": _INTS | _JSON}
)  # fmt: skip
_ARGUMENTS = st.one_of(
    _SHAPED.map(json.dumps),
    _SHAPED.map(lambda value: json.dumps(value, ensure_ascii=False)),  # lone surrogates as characters, not escapes
    _SHAPED,  # some providers hand the arguments over parsed
    _JSON.map(json.dumps),
    st.text(max_size=40),
    st.integers(min_value=1, max_value=3_000).map(lambda n: "[" * n + "]" * n),
    st.integers(min_value=1, max_value=3_000).map(lambda n: '{"query": "x", "limit": ' + "{" * n),
)
# Mostly the memory tools with a plain id, so the arguments are what gets tried; now and then anything.
# (A middle value picks "anything": hypothesis tries the ends of a range far more often.)
_NAMES = st.integers(0, 9).flatmap(lambda n: _TEXT if n == 5 else st.sampled_from(["context_reload", "search_history"]))
_CALL_IDS = st.integers(0, 9).flatmap(lambda n: _TEXT if n == 5 else st.just(f"call_{n}"))


def test_any_tool_call_a_model_writes_appends_one_result_and_never_raises(tmp_path: Path) -> None:
    """Every memory tool call, whatever its arguments, appends a result the agent reads; the log stays loadable."""
    history = jsonl_history(tmp_path)
    outcomes: Counter[str] = Counter()
    results = (ErrorObservation, ContextReloadObservation, SearchHistoryObservation)

    @given(name=_NAMES, arguments=_ARGUMENTS, call_id=_CALL_IDS)
    @example(name="context_reload", arguments='{"event_id": 1}', call_id="call_ok")  # both tools answer, too
    @example(name="search_history", arguments='{"query": "recipe"}', call_id="call_ok")
    def run(name: str, arguments: Any, call_id: str) -> None:
        before = history.stream.get_latest_event_id()
        result = history.run_memory_tool({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
        appended = list(history.stream.get_events(before + 1))
        assert type(result) in results and appended[-1] == result
        if type(result) is ErrorObservation and result.cause is None:
            assert len(appended) == 1  # no action: the error is what the model reads
        else:
            assert len(appended) == 2 and result.cause == appended[0].id  # the call and its result
        outcomes[type(result).__name__ if type(result) is not ErrorObservation else _error_class(result.content)] += 1

    run()
    history.next_messages()  # the chat renders
    count = len(history.stream)
    history.close()
    assert len(load_events(tmp_path / "session.jsonl")) == count
    print(f"hostile memory tool calls: {sum(outcomes.values())} tried, outcomes {dict(outcomes.most_common())}")
    assert {"ContextReloadObservation", "SearchHistoryObservation"} <= set(outcomes)
    assert sum(n for kind, n in outcomes.items() if kind.startswith("error:")) > 0


def _error_class(content: str) -> str:
    """A short name for why a call was refused, to count outcomes by class."""
    for marker, name in [
        ("no memory tool named", "unknown tool"), ("not valid JSON", "not JSON"), ("nest more than", "too deep"),
        ("nest too deeply", "too deep"), ("must be a JSON object", "not an object"), ("out of range", "int out of range"),
        ("lone surrogate", "surrogate"),
        ("cannot be recorded", "unwritable"), ("Invalid tool call", "no id or name"), ("must be an integer", "wrong type"),
        ("must be a string", "wrong type"), ("needs a", "missing argument"),
    ]:  # fmt: skip
        if marker in content:
            return f"error: {name}"
    return "error: other"


# -- search_history over a live log (issue 27, items 3-4; issue 29, items 2-3) ----------------------


def test_a_multi_word_query_whose_words_are_in_different_events_finds_them_all(tmp_path: Path) -> None:
    with jsonl_history(tmp_path) as history:
        result = history.run_memory_tool(call("search_history", {"query": "apple banana"}))
        again = history.run_memory_tool(call("search_history", {"query": "apple banana"}, "call_2"))
    for answer in (result, again):  # the first search is in the log by then: it is not a result
        assert answer.content.startswith('2 events match "apple banana"'), answer.content
        assert {line.split(" (")[0] for line in answer.content.splitlines()[1:]} == {"- event 3", "- event 5"}


def test_a_second_user_of_the_sidecar_never_drops_the_events_of_a_live_history(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    history = jsonl_history(tmp_path)
    history.memory_tools()  # the index is live
    older_snapshot = load_events(log)
    for number in range(3):
        tool_pair(history, "execute_bash", f"wombat sighting {number}", call_id=f"w{number}")
    # What `openhands-memory search LOG` does beside the live session: its snapshot is older.
    with SearchIndex.for_log(log) as other:
        other.sync(older_snapshot)
        assert other.rebuilds == 0
    tool_pair(history, "execute_bash", "wombat sighting 3", call_id="w3")
    found = history.run_memory_tool(call("search_history", {"query": "wombat", "limit": 10}))
    assert found.content.startswith('4 events match "wombat"'), found.content
    history.close()
    with History.open(log, condenser=Condenser.from_config({"type": "noop"})) as resumed:
        again = resumed.run_memory_tool(call("search_history", {"query": "wombat", "limit": 10}))
        assert again.content.startswith('4 events match "wombat"'), again.content


def test_an_event_edited_in_the_middle_of_the_log_is_never_answered_from_the_stale_index(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "session.jsonl"
    with jsonl_history(tmp_path) as history:
        tool_pair(history, "execute_bash", "the last output", call_id="c3")
        history.memory_tools()  # indexed
    lines = log.read_bytes().splitlines(keepends=True)
    assert b"apple pie recipe" in lines[3]
    lines[3] = lines[3].replace(b"apple pie recipe", b"cherry tart recipe")  # same ids, first and last events unchanged
    log.write_bytes(b"".join(lines))
    with caplog.at_level(logging.WARNING, logger="openhands_memory.recall.index"):
        with History.open(log, condenser=Condenser.from_config({"type": "noop"})) as history:
            stale = history.run_memory_tool(call("search_history", {"query": "apple"}))
            fresh = history.run_memory_tool(call("search_history", {"query": "cherry"}, "call_2"))
    assert stale.content == 'No event matches "apple".'
    assert fresh.content.splitlines()[1].startswith("- event 3 (run observation")
    assert any("changed since they were indexed" in r.getMessage() for r in caplog.records)


def test_an_edit_the_index_was_not_told_of_is_found_on_a_hit_and_the_index_rebuilt() -> None:
    history = small_history()
    history.memory_tools()
    edited = history.stream.get_event(3)
    # Behind the index's back (a store edited in place): the event no longer holds the word.
    object.__setattr__(edited, "content", "nothing of that kind here")
    answer = history.run_memory_tool(call("search_history", {"query": "quokka"}))
    assert answer.content == 'No event matches "quokka".'
    assert history._recall.index is not None and history._recall.index.rebuilds == 1
    assert "event 3 no longer holds what was indexed" in (history._recall.index.last_rebuild_reason or "")


def test_a_1mb_query_is_cut_to_its_first_words_and_the_answer_says_so(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    history = jsonl_history(tmp_path)
    history.memory_tools()
    query = "apple " + "filler " * 150_000  # about 1 MB
    size = log.stat().st_size
    result = history.run_memory_tool(call("search_history", {"query": query, "limit": 50}))
    appended = log.stat().st_size - size
    assert result.content.startswith('1 event matches "apple filler filler')
    assert f"(only the first 1,000 of its {len(query):,} characters were searched)" in result.content
    assert len(result.content) < 1_000 and appended < 5_000  # not 4 MB
    action = history.stream.get_event(result.cause)  # type: ignore[arg-type]
    assert isinstance(action, SearchHistoryAction) and action.query == query[:1000]
    history.close()


def test_a_long_answer_is_capped_and_says_what_it_left_out() -> None:
    history = noop_history()
    history.add_event(MessageAction(content="start"), EventSource.USER)
    weird = "k" * 5_000  # an unknown kind read from a log can be long: it is named cut short
    for number in range(60):
        history.add_event(event_from_dict({"action": weird, "args": {"note": f"kiwi {number} " + "x" * 300}}), EventSource.AGENT)
    result = history.run_memory_tool(call("search_history", {"query": "kiwi", "limit": 50}))
    assert len(result.content) <= MAX_ANSWER_CHARS
    assert len(result.content.splitlines()) == 51 and "k" * 61 not in result.content
