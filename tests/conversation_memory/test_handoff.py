"""tool_result_format="inkeep_handoff": tool results written out as Inkeep's conversation memory writes them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.conversation_memory._handoff import handoff_text
from openhands_memory.events import (
    CmdOutputObservation,
    CmdRunAction,
    Event,
    FileReadAction,
    FileReadObservation,
    MessageAction,
    SystemMessageAction,
    ToolCallMetadata,
    agent_history,
)
from openhands_memory.view import View

from ._strategies import tool_call_event_streams


def _with(event: Event, event_id: int, source: str) -> Event:
    event.id = event_id
    event.source = source  # type: ignore[assignment]
    return event


def _response(response_id: str, text: str, calls: list[tuple[str, str, str]]) -> dict[str, object]:
    return {
        "id": response_id,
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": text,
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": name, "arguments": arguments}}
                        for i, name, arguments in calls
                    ],
                }
            }
        ],
    }


def _events() -> list[Event]:
    one = _response("r1", "Let me look.", [("call-1", "execute_bash", '{"command": "ls", "timeout": 5}')])
    two = _response("r2", "", [("call-2", "str_replace_editor", '{"command": "view", "path": "/w/a.py"}'), ("call-3", "execute_bash", "")])
    m1 = ToolCallMetadata(function_name="execute_bash", tool_call_id="call-1", model_response=one)
    m2 = ToolCallMetadata(function_name="str_replace_editor", tool_call_id="call-2", model_response=two)
    m3 = ToolCallMetadata(function_name="execute_bash", tool_call_id="call-3", model_response=two)
    return [
        _with(SystemMessageAction(content="sys"), 0, "agent"),
        _with(MessageAction(content="Fix it"), 1, "user"),
        _with(CmdRunAction(command="ls", thought="Let me look.", tool_call_metadata=m1), 2, "agent"),
        _with(CmdOutputObservation(content="a.py\nb.py", command="ls", tool_call_metadata=m1, cause=2, metadata={"exit_code": 0}), 3, "environment"),
        _with(FileReadAction(path="/w/a.py", tool_call_metadata=m2), 4, "agent"),
        _with(CmdRunAction(command="pwd", tool_call_metadata=m3), 5, "agent"),
        _with(FileReadObservation(content="x = 1", path="/w/a.py", tool_call_metadata=m2, cause=4), 6, "environment"),
        _with(CmdOutputObservation(content="/w", command="pwd", tool_call_metadata=m3, cause=5, metadata={"exit_code": 0}), 7, "environment"),
        _with(MessageAction(content="Done."), 8, "agent"),
    ]


def test_each_tool_result_becomes_an_assistant_message_with_the_call_and_its_output() -> None:
    messages = ConversationMemory("x", tool_result_format="inkeep_handoff").process_events(_events())
    assert [m.to_litellm_dict(string_content=True) for m in messages] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Fix it"},
        {"role": "assistant", "content": "Let me look."},
        {
            "role": "assistant",
            "content": '## Tool: execute_bash\n\n**Input:**\n{\n  "command": "ls",\n  "timeout": 5\n}\n\n'
            "**Output:**\na.py\nb.py\n[Command finished with exit code 0]",
        },
        # The second response had no text: its calls' results alone, in call order.
        {
            "role": "assistant",
            "content": '## Tool: str_replace_editor\n\n**Input:**\n{\n  "command": "view",\n  "path": "/w/a.py"\n}\n\n'
            "**Output:**\nx = 1",
        },
        {
            "role": "assistant",
            "content": "## Tool: execute_bash\n\n**Input:**\nNo input\n\n**Output:**\n/w\n[Command finished with exit code 0]",
        },
        {"role": "assistant", "content": "Done."},
    ]
    assert all(m.tool_calls is None and m.tool_call_id is None for m in messages)


def test_native_is_the_default_and_keeps_tool_calls() -> None:
    memory = ConversationMemory("x")
    assert memory.tool_result_format == "native"
    roles = [m.role for m in memory.process_events(_events())]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "tool", "assistant"]


def test_arguments_that_are_not_json_are_shown_as_written() -> None:
    assert handoff_text("run", "ls -la", "out") == "## Tool: run\n\n**Input:**\nls -la\n\n**Output:**\nout"
    assert handoff_text("run", '{"q": "\u00e9"}', "") == '## Tool: run\n\n**Input:**\n{\n  "q": "\u00e9"\n}\n\n**Output:**\n'


def test_a_second_step_reuses_the_written_messages() -> None:
    memory = ConversationMemory("x", tool_result_format="inkeep_handoff")
    events = _events()
    first = memory.process_events(events[:8])
    second = memory.process_events(events)
    assert all(a is b for a, b in zip(first, second[: len(first)], strict=True))


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tool_result_format 'inkeep'"):
        ConversationMemory("x", tool_result_format="inkeep")  # type: ignore[arg-type]


@settings(deadline=None, max_examples=40)
@given(tool_call_event_streams())
def test_a_handoff_chat_is_the_native_chat_with_every_exchange_written_out(events: list[Event]) -> None:
    view = View.from_events(agent_history(events))
    native = ConversationMemory("sys").process_events(view)
    handoff = ConversationMemory("sys", tool_result_format="inkeep_handoff").process_events(view)
    expected: list[tuple[str, str]] = []
    calls = {}
    for message in native:
        if message.role == "assistant" and message.tool_calls:
            calls = {call.id: call for call in message.tool_calls}
            if message.content:
                expected.append(("assistant", message.text))
        elif message.role == "tool":
            call = calls[message.tool_call_id]  # type: ignore[index]
            expected.append(("assistant", handoff_text(call.function.name, call.function.arguments, message.text)))
        else:
            expected.append((message.role, message.text))
    assert [(m.role, m.text) for m in handoff] == expected
    assert all(not m.tool_calls and m.tool_call_id is None for m in handoff)
