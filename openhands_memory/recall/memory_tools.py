"""The agent's memory tools, `context_reload` and `search_history`: their schemas, calls, arguments and result text.

Only what depends on the events is here; `openhands_memory.recall.runtime` runs the tools against a
stream and its search index, and `History.run_memory_tool` records the calls and their results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final

from openhands_memory.events import (
    Action,
    AgentFinishAction,
    AgentThinkAction,
    BrowseInteractiveAction,
    BrowseURLAction,
    CmdRunAction,
    ContextReloadAction,
    Event,
    FileReadAction,
    FileWriteAction,
    IPythonRunCellAction,
    MessageAction,
    Observation,
    SearchHistoryAction,
    SystemMessageAction,
    ToolCallMetadata,
    event_to_dict,
)

CONTEXT_RELOAD: Final = "context_reload"
"""The name of the tool that shows an event of the log as it was logged."""
SEARCH_HISTORY: Final = "search_history"
"""The name of the tool that searches the whole log."""
MEMORY_TOOL_NAMES: Final = frozenset({CONTEXT_RELOAD, SEARCH_HISTORY})
"""The names of the memory tools."""
DEFAULT_SEARCH_LIMIT: Final = 5
"""How many matches `search_history` returns when the model does not say."""
MAX_SEARCH_LIMIT: Final = 50
"""The most matches one `search_history` call may ask for."""
DEFAULT_RELOAD_CHARS: Final = 16_000
"""How many characters of an event `context_reload` shows when the model does not say (a page; about 4,000 tokens)."""
MAX_RELOAD_CHARS: Final = 64_000
"""The largest page one `context_reload` call may ask for."""
MAX_ARGUMENT_DEPTH: Final = 16
"""The deepest nesting of JSON arrays and objects accepted in a memory tool's arguments (they need one level)."""
ECHO_CHARS: Final = 200
"""At most this much of what the model wrote (arguments, a query) is quoted back in a result."""
_INT64 = range(-(2**63), 2**63)
"""Integers a log can hold (JSON writers and readers agree on 64 bits)."""
_FLAT_PAIR = re.compile(r"\[[^\[\]{}]*\]|\{[^\[\]{}]*\}")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")

# The one field that says what an action did, by kind; other kinds are shown by all their arguments.
_MAIN_FIELD: Final[dict[type[Action], str]] = {
    MessageAction: "content",
    SystemMessageAction: "content",
    CmdRunAction: "command",
    IPythonRunCellAction: "code",
    FileWriteAction: "content",
    FileReadAction: "path",
    BrowseURLAction: "url",
    BrowseInteractiveAction: "browser_actions",
    AgentThinkAction: "thought",
    AgentFinishAction: "final_thought",
    SearchHistoryAction: "query",
}


def memory_tool_schemas() -> list[dict[str, Any]]:
    """The litellm (OpenAI function-calling) schemas of `context_reload` and `search_history`, fresh copies."""
    return [
        {
            "type": "function",
            "function": {
                "name": CONTEXT_RELOAD,
                "description": (
                    "Show the original content of one event of this conversation, exactly as it was logged: "
                    "a command's full output, a file as it was read, a message. Use it for an event that was "
                    "forgotten, summarized or shortened (a preview that says characters were offloaded gives "
                    "its event_id), or to find an id with search_history first. A long event comes in pages "
                    f"of `limit` characters ({DEFAULT_RELOAD_CHARS} by default): the answer says how many "
                    "characters remain and the offset of the next page."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "event_id": {"type": "integer", "description": "The id of the event to show."},
                        "offset": {
                            "type": "integer",
                            "description": "The first character to show (the next_offset of the page before).",
                            "default": 0,
                            "minimum": 0,
                        },
                        "limit": {
                            "type": "integer",
                            "description": f"How many characters to show at most, 1 to {MAX_RELOAD_CHARS}.",
                            "default": DEFAULT_RELOAD_CHARS,
                            "minimum": 1,
                            "maximum": MAX_RELOAD_CHARS,
                        },
                    },
                    "required": ["event_id"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": SEARCH_HISTORY,
                "description": (
                    "Search the whole history of this conversation, forgotten events included, by words they "
                    "contain (a file name, an error message, a test id, a command). Returns the best matches "
                    "first, each with its event_id, its kind, whether it is still in your view, and a snippet; "
                    "call context_reload with an event_id to see one in full."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "The words to look for."},
                        "limit": {
                            "type": "integer",
                            "description": f"How many matches to return, 1 to {MAX_SEARCH_LIMIT}.",
                            "default": DEFAULT_SEARCH_LIMIT,
                            "minimum": 1,
                            "maximum": MAX_SEARCH_LIMIT,
                        },
                        "before_event_id": {
                            "type": "integer",
                            "description": "Search only the events older than this event_id (leave it out to search them all).",
                        },
                    },
                    "required": ["query"],
                },
            },
        },
    ]


@dataclass(frozen=True, slots=True)
class MemoryToolCall:
    """A tool call read from a litellm tool-call dict or a `ToolCall`: its id, tool name and arguments text."""

    id: str
    """The call's id, which its result carries back."""
    name: str
    """The tool called."""
    arguments: str
    """The arguments, as the JSON text the model wrote."""


def read_tool_call(tool_call: Any) -> MemoryToolCall | str:
    """The call in `tool_call` (a litellm tool-call dict, this library's `ToolCall`, or litellm's object), or why it is not one."""
    if isinstance(tool_call, Mapping):
        call_id, function = tool_call.get("id"), tool_call.get("function")
    else:
        call_id, function = getattr(tool_call, "id", None), getattr(tool_call, "function", None)
    if isinstance(function, Mapping):
        name, arguments = function.get("name"), function.get("arguments")
    else:
        name, arguments = getattr(function, "name", None), getattr(function, "arguments", None)
    if not isinstance(call_id, str) or not call_id:
        return "the tool call has no id"
    if not isinstance(name, str) or not name:
        return f"the tool call {call_id!r} names no function"
    if arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        # Some providers hand the arguments over already parsed.
        try:
            arguments = json.dumps(arguments, ensure_ascii=False)
        except (TypeError, ValueError):
            return f"the arguments of the tool call {call_id!r} are not JSON"
    return MemoryToolCall(call_id, name, arguments)


def tool_call_metadata(call: Any, response: Any = None) -> ToolCallMetadata:
    """The `ToolCallMetadata` of one tool call of a model response, as OpenHands records it on the action.

    `call` is a `ToolCall`, a litellm tool-call dict or a `MemoryToolCall`; `response` is the
    `LLMResponse` it came from, litellm's response as a dict, or None (no response recorded: the
    call is taken to be the only one of its response).
    """
    read = call if isinstance(call, MemoryToolCall) else read_tool_call(call)
    if isinstance(read, str):
        raise ValueError(read)
    model_response, total = _response_facts(response)
    return ToolCallMetadata(
        function_name=read.name,
        tool_call_id=read.id,
        model_response=model_response,
        total_calls_in_response=total,
    )


def _response_facts(response: Any) -> tuple[dict[str, Any] | None, int]:
    """(the response as litellm's JSON, how many tool calls it made) for an `LLMResponse` or a response dict."""
    if response is None:
        return None, 1
    if isinstance(response, Mapping):
        raw: Any = dict(response)
        calls = None
    else:
        raw = getattr(response, "raw", None)
        calls = getattr(response, "tool_calls", None)
        if raw is None and callable(getattr(response, "model_dump", None)):
            raw = response.model_dump()  # litellm's ModelResponse
    if not isinstance(raw, dict):
        raw = None
    if calls is None and raw is not None:
        choices = raw.get("choices")
        message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
    total = len(calls) if isinstance(calls, list | tuple) and calls else 1
    return raw, total


def parse_memory_call(call: MemoryToolCall) -> Action | str:
    """The action a memory tool call asks for, or what is wrong with the call (for the model to read).

    Arguments that have the right types make an action even when their values are wrong (an
    unknown id, an empty query, a limit out of range): its result says what is wrong.
    """
    arguments = call_arguments(call, MEMORY_TOOL_NAMES, "memory")
    if isinstance(arguments, str):
        return arguments
    if call.name == CONTEXT_RELOAD:
        event_id = arguments.get("event_id")
        if "event_id" not in arguments:
            return "context_reload needs an event_id (an integer)"
        if not _is_int(event_id):
            return f"event_id must be an integer, got {_echo_value(event_id)}"
        if event_id not in _INT64:
            return f"event_id {echo(str(event_id))} is out of range: event ids are 64-bit integers"
        page = {name: arguments.get(name) for name in ("offset", "limit")}
        for name, value in page.items():
            if value is not None and (not _is_int(value) or value not in _INT64):
                return f"{name} must be an integer (a number of characters), got {_echo_value(value)}"
        return ContextReloadAction(event_id=event_id, **page)
    query = arguments.get("query")
    if not isinstance(query, str):
        return "search_history needs a query (a string)" if query is None else f"query must be a string, got {_echo_value(query)}"
    surrogate = _SURROGATE.search(query)
    if surrogate is not None:
        return (
            f"query must be text: it holds a lone surrogate ({surrogate.group().encode('utf-8', 'backslashreplace').decode()}) "
            f"at character {surrogate.start()}, which no log can store"
        )
    limit = arguments.get("limit", DEFAULT_SEARCH_LIMIT)
    if limit is None:
        limit = DEFAULT_SEARCH_LIMIT
    if not _is_int(limit) or limit not in _INT64:
        return f"limit must be an integer from 1 to {MAX_SEARCH_LIMIT}, got {_echo_value(limit)}"
    before = arguments.get("before_event_id")
    if before is not None and not _is_int(before):
        return f"before_event_id must be an integer (an event_id), got {_echo_value(before)}"
    if before is not None and before not in _INT64:
        return f"before_event_id {echo(str(before))} is out of range: event ids are 64-bit integers"
    return SearchHistoryAction(query=query, limit=limit, before_event_id=before)


def call_arguments(call: MemoryToolCall, names: Collection[str], family: str) -> dict[str, Any] | str:
    """The JSON object of arguments of `call`, a call of one of the `family` tools `names`, or what is wrong with it."""
    if call.name not in names:
        known = " and ".join(sorted(names))
        return f"there is no {family} tool named '{echo(call.name, 60)}' (the {family} tools are {known})"
    arguments, problem = _load_arguments(call.arguments)
    if problem is not None:
        return problem
    if not isinstance(arguments, dict):
        return f"the arguments must be a JSON object, got {type(arguments).__name__}"
    return arguments


def _load_arguments(text: str) -> tuple[Any, str | None]:
    """(the arguments the model wrote, parsed; None) or (None, why they cannot be: not JSON, nested too deeply).

    The nesting is checked before parsing, without recursion: Python's JSON parser recurses once
    per level, and a model can write thousands of `[`.
    """
    depth = _nesting(text)
    if depth > MAX_ARGUMENT_DEPTH:
        return None, f"the arguments nest more than {MAX_ARGUMENT_DEPTH} levels of arrays and objects (memory tools take one)"
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, f"the arguments are not valid JSON ({exc})"
    except RecursionError:  # not reachable within MAX_ARGUMENT_DEPTH, unless the caller's stack is nearly full
        return None, "the arguments nest too deeply to be read"


def _nesting(text: str) -> int:
    """How deeply JSON arrays and objects nest in `text` (strings left out), at most `MAX_ARGUMENT_DEPTH` + 1.

    Innermost pairs are removed one level per pass (each pass a regular expression, in C).
    """
    if text.count("[") + text.count("{") <= 1:
        return text.count("[") + text.count("{")
    bare = _JSON_STRING.sub('""', text)
    for depth in range(MAX_ARGUMENT_DEPTH + 1):
        if not any(bracket in bare for bracket in "[]{}"):
            return depth
        flatter = _FLAT_PAIR.sub("0", bare)
        if flatter == bare:  # unbalanced: each bracket left open may be one more level for the parser
            return min(depth + bare.count("[") + bare.count("{"), MAX_ARGUMENT_DEPTH + 1)
        bare = flatter
    return MAX_ARGUMENT_DEPTH + 1


def echo(text: str, limit: int = ECHO_CHARS) -> str:
    """What the model wrote, safe to quote back in a result: at most `limit` characters, lone surrogates escaped."""
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return cut.encode("utf-8", "backslashreplace").decode("utf-8") if _SURROGATE.search(cut) else cut


def _echo_value(value: Any) -> str:
    """A JSON value of the arguments, quoted back: as JSON, cut to `ECHO_CHARS` (it may be huge or deep)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):
        text = type(value).__name__
    return echo(text)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def search_arguments_problem(action: SearchHistoryAction) -> str | None:
    """What is wrong with a search's query or limit, or None."""
    if not action.query.strip():
        return "search_history needs a non-empty query: the words to look for"
    if not 1 <= action.limit <= MAX_SEARCH_LIMIT:
        return f"limit must be from 1 to {MAX_SEARCH_LIMIT}, got {action.limit}"
    return None


def reload_arguments_problem(action: ContextReloadAction) -> str | None:
    """What is wrong with a reload's page (a negative offset, a page size out of range), or None."""
    if action.offset is not None and action.offset < 0:
        return f"offset must be 0 or more (a number of characters), got {action.offset}"
    if action.limit is not None and not 1 <= action.limit <= MAX_RELOAD_CHARS:
        return f"limit must be from 1 to {MAX_RELOAD_CHARS} characters, got {action.limit}"
    return None


def reload_page(action: ContextReloadAction, text: str, heading: str) -> str | None:
    """The answer of `context_reload` for an event whose content is `text`: `heading` (`event 3: run observation,
    forgotten`) and the page asked for; None when the offset is past the end of `text`.

    An event that fits in one page from its start is shown whole, headed as it always was; a page of a
    longer one says which characters it holds, how many remain and the offset of the next page.
    """
    offset = action.offset or 0
    size = action.limit if action.limit is not None else DEFAULT_RELOAD_CHARS
    total = len(text)
    if offset == 0 and total <= size:
        return f"[{heading}; its content as logged follows]\n{text}"
    if offset >= total:
        return None
    end = min(total, offset + size)
    remaining = total - end
    rest = (
        f"{remaining:,} character{'s remain' if remaining != 1 else ' remains'}: call context_reload with offset={end} for the next page"
        if remaining
        else "nothing remains after it"
    )
    return f"[{heading}; characters {offset:,} to {end:,} of its {total:,} as logged follow; {rest}]\n{text[offset:end]}"


def reload_text(event: Event) -> str:
    """The original content of an event, exactly as logged.

    The rule: an observation's `content`; for an action, the one field that says what it did
    (a message's or a written file's `content`, a command, a cell's `code`, a read's `path`, a
    URL, browser actions, a thought, a finish's `final_thought`, a search's `query`) when it is
    not empty, else all its arguments as JSON (edits, MCP calls, condensations, unknown kinds...).
    """
    if isinstance(event, Observation):
        return event.content
    assert isinstance(event, Action)
    for cls in type(event).__mro__:
        field = _MAIN_FIELD.get(cls)  # type: ignore[call-overload]
        if field is not None:
            text = getattr(event, field, "")
            if isinstance(text, str) and text:
                return text
            break
    args = event_to_dict(event).get("args", {})
    return json.dumps(args, ensure_ascii=False, default=str)


def describe(event: Event) -> str:
    """How a result names an event's kind: `run observation`, `message action`, ... (a kind read from a log cut short)."""
    kind = event.kind if len(event.kind) <= 60 else event.kind[:59] + "…"
    return f"{kind} {event.kind_key}"
