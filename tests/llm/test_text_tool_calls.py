"""Tool calls written as text for models without function calling: rendering, parsing, both ways."""

from __future__ import annotations

import json

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from openhands_memory.events import EventSource, MCPAction, MessageAction, ToolCallMetadata, event_from_json, event_to_json
from openhands_memory.llm import Message, TextContent, ToolCall, ToolCallFunction
from openhands_memory.llm._storable import argument_problem
from openhands_memory.testing.model_output import hostile_json_texts, model_texts
from openhands_memory.llm.text_tool_calls import (
    TEXT_TOOL_CALL_STOP_WORDS,
    TextToolCallReply,
    describe_tools,
    parse_text_tool_calls,
    to_text_tool_calls,
    tool_call_to_text,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "execute_bash",
            "description": "Run a bash command.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command."},
                    "timeout": {"type": "integer"},
                    "ratio": {"type": "number"},
                    "is_input": {"type": "boolean"},
                    "paths": {"type": "array"},
                    "env": {"type": "object"},
                    "mode": {"type": "string", "enum": ["a", "b"]},
                },
                "required": ["command"],
            },
        },
    },
    {"type": "function", "function": {"name": "finish", "description": "Stop."}},
]


def call(name: str, arguments: dict, call_id: str = "c1") -> ToolCall:
    return ToolCall(id=call_id, function=ToolCallFunction(name=name, arguments=json.dumps(arguments)))


def calls_of(text: str) -> list[tuple[str, dict]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in parse_text_tool_calls(text, TOOLS).tool_calls]


def test_a_call_renders_in_openhands_format() -> None:
    text = tool_call_to_text(
        call("execute_bash", {"command": "ls -la", "timeout": 5, "is_input": False, "paths": ["a"]})
    )
    assert text == (
        "<function=execute_bash>\n<parameter=command>ls -la</parameter>\n<parameter=timeout>5</parameter>\n"
        '<parameter=is_input>false</parameter>\n<parameter=paths>["a"]</parameter>\n</function>'
    )
    multiline = tool_call_to_text(call("execute_bash", {"command": "a\nb"}))
    assert "<parameter=command>\na\nb\n</parameter>" in multiline


def test_parsing_types_arguments_by_the_tool_schema() -> None:
    text = (
        "I will run it.\n<function=execute_bash>\n<parameter=command>\nls\n-la\n</parameter>\n"
        "<parameter=timeout> 30 </parameter>\n"
        "<parameter=ratio>0.5</parameter>\n<parameter=is_input>True</parameter>\n<parameter=paths>[1, 2]</parameter>\n"
        '<parameter=env>{"A": "1"}</parameter>\n<parameter=mode>a</parameter>\n</function>'
    )
    reply = parse_text_tool_calls(text, TOOLS)
    assert reply.content == "I will run it."
    (parsed,) = reply.tool_calls
    assert parsed.id.startswith("toolu_") and parsed.type == "function"
    assert json.loads(parsed.function.arguments) == {
        "command": "ls\n-la", "timeout": 30, "ratio": 0.5, "is_input": True, "paths": [1, 2], "env": {"A": "1"},
        "mode": "a",
    }  # fmt: skip


def test_values_that_do_not_fit_their_type_stay_strings() -> None:
    text = (
        "<function=execute_bash>\n<parameter=timeout>soon</parameter>\n<parameter=paths>[oops</parameter>\n</function>"
    )
    assert calls_of(text) == [("execute_bash", {"timeout": "soon", "paths": "[oops"})]


def test_a_call_cut_by_the_stop_word_is_completed() -> None:
    assert TEXT_TOOL_CALL_STOP_WORDS == ("</function",)
    assert calls_of("<function=execute_bash>\n<parameter=command>ls</parameter>\n") == [
        ("execute_bash", {"command": "ls"})
    ]
    assert calls_of("<function=finish>\n</") == [("finish", {})]


def test_malformed_parameter_tags_are_read() -> None:
    assert calls_of("<function=execute_bash>\n<parameter=command=pwd</parameter>\n</function>") == [
        ("execute_bash", {"command": "pwd"})
    ]


def test_several_calls_are_all_read_in_order_with_distinct_ids() -> None:
    text = "<function=execute_bash>\n<parameter=command>a</parameter>\n</function>\n<function=finish>\n</function>"
    reply = parse_text_tool_calls(text, TOOLS)
    assert [c.function.name for c in reply.tool_calls] == ["execute_bash", "finish"]
    assert len({c.id for c in reply.tool_calls}) == 2
    ids = iter(["x1", "x2"])
    assert [c.id for c in parse_text_tool_calls(text, make_id=lambda: next(ids)).tool_calls] == ["x1", "x2"]


def test_unknown_tools_are_returned_with_string_arguments() -> None:
    assert calls_of("<function=teleport>\n<parameter=to>mars</parameter>\n</function>") == [
        ("teleport", {"to": "mars"})
    ]


def test_text_without_a_call_is_all_content() -> None:
    reply = parse_text_tool_calls("  Just an answer.  ", TOOLS)
    assert reply.content == "  Just an answer.  " and reply.tool_calls == ()
    assert parse_text_tool_calls(None).content == ""


@settings(deadline=None)
@given(st.text())
def test_garbage_parses_to_no_calls_or_some_calls_without_raising(text: str) -> None:
    reply = parse_text_tool_calls(text, TOOLS)
    for parsed in reply.tool_calls:
        assert isinstance(json.loads(parsed.function.arguments), dict)


@settings(deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["<function=", "</function>", "<parameter=", "</parameter>", ">", "=", "\n", "x", "execute_bash", "</"]
        ),
        max_size=30,
    )
)
def test_tag_soup_never_raises(pieces: list[str]) -> None:
    parse_text_tool_calls("".join(pieces), TOOLS)


_safe_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30).filter(
    lambda s: "</parameter>" not in s and "</function>" not in s and "<parameter=" not in s and "<function=" not in s
)
_arguments = st.fixed_dictionaries(
    {"command": _safe_text},
    optional={
        "timeout": st.integers(-(10**6), 10**6),
        "ratio": st.floats(allow_nan=False, allow_infinity=False, width=32),
        "is_input": st.booleans(),
        "paths": st.lists(st.integers(-(2**63), 2**64 - 1) | _safe_text, max_size=3),  # (what an event can hold)
        "env": st.dictionaries(st.text(max_size=5), st.integers(-(2**63), 2**64 - 1), max_size=2),
        "mode": st.sampled_from(["a", "b"]),
    },
)


@settings(deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["execute_bash", "finish"]), _arguments), min_size=1, max_size=3), _safe_text)
def test_rendering_then_parsing_gives_back_the_same_calls(calls: list[tuple[str, dict]], prose: str) -> None:
    rendered = [call(name, args if name == "execute_bash" else {}) for name, args in calls]
    text = prose.strip() + "\n\n" + "\n".join(tool_call_to_text(c) for c in rendered)
    reply = parse_text_tool_calls(text, TOOLS)
    assert reply.content == prose.strip()
    assert [(c.function.name, json.loads(c.function.arguments)) for c in reply.tool_calls] == [
        (c.function.name, json.loads(c.function.arguments)) for c in rendered
    ]


_soup = st.sampled_from(["<function=", "</function>", "<parameter=", "</parameter>", ">", "\n", "=", "</"])
_parameter = st.builds(
    "<parameter={}>{}</parameter>\n".format,
    st.sampled_from(["command", "timeout", "ratio", "is_input", "paths", "env", "unknown"]) | model_texts,
    hostile_json_texts() | model_texts,
)
_written_call = st.builds(
    lambda name, parameters, closed: f"<function={name}>\n{''.join(parameters)}" + ("</function>" if closed else ""),
    st.sampled_from(["execute_bash", "finish", "no_such_tool"]) | model_texts,
    st.lists(_parameter, max_size=4),
    st.booleans(),
)
_model_text = st.lists(st.one_of(_written_call, _soup, model_texts), max_size=6).map("".join)
"""What a model without function calling writes: prose, calls in the text form with hostile names and
values (deep JSON, integers beyond 64 bits, lone surrogates), stray tags, a call cut off by the stop word."""


def _stored(reply: TextToolCallReply) -> list[bytes]:
    """What a controller would store of a parsed reply: its prose as a message, each call as an action
    holding its arguments as read, with the call's metadata; each written and read back."""
    events = [MessageAction(content=reply.content)]
    raw = {"id": "r1", "choices": [{"message": {"role": "assistant", "content": reply.content}}]}
    for parsed in reply.tool_calls:
        metadata = ToolCallMetadata(function_name=parsed.function.name, tool_call_id=parsed.id, model_response=raw)
        events.append(MCPAction(name=parsed.function.name, arguments=json.loads(parsed.function.arguments), tool_call_metadata=metadata))
    written = []
    for number, stored in enumerate(events):
        stored.id, stored.source = number, EventSource.AGENT
        data = event_to_json(stored)
        assert event_to_json(event_from_json(data)) == data
        written.append(data)
    return written


@given(_model_text)
def test_any_text_a_model_writes_parses_to_calls_an_event_can_store(text: str) -> None:
    reply = parse_text_tool_calls(text, TOOLS)
    event(f"calls: {min(len(reply.tool_calls), 2)}{'+' if len(reply.tool_calls) > 2 else ''}")
    if reply.repairs:
        event("repaired: lone surrogates")
    for parsed in reply.tool_calls:
        arguments = json.loads(parsed.function.arguments)
        assert isinstance(arguments, dict) and argument_problem(arguments) is None
    _stored(reply)


def test_values_no_event_could_hold_stay_the_text_written(caplog: pytest.LogCaptureFixture) -> None:
    deep = "[" * 70 + "]" * 70
    text = (
        "Half a pair: \ud83d.\n<function=execute_bash>\n<parameter=command>caf\udc00</parameter>\n"
        f"<parameter=timeout>{2**64}</parameter>\n<parameter=paths>{deep}</parameter>\n"
        f"<parameter=env>{{\"a\": {'[' * 5000}</parameter>\n<parameter=ratio>1e999</parameter>\n</function>"
    )
    reply = parse_text_tool_calls(text, TOOLS)
    assert reply.content == "Half a pair: \ufffd."
    assert json.loads(reply.tool_calls[0].function.arguments) == {
        "command": "caf\ufffd", "timeout": str(2**64), "paths": deep, "env": '{"a": ' + "[" * 5000, "ratio": "1e999",
    }  # fmt: skip
    assert reply.repairs == ("2 lone surrogate(s) replaced with U+FFFD",)
    assert "a text reply was changed so that events can store it: 2 lone surrogate(s)" in caplog.text
    _stored(reply)


def test_a_lone_surrogate_spelled_as_a_json_escape_in_a_value_is_replaced_too() -> None:
    # Found by the property above: the text is clean, but the object it holds decodes to "\ud800".
    text = '<function=execute_bash>\n<parameter=env>{"query": "\\ud800"}</parameter>\n'
    reply = parse_text_tool_calls(text, TOOLS)
    assert json.loads(reply.tool_calls[0].function.arguments) == {"env": {"query": "\ufffd"}}
    assert reply.repairs == ("1 lone surrogate(s) replaced with U+FFFD",)
    _stored(reply)


def test_describe_tools_lists_parameters_with_type_requirement_and_allowed_values() -> None:
    text = describe_tools(TOOLS)
    assert "---- FUNCTION 1: execute_bash ----\nDescription: Run a bash command.\nParameters:" in text
    assert "  (1) command (string, required): The command." in text
    assert "Allowed values: `a`, `b`" in text
    assert "---- FUNCTION 2: finish ----\nDescription: Stop.\nThis function takes no parameters." in text


def test_conversion_turns_results_into_prefixed_user_messages_and_keeps_images() -> None:
    from openhands_memory.llm import ImageContent

    system = Message(role="system", content=(TextContent(text="S"),))
    assistant = Message(
        role="assistant",
        content=(TextContent(text="Thinking."),),
        tool_calls=(call("execute_bash", {"command": "a"}, "c1"), call("finish", {}, "c2")),
    )
    first = Message(role="tool", content=(TextContent(text="A"),), tool_call_id="c1", name="execute_bash")
    second = Message(role="tool", content=(ImageContent(image_urls=("u",)),), tool_call_id="c2", name=None)
    out = to_text_tool_calls([system, assistant, first, second], TOOLS)
    assert [m.role for m in out] == ["system", "assistant", "user", "assistant", "user"]
    assert out[0].text.startswith("S\n\nYou can call the following functions.")
    assert out[1].text == "Thinking.\n\n<function=execute_bash>\n<parameter=command>a</parameter>\n</function>"
    assert out[2].text == "EXECUTION RESULT of [execute_bash]:\nA"
    assert out[3].text == "<function=finish>\n</function>"
    assert out[4].text == "EXECUTION RESULT of [function]:\n" and out[4].contains_image
    # Calls that get no result still show, before the next message.
    lonely = to_text_tool_calls(
        [system, Message(role="assistant", tool_calls=(call("finish", {}),)), Message(role="user")], TOOLS
    )
    assert [m.role for m in lonely] == ["system", "assistant", "user"]
