"""The renderer's message builders make the very instances validation makes (`_messages`)."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from pydantic import BaseModel

from openhands_memory.conversation_memory._messages import (
    calls_message,
    marked_text_part,
    plain_message,
    text_message,
    text_part,
    tool_result,
    tool_text_message,
    typed_text_part,
    with_content,
)
from openhands_memory.llm import ImageContent, Message, TextContent

validate = Message.__pydantic_validator__.validate_python


def anatomy(value: Any) -> Any:
    """Everything pydantic keeps on a model, nested: its class, fields, fields set, extra and private."""
    if isinstance(value, BaseModel):
        fields = {name: anatomy(field) for name, field in value.__dict__.items()}
        return (type(value), fields, set(value.model_fields_set), value.__pydantic_extra__, value.__pydantic_private__)
    if isinstance(value, tuple):
        return tuple(anatomy(item) for item in value)
    return (type(value), value)


def test_text_builders_make_what_validation_makes() -> None:
    assert anatomy(text_part("hi")) == anatomy(TextContent(text="hi"))
    assert anatomy(typed_text_part("hi")) == anatomy(TextContent.model_validate({"type": "text", "text": "hi"}))
    assert anatomy(text_message("system", "be brief")) == anatomy(
        Message(role="system", content=(TextContent(text="be brief"),))
    )
    parts = (TextContent(text="look"), ImageContent(image_urls=("data:image/png;base64,AAAA",)))
    assert anatomy(plain_message("user", parts)) == anatomy(Message(role="user", content=parts))


def test_tool_result_builders_make_what_validation_makes() -> None:
    validated = validate(
        {"role": "tool", "content": [{"type": "text", "text": "ok"}], "tool_call_id": "call_1", "name": "execute_bash"}
    )
    assert anatomy(tool_text_message("ok", "call_1", "execute_bash")) == anatomy(validated)
    assert anatomy(tool_result((typed_text_part("ok"),), "call_1", "execute_bash")) == anatomy(validated)


def test_calls_message_makes_what_validation_makes_of_a_recorded_response() -> None:
    raw_calls = [
        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'}},
        {"id": "call_2", "function": {"name": "think", "arguments": "{}", "extra": 1}},
    ]
    content = (typed_text_part("Let me look."),)
    built = calls_message(content, raw_calls)
    validated = validate({"role": "assistant", "content": [{"type": "text", "text": "Let me look."}], "tool_calls": raw_calls})
    assert built is not None
    assert anatomy(built[0]) == anatomy(validated)
    assert built[1] == ("call_1", "call_2")
    empty = calls_message((), [])
    assert empty is not None
    assert anatomy(empty[0]) == anatomy(validate({"role": "assistant", "content": [], "tool_calls": []}))
    assert empty[1] == ()


@pytest.mark.parametrize(
    "raw_call",
    [
        "call_1",
        {"id": 7, "function": {"name": "f", "arguments": "{}"}},
        {"id": "call_1", "function": "f"},
        {"id": "call_1", "function": {"name": "f", "arguments": {"a": 1}}},
        {"id": "call_1", "function": {"arguments": "{}"}},
        {"id": "call_1", "type": "code", "function": {"name": "f", "arguments": "{}"}},
        {"id": "call_1", "type": None, "function": {"name": "f", "arguments": "{}"}},
    ],
)
def test_calls_message_leaves_a_call_that_is_not_plainly_well_formed_to_validation(raw_call: Any) -> None:
    assert calls_message((), [{"id": "call_0", "function": {"name": "f", "arguments": "{}"}}, raw_call]) is None


def test_built_messages_share_their_fields_set_but_copies_get_their_own() -> None:
    first, second = tool_text_message("a", "call_1", "f"), tool_text_message("b", "call_2", "f")
    assert first.model_fields_set is second.model_fields_set
    with pytest.raises(TypeError, match="shared"):
        first.model_fields_set.add("role")
    marked = first.with_cache_prompt()
    assert marked.content[0].cache_prompt is True
    assert marked.model_fields_set == {"role", "content", "tool_call_id", "name"}
    changed = first.model_copy(update={"name": "g"})
    changed.model_fields_set.add("tool_calls")  # a plain set of its own
    assert first.model_fields_set == {"role", "content", "tool_call_id", "name"}
    for twin in (copy.copy(first), copy.deepcopy(first), pickle.loads(pickle.dumps(first))):
        assert twin == first
        assert type(twin.model_fields_set) is set


def test_built_messages_are_frozen_and_serialize_as_validated_ones() -> None:
    built = tool_text_message("ok", "call_1", "execute_bash")
    with pytest.raises(ValueError, match="frozen"):
        built.name = "other"  # type: ignore[misc]
    validated = validate(
        {"role": "tool", "content": [{"type": "text", "text": "ok"}], "tool_call_id": "call_1", "name": "execute_bash"}
    )
    assert built.model_dump() == validated.model_dump()
    assert built.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    assert built.to_litellm_dict() == validated.to_litellm_dict()
    assert Message.model_validate(built) is built


def test_a_message_with_new_content_is_the_copy_model_copy_makes() -> None:
    assert anatomy(marked_text_part("hi", True)) == anatomy(TextContent(text="hi", cache_prompt=True))
    content = (marked_text_part("\n\nhi", False),)
    for message in (text_message("user", "hi"), Message(role="user", content=(TextContent(text="hi"),))):
        assert anatomy(with_content(message, content)) == anatomy(message.model_copy(update={"content": content}))
    no_content_set = Message(role="user")
    assert anatomy(with_content(no_content_set, content)) == anatomy(no_content_set.model_copy(update={"content": content}))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda obs: setattr(obs.tool_call_metadata, "tool_call_id", 7), "tool_call_metadata.tool_call_id is a int"),
        (lambda obs: setattr(obs.tool_call_metadata, "function_name", None), "tool_call_metadata.function_name is a NoneType"),
        (lambda obs: setattr(obs, "content", ["out"]), "content is a list"),
    ],
)
def test_a_field_set_to_a_non_string_after_the_event_was_built_is_named_not_sent(change: Any, named: str) -> None:
    """Assignment is not validated and the builders do not validate: the renderer checks what they trust."""
    from openhands_memory.conversation_memory import ConversationMemory
    from openhands_memory.errors import MalformedEventError
    from openhands_memory.events import CmdOutputObservation, CmdRunAction, MessageAction, ToolCallMetadata

    call = ToolCallMetadata(function_name="execute_bash", tool_call_id="call_1")
    events = [
        MessageAction(content="task", source="user"),
        CmdRunAction(command="ls", source="agent", tool_call_metadata=call),
        CmdOutputObservation(content="out", command="ls", source="environment", tool_call_metadata=call.model_copy()),
    ]
    for number, event in enumerate(events):
        event.id = number
    memory = ConversationMemory("system")
    assert memory.process_events(events, events[0])[-1].tool_call_id == "call_1"  # as built: fine
    change(events[2])
    with pytest.raises(MalformedEventError, match=f"id 2.*{named}"):
        ConversationMemory("system").process_events(events, events[0])
