"""Reading big logs in bounded memory: JSONL lines and the elements of a JSON list, a chunk at a time.

A log can be gigabytes (a SWE-bench run's `output.jsonl`); reading it whole and splitting it holds
the file twice before the first event is built. These readers hold one chunk (and the record that
spans its end), so memory stays constant in the number of events.
"""

from __future__ import annotations

import gc
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from openhands_memory.events.base import RawJson

CHUNK = 1 << 18
"""Bytes read at a time: 256 KiB reads as fast as 1 MiB, and the chunk and its lines are a peak of their own."""


_LINE_END = re.compile(rb"\r\n|\r|\n")
"""A line ends with `\\n`, `\\r\\n` or a lone `\\r` (old Mac files, some editors): a JSON record holds none of
them raw (JSON escapes them in strings), so each is a line end, never part of a record."""


def split_lines(data: bytes) -> list[bytes]:
    """`data.split(b"\\n")` for every line end (`\\n`, `\\r\\n`, `\\r`): the lines without their ends, then
    what follows the last line end (b"" when `data` ends with one)."""
    return _LINE_END.split(data) if b"\r" in data else data.split(b"\n")


def iter_lines(read: Callable[[int], bytes]) -> Iterator[tuple[int, bytes, bool]]:
    """Yield `(line number, line, ended by a line end)` for every line `read(n)` delivers, blank ones too.

    `read(n)` returns up to n bytes, b"" at the end. Lines end as `split_lines` says (`\\n`, `\\r\\n`
    or `\\r`; the end is not part of the line). The last line is yielded (with False) only when it is
    not empty, as `split_lines` would leave it.
    """
    for number, lines, ended in iter_line_batches(read):
        for line in lines:
            yield number, line, ended
            number += 1


def iter_line_batches(read: Callable[[int], bytes]) -> Iterator[tuple[int, list[bytes], bool]]:
    """`iter_lines` a chunk at a time: yield `(number of the first line, the lines, ended by a line end)`.

    Every line of a batch ends with a line end, but the last line of the file when it has none: it
    comes alone, with False. A reader that handles a batch with one call (`map`) makes no Python step
    per line.
    """
    number = 1
    pending: list[bytes] = []  # the start of a line longer than one chunk
    after_cr = False  # the last chunk ended with \r: a \n first in this one ends the same line
    while True:
        chunk = read(CHUNK)
        if not chunk:
            break
        if after_cr:
            after_cr = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        has_cr = b"\r" in chunk
        if not has_cr and b"\n" not in chunk:
            if chunk:
                pending.append(chunk)
            continue
        lines = _LINE_END.split(chunk) if has_cr else chunk.split(b"\n")
        after_cr = chunk.endswith(b"\r")
        if pending:
            pending.append(lines[0])
            lines[0] = b"".join(pending)
            pending = []
        rest = lines.pop()
        yield number, lines, True
        number += len(lines)
        if rest:
            pending.append(rest)
    if pending:
        yield number, [b"".join(pending)], False


class ElementError(Exception):
    """An element of a JSON list is not valid JSON; `offset` is where it starts."""

    def __init__(self, reason: str, offset: int, index: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset
        self.index = index


class ListShapeError(Exception):
    """The bytes are not a JSON list of objects and arrays; `offset` is where that was seen."""

    def __init__(self, reason: str, offset: int, index: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset
        self.index = index


_STRUCTURE = re.compile(rb'["\[\]{}]')
_SEPARATOR = re.compile(rb"\s*,?\s*")
_SPACE = re.compile(rb"\s*")
_MISSING = object()
_GUESSES = 4
"""Ends guessed for one element before it is scanned exactly (a few of a log's events need 3)."""
# Where an element (an object) most likely ends: a `}` followed by the next element or the list's end.
# Starting with a literal lets the regex engine skip ahead to each `}`: nine times faster than `[}\]]`.
_GUESS_END = re.compile(rb"\}(?=\s*(?:,\s*[\[{]|\]\s*\Z))")


def iter_list_elements(read: Callable[[int], bytes]) -> Iterator[Any]:
    """Yield each element of a top-level JSON list of objects (or arrays), parsed, in order.

    An element usually ends at the first `}` followed by `,` and the next object (or by `]`): that
    guess is parsed as is, and since no proper prefix of a JSON object parses, a guess that parses is
    the element. Only when it does not (such a `}, {` inside a string or a nested list) is the
    element scanned byte-exactly, string by string; scanning every string was twice as slow.

    Time is linear in the file size, however big one element is: the buffer grows in place, and a
    search that ran out of bytes goes on from where it stopped when the next chunk comes (starting
    again from the element's start made a 100 MB element take minutes).

    Raises:
        ListShapeError: the document is not a list, an element is not an object or array, the
            separators between elements are wrong, or the list is not closed.
        ElementError: an element is not valid JSON (`index` says which).
    """
    buf = bytearray()  # grows in place: `bytes += chunk` copied the whole buffer for every chunk
    base = 0  # file offset of buf[0]
    eof = False

    def more() -> bool:
        nonlocal eof
        if eof:
            return False
        chunk = read(CHUNK)
        if not chunk:
            eof = True
            return False
        buf.extend(chunk)
        return True

    more()
    start = _SPACE.match(buf).end()
    while start == len(buf) and more():
        start = _SPACE.match(buf).end()
    if start == len(buf) or buf[start : start + 1] != b"[":
        raise ListShapeError("not a JSON list", base + start, 0)
    pos = start + 1
    index = 0
    depth = 0  # inside the current element
    element = -1  # where the current element starts in buf
    gap = pos  # where the bytes between elements start
    while True:
        match = _STRUCTURE.search(buf, pos)
        if match is None:
            pos = len(buf)  # nothing here: the next search starts with the next chunk
            if not more():
                raise ListShapeError("the list is not closed", base + len(buf), index)
            continue
        at = match.start()
        char = buf[at]
        if char == 0x22:  # '"'
            if depth == 0:
                raise ListShapeError("a list element is a string, not an event object", base + at, index)
            end = _string_end(buf, at + 1)
            while end < 0:
                # The string (or an escape in it) goes on in the next chunk; only the new bytes are searched.
                searched = len(buf)
                if not more():
                    raise ListShapeError("a string is not closed", base + at, index)
                end = _string_end(buf, searched)
            pos = end
            continue
        if char in b"[{":
            if depth == 0:
                between = buf[gap:at]
                expected = _SPACE if index == 0 else _SEPARATOR
                if expected.fullmatch(between) is None or (index and b"," not in between):
                    raise ListShapeError("expected ',' and an event object between list elements", base + gap, index)
                parsed = _MISSING
                guess_from = at
                for _ in range(_GUESSES):
                    guess = _GUESS_END.search(buf, guess_from)
                    while not eof and (guess is None or buf[_SPACE.match(buf, guess.end()).end()] == 0x5D):
                        # None yet, or an end of the list that may only be the end of this chunk: search
                        # again from the last `}` that more bytes could still make an end (or from here).
                        guess_from = guess.start() if guess is not None else _guess_resume(buf, guess_from)
                        more()
                        guess = _GUESS_END.search(buf, guess_from)
                    if guess is None:
                        break
                    try:
                        parsed = orjson.loads(buf[at : guess.end()])
                        break
                    except orjson.JSONDecodeError:
                        guess_from = guess.end()
                if parsed is not _MISSING:
                    yield parsed
                    index += 1
                    pos = gap = guess.end()
                    if pos > CHUNK:
                        del buf[:pos]
                        base += pos
                        gap = pos = 0
                    continue
                element = at
            depth += 1
            pos = at + 1
            continue
        # ']' or '}'
        if depth == 0:
            if char != 0x5D or _SPACE.fullmatch(buf[gap:at]) is None:
                raise ListShapeError("expected an event object or the end of the list", base + gap, index)
            pos = at + 1
            while True:
                tail = _SPACE.match(buf, pos).end()
                if tail < len(buf):
                    raise ListShapeError("more data after the list", base + tail, index)
                pos = tail
                if not more():
                    return
        depth -= 1
        pos = at + 1
        if depth == 0:
            try:
                yield orjson.loads(buf[element:pos])
            except orjson.JSONDecodeError as exc:
                raise ElementError(f"invalid JSON: {exc.msg}", base + element, index) from exc
            index += 1
            gap = pos
            if pos > CHUNK:
                # Drop what has been handed out, so the buffer holds about one chunk.
                del buf[:pos]
                base += pos
                gap = pos = 0


def _string_end(buf: bytearray, start: int) -> int:
    """Where the string whose body includes `start` ends (just after its closing quote), or -1 if not in `buf`.

    `start` is in the string's body, outside an escape. A quote is the closing one when an even number
    of backslashes precede it; counting them stops at the opening quote at the latest.
    """
    while True:
        quote = buf.find(b'"', start)
        if quote < 0:
            return -1
        before = quote
        while buf[before - 1] == 0x5C:  # '\\'
            before -= 1
        if (quote - before) % 2 == 0:
            return quote + 1
        start = quote + 1


# What may follow a `}` for it to still become an element's end once more bytes come.
_GUESS_TAIL = frozenset(b" \t\r\n,]")


def _guess_resume(buf: bytearray, start: int) -> int:
    """Where to search for an element's end again after `_GUESS_END` found none from `start` in `buf`.

    Only a `}` followed by nothing but separators up to the end of `buf` could still match once more
    bytes come; the search resumes there, or at the end.
    """
    at = len(buf)
    while at > start and buf[at - 1] in _GUESS_TAIL:
        at -= 1
    if at > start and buf[at - 1] == 0x7D:  # '}'
        return at - 1
    return at


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many objects that hold no cycles.

    Parsed JSON and events never refer to themselves; collecting while they are built made
    loading a big log twice as slow, for nothing to collect.

    On the way out, what was built moves to the oldest generation (`gc.freeze()` then
    `gc.unfreeze()`, which moves lists, not objects): left young, the first collection after the
    pause would walk every object just built (a fifth of opening a 200k-event log) only to find
    them alive. They are still collected as usual by full collections. Skipped when something is
    frozen already (`gc.unfreeze()` would thaw it) or the collector was off.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


class ResponseSharer:
    """Let equal `model_response` objects of nearby events share one value.

    OpenHands copies a model response onto the action and its observation, and onto every
    parallel call: a loaded log held each copy apart. Only responses equal to a recent one with
    the same id are shared, so the events are exactly what they were; `recent` bounds the memory.
    """

    def __init__(self, recent: int = 64) -> None:
        self._recent: OrderedDict[Any, dict[str, Any]] = OrderedDict()
        self._size = recent
        self._raw: OrderedDict[bytes, RawJson] = OrderedDict()

    def share(self, record: Any) -> None:
        """Replace the record's `tool_call_metadata.model_response` with an equal one seen before."""
        if type(record) is not dict:
            return
        metadata = record.get("tool_call_metadata")
        if type(metadata) is not dict:
            return
        response = metadata.get("model_response")
        if type(response) is not dict:
            return
        key = response.get("id")
        if type(key) is not str:
            return
        seen = self._recent.get(key)
        if seen is not None and seen is not response and seen == response:
            metadata["model_response"] = seen
            return
        self._recent[key] = response
        if len(self._recent) > self._size:
            self._recent.popitem(last=False)

    def loads(self, line: bytes) -> Any:
        """`orjson.loads(line)` of a compact JSONL line, with the tool call's `model_response` left as
        the bytes it was written as (`RawJson`), shared with an equal recent one; and shared as
        `share` does.

        The response is kept raw only when its bytes are exactly what `orjson.dumps` writes for it (so
        writing it back changes nothing); any other line is parsed whole, and a line that is not
        JSON raises the very error `orjson.loads(line)` raises.
        """
        record = self._loads_raw(line)
        if record is None:
            record = orjson.loads(line)
            self.share(record)
        return record

    def _loads_raw(self, line: bytes) -> Any:
        start = line.find(_RESPONSE_KEY)
        if start < 0:
            return None
        begin = start + len(_RESPONSE_KEY)
        end = line.find(_AFTER_RESPONSE, begin)
        if end < 0 or line[begin : begin + 1] != b"{" or _PLACEHOLDER in line:
            return None
        segment = line[begin:end]
        kept = self._raw.get(segment)
        if kept is None:
            try:
                response = orjson.loads(segment)
            except orjson.JSONDecodeError:
                return None
            if type(response) is not dict or orjson.dumps(response) != segment:
                return None
            kept = RawJson(segment, response.get("id") if response else None)
            self._raw[segment] = kept
            if len(self._raw) > self._size:
                self._raw.popitem(last=False)
        try:
            record = orjson.loads(line[:begin] + _PLACEHOLDER + line[end:])
        except orjson.JSONDecodeError:
            return None
        metadata = record.get("tool_call_metadata") if type(record) is dict else None
        # The key found must be the metadata's own (not one inside another object of the line): the
        # placeholder, which the line did not hold, is where the response was.
        if type(metadata) is not dict or metadata.get("model_response") != _PLACEHOLDER_VALUE:
            return None
        metadata["model_response"] = kept
        return record


# OpenHands writes `tool_call_metadata` as function_name, tool_call_id, model_response,
# total_calls_in_response; inside a JSON string a quote is escaped, so neither can occur there.
_RESPONSE_KEY = b'"model_response":'
_AFTER_RESPONSE = b',"total_calls_in_response":'
_PLACEHOLDER = b'"\\u0000model_response"'
_PLACEHOLDER_VALUE = "\x00model_response"
