"""What a model sent, made into values an event can store.

A provider's answer is untrusted input: JSON may carry what our JSONL log cannot write (orjson
refuses lone surrogates, integers beyond 64 bits, nesting past 254 levels, keys that are not
strings), and a completion function may return any Python object. Whatever the model says ends
up in an event (the reply's text in a `MessageAction`, the whole response as a tool call's
`model_response`, a summary in a `CondensationAction`), so `LLM` cleans each response here,
once, before anything reads it. Every change is counted and reported (`Repairs`), never silent.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

import orjson

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "MAX_RESPONSE_DEPTH",
    "Repairs",
    "argument_problem",
    "clean_text",
    "load_json",
    "storable",
]

MAX_RESPONSE_DEPTH: Final = 200
"""The deepest nesting kept in a response: an event holds it three levels down
(`tool_call_metadata.model_response`), within the 254 levels orjson writes."""

MAX_ARGUMENT_DEPTH: Final = 64
"""The deepest nesting a tool call's arguments may have: a controller puts them into an event's
fields, and no real tool takes anything deeper."""

_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**64 - 1  # orjson writes signed and unsigned 64-bit integers

_NOTES: Final[Mapping[str, str]] = {
    "surrogate": "lone surrogate(s) replaced with U+FFFD",
    "pair": "surrogate pair(s) written in two halves joined",
    "integer": "integer(s) beyond 64 bits written as text",
    "depth": f"value(s) nested deeper than {MAX_RESPONSE_DEPTH} levels replaced with a note",
    "key": "non-string key(s) written as text",
    "type": "value(s) JSON cannot hold written as text",
    "number": "non-finite number(s) written as null",
}


class Repairs(Counter[str]):
    """What cleaning changed, by kind (`surrogate`, `pair`, `integer`, `depth`, `key`, `type`, `number`)."""

    def notes(self) -> tuple[str, ...]:
        """One line per kind of change, with its count: `2 lone surrogate(s) replaced with U+FFFD`."""
        return tuple(f"{self[kind]} {_NOTES[kind]}" for kind in _NOTES if self[kind])


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def clean_text(text: str, repairs: Repairs | None = None) -> str:
    """`text` with lone surrogates replaced by U+FFFD and pairs written in two halves joined, counted in `repairs`."""
    if not _has_surrogate(text):
        return text
    cleaned = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if repairs is not None:
        # Nothing is lost in a pair joined, but the text changed: counted, so that no change is silent
        # and `storable` returns the value itself exactly when it has no repairs.
        replaced = cleaned.count("\ufffd") - text.count("\ufffd")
        joined = len(text) - len(cleaned)  # two code units become one character
        if replaced:
            repairs["surrogate"] += replaced
        if joined:
            repairs["pair"] += joined
    return cleaned


def _depth_over(value: Any, limit: int) -> bool:
    """Whether lists and dicts nest deeper than `limit` in `value` (iterative: any depth is safe)."""
    return _first_over(value, limit, floats=False)


def _first_over(value: Any, limit: int, *, floats: bool) -> bool:
    """Whether `value` nests deeper than `limit`, or (with `floats`) holds NaN or an infinity,
    which orjson writes as null: what it reads back would differ."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            if floats and isinstance(item, float) and not math.isfinite(item):
                return True
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _int_text(value: int) -> str:
    try:
        return str(value)
    except ValueError:  # more digits than Python writes (sys.get_int_max_str_digits)
        return f"<an integer of {value.bit_length()} bits>"


def _clean(value: Any, depth: int, repairs: Repairs) -> Any:
    if isinstance(value, str):
        return clean_text(value, repairs)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        repairs["number"] += 1
        return None
    if isinstance(value, int):
        if _INT_MIN <= value <= _INT_MAX:
            return int(value)
        repairs["integer"] += 1
        return _int_text(value)
    if isinstance(value, Mapping | list | tuple) and depth >= MAX_RESPONSE_DEPTH:
        repairs["depth"] += 1
        return f"[nested deeper than {MAX_RESPONSE_DEPTH} levels]"
    if isinstance(value, Mapping):
        cleaned: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                repairs["key"] += 1
                key = _int_text(key) if isinstance(key, int) and not isinstance(key, bool) else str(key)
            cleaned[clean_text(key, repairs)] = _clean(item, depth + 1, repairs)
        return cleaned
    if isinstance(value, list | tuple):
        return [_clean(item, depth + 1, repairs) for item in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return _clean(dump(), depth, repairs)
        except Exception:  # a model object that cannot dump itself is written as text below
            pass
    repairs["type"] += 1
    try:
        text = str(value)
    except Exception:  # an object whose __str__ fails: its type is all we can say
        text = f"<{type(value).__name__}>"
    return clean_text(text, repairs)


def storable(value: Any) -> tuple[Any, Repairs]:
    """`value` as JSON any event can hold, and what had to change (nothing: `value` itself is returned).

    Lone surrogates become U+FFFD, integers beyond 64 bits their decimal text, NaN and infinities
    null (as orjson would write them, but said), keys text, values JSON has no form for their
    text, and containers past `MAX_RESPONSE_DEPTH` levels a note.
    """
    repairs = Repairs()
    try:
        orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        pass
    else:
        if not _first_over(value, MAX_RESPONSE_DEPTH, floats=True):
            return value, repairs
    return _clean(value, 0, repairs), repairs


def argument_problem(value: Any) -> str | None:
    """Why a tool call's parsed arguments cannot go into an event, or None: too deep, or an integer beyond 64 bits."""
    if _depth_over(value, MAX_ARGUMENT_DEPTH):
        return f"the arguments are nested deeper than {MAX_ARGUMENT_DEPTH} levels"
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, int) and not _INT_MIN <= item <= _INT_MAX:
            digits = _int_text(item)
            shown = digits if len(digits) <= 40 else digits[:40] + "..."
            return f"the arguments hold an integer beyond 64 bits ({shown}), which no event can store"
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # Python's reader takes NaN and Infinity; JSON has neither


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):  # read as inf, it would be written as null
        raise ValueError(f"{text[:40]} is beyond the range of a float")
    return number


def load_json(text: str) -> Any:
    """JSON text as a value, strictly: NaN, Infinity and numbers beyond a float's range are errors.

    Raises:
        ValueError: not JSON (`json.JSONDecodeError`, or one of the above).
        RecursionError: nested too deeply for Python's reader.
    """
    return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
