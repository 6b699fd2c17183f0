"""The messages rendering makes, built without pydantic validation from values already checked.

Rendering makes a message or two for every event of a view, and a fresh memory renders every
event: validating each message's nested dict cost about as much as all the rest of rendering, and
right after a garbage collection (cold caches) pydantic-core's first call alone took some 50 µs.
Every value given here is already of its field's type (a field of an event model, or checked
here), so these build the very instance pydantic would: the same field values, the same fields
set, no extra, no private attributes. Instances of the same shape share one fields set, which
cannot be changed in place (as loaded events share theirs); a copy gets a set of its own.
`tests/conversation_memory/test_messages.py` checks each builder against validation.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from openhands_memory.events.base import SharedFieldsSet
from openhands_memory.llm.message import Content, Message, Role, TextContent, ToolCall, ToolCallFunction

# What pydantic-core does to make an instance, from Python: a new object, then its `__dict__` (the
# fields) and the three slots of `BaseModel`. (Calling the slots' descriptors directly is a third
# cheaper than `object.__setattr__`.) `_made` does it; the two builders that run for almost every
# event write the steps out (a call per object; moving the others to `_made` measured no slower).
_new = object.__new__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__

# The fields sets validation gives: `TextContent(text=...)`, and a text part validated from
# `{"type": "text", "text": ...}` (which is how a tool result's and a tool call's text are built).
_TEXT_SET = SharedFieldsSet(("text",))
_TYPED_TEXT_SET = SharedFieldsSet(("type", "text"))
_MARKED_TEXT_SET = SharedFieldsSet(("text", "cache_prompt"))
_PLAIN_SET = SharedFieldsSet(("role", "content"))
_RESULT_SET = SharedFieldsSet(("role", "content", "tool_call_id", "name"))
_CALLS_SET = SharedFieldsSet(("role", "content", "tool_calls"))
_FUNCTION_SET = SharedFieldsSet(("name", "arguments"))
_CALL_SET = SharedFieldsSet(("id", "function"))
_TYPED_CALL_SET = SharedFieldsSet(("id", "type", "function"))


def _made(cls: type[BaseModel], fields: dict[str, Any], fields_set: set[str]) -> Any:
    """An instance of `cls` with these fields, as pydantic-core makes one (the two builders that run
    for almost every event, `tool_text_message` and `calls_message`, write these steps out)."""
    made = _new(cls)
    _set_dict(made, fields)
    _set_fields_set(made, fields_set)
    _set_extra(made, None)
    _set_private(made, None)
    return made


def text_part(text: str) -> TextContent:
    """`TextContent(text=text)`."""
    return _made(TextContent, {"type": "text", "text": text, "cache_prompt": False}, _TEXT_SET)  # type: ignore[no-any-return]


def typed_text_part(text: str) -> TextContent:
    """The text part validated from `{"type": "text", "text": text}`."""
    return _made(TextContent, {"type": "text", "text": text, "cache_prompt": False}, _TYPED_TEXT_SET)  # type: ignore[no-any-return]


def marked_text_part(text: str, cache_prompt: bool) -> TextContent:
    """`TextContent(text=text, cache_prompt=cache_prompt)`."""
    return _made(TextContent, {"type": "text", "text": text, "cache_prompt": cache_prompt}, _MARKED_TEXT_SET)  # type: ignore[no-any-return]


def with_content(message: Message, content: tuple[Content, ...]) -> Message:
    """`message.model_copy(update={"content": content})`, for a message whose fields set has `content`."""
    if "content" not in message.model_fields_set:
        return message.model_copy(update={"content": content})
    fields = dict(message.__dict__)
    fields["content"] = content
    fields_set = message.model_fields_set
    return _made(Message, fields, fields_set if type(fields_set) is SharedFieldsSet else set(fields_set))  # type: ignore[no-any-return]


def plain_message(role: Role, content: tuple[Content, ...]) -> Message:
    """`Message(role=role, content=content)`."""
    fields = {"role": role, "content": content, "tool_calls": None, "tool_call_id": None, "name": None}
    return _made(Message, fields, _PLAIN_SET)  # type: ignore[no-any-return]


def text_message(role: Role, text: str) -> Message:
    """`Message(role=role, content=(TextContent(text=text),))`."""
    return plain_message(role, (text_part(text),))


def tool_result(content: tuple[Content, ...], call_id: str, name: str) -> Message:
    """`Message(role="tool", content=content, tool_call_id=call_id, name=name)`."""
    fields = {"role": "tool", "content": content, "tool_calls": None, "tool_call_id": call_id, "name": name}
    return _made(Message, fields, _RESULT_SET)  # type: ignore[no-any-return]


def tool_text_message(text: str, call_id: str, name: str) -> Message:
    """`tool_result((typed_text_part(text),), call_id, name)`, in one step (the most common message)."""
    part = _new(TextContent)
    _set_dict(part, {"type": "text", "text": text, "cache_prompt": False})
    _set_fields_set(part, _TYPED_TEXT_SET)
    _set_extra(part, None)
    _set_private(part, None)
    message = _new(Message)
    _set_dict(message, {"role": "tool", "content": (part,), "tool_calls": None, "tool_call_id": call_id, "name": name})
    _set_fields_set(message, _RESULT_SET)
    _set_extra(message, None)
    _set_private(message, None)
    return message  # type: ignore[no-any-return]


def calls_message(content: tuple[Content, ...], raw_calls: list[Any]) -> tuple[Message, tuple[str, ...]] | None:
    """The assistant message validated from `{"role": "assistant", "content": content, "tool_calls": raw_calls}`,
    where `raw_calls` are a recorded response's tool calls; None when one of them is not plainly
    well formed (the caller validates those, which keeps or rejects them as validation does). The
    message comes with its calls' ids, in order.

    Keys a call or its function has beyond the model's (litellm's `index`) are ignored, as
    validation ignores them.
    """
    calls = []
    ids = []
    for raw in raw_calls:
        if type(raw) is not dict:
            return None
        call_id = raw.get("id")
        function = raw.get("function")
        if type(call_id) is not str or type(function) is not dict:
            return None
        name = function.get("name")
        arguments = function.get("arguments")
        if type(name) is not str or type(arguments) is not str:
            return None
        if "type" in raw:
            kind = raw["type"]
            if type(kind) is not str or kind != "function":
                return None
            fields_set = _TYPED_CALL_SET
        else:
            fields_set = _CALL_SET
        called = _new(ToolCallFunction)
        _set_dict(called, {"name": name, "arguments": arguments})
        _set_fields_set(called, _FUNCTION_SET)
        _set_extra(called, None)
        _set_private(called, None)
        call = _new(ToolCall)
        _set_dict(call, {"id": call_id, "type": "function", "function": called})
        _set_fields_set(call, fields_set)
        _set_extra(call, None)
        _set_private(call, None)
        calls.append(call)
        ids.append(call_id)
    message = _new(Message)
    fields = {"role": "assistant", "content": content, "tool_calls": tuple(calls), "tool_call_id": None, "name": None}
    _set_dict(message, fields)
    _set_fields_set(message, _CALLS_SET)
    _set_extra(message, None)
    _set_private(message, None)
    return message, tuple(ids)
