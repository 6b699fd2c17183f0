"""What a model sent, made into values an event can store: cleaned once, every change counted."""

from __future__ import annotations

import math
import re

import orjson
import pytest
from hypothesis import example, given

from openhands_memory.llm._storable import (
    MAX_ARGUMENT_DEPTH,
    MAX_RESPONSE_DEPTH,
    argument_problem,
    clean_text,
    load_json,
    storable,
)
from openhands_memory.testing.model_output import hostile_values


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


def test_a_value_events_can_hold_is_returned_itself_with_no_repairs() -> None:
    value = {"id": "r1", "choices": [{"message": {"content": "caf\u00e9 \U0001f600", "n": 2**64 - 1}}], "x": -(2**63)}
    cleaned, repairs = storable(value)
    assert cleaned is value and not repairs and repairs.notes() == ()


def test_each_kind_of_value_orjson_refuses_is_cleaned_and_counted() -> None:
    value = {
        "text": "a\ud800b\udfff",
        "big": [2**64, -(2**63) - 1],
        "nan": [math.nan, math.inf],
        1: "int key",
        "set": frozenset({1}),
        "deep": _nested(MAX_RESPONSE_DEPTH + 5),
    }
    cleaned, repairs = storable(value)
    orjson.dumps({"a": {"b": {"c": cleaned}}})  # and three levels down in an event, as a model_response is
    assert cleaned["text"] == "a\ufffdb\ufffd"
    assert cleaned["big"] == [str(2**64), str(-(2**63) - 1)] and cleaned["nan"] == [None, None] and cleaned["1"] == "int key"
    assert repairs.notes() == (
        "2 lone surrogate(s) replaced with U+FFFD",
        "2 integer(s) beyond 64 bits written as text",
        f"1 value(s) nested deeper than {MAX_RESPONSE_DEPTH} levels replaced with a note",
        "1 non-string key(s) written as text",
        "1 value(s) JSON cannot hold written as text",
        "2 non-finite number(s) written as null",
    )


def test_a_surrogate_pair_written_in_two_halves_is_joined_not_replaced() -> None:
    assert clean_text("\ud83d\ude00") == "\U0001f600"
    assert clean_text("\ud83d") == "\ufffd"


def test_a_joined_pair_is_a_repair_so_that_no_repairs_means_the_value_itself() -> None:
    cleaned, repairs = storable({"text": "x\ud83d\ude00y\ud800"})
    assert cleaned == {"text": "x\U0001f600y\ufffd"}
    assert repairs.notes() == ("1 lone surrogate(s) replaced with U+FFFD", "1 surrogate pair(s) written in two halves joined")


# Found by hypothesis (issue 40): a pair in two halves was joined and not counted, so `storable`
# returned a changed value with no repairs (and a caller that keeps its input when there are none
# would keep the halves, which no event can store).
@example(value="\ud800\udc00")
@given(hostile_values())
def test_any_value_becomes_json_an_event_can_hold_and_read_back(value: object) -> None:
    cleaned, repairs = storable(value)
    written = orjson.dumps({"tool_call_metadata": {"model_response": {"extra": cleaned}}})
    assert orjson.dumps(orjson.loads(written)) == written
    if not repairs:
        assert cleaned is value


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"a": _nested(MAX_ARGUMENT_DEPTH)}, f"the arguments are nested deeper than {MAX_ARGUMENT_DEPTH} levels"),
        ({"event_id": 2**64}, "the arguments hold an integer beyond 64 bits (18446744073709551616), which no event can store"),
        ({"limit": [1, {"x": -(2**63) - 1}]}, "the arguments hold an integer beyond 64 bits (-9223372036854775809), which no event can store"),
    ],
)
def test_arguments_no_event_could_hold_are_named(arguments: dict[str, object], problem: str) -> None:
    assert argument_problem(arguments) == problem


def test_arguments_an_event_can_hold_have_no_problem() -> None:
    assert argument_problem({"a": _nested(MAX_ARGUMENT_DEPTH - 1), "n": 2**64 - 1, "ok": True}) is None


@pytest.mark.parametrize(("text", "message"), [("NaN", "NaN is not JSON"), ("[-Infinity]", "-Infinity is not JSON"), ("1e400", "1e400 is beyond the range of a float")])
def test_json_is_read_strictly(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        load_json(text)
    assert load_json('{"a": 1.5e300}') == {"a": 1.5e300}
