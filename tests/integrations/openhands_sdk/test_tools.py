"""The memory tools as OpenHands SDK tools (`openhands_memory/integrations/openhands_sdk/tools.py`), in real SDK conversations.

Each conversation is the SDK's own: an `Agent` with the memory tools, the SDK's `LLMSummarizingCondenser`
(its summarizer scripted too), a persistence dir the SDK writes. The agent's model is scripted
(`ScriptedLLM`: the SDK's `TestLLM`, whose replies may read the messages sent, as a model reads its
context): no network, no key.
"""

from __future__ import annotations

import json
import os
import re
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openhands.sdk import Agent, Conversation, Message, TextContent
from openhands.sdk.context.condenser import LLMSummarizingCondenser
from openhands.sdk.conversation.persistence_const import EVENT_NAME_RE
from openhands.sdk.event import ActionEvent, AgentErrorEvent, ObservationEvent
from openhands.sdk.event.conversation_error import ConversationErrorEvent
from openhands.sdk.llm import MessageToolCall
from openhands.sdk.testing import TestLLM
from openhands.sdk.tool import Tool, resolve_tool

import openhands_memory.integrations.openhands_sdk as bridge
from openhands_memory.integrations.openhands_sdk import (
    MEMORY_TOOL_SET,
    ContextReloadAction,
    MemoryToolExecutor,
    SearchHistoryAction,
    SearchHistoryObservation,
    memory_tools,
    register_memory_tools,
)
from openhands_memory.events import event_to_dict
from openhands_memory.events._sdk_import import import_sdk_events
from openhands_memory.stream import SECRET_PLACEHOLDER

FORGOTTEN = "The build failed with error ZEBRA-4471 in module quux: pin libfoo to 2.3."
TOKEN = "tok-9f8e7d6c5b4a"
ROUTINE_THOUGHTS = 10
"""Thoughts after the first: with `max_size=8` the SDK's condenser forgets the first one after the third,
and condenses every third step from then on, never between the search (step 12) and the reload that reads it."""


class ScriptedLLM(TestLLM):
    """The SDK's `TestLLM`, whose scripted replies may be functions of the messages sent (a model reading its context)."""

    __test__ = False

    def completion(self, messages: list[Message], tools: Any = None, *args: Any, **kwargs: Any) -> Any:
        pending = self._scripted_responses
        if pending and callable(pending[0]) and not isinstance(pending[0], Exception):
            pending.appendleft(pending.popleft()(messages))
        return super().completion(messages, tools, *args, **kwargs)

    def script(self, *replies: Message | Callable[[list[Message]], Message]) -> None:
        """Queue more replies (after those not given yet)."""
        self._scripted_responses.extend(replies)


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str) -> Message:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Message(
        role="assistant",
        content=[TextContent(text="")],
        tool_calls=[MessageToolCall(id=call_id, name=name, arguments=raw, origin="completion")],
    )


def summarizer() -> TestLLM:
    return TestLLM.from_messages(
        [Message(role="assistant", content=[TextContent(text=f"Summary {k}: routine thinking.")]) for k in range(20)],
        usage_id="summarizer",
    )


def last_tool_result(messages: list[Message]) -> str:
    results = [m for m in messages if m.role == "tool"]
    assert results, "the model was shown no tool result"
    return "".join(block.text for block in results[-1].content if isinstance(block, TextContent))


def answers(conversation: Any, call_id: str) -> list[Any]:
    """The events that answer the tool call `call_id`: its observation, or the SDK's error for it."""
    return [
        e for e in conversation.state.events if isinstance(e, ObservationEvent | AgentErrorEvent) and e.tool_call_id == call_id
    ]


def answer_text(conversation: Any, call_id: str) -> str:
    (event,) = answers(conversation, call_id)
    assert isinstance(event, ObservationEvent), event
    return event.observation.text


# -- one conversation in which a condensation forgets an event the agent then gets back -------------


class Story(types.SimpleNamespace):
    conversation: Any
    folder: Path
    forgotten_uuid: str
    forgotten_number: int
    search_seen_by_model: str


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Story]:
    told = Story()

    def reload_what_the_search_found(messages: list[Message]) -> Message:
        told.search_seen_by_model = last_tool_result(messages)
        number = re.search(r"- event (\d+) \(", told.search_seen_by_model)
        assert number is not None, told.search_seen_by_model
        return tool_call("context_reload", {"event_id": int(number.group(1))}, "reload-number")

    def reload_by_uuid(messages: list[Message]) -> Message:
        (uuid,) = [e.id for e in told.conversation.state.events if isinstance(e, ActionEvent) and FORGOTTEN in str(e.action)]
        return tool_call("context_reload", {"event_id": uuid}, "reload-uuid")

    llm = ScriptedLLM.from_messages(
        [
            tool_call("think", {"thought": FORGOTTEN}, "think-0"),
            *[tool_call("think", {"thought": f"routine thought number {i}"}, f"think-{i}") for i in range(1, ROUTINE_THOUGHTS + 1)],
            tool_call("search_history", {"query": "ZEBRA-4471"}, "search"),
            reload_what_the_search_found,
            reload_by_uuid,
            tool_call("search_history", {"query": "ZEBRA-4471 libfoo"}, "search-again"),
            tool_call("search_history", {"query": "deploy"}, "search-secret"),
            tool_call("finish", {"message": "done"}, "finish"),
        ]
    )
    agent = Agent(llm=llm, tools=memory_tools(), condenser=LLMSummarizingCondenser(llm=summarizer(), max_size=8, keep_first=2))
    root = tmp_path_factory.mktemp("sdk")
    conversation = Conversation(
        agent=agent, workspace=str(root / "work"), persistence_dir=str(root / "conversations"), visualizer=None,
        secrets={"DEPLOY_TOKEN": TOKEN},
    )  # fmt: skip
    told.conversation = conversation
    conversation.send_message(f"Deploy with {TOKEN}, please.")
    conversation.run()
    told.folder = Path(conversation.state.persistence_dir)
    (forgotten,) = [e for e in conversation.state.events if isinstance(e, ActionEvent) and e.tool_call_id == "think-0"]
    told.forgotten_uuid = forgotten.id
    told.forgotten_number = conversation.state.events.get_index(forgotten.id)
    yield told
    conversation.close()


def test_the_conversation_ran_to_its_end_and_forgot_the_first_thought(story: Story) -> None:
    state = story.conversation.state
    assert state.execution_status.value == "finished"
    assert llm_calls_left(story) == 0
    # The SDK's own view no longer holds it: its condenser forgot it.
    assert story.forgotten_uuid not in {e.id for e in state.view.events}
    assert any(type(e).__name__ == "Condensation" and story.forgotten_uuid in e.forgotten_event_ids for e in state.events)


def llm_calls_left(story: Story) -> int:
    return story.conversation.agent.llm.remaining_responses


def test_search_history_finds_the_forgotten_event_by_its_number_and_the_model_reads_it(story: Story) -> None:
    answer = answer_text(story.conversation, "search")
    assert answer == story.search_seen_by_model  # what the model was shown, as the SDK recorded it
    assert answer.startswith('1 event matches "ZEBRA-4471", best first (call context_reload with an event_id')
    assert f"- event {story.forgotten_number} (think action, forgotten): " in answer
    assert "ZEBRA-4471 in module quux" in answer


def test_context_reload_gives_back_the_forgotten_thought_by_number_and_by_sdk_id(story: Story) -> None:
    by_number = answer_text(story.conversation, "reload-number")
    assert by_number.splitlines()[0] == f"[event {story.forgotten_number}: think action, forgotten; its content as logged follows]"
    assert by_number.endswith(FORGOTTEN)
    assert answer_text(story.conversation, "reload-uuid") == by_number
    (observation,) = answers(story.conversation, "reload-uuid")
    assert observation.observation.reloaded_event_id == story.forgotten_number and not observation.observation.is_error


def test_a_second_search_finds_the_original_never_the_answers_that_copied_it(story: Story) -> None:
    again = answer_text(story.conversation, "search-again")
    # The first search's answer and both reloads hold the words too; they are copies, never indexed.
    assert again.startswith('1 event matches "ZEBRA-4471 libfoo"')
    assert f"- event {story.forgotten_number} (" in again


def test_answers_and_the_index_hide_the_conversations_secrets(story: Story) -> None:
    answer = answer_text(story.conversation, "search-secret")
    # Ours (`<secret_hidden>`), not only the SDK's mask of every tool output (`<secret-hidden>`).
    assert f"(message action, in view): Deploy with {SECRET_PLACEHOLDER}, please." in answer
    sidecar = story.folder / "events.search.sqlite"
    stored = b"".join(p.read_bytes() for p in story.folder.glob("events.search.sqlite*"))
    assert sidecar.exists() and TOKEN.encode() not in stored and b"ZEBRA" in stored


def test_the_index_is_an_owner_only_sidecar_beside_the_events_folder_and_the_sdk_resumes_the_conversation(story: Story) -> None:
    files = sorted(story.folder.glob("events.search.sqlite*"))  # the database, and SQLite's journal files while open
    assert story.folder / "events.search.sqlite" in files
    assert {path.name: path.stat().st_mode & 0o777 for path in files} == {path.name: 0o600 for path in files}
    events = story.folder / "events"
    # Inside the events folder only the SDK's own files: event files and its dot-files (lock, count marker).
    assert all(EVENT_NAME_RE.match(name) or name.startswith(".") for name in os.listdir(events))
    assert len([name for name in os.listdir(events) if EVENT_NAME_RE.match(name)]) == len(story.conversation.state.events)


def test_the_tools_read_the_log_the_sdk_wrote_to_its_events_folder(story: Story) -> None:
    files = sorted((story.folder / "events").glob("event-*.json"))
    written = import_sdk_events([json.loads(file.read_text(encoding="utf-8")) for file in files])
    executor = story.conversation.agent.tools_map["context_reload"].executor
    (recall,) = executor._recalls.values()
    read = recall.store.snapshot()  # as stored (the stream shows them with the secrets hidden)
    # Up to the last call's own action (its answer and the finish came after the last read).
    assert [event_to_dict(e) for e in read] == [event_to_dict(e) for e in written[: len(read)]]
    assert [e.original_id for e in read] == [EVENT_NAME_RE.match(f.name).group("event_id") for f in files[: len(read)]]


def test_a_resumed_conversation_searches_with_the_index_it_left(story: Story, tmp_path: Path) -> None:
    state = story.conversation.state
    llm = ScriptedLLM.from_messages(
        [tool_call("search_history", {"query": "ZEBRA-4471"}, "after-resume"), tool_call("finish", {"message": "done"}, "finish-2")]
    )
    agent = Agent(llm=llm, tools=memory_tools(), condenser=LLMSummarizingCondenser(llm=summarizer(), max_size=8, keep_first=2))
    resumed = Conversation(
        agent=agent, workspace=str(tmp_path), persistence_dir=str(story.folder.parent), conversation_id=state.id,
        visualizer=None, secrets={"DEPLOY_TOKEN": TOKEN},
    )  # fmt: skip
    try:
        assert len(resumed.state.events) == len(state.events)
        resumed.send_message("Where did the build fail?")
        resumed.run()
        assert f"- event {story.forgotten_number} (think action, forgotten): " in answer_text(resumed, "after-resume")
        executor = resumed.agent.tools_map["search_history"].executor
        assert isinstance(executor, MemoryToolExecutor)
        (recall,) = executor._recalls.values()
        index = recall.runtime.index
        assert index is not None and index.path == story.folder / "events.search.sqlite" and index.rebuilds == 0
    finally:
        resumed.close()


def test_a_conversation_without_persistence_dir_searches_in_memory_and_answers_parallel_calls(tmp_path: Path) -> None:
    both = Message(
        role="assistant",
        content=[TextContent(text="Both at once.")],
        tool_calls=[
            MessageToolCall(id="search", name="search_history", arguments='{"query": "libfoo"}', origin="completion"),
            MessageToolCall(id="reload", name="context_reload", arguments='{"event_id": 2}', origin="completion"),
        ],
    )
    llm = ScriptedLLM.from_messages(
        [tool_call("think", {"thought": FORGOTTEN}, "think"), both, tool_call("finish", {"message": "done"}, "finish")]
    )
    conversation = Conversation(agent=Agent(llm=llm, tools=memory_tools()), workspace=str(tmp_path), visualizer=None)
    try:
        conversation.send_message("go")
        conversation.run()
        assert "(think action, in view): " in answer_text(conversation, "search")
        assert answer_text(conversation, "reload").endswith(FORGOTTEN)
        (recall,) = conversation.agent.tools_map["search_history"].executor._recalls.values()
        assert recall.runtime.index is not None and recall.runtime.index.path is None  # in memory
        assert list(tmp_path.rglob("*.search.sqlite")) == []
    finally:
        conversation.close()


# -- what the agent writes is untrusted ---------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    # Lone surrogates are left out: the SDK itself cannot persist a tool call holding one (see the report).
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
ARGUMENTS = st.one_of(
    st.dictionaries(
        st.sampled_from(["event_id", "query", "limit", "summary", "x", "offset", "before_event_id", "operation", "text", "focus"]),
        JSON_VALUES | st.sampled_from(["read", "write", "append"]),
        max_size=4,
    ),
    st.sampled_from(["", "not json", "[1, 2]", '"text"', "{", '{"event_id": NaN}', '{"query": "a", "limit": 1e400}']),
)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    llm = ScriptedLLM.from_messages([])
    conversation = Conversation(
        agent=Agent(llm=llm, tools=[*memory_tools(), *bridge.steering_tools()]), workspace=str(tmp_path_factory.mktemp("hostile")),
        persistence_dir=str(tmp_path_factory.mktemp("hostile-log")), visualizer=None, stuck_detection=False,
    )  # fmt: skip
    yield conversation
    conversation.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(tool=st.sampled_from(["context_reload", "search_history", "context_notes", "compact_context"]), arguments=ARGUMENTS)
def test_any_arguments_the_agent_writes_become_an_answer_it_reads(hostile: Any, tool: str, arguments: Any) -> None:
    call_id = f"hostile-{len(hostile.state.events)}"
    hostile.agent.llm.script(tool_call(tool, arguments, call_id), tool_call("finish", {"message": "ok"}, f"{call_id}-finish"))
    hostile.send_message("next")
    hostile.run()  # an exception here would be the SDK's loop breaking
    assert hostile.state.execution_status.value == "finished"
    assert not any(isinstance(e, ConversationErrorEvent) for e in hostile.state.events)
    (answer,) = answers(hostile, call_id)
    if isinstance(answer, ObservationEvent):  # our tool answered: a text saying what it found or what is wrong
        assert answer.observation.text.strip()
    else:  # the SDK refused the arguments before calling the tool (not JSON, an unknown field): it says why
        assert answer.error.startswith(f"Error validating tool '{tool}'")


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("context_reload", {"event_id": [1, 2]}, "No event was reloaded: event_id must be an integer, got [1, 2]; context_reload takes an event's number as search_history shows it (`event 12`: pass 12), or the SDK id (a UUID) of an event of this conversation."),
        ("context_reload", {"event_id": "no-such-uuid"}, 'No event was reloaded: this conversation has no event "no-such-uuid"; context_reload takes'),
        ("context_reload", {"event_id": 10**30}, "No event was reloaded: event_id 1000000000000000000000000000000 is out of range: event ids are 64-bit integers"),
        ("context_reload", {"event_id": 4096}, "There is no event 4096 in the history: event ids go from 0 to "),
        ("context_reload", {"event_id": 999999}, "There is no event 999999 in the history: event ids go from 0 to "),
        ("context_reload", {"event_id": -5}, "There is no event -5 in the history: event ids go from 0 to "),
        ("context_reload", {"event_id": "1"}, "[event 1: message action, still in your view; its content as logged follows]\nnext"),
        ("search_history", {"query": "   "}, "No search was made: search_history needs a non-empty query: the words to look for."),
        ("search_history", {"query": "next", "limit": 0}, "No search was made: limit must be from 1 to 50, got 0."),
        ("search_history", {"query": "next", "limit": -1}, "No search was made: limit must be from 1 to 50, got -1."),
        ("search_history", {"query": ""}, "No search was made: search_history needs a non-empty query: the words to look for."),
        ("search_history", {"query": {"a": None}}, 'No search was made: query must be a string, got {"a": null}.'),
        ("search_history", {"query": "q" * 300_000}, '(only the first 1,000 of its 300,000 characters were searched)'),
        # Pages and a cursor, as the SDK's conversation_history tool takes them (issue 36, item 4).
        ("context_reload", {"event_id": 1, "offset": 2, "limit": 1}, "[event 1: message action, still in your view; characters 2 to 3 of its 4 as logged follow; 1 character remains: call context_reload with offset=3 for the next page]\nx"),
        ("context_reload", {"event_id": 1, "offset": -1}, "No event was reloaded: offset must be 0 or more (a number of characters), got -1."),
        ("context_reload", {"event_id": 1, "offset": 4}, "No event was reloaded: offset 4 is past the end of event 1, whose content as logged holds 4 characters."),
        ("context_reload", {"event_id": 1, "limit": 10**6}, "No event was reloaded: limit must be from 1 to 64000 characters, got 1000000."),
        ("context_reload", {"event_id": 1, "offset": "2"}, 'No event was reloaded: offset must be an integer (a number of characters), got "2"'),
        ("search_history", {"query": "next", "before_event_id": 1}, 'No event matches "next".'),
        ("search_history", {"query": "next", "before_event_id": 999999}, "No search was made: there is no event 999999 in the history to search before: event ids go from 0 to "),
        ("search_history", {"query": "next", "before_event_id": "no-such-uuid"}, 'No search was made: this conversation has no event "no-such-uuid"; before_event_id takes an event\'s number'),
        ("search_history", {"query": "next", "before_event_id": 1.5}, "No search was made: before_event_id must be an integer (an event_id), got 1.5."),
        ("search_history", {"query": "next", "before_event_id": 2**64}, f"No search was made: before_event_id {2**64} is out of range"),
        # The steering tools' wrong values (issue 36): the same answers as History's.
        ("context_notes", {"operation": "erase"}, "The notes were not changed: operation must be one of read, write, append, got \"erase\"."),
        ("context_notes", {"operation": "write", "text": 7}, "The notes were not changed: text must be a string, got int."),
        ("context_notes", {"operation": "write", "text": "n" * 8_001}, "The notes were not changed: the notes would hold 8001 characters, over the bound of 8000"),
        ("compact_context", {"focus": "the port"}, "Nothing was compacted: this agent's condenser (none) answers no compaction request"),
        ("compact_context", {"focus": "f" * 2_001}, "Nothing was compacted: the focus has 2001 characters, over the bound of 2000."),
    ],
)
def test_wrong_values_get_the_answers_history_gives(hostile: Any, tool: str, arguments: dict[str, Any], expected: str) -> None:
    call_id = f"wrong-{len(hostile.state.events)}"
    hostile.agent.llm.script(tool_call(tool, arguments, call_id), tool_call("finish", {"message": "ok"}, f"{call_id}-finish"))
    hostile.send_message("next")
    hostile.run()
    assert expected in answer_text(hostile, call_id)
    # Every refused call is an error, whatever refused it: the arguments' checks, the search's, the log's.
    refused = expected.startswith(
        ("No event was reloaded", "No search was made", "There is no event", "The notes were not changed", "Nothing was compacted")
    )
    (answer,) = answers(hostile, call_id)
    assert answer.observation.is_error is refused


# -- the executor's own contract, without a conversation ----------------------------------------------


class _Unreadable:
    """An SDK event as the log gives it, holding what the V1 import cannot read."""

    def model_dump_json(self, **_: Any) -> str:
        return json.dumps({"kind": "ActionEvent", "id": "e-1", "source": "agent"})


class _Failing(list[Any]):
    def __len__(self) -> int:
        raise RuntimeError("the log's disk went away")


def state_with(events: Any) -> types.SimpleNamespace:
    return types.SimpleNamespace(id="c-1", events=events, persistence_dir=None, secret_registry=None)


def test_a_log_that_cannot_be_read_is_an_answer_naming_the_event() -> None:
    executor = MemoryToolExecutor(state_with([_Unreadable()]))
    observation = executor(SearchHistoryAction(query="x"))
    assert isinstance(observation, SearchHistoryObservation) and observation.is_error
    assert observation.text.startswith("The conversation's event log cannot be read: ")
    assert "event #0" in observation.text and "e-1" in observation.text


def test_a_failure_of_the_log_is_an_answer_never_an_exception(caplog: pytest.LogCaptureFixture) -> None:
    executor = MemoryToolExecutor(state_with(_Failing()))
    observation = executor(ContextReloadAction(event_id=0))
    assert observation.is_error
    assert observation.text == "context_reload failed: RuntimeError: the log's disk went away"
    assert "the memory tool context_reload failed" in caplog.text
    # Without a conversation or a state there is nothing to read, and it says so.
    assert MemoryToolExecutor()(ContextReloadAction(event_id=0)).text.startswith("The memory tools were called outside a conversation")


# -- registration and the public surface ---------------------------------------------------------------


def test_memory_tools_is_one_spec_that_resolves_to_both_tools_sharing_an_executor(story: Story) -> None:
    register_memory_tools()  # again: nothing changes
    assert memory_tools() == [Tool(name=MEMORY_TOOL_SET)]
    reload_tool, search_tool = resolve_tool(Tool(name=MEMORY_TOOL_SET), story.conversation.state)
    assert (reload_tool.name, search_tool.name) == ("context_reload", "search_history")
    assert reload_tool.executor is search_tool.executor
    assert reload_tool.annotations is not None and reload_tool.annotations.readOnlyHint
    with pytest.raises(ValueError, match=re.escape("MemoryToolSet takes no parameters, got ['x']")):
        resolve_tool(Tool(name=MEMORY_TOOL_SET, params={"x": 1}), story.conversation.state)


def test_the_package_exports_the_memory_tools() -> None:
    exported = {
        "MEMORY_TOOL_SET", "ContextReloadAction", "ContextReloadObservation", "ContextReloadTool", "MemoryToolExecutor",
        "MemoryToolSet", "SearchHistoryAction", "SearchHistoryObservation", "SearchHistoryTool", "memory_tools",
        "register_memory_tools",
    }  # fmt: skip
    assert set(bridge.__all__) == {  # the door (issue 34 item 5): the rest stays importable from the package
        "OpenHandsMemoryCondenser", "memory_tools", "steering_tools", "register_memory_tools", "register_steering_tools",
    }  # fmt: skip
    assert all(hasattr(bridge, name) for name in [*bridge.__all__, *exported])


# -- new_context (issue 36) ---------------------------------------------------------------------------


def test_new_context_in_a_real_sdk_conversation_resets_to_the_handoff_kept_verbatim(tmp_path: Path) -> None:
    from openhands.sdk.event.condenser import Condensation

    from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser, steering_tools

    handoff = "Goal: pin libfoo. Done: found ZEBRA-4471 in quux. Left: write the pin."
    seen: list[list[Message]] = []

    def finish(messages: list[Message]) -> Message:
        seen.append(messages)
        return tool_call("finish", {"message": "done"}, "finish")

    llm = ScriptedLLM.from_messages(
        [
            tool_call("think", {"thought": FORGOTTEN}, "think"),
            tool_call("new_context", {"handoff": ""}, "empty"),  # refused: the agent reads why
            tool_call("new_context", {"handoff": handoff}, "reset"),
            finish,
        ]
    )
    condenser = OpenHandsMemoryCondenser(condenser={"type": "agent_reset"}, tokenizer="approximate")
    agent = Agent(llm=llm, tools=steering_tools(), condenser=condenser)
    conversation = Conversation(agent=agent, workspace=str(tmp_path), visualizer=None)
    try:
        conversation.send_message("go")
        conversation.run()
        empty = answer_text(conversation, "empty")
        assert "needs a non-empty handoff" in empty
        (reset,) = [e for e in conversation.state.events if isinstance(e, Condensation)]
        assert reset.summary == handoff
        texts = [str(m.content) for m in seen[0]]
        assert any(handoff in t for t in texts) and not any(FORGOTTEN in t for t in texts)
        assert any("go" in t for t in texts)  # the user's message stays
    finally:
        conversation.close()


def test_a_secret_too_short_to_hide_is_never_stored_in_the_index_search_is_refused_saying_why(tmp_path: Path) -> None:
    pin = "4711"  # 4 characters: too short for our redactor to hide without hiding every "4711" in the log
    llm = ScriptedLLM.from_messages(
        [tool_call("search_history", {"query": "deploy"}, "search-pin"), tool_call("finish", {"message": "ok"}, "finish-pin")]
    )
    conversation = Conversation(
        agent=Agent(llm=llm, tools=memory_tools()), workspace=str(tmp_path / "work"),
        persistence_dir=str(tmp_path / "conversations"), visualizer=None, secrets={"PIN": pin},
    )  # fmt: skip
    try:
        conversation.send_message(f"Deploy with PIN {pin}, please.")
        conversation.run()
        (answer,) = answers(conversation, "search-pin")
        assert answer.observation.is_error
        assert answer.observation.text.startswith("No search was made: the conversation's secret PIN is shorter than 6 characters")
        folder = Path(conversation.state.persistence_dir)
        stored = b"".join(path.read_bytes() for path in folder.glob("*.search.sqlite*"))
        assert pin.encode() not in stored  # no index at all: nothing could hide it
    finally:
        conversation.close()


# -- context_notes and compact_context (issue 36) -------------------------------------------------------


def test_notes_survive_a_compaction_with_a_focus_and_resume_equal_in_a_real_sdk_conversation(tmp_path: Path) -> None:
    from openhands.sdk.event.condenser import Condensation

    from openhands_memory.integrations.openhands_sdk import (
        COMPACT_CONTEXT_TOOL,
        CONTEXT_NOTES_TOOL,
        NEW_CONTEXT_TOOL,
        OpenHandsMemoryCondenser,
        steering_tools,
    )
    from openhands_memory.integrations.openhands_sdk._steering_log import SteeringLog

    assert steering_tools() == [Tool(name=NEW_CONTEXT_TOOL), Tool(name=CONTEXT_NOTES_TOOL), Tool(name=COMPACT_CONTEXT_TOOL)]
    focus = "the ZEBRA-4471 failure in module quux"
    routine = [tool_call("think", {"thought": f"routine step {i}: " + "reading more files " * 120}, f"t{i}") for i in range(6)]
    seen: list[list[Message]] = []

    def read_notes(messages: list[Message]) -> Message:
        seen.append(messages)  # the first request after the compaction
        return tool_call("context_notes", {"operation": "read"}, "read")

    def after_reset(messages: list[Message]) -> Message:
        seen.append(messages)  # the first request after the reset
        return tool_call("finish", {"message": "done"}, "finish")

    llm = ScriptedLLM.from_messages(
        [
            tool_call("think", {"thought": FORGOTTEN}, "fact"),
            tool_call("context_notes", {"operation": "write", "text": "Pin libfoo to 2.3 (ZEBRA-4471)."}, "write"),
            tool_call("compact_context", {"focus": focus}, "too-early"),  # refused: too little to free yet
            *routine,
            tool_call("context_notes", {"operation": "append", "text": "Next: write the pin."}, "append"),
            tool_call("context_notes", {"operation": "append", "text": "x" * 9_000}, "too-long"),  # over the bound
            tool_call("compact_context", {"focus": 42}, "bad-focus"),
            tool_call("compact_context", {"focus": focus}, "compact"),
            read_notes,
            tool_call("new_context", {"handoff": "Goal: fix the build. Next: write the pin."}, "reset"),
            after_reset,
        ]
    )
    config = {"type": "agent_reset", "condenser": {"type": "llm", "max_size": 40, "keep_first": 2}}
    condenser = OpenHandsMemoryCondenser(condenser=config, tokenizer="approximate")
    persistence = tmp_path / "conversations"
    conversation = Conversation(
        agent=Agent(llm=llm, tools=steering_tools(), condenser=condenser), workspace=str(tmp_path / "work"),
        persistence_dir=str(persistence), visualizer=None,
    )  # fmt: skip
    notes = "Pin libfoo to 2.3 (ZEBRA-4471).\nNext: write the pin."
    try:
        conversation.send_message("Fix the build.")
        conversation.run()
        assert answer_text(conversation, "write") == "Notes written (31 of 8000 characters):\nPin libfoo to 2.3 (ZEBRA-4471)."
        (early,) = answers(conversation, "too-early")
        assert early.observation.is_error and "too little to free" in early.observation.text
        (long,) = answers(conversation, "too-long")
        assert long.observation.is_error and "over the bound of 8000" in long.observation.text
        (bad,) = answers(conversation, "bad-focus")
        assert bad.observation.is_error and "focus must be a string, got int" in bad.observation.text
        assert "keeping first: " + focus in answer_text(conversation, "compact")
        # One condensation for the call, with its focus recorded (it forgot the call: answered once), then the reset.
        condensation, reset = [e for e in conversation.state.events if isinstance(e, Condensation)]
        assert reset.summary == "Goal: fix the build. Next: write the pin."
        record = condenser.condensation_records[0]
        assert record.condensation_id == condensation.id and record.metadata["extra"]["focus"] == focus
        assert record.metadata["reason"] == "request"
        assert condensation.summary is not None and condensation.summary.index(focus) < 200  # the focus first
        (compact_call,) = [e for e in conversation.state.events if isinstance(e, ActionEvent) and e.tool_call_id == "compact"]
        assert compact_call.id in condensation.forgotten_event_ids
        # After it the model sees the notes' events (kept by agent_reset), not the thought forgotten with them.
        shown = "\n".join(f"{m.content} {[c.arguments for c in m.tool_calls or ()]}" for m in seen[0])
        assert "Pin libfoo to 2.3 (ZEBRA-4471)." in shown and "Next: write the pin." in shown
        assert FORGOTTEN not in shown and focus in shown  # the summary, focus first, in its place
        assert answer_text(conversation, "read") == f"Your notes ({len(notes)} of 8000 characters):\n{notes}"
        # The reset keeps the notes' events too: after it the model sees them, and the handoff.
        after = "\n".join(f"{m.content} {[c.arguments for c in m.tool_calls or ()]}" for m in seen[1])
        assert "Pin libfoo to 2.3 (ZEBRA-4471)." in after and "Next: write the pin." in after and "Goal: fix the build." in after
        assert "routine step" not in after and focus not in after  # the rest is forgotten, the summary with it
        conversation_id = conversation.state.id
    finally:
        conversation.close()
    # Resumed from its folder, the conversation reads the same notes from the same log.
    resumed_llm = ScriptedLLM.from_messages(
        [tool_call("context_notes", {"operation": "read"}, "read-again"), tool_call("finish", {"message": "ok"}, "finish-2")]
    )
    resumed = Conversation(
        agent=Agent(llm=resumed_llm, tools=steering_tools(), condenser=OpenHandsMemoryCondenser(condenser=config, tokenizer="approximate")),
        workspace=str(tmp_path / "work"), persistence_dir=str(persistence), conversation_id=conversation_id, visualizer=None,
    )  # fmt: skip
    try:
        assert SteeringLog(resumed.state).notes("read", None).text.endswith(f"\n{notes}")
        resumed.send_message("Go on.")
        resumed.run()
        assert answer_text(resumed, "read-again") == f"Your notes ({len(notes)} of 8000 characters):\n{notes}"
        assert len([e for e in resumed.state.events if isinstance(e, Condensation)]) == 2  # compact_context was not answered again
    finally:
        resumed.close()
