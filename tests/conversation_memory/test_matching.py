"""Tool calls matched with their results; the system and first user message; caching and reuse."""

from __future__ import annotations

import json
import logging

import pytest

from openhands_memory.conversation_memory import ConversationMemory, apply_prompt_caching
from openhands_memory.conversation_memory._assembly import drop_unmatched_tool_calls
from openhands_memory.events import (
    AgentThinkAction,
    AgentThinkObservation,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    ErrorObservation,
    EventSource,
    FileReadAction,
    FileReadObservation,
    MessageAction,
    SystemMessageAction,
    ToolCallMetadata,
    UnknownAction,
    UnknownObservation,
    event_to_dict,
)
from openhands_memory.llm import Message, TextContent, ToolCall, ToolCallFunction
from openhands_memory.view import View, ViewBuilder

from ._helpers import Stream, assert_valid_chat, text_of

SYSTEM = "You are a test agent."


def roles(messages: list[Message]) -> list[str]:
    return [m.role if m.role != "tool" else f"tool:{m.tool_call_id}" for m in messages]


def session() -> tuple[Stream, MessageAction]:
    stream = Stream()
    stream.add(SystemMessageAction(content="Recorded prompt"))
    task = stream.add(MessageAction(content="Fix the bug."), "user")
    return stream, task  # type: ignore[return-value]


def test_a_tool_call_is_followed_by_its_result() -> None:
    stream, task = session()
    (run,) = stream.calls("resp_1", [("call_1", "execute_bash", CmdRunAction(command="ls"))], content="Let me look.")
    stream.result(run, CmdOutputObservation(content="a.py", command="ls", metadata={"exit_code": 0}))
    messages = ConversationMemory(SYSTEM).process_events(stream.events, task)
    assert roles(messages) == ["system", "user", "assistant", "tool:call_1"]
    assistant = messages[2]
    assert text_of(assistant) == "Let me look."
    call = ToolCall(
        id="call_1", function=ToolCallFunction(name="execute_bash", arguments=json.dumps({"command": "ls"}))
    )
    assert assistant.tool_calls == (call,)


def test_parallel_calls_wait_for_every_result_then_go_out_in_call_order() -> None:
    stream, task = session()
    first, second, third = stream.calls(
        "resp_1",
        [("c1", "execute_bash", CmdRunAction(command="a")), ("c2", "str_replace_editor", FileReadAction(path="/p")),
         ("c3", "think", AgentThinkAction(thought="hmm"))],
    )  # fmt: skip
    stream.result(third, AgentThinkObservation(content="logged"))
    stream.add(MessageAction(content="by the way"), "user")
    stream.result(first, CmdOutputObservation(content="A", command="a"))
    stream.result(second, FileReadObservation(content="P", path="/p"))
    messages = ConversationMemory(SYSTEM).process_events(stream.events, task)
    assert_valid_chat(messages)
    # The user's message came while the calls were running: it goes before the held assistant message.
    assert roles(messages) == ["system", "user", "user", "assistant", "tool:c1", "tool:c2", "tool:c3"]
    assert [c.id for c in messages[3].tool_calls or ()] == ["c1", "c2", "c3"]
    assert [text_of(m) for m in messages[4:]] == ["A", "P", "logged"]


def test_a_result_before_its_call_is_held_until_the_call() -> None:
    stream, task = session()
    run = CmdRunAction(command="ls")
    stream.calls("resp_1", [("c1", "execute_bash", run)])
    stream.events.pop()
    observation = CmdOutputObservation(content="out", command="ls", tool_call_metadata=run.tool_call_metadata)
    stream.add(observation)
    stream.add(run)
    assert roles(ConversationMemory(SYSTEM).process_events(stream.events, task)) == [
        "system",
        "user",
        "assistant",
        "tool:c1",
    ]


def test_calls_without_all_results_are_left_out_with_their_results() -> None:
    stream, task = session()
    first, _second = stream.calls(
        "resp_1", [("c1", "execute_bash", CmdRunAction(command="a")), ("c2", "execute_bash", CmdRunAction(command="b"))]
    )
    stream.result(first, CmdOutputObservation(content="A", command="a"))
    (lonely,) = stream.calls("resp_2", [("c3", "execute_bash", CmdRunAction(command="c"))])
    messages = ConversationMemory(SYSTEM).process_events(stream.events, task)
    assert roles(messages) == ["system", "user"]


def test_a_result_whose_call_was_forgotten_is_left_out() -> None:
    stream, task = session()
    (run,) = stream.calls("resp_1", [("c1", "execute_bash", CmdRunAction(command="a"))])
    stream.result(run, CmdOutputObservation(content="A", command="a"))
    stream.add(CondensationAction(forgotten_event_ids=[run.id]))  # type: ignore[list-item]
    messages = ConversationMemory(SYSTEM).process_events(View.from_events(stream.events), task)
    assert roles(messages) == ["system", "user"]


def test_an_orphan_tool_call_is_a_repair_counted_on_the_memory_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    stream, task = session()
    first, _second = stream.calls(
        "resp_1", [("c1", "execute_bash", CmdRunAction(command="a")), ("c2", "execute_bash", CmdRunAction(command="b"))]
    )
    stream.result(first, CmdOutputObservation(content="A", command="a"))
    stream.calls("resp_2", [("c3", "execute_bash", CmdRunAction(command="c"))])
    memory = ConversationMemory(SYSTEM)
    with caplog.at_level(logging.WARNING, logger="openhands_memory.conversation_memory"):
        memory.process_events(stream.events, task)
    assert memory.last_repairs.unanswered_calls == ("c2", "c3")
    assert memory.last_repairs.orphan_results == () and memory.last_repairs.count == 2
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert "calls without a result: c2, c3" in record.getMessage()


def test_a_result_whose_call_was_forgotten_is_a_repair_logged_once_while_it_stays_in_view(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stream, task = session()
    (run,) = stream.calls("resp_1", [("c1", "execute_bash", CmdRunAction(command="a"))])
    stream.result(run, CmdOutputObservation(content="A", command="a"))
    stream.add(CondensationAction(forgotten_event_ids=[run.id]))  # type: ignore[list-item]
    memory = ConversationMemory(SYSTEM)
    with caplog.at_level(logging.WARNING, logger="openhands_memory.conversation_memory"):
        memory.process_events(View.from_events(stream.events), task)
        stream.add(MessageAction(content="go on"), "user")
        memory.process_events(View.from_events(stream.events), task)
    assert memory.last_repairs.orphan_results == ("c1",) and memory.last_repairs.count == 1
    assert [r.getMessage().rsplit(": ", 1)[-1] for r in caplog.records] == ["c1"]


def test_a_matched_view_needs_no_repair() -> None:
    stream, task = session()
    (run,) = stream.calls("resp_1", [("c1", "execute_bash", CmdRunAction(command="a"))])
    memory = ConversationMemory(SYSTEM)
    memory.process_events(stream.events, task)
    assert memory.last_repairs.count == 1
    stream.result(run, CmdOutputObservation(content="A", command="a"))
    memory.process_events(stream.events, task)
    assert memory.last_repairs.count == 0 and not memory.last_repairs.call_ids


def test_an_error_without_tool_call_leaves_the_call_open_and_shows_as_user_message() -> None:
    stream, task = session()
    stream.calls("resp_1", [("c1", "execute_bash", CmdRunAction(command="a"))])
    stream.add(ErrorObservation(content="runtime restarted"), "environment")
    messages = ConversationMemory(SYSTEM).process_events(stream.events, task)
    assert roles(messages) == ["system", "user", "user"]
    assert text_of(messages[2]) == "\n\nruntime restarted\n[Error occurred in processing last action]"


def test_unknown_kinds_answering_a_tool_call_are_tool_results() -> None:
    stream, task = session()
    chat = UnknownAction.model_validate({"action": "chat", "content": "Hello Chen", "npc_name": "Chen"})
    (action,) = stream.calls("resp_1", [("c1", "chat", chat)], content="Let me ask Chen.")
    stream.result(
        action,
        UnknownObservation.model_validate({"observation": "chat", "content": "Chen says hi", "npc_name": "Chen"}),
    )
    messages = ConversationMemory(SYSTEM).process_events(stream.events, task)
    assert roles(messages) == ["system", "user", "assistant", "tool:c1"]
    assert messages[2].tool_calls[0].function.name == "chat"  # type: ignore[index]
    assert messages[3].name == "chat" and text_of(messages[3]) == "Chen says hi"


def test_a_response_without_recorded_calls_is_rebuilt_from_the_action() -> None:
    stream, task = session()
    run = stream.add(CmdRunAction(command="ls", thought="t"))
    run.tool_call_metadata = ToolCallMetadata(
        function_name="execute_bash", tool_call_id="c1", model_response={"id": "r"}
    )
    stream.result(run, CmdOutputObservation(content="out", command="ls"))  # type: ignore[arg-type]
    messages = ConversationMemory(SYSTEM).process_events(stream.events, task)
    assert roles(messages) == ["system", "user", "assistant", "tool:c1"]
    (call,) = messages[2].tool_calls  # type: ignore[misc]
    assert call.function.name == "execute_bash" and json.loads(call.function.arguments)["command"] == "ls"


def test_a_call_listed_twice_in_a_response_is_sent_once() -> None:
    stream, task = session()
    run = CmdRunAction(command="ls")
    stream.calls("r", [("c1", "execute_bash", run)])
    response = run.tool_call_metadata.model_response  # type: ignore[union-attr]
    calls = response["choices"][0]["message"]["tool_calls"]
    calls.append(dict(calls[0]))
    stream.result(run, CmdOutputObservation(content="out", command="ls"))
    messages = ConversationMemory(SYSTEM).process_events(stream.events, task)
    assert roles(messages) == ["system", "user", "assistant", "tool:c1"]
    assert len(messages[2].tool_calls or ()) == 1


# -- the final pass --------------------------------------------------------------------------------


def _call(call_id: str) -> ToolCall:
    return ToolCall(id=call_id, function=ToolCallFunction(name="f", arguments="{}"))


def _tool(call_id: str) -> Message:
    return Message(role="tool", content=(TextContent(text=call_id),), tool_call_id=call_id, name="f")


def test_drop_unmatched_tool_calls_removes_orphans_and_trims_calls() -> None:
    system = Message(role="system", content=(TextContent(text="s"),))
    user = Message(role="user", content=(TextContent(text="u"),))
    both = Message(role="assistant", content=(TextContent(text="two calls"),), tool_calls=(_call("a"), _call("b")))
    silent = Message(role="assistant", tool_calls=(_call("x"),))
    spoken = Message(role="assistant", content=(TextContent(text="said"),), tool_calls=(_call("y"),))
    messages = [system, _tool("orphan"), both, _tool("b"), _tool("b"), user, _tool("a"), silent, user, spoken]
    cleaned = drop_unmatched_tool_calls(messages)
    assert_valid_chat(cleaned)
    assert [(m.role, [c.id for c in m.tool_calls or ()], m.tool_call_id) for m in cleaned] == [
        ("system", [], None),
        ("assistant", ["b"], None),
        ("tool", [], "b"),
        ("user", [], None),
        ("user", [], None),
        ("assistant", [], None),
    ]
    assert cleaned[-1].tool_calls is None and text_of(cleaned[-1]) == "said"
    assert cleaned[0] is system and messages[2].tool_calls == (_call("a"), _call("b"))  # the input is unchanged


def test_drop_unmatched_tool_calls_logs_what_it_drops(caplog: pytest.LogCaptureFixture) -> None:
    both = Message(role="assistant", tool_calls=(_call("a"), _call("b")))
    with caplog.at_level(logging.WARNING, logger="openhands_memory.conversation_memory"):
        drop_unmatched_tool_calls([Message(role="system"), _tool("orphan"), both, _tool("b")])
        drop_unmatched_tool_calls([Message(role="system"), both, _tool("b"), _tool("a")])
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert record.getMessage().endswith("2 unmatched tool call(s) or result(s) to keep the chat valid: orphan, a")


def test_drop_unmatched_tool_calls_keeps_a_valid_chat_as_is() -> None:
    assistant = Message(role="assistant", tool_calls=(_call("a"), _call("b")))
    messages = [Message(role="system"), assistant, _tool("b"), _tool("a")]
    assert all(x is y for x, y in zip(drop_unmatched_tool_calls(messages), messages, strict=True))


# -- system and initial user message -----------------------------------------------------------------


def test_a_system_message_is_inserted_when_the_view_has_none() -> None:
    stream = Stream()
    task = stream.add(MessageAction(content="task"), "user")
    messages = ConversationMemory(SYSTEM).process_events(stream.events, task)  # type: ignore[arg-type]
    assert roles(messages) == ["system", "user"] and text_of(messages[0]) == SYSTEM


def test_a_late_system_message_is_moved_first() -> None:
    stream = Stream()
    task = stream.add(MessageAction(content="task"), "user")
    stream.add(SystemMessageAction(content="Recorded prompt"))
    messages = ConversationMemory(SYSTEM).process_events(stream.events, task)  # type: ignore[arg-type]
    assert [text_of(m) for m in messages] == ["Recorded prompt", "task"]


def test_the_initial_user_message_is_put_back_second_when_missing() -> None:
    stream, task = session()
    stream.add(MessageAction(content="working on it"))
    view = [stream.events[0], stream.events[2]]
    messages = ConversationMemory(SYSTEM).process_events(view, task)
    assert [text_of(m) for m in messages] == ["Recorded prompt", "Fix the bug.", "working on it"]


def test_the_initial_user_message_is_not_put_back_when_forgotten_on_purpose() -> None:
    stream, task = session()
    stream.add(MessageAction(content="working on it"))
    stream.add(CondensationAction(forgotten_event_ids=[task.id], summary="The user asked for a fix.", summary_offset=1))  # type: ignore[list-item]
    view = View.from_events(stream.events)
    messages = ConversationMemory(SYSTEM).process_events(view, task)
    assert [text_of(m) for m in messages] == ["Recorded prompt", "The user asked for a fix.", "working on it"]
    # Without the view's record of what it forgot, OpenHands' rule applies: the message goes back.
    assert text_of(ConversationMemory(SYSTEM).process_events(view.events, task)[1]) == "Fix the bug."


def test_a_user_message_already_second_is_kept() -> None:
    stream, task = session()
    other = MessageAction(content="other")
    other.source = "user"  # type: ignore[assignment]
    messages = ConversationMemory(SYSTEM).process_events(stream.events, other)
    assert [text_of(m) for m in messages] == ["Recorded prompt", "Fix the bug."]


def test_consecutive_user_messages_are_set_apart() -> None:
    stream, task = session()
    stream.add(MessageAction(content="more"), "user")
    messages = ConversationMemory(SYSTEM).process_events(stream.events, task)
    assert [text_of(m) for m in messages[1:]] == ["Fix the bug.", "\n\nmore"]


# -- events and messages are left alone -------------------------------------------------------------


def test_process_events_never_changes_the_events_or_the_list() -> None:
    stream, task = session()
    finish_and_friends = stream.calls("resp_1", [("c1", "execute_bash", CmdRunAction(command="a"))], content="hi")
    stream.result(finish_and_friends[0], CmdOutputObservation(content="A", command="a"))
    from openhands_memory.events import AgentFinishAction

    stream.calls("resp_2", [("c2", "finish", AgentFinishAction(thought="done"))], content="Bye")
    before = [event_to_dict(e) for e in stream.events]
    events = list(stream.events)
    ConversationMemory(SYSTEM).process_events(events, task)
    ConversationMemory(SYSTEM, function_calling=False).process_events(events[2:], task)
    assert events == stream.events
    assert [event_to_dict(e) for e in stream.events] == before


def test_prompt_caching_marks_system_and_last_user_or_tool_message_on_copies() -> None:
    stream, task = session()
    (run,) = stream.calls("resp_1", [("c1", "execute_bash", CmdRunAction(command="a"))])
    stream.result(run, CmdOutputObservation(content="A", command="a"))
    stream.add(MessageAction(content="thanks"))
    memory = ConversationMemory(SYSTEM)
    messages = memory.process_events(stream.events, task)
    original = list(messages)
    memory.apply_prompt_caching(messages)
    marked = [i for i, m in enumerate(messages) if any(p.cache_prompt for p in m.content)]
    assert marked == [0, 3]  # the system message and the tool result (the last user-or-tool message)
    assert not any(p.cache_prompt for m in original for p in m.content)  # shared messages stay unmarked
    assert not any(p.cache_prompt for m in memory.process_events(stream.events, task) for p in m.content)
    empty: list[Message] = []
    apply_prompt_caching(empty)
    assert empty == []


def test_a_memory_reused_step_by_step_gives_what_a_fresh_one_gives() -> None:
    stream, task = session()
    for n in range(3):
        (run,) = stream.calls(f"r{n}", [(f"c{n}", "execute_bash", CmdRunAction(command=str(n)))])
        stream.result(run, CmdOutputObservation(content=str(n), command=str(n)))
    stream.add(
        CondensationAction(forgotten_events_start_id=2, forgotten_events_end_id=3, summary="S", summary_offset=2)
    )
    stream.add(MessageAction(content="go on"), "user")
    memory = ConversationMemory(SYSTEM)
    builder = ViewBuilder()
    for event in stream.events:
        builder.append(event)
        got = memory.process_events(builder.view, task, max_message_chars=50)
        assert got == ConversationMemory(SYSTEM).process_events(builder.view, task, max_message_chars=50)
    # Changing a setting starts over rather than reusing messages rendered with the old one.
    assert memory.process_events(builder.view, task, vision_is_active=True) == ConversationMemory(
        SYSTEM
    ).process_events(builder.view, task, vision_is_active=True)


def test_the_same_view_twice_returns_equal_lists_of_the_same_messages() -> None:
    stream, task = session()
    memory = ConversationMemory(SYSTEM)
    first = memory.process_events(stream.events, task)
    second = memory.process_events(stream.events, task)
    assert first == second and first is not second
    assert all(a is b for a, b in zip(first, second, strict=True))


# -- text tool calls ---------------------------------------------------------------------------------

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "execute_bash",
            "description": "Run a command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        },
    }
]


def test_without_function_calling_tool_calls_are_text_and_results_user_messages() -> None:
    stream = Stream()
    stream.add(SystemMessageAction(content="Recorded prompt", tools=TOOLS))
    task = stream.add(MessageAction(content="Fix the bug."), "user")
    first, second = stream.calls(
        "resp_1",
        [("c1", "execute_bash", CmdRunAction(command="a")), ("c2", "execute_bash", CmdRunAction(command="b"))],
        content="Two.",
    )
    stream.result(first, CmdOutputObservation(content="A", command="a"))
    stream.result(second, CmdOutputObservation(content="B", command="b"))
    messages = ConversationMemory(SYSTEM, function_calling=False).process_events(stream.events, task)  # type: ignore[arg-type]
    assert [m.role for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert all(m.tool_calls is None and m.tool_call_id is None for m in messages)
    assert "---- FUNCTION 1: execute_bash ----" in text_of(messages[0])
    assert text_of(messages[2]).startswith("Two.\n\n<function=execute_bash>\n<parameter=command>a</parameter>")
    assert text_of(messages[3]) == "EXECUTION RESULT of [execute_bash]:\nA"
    assert text_of(messages[4]).startswith("<function=execute_bash>\n<parameter=command>b</parameter>")
    assert text_of(messages[5]) == "EXECUTION RESULT of [execute_bash]:\nB"


@pytest.mark.parametrize("response_id", [["a", "list"], {"an": "object"}, None, ""])
def test_a_recorded_response_whose_id_is_no_text_still_renders_its_call_and_result(response_id: object) -> None:
    # The id comes from the model's provider (or a log): a list there once made rendering raise TypeError.
    s = Stream()
    s.add(SystemMessageAction(content="sys"))
    s.add(MessageAction(content="task"), EventSource.USER)
    (run,) = s.calls("placeholder", [("c1", "execute_bash", CmdRunAction(command="ls"))])
    assert run.tool_call_metadata is not None
    run.tool_call_metadata.model_response["id"] = response_id
    s.result(run, CmdOutputObservation(content="a.py", command="ls"))
    messages = ConversationMemory("sys").process_events(s.events)
    assert_valid_chat(messages)
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2].tool_calls is not None and messages[2].tool_calls[0].id == "c1"
