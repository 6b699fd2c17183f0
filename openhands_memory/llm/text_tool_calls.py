"""Tool calls as plain text, for models without native function calling.

The same conversation that native function calling sends as `tool_calls` and `tool` messages is
rendered for such a model as text: the tools are described at the end of the system prompt, each
call is written into the assistant's text as

    <function=execute_bash>
    <parameter=command>ls -la</parameter>
    </function>

and each tool result becomes a user message that starts with `EXECUTION RESULT of [execute_bash]:`.
The tags and that prefix are OpenHands' (so a model that learned them from OpenHands behaves the
same); the wording of the instructions is ours. The model's text reply is parsed back into tool
calls by `parse_text_tool_calls`, which never raises: text it cannot read simply has no calls.

Differences from OpenHands' converter: non-string scalar arguments are written as JSON (`true`,
`3`), not Python (`True`), so they read back as what they were; several calls in one reply are all
parsed (OpenHands reads the first); unknown tools and parameters are returned as called rather
than rejected (the tool layer answers them with an error, as it does for native calls); no
in-context example is added to the first user message.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from openhands_memory.llm._storable import Repairs, argument_problem, clean_text, load_json, storable
from openhands_memory.llm.message import Content, Message, TextContent, ToolCall, ToolCallFunction

logger = logging.getLogger(__name__)

__all__ = [
    "TEXT_TOOL_CALL_STOP_WORDS",
    "TextToolCallConverter",
    "TextToolCallReply",
    "describe_tools",
    "parse_text_tool_calls",
    "text_tool_calls_system_suffix",
    "tool_call_to_text",
    "to_text_tool_calls",
]

ToolSpec = Mapping[str, Any]
"""A tool definition as the chat APIs take it: `{"type": "function", "function": {name, description, parameters}}`."""

TEXT_TOOL_CALL_STOP_WORDS: tuple[str, ...] = ("</function",)
"""Stop sequences that end the model's reply right after its call (the parser restores the cut tag)."""

RESULT_PREFIX = "EXECUTION RESULT of [{name}]:\n"
"""How a tool result starts when it is sent as a user message (OpenHands' wording)."""

_FORMAT_HELP = """\
To call a function, reply with the call in exactly this form, and write nothing after it:

<function=function_name>
<parameter=first_parameter>value</parameter>
<parameter=second_parameter>
a value may span
several lines
</parameter>
</function>

Rules:
- A call starts with <function= and ends with </function>.
- Give every required parameter.
- Make one function call per reply.
- You may explain your reasoning in plain text before the call, but not after it.
- If no function fits, answer in plain text and do not mention the functions.
"""

_FUNCTION_RE = re.compile(r"<function=([^>\n]+)>(.*?)</function>", re.DOTALL)
_PARAMETER_RE = re.compile(r"<parameter=([^>\n]+)>(.*?)</parameter>", re.DOTALL)
# Some models write `<parameter=name=value</parameter>`; read it as `<parameter=name>value</parameter>`.
_MALFORMED_PARAMETER_RE = re.compile(r"<parameter=([A-Za-z0-9_]+)=([^<>]*)</parameter>")


class TextToolCallReply(BaseModel):
    """A model's text reply, split into its prose and the tool calls written in it."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    content: str
    """The text before the first call (all of it when there is no call), stripped when calls were found."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The calls, in the order written."""
    repairs: tuple[str, ...] = ()
    """What was changed so that events can store the reply (lone surrogates replaced), one line per kind."""


def _tool_functions(tools: Iterable[ToolSpec] | None) -> dict[str, Mapping[str, Any]]:
    functions: dict[str, Mapping[str, Any]] = {}
    for tool in tools or ():
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            functions.setdefault(function["name"], function)
    return functions


def _properties(function: Mapping[str, Any]) -> Mapping[str, Any]:
    parameters = function.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    return properties if isinstance(properties, Mapping) else {}


def describe_tools(tools: Iterable[ToolSpec]) -> str:
    """A plain-text description of each tool: its name, description and parameters."""
    blocks = []
    for number, (name, function) in enumerate(_tool_functions(tools).items(), start=1):
        lines = [f"---- FUNCTION {number}: {name} ----", f"Description: {function.get('description', '')}"]
        properties = _properties(function)
        if properties:
            parameters = function.get("parameters") or {}
            required = set(parameters.get("required") or ())
            lines.append("Parameters:")
            for index, (param, info) in enumerate(properties.items(), start=1):
                info = info if isinstance(info, Mapping) else {}
                kind = _json_type(info) or "string"
                status = "required" if param in required else "optional"
                lines.append(f"  ({index}) {param} ({kind}, {status}): {info.get('description', '')}".rstrip())
                if isinstance(info.get("enum"), list):
                    lines.append("      Allowed values: " + ", ".join(f"`{v}`" for v in info["enum"]))
        else:
            lines.append("This function takes no parameters.")
        lines.append(f"---- END FUNCTION {number} ----")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def text_tool_calls_system_suffix(tools: Iterable[ToolSpec]) -> str:
    """What is appended to the system prompt: the tools, and how to call them in text."""
    return f"\n\nYou can call the following functions.\n\n{describe_tools(tools)}\n\n{_FORMAT_HELP}"


def _render_value(value: Any) -> str:
    if isinstance(value, str):
        # A value with a line break goes on lines of its own; the parser drops those two breaks.
        return f"\n{value}\n" if "\n" in value else value
    return json.dumps(value, ensure_ascii=False)


def tool_call_to_text(call: ToolCall) -> str:
    """One call in the text form (`<function=...>` ... `</function>`)."""
    lines = [f"<function={call.function.name}>"]
    try:
        arguments = json.loads(call.function.arguments) if call.function.arguments.strip() else {}
    except ValueError:
        arguments = None
    if isinstance(arguments, dict):
        for name, value in arguments.items():
            lines.append(f"<parameter={name}>{_render_value(value)}</parameter>")
    else:
        # Not a JSON object (the model wrote something odd): show it as it was written.
        lines.append(f"<parameter=arguments>{_render_value(call.function.arguments)}</parameter>")
    lines.append("</function>")
    return "\n".join(lines)


def _json_type(info: Mapping[str, Any]) -> str | None:
    kind = info.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def _decode_value(raw: str, info: Any, repairs: Repairs) -> Any:
    value = raw[1:] if raw.startswith("\n") else raw
    value = value[:-1] if value.endswith("\n") else value
    kind = _json_type(info) if isinstance(info, Mapping) else None
    if kind is None or kind == "string":
        return value
    text = value.strip()
    decoded: Any = value
    try:
        if kind == "integer":
            decoded = int(text)
        elif kind == "number":
            number = load_json(text)
            decoded = number if isinstance(number, int | float) and not isinstance(number, bool) else value
        elif kind == "boolean":
            decoded = {"true": True, "false": False}.get(text.lower(), value)
        elif kind in ("array", "object"):
            parsed = load_json(text)
            decoded = parsed if isinstance(parsed, list if kind == "array" else dict) else value
    except (ValueError, RecursionError):  # (too deep to read is as unreadable as bad JSON)
        return value
    # A value no event could store (nested too deep, an integer beyond 64 bits) stays the text written.
    if argument_problem(decoded) is not None:
        return value
    # JSON escapes can spell what the text could not hold (`"\ud800"`): clean what they decoded to.
    cleaned, changed = storable(decoded)
    repairs.update(changed)
    return cleaned


def _new_call_id() -> str:
    return f"toolu_{uuid.uuid4().hex[:24]}"


def parse_text_tool_calls(
    text: str | None,
    tools: Iterable[ToolSpec] | None = None,
    *,
    make_id: Callable[[], str] | None = None,
) -> TextToolCallReply:
    """The tool calls written in a model's text reply, and the text before them.

    Arguments are typed by the tool's JSON schema when `tools` names the function (integers,
    numbers, booleans, arrays and objects are decoded; a value that does not decode stays a
    string, and so does one no event could store: nested deeper than 64 levels, an integer beyond
    64 bits); otherwise they stay strings. A last call cut off by a stop word (no `</function>`)
    is read to the end of the text. Lone surrogates are replaced with U+FFFD (logged, and listed
    in `repairs`), so the content and every call can go into an event. Never raises: text with no
    readable call gives no calls.

    Args:
        text: the reply's text (None reads as empty).
        tools: the tool definitions the model was offered, for typing the arguments.
        make_id: makes each call's id; a random `toolu_...` id by default.
    """
    repairs = Repairs()
    text = clean_text(text or "", repairs)  # each string below comes from it: clean once
    start = text.find("<function=")
    if start < 0:
        return TextToolCallReply(content=text, repairs=_noted(repairs))
    functions = _tool_functions(tools)
    new_id = make_id or _new_call_id
    body = text
    last_open = body.rfind("<function=")
    if body.find("</function>", last_open) < 0:
        # The stop word cut the closing tag off the last call.
        body = body[:-2] if body.endswith("</") else body
        body = body + ("" if body.endswith("\n") else "\n") + "</function>"
    calls = []
    for match in _FUNCTION_RE.finditer(body):
        name = match.group(1).strip()
        if not name:
            continue
        properties = _properties(functions.get(name, {}))
        arguments: dict[str, Any] = {}
        fields = _MALFORMED_PARAMETER_RE.sub(r"<parameter=\1>\2</parameter>", match.group(2))
        for param in _PARAMETER_RE.finditer(fields):
            param_name = param.group(1).strip()
            arguments[param_name] = _decode_value(param.group(2), properties.get(param_name), repairs)
        calls.append(
            ToolCall(
                id=new_id(),
                function=ToolCallFunction(name=name, arguments=json.dumps(arguments, ensure_ascii=False)),
            )
        )
    if not calls:
        return TextToolCallReply(content=text, repairs=_noted(repairs))
    return TextToolCallReply(content=text[:start].strip(), tool_calls=tuple(calls), repairs=_noted(repairs))


def _noted(repairs: Repairs) -> tuple[str, ...]:
    notes = repairs.notes()
    if notes:
        logger.warning("a text reply was changed so that events can store it: %s", "; ".join(notes))
    return notes


def _prefix_first_text(content: Sequence[Content], prefix: str) -> tuple[Content, ...]:
    for index, part in enumerate(content):
        if isinstance(part, TextContent):
            changed = part.model_copy(update={"text": prefix + part.text})
            return (*content[:index], changed, *content[index + 1 :])
    return (TextContent(text=prefix), *content)


def _append_to_last_text(content: Sequence[Content], suffix: str, *, lstrip: bool = False) -> tuple[Content, ...]:
    if content and isinstance(content[-1], TextContent):
        text = content[-1].text + suffix
        last = content[-1].model_copy(update={"text": text.lstrip() if lstrip else text})
        return (*content[:-1], last)
    return (*content, TextContent(text=suffix.lstrip() if lstrip else suffix))


class TextToolCallConverter:
    """Renders native tool-call messages in the text form, remembering what it converted.

    A message is converted once and the result reused while the same (immutable) message object
    comes back, so converting a conversation that grew by a step costs little.
    """

    def __init__(self, tools: Iterable[ToolSpec]) -> None:
        self.tools: list[ToolSpec] = list(tools)
        """The tool definitions described to the model."""
        self._suffix = text_tool_calls_system_suffix(self.tools)
        self._cache: dict[int, tuple[Message, tuple[Message, ...]]] = {}

    def convert(self, messages: Sequence[Message]) -> list[Message]:
        """The conversation in the text form.

        The system message gets the tool descriptions; an assistant message with calls becomes one
        assistant message per call (the first keeps the text), each followed by its result as an
        `EXECUTION RESULT of [name]:` user message; other messages are unchanged.
        """
        cache: dict[int, tuple[Message, tuple[Message, ...]]] = {}
        old = self._cache
        out: list[Message] = []
        waiting: dict[str, Message] = {}
        for message in messages:
            entry = old.get(id(message))
            if entry is None or entry[0] is not message:
                entry = (message, self._convert_one(message))
            cache[id(message)] = entry
            converted = entry[1]
            if message.role == "tool":
                held = waiting.pop(message.tool_call_id or "", None)
                if held is not None:
                    out.append(held)
                out.extend(converted)
                continue
            if waiting:
                out.extend(waiting.values())
                waiting.clear()
            if message.role == "assistant" and message.tool_calls:
                for tool_call, rendered in zip(message.tool_calls, converted, strict=True):
                    waiting.setdefault(tool_call.id, rendered)
            else:
                out.extend(converted)
        out.extend(waiting.values())
        self._cache = cache
        return out

    def _convert_one(self, message: Message) -> tuple[Message, ...]:
        if message.role == "system":
            return (message.model_copy(update={"content": _append_to_last_text(message.content, self._suffix)}),)
        if message.role == "tool":
            prefix = RESULT_PREFIX.format(name=message.name or "function")
            content = _prefix_first_text(message.content, prefix)
            return (Message(role="user", content=content),)
        if message.role == "assistant" and message.tool_calls:
            converted = []
            for index, call in enumerate(message.tool_calls):
                text = tool_call_to_text(call)
                if index == 0:
                    content = _append_to_last_text(message.content, "\n\n" + text, lstrip=True)
                else:
                    content = (TextContent(text=text),)
                converted.append(Message(role="assistant", content=content))
            return tuple(converted)
        return (message,)


def to_text_tool_calls(messages: Sequence[Message], tools: Iterable[ToolSpec]) -> list[Message]:
    """The conversation with tool calls as text (see `TextToolCallConverter.convert`)."""
    return TextToolCallConverter(tools).convert(messages)
