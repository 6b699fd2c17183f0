"""Hypothesis strategies for hostile model output: JSON-ish text and litellm-shaped responses (needs the `test` extra).

What a model sends is untrusted input (DESIGN invariant 8): these strategies make what a careless
or adversarial model, or a broken provider, can produce. Text that is almost JSON, nesting
hundreds of levels deep, integers beyond 64 bits, lone surrogates (as characters and as `\\ud800`
escapes), keys that are not strings, values of no JSON type, and responses whose every field may
have another shape than litellm's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

__all__ = ["hostile_json_texts", "hostile_values", "model_responses", "model_texts"]

_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
"""Lone surrogates: valid in a Python str and as a JSON escape, refused by a UTF-8 writer."""

_BIG_INTS = st.one_of(st.integers(min_value=2**64), st.integers(max_value=-(2**63) - 1), st.just(10**30))
"""Integers no 64-bit field holds (orjson refuses them)."""

model_texts = st.lists(st.one_of(st.characters(), _SURROGATES), max_size=60).map("".join)
"""Text as a model writes it, lone surrogates included (`st.text` leaves them out, whatever its alphabet)."""

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    _BIG_INTS,
    st.floats(allow_nan=True, allow_infinity=True),
    model_texts,
    st.sampled_from([b"\xff bytes", frozenset({1, 2}), object()]),  # what no JSON writer takes
)


def hostile_values(*, max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """JSON-ish values: scalars (big ints, lone surrogates, NaN), lists, dicts; sometimes nested hundreds deep."""
    shallow = st.recursive(
        _scalars,
        lambda inner: st.lists(inner, max_size=3)
        | st.dictionaries(model_texts, inner, max_size=3)
        | st.dictionaries(st.integers() | st.none(), inner, max_size=2),  # keys that are not strings
        max_leaves=max_leaves,
    )
    return st.one_of(shallow, st.builds(_nested, shallow, st.integers(1, 400), st.booleans()))


def _nested(value: Any, depth: int, as_list: bool) -> Any:
    for _ in range(depth):
        value = [value] if as_list else {"a": value}
    return value


def _dumped(value: Any) -> str:
    """`value` as JSON text: Python's writer takes big ints, surrogates (escaped) and NaN; what it refuses becomes its repr, as a string."""
    try:
        return json.dumps(value)
    except (RecursionError, ValueError, TypeError):  # too deep, or a value JSON has no form for
        return json.dumps(repr(value)[:200])


@st.composite
def _deep_texts(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 5_000))
    opening, closing = draw(st.sampled_from([("[", "]"), ('{"a": ', "}")]))
    closed = draw(st.booleans())
    return opening * depth + draw(st.sampled_from(["1", '"x"', "", "null"])) + (closing * depth if closed else "")


def hostile_json_texts() -> st.SearchStrategy[str]:
    """Text meant as JSON arguments: valid objects of hostile values, other JSON, near-JSON, deep nesting, garbage."""
    objects = st.dictionaries(st.sampled_from(["command", "query", "event_id", "limit", "path"]) | model_texts, hostile_values(), max_size=4)
    return st.one_of(
        objects.map(_dumped),
        hostile_values().map(_dumped),
        _deep_texts(),
        st.sampled_from(['{"query": "\\ud800"}', '{"event_id": 18446744073709551616}', '{"limit": 1e999}', "{", "", "  ", "null", '{"a": NaN}']),
        model_texts,
    )


def _mostly(usual: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`usual` seven times in eight, else `odd`: most answers keep litellm's shape, so what is inside them gets tested too."""
    return st.integers(0, 7).flatmap(lambda pick: usual if pick else odd)


def _arguments() -> st.SearchStrategy[Any]:
    plain = st.fixed_dictionaries({}, optional={name: model_texts for name in ("command", "query")}).map(json.dumps)
    return _mostly(plain, st.one_of(hostile_json_texts(), hostile_values(max_leaves=4)))


def _tool_calls(names: Sequence[str]) -> st.SearchStrategy[Any]:
    odd_name = st.one_of(st.sampled_from(["no_such_tool", ""]), model_texts, hostile_values(max_leaves=2))
    function = st.fixed_dictionaries(
        {"name": _mostly(st.sampled_from(names), odd_name) if names else odd_name, "arguments": _arguments()}
    )
    call = st.fixed_dictionaries(
        {
            "id": _mostly(st.from_regex(r"call_[a-z0-9]{1,3}", fullmatch=True), st.one_of(st.sampled_from(["", "dup"]), hostile_values(max_leaves=2))),
            "type": st.just("function"),
            "function": _mostly(function, hostile_values(max_leaves=2)),
        }
    )
    return _mostly(st.lists(call, max_size=3), hostile_values(max_leaves=3))


def model_responses(tool_names: Sequence[str] = ()) -> st.SearchStrategy[Any]:
    """What a completion function may return: litellm-shaped dicts whose every field may have another shape, or anything at all.

    Most keep litellm's shape (each field seven times in eight), so the text and tool calls inside
    them are reached too; the rest is any value (a list, None, an object).
    """
    message = st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "content": _mostly(st.one_of(model_texts, st.none()), hostile_values(max_leaves=3)),
            "tool_calls": _mostly(_tool_calls(tool_names), st.none()),
        },
        optional={"reasoning_content": st.one_of(model_texts, hostile_values(max_leaves=2))},
    )
    choice = st.fixed_dictionaries(
        {"index": st.just(0), "message": _mostly(message, hostile_values(max_leaves=2))},
        optional={"finish_reason": _mostly(st.sampled_from(["stop", "tool_calls", "length"]), hostile_values(max_leaves=1))},
    )
    response = st.fixed_dictionaries(
        {
            "id": _mostly(st.just("resp-1"), hostile_values(max_leaves=1)),
            "choices": _mostly(st.lists(choice, min_size=1, max_size=2), hostile_values(max_leaves=2)),
        },
        optional={
            "model": _mostly(st.just("fake-model"), hostile_values(max_leaves=1)),
            "usage": _mostly(
                st.fixed_dictionaries({"prompt_tokens": hostile_values(max_leaves=1), "completion_tokens": hostile_values(max_leaves=1)}),
                hostile_values(max_leaves=2),
            ),
            "extra": hostile_values(),
        },
    )
    return _mostly(response, st.one_of(hostile_values(max_leaves=3), st.builds(object)))
