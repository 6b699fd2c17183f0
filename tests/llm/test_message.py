"""Messages and their litellm dicts: list and string forms, images, caching marks, tool calls."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from openhands_memory.llm import ImageContent, Message, TextContent, ToolCall, ToolCallFunction, to_litellm_dicts

CALL = ToolCall(id="call_1", function=ToolCallFunction(name="execute_bash", arguments='{"command": "ls"}'))


def test_list_form_sends_text_parts_and_images_only_with_vision() -> None:
    message = Message(role="user", content=(TextContent(text="look"), ImageContent(image_urls=("u1", "u2"))))
    assert message.to_litellm_dict() == {"role": "user", "content": [{"type": "text", "text": "look"}]}
    assert message.to_litellm_dict(vision_enabled=True) == {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "u1"}},
            {"type": "image_url", "image_url": {"url": "u2"}},
        ],
    }


def test_string_form_joins_the_text_and_drops_images_and_marks() -> None:
    message = Message(
        role="user",
        content=(TextContent(text="a"), ImageContent(image_urls=("u",)), TextContent(text="b", cache_prompt=True)),
    )
    assert message.to_litellm_dict(string_content=True, vision_enabled=True) == {"role": "user", "content": "a\nb"}


def test_assistant_tool_calls_and_tool_results() -> None:
    assistant = Message(role="assistant", tool_calls=(CALL,))
    assert assistant.to_litellm_dict() == {
        "role": "assistant",
        "content": [],
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'}}
        ],
    }
    result = Message(role="tool", content=(TextContent(text="a.py"),), tool_call_id="call_1", name="execute_bash")
    assert result.to_litellm_dict(string_content=True) == {
        "role": "tool", "content": "a.py", "tool_call_id": "call_1", "name": "execute_bash"
    }  # fmt: skip


def test_cache_marks_go_on_parts_and_on_the_message_for_tool_results() -> None:
    user = Message(role="user", content=(TextContent(text="hi"),)).with_cache_prompt()
    assert user.to_litellm_dict()["content"] == [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]
    tool = Message(role="tool", content=(TextContent(text="out"),), tool_call_id="c", name="f").with_cache_prompt()
    serialized = tool.to_litellm_dict()
    assert serialized["cache_control"] == {"type": "ephemeral"}
    assert serialized["content"] == [{"type": "text", "text": "out"}]


def test_a_cache_mark_on_images_that_are_not_sent_moves_to_the_text() -> None:
    message = Message(
        role="user", content=(TextContent(text="look"), ImageContent(image_urls=("u",)))
    ).with_cache_prompt()
    assert message.content[-1].cache_prompt
    assert message.to_litellm_dict()["content"] == [
        {"type": "text", "text": "look", "cache_control": {"type": "ephemeral"}}
    ]
    with_images = message.to_litellm_dict(vision_enabled=True)["content"]
    assert "cache_control" not in with_images[0] and with_images[1]["cache_control"] == {"type": "ephemeral"}
    only_image = Message(role="user", content=(ImageContent(image_urls=("u",)), TextContent(text="t")))
    marked = only_image.model_copy(
        update={"content": (ImageContent(image_urls=("u",), cache_prompt=True), TextContent(text="t"))}
    )
    assert marked.to_litellm_dict()["content"] == [
        {"type": "text", "text": "t", "cache_control": {"type": "ephemeral"}}
    ]


def test_with_cache_prompt_leaves_the_original_alone() -> None:
    message = Message(role="user", content=(TextContent(text="hi"),))
    marked = message.with_cache_prompt()
    assert not message.content[0].cache_prompt and marked.content[0].cache_prompt
    assert marked.with_cache_prompt() is marked
    empty = Message(role="assistant")
    assert empty.with_cache_prompt() is empty


def test_messages_are_immutable_and_strict() -> None:
    message = Message(role="user", content=[TextContent(text="hi")])
    assert isinstance(message.content, tuple)
    with pytest.raises(ValidationError):
        message.role = "assistant"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Message(role="robot")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Message(role="user", colour="red")  # type: ignore[call-arg]


def test_content_parts_are_told_apart_by_type() -> None:
    message = Message.model_validate(
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_urls": ["u"]}]}
    )
    assert [type(p) for p in message.content] == [TextContent, ImageContent]
    assert message.contains_image and message.text == "a"


def test_tool_calls_validate_from_a_recorded_completion() -> None:
    recorded = {"index": 1, "id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert ToolCall.model_validate(recorded) == ToolCall(id="c", function=ToolCallFunction(name="f", arguments="{}"))


def test_to_litellm_dicts_serializes_each_message() -> None:
    messages = [
        Message(role="system", content=(TextContent(text="s"),)),
        Message(role="user", content=(TextContent(text="u"),)),
    ]
    assert to_litellm_dicts(messages, string_content=True) == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
    ]
