"""Which agent wrote a log, told by its content (never by its file name), and the reader for it.

OpenHands' own layouts (V0 events, the old flattened form, SDK events) are read by
`serialization`; a log of another agent is handed to its reader here:

| format | told by | reader |
|---|---|---|
| Claude Code session JSONL | most records are `user` / `assistant` / `system` records with a `uuid` (or `summary` records) | `_claude_code` |
| Codex CLI rollout JSONL | most records are `{timestamp, type, payload}` with a `RolloutItem` type | `_codex` |
| SWE-agent `.traj` | one object whose `history` holds chat messages or whose `trajectory` holds steps | `_swe_agent` |
| mini-swe-agent `.traj.json` | one object with `messages` and a mini-swe-agent `trajectory_format` (or `info.mini_version`), or a bare list of chat messages | `_mini_swe_agent` |

A file that is none of these and holds no OpenHands event is refused (`refusal`) with what was
found in it, rather than read as something it is not.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from openhands_memory.errors import MalformedEventError
from openhands_memory.events._claude_code import import_claude_code, is_claude_code_record
from openhands_memory.events._codex import import_codex, is_codex_record
from openhands_memory.events._reading import gc_paused, iter_line_batches
from openhands_memory.events._mini_swe_agent import import_mini_swe_agent, is_mini_swe_agent_trajectory
from openhands_memory.events._swe_agent import import_swe_agent, is_swe_agent_trajectory
from openhands_memory.events.base import Event

__all__ = ["FORMATS", "log_format", "recorded_model", "detect_document", "detect_records", "read_document", "read_jsonl", "read_records", "refusal"]

FORMATS = ("openhands", "claude-code", "codex", "swe-agent", "mini-swe-agent")
"""The formats `load_events` reads, by the names warnings and `bench` use."""

_SAMPLE = 1000
"""How many records of a JSONL file tell its format."""

_OPENHANDS_KEYS = frozenset({"action", "observation", "kind"})


def log_format(events: Sequence[Event]) -> str:
    """The format a loaded log was read from: another agent's (its first event's `imported_from`,
    which an importer sets and `convert` keeps), else `openhands`."""
    if events:
        extra = events[0].__pydantic_extra__ or {}
        fmt = extra.get("imported_from")
        if isinstance(fmt, str) and fmt in FORMATS:
            return fmt
    return "openhands"


def recorded_model(events: Sequence[Event]) -> str | None:
    """The agent's model another agent's log records (None for an OpenHands log, or none recorded).

    The importers keep each response's model on its events (`model`: Claude Code's `message.model`,
    Codex's `turn_context`, SWE-agent's and mini-swe-agent's configs): the one most responses name
    (the first named on a tie). Claude Code's `<synthetic>` (its own messages, no model asked) is no model.
    `replay`, `view`, `bench` and `report` price such a log for it when no `--model` is given.
    """
    if log_format(events) == "openhands":
        return None
    named: Counter[str] = Counter()
    for event in events:
        extra = event.__pydantic_extra__
        model = extra.get("model") if extra else None
        if isinstance(model, str) and model and model != "<synthetic>":
            named[model] += 1
    return named.most_common(1)[0][0] if named else None


def detect_document(document: Any) -> str | None:
    """The format of a file that is one JSON document, when it is another agent's (else None)."""
    if is_mini_swe_agent_trajectory(document):
        return "mini-swe-agent"
    if is_swe_agent_trajectory(document):
        return "swe-agent"
    return None


def detect_records(records: list[Any]) -> str | None:
    """The format of a JSONL file's records, when most of them are another agent's (else None).

    The first `_SAMPLE` records decide: a session's kind shows from its start, and a big log is not
    walked twice.
    """
    objects = [record for record in records[:_SAMPLE] if isinstance(record, dict)]
    if not objects:
        return None
    claude = sum(1 for record in objects if is_claude_code_record(record))
    codex = sum(1 for record in objects if is_codex_record(record))
    if claude * 2 > len(objects):
        return "claude-code"
    if codex * 2 > len(objects):
        return "codex"
    return None


def read_document(fmt: str, document: Any, *, path: str | os.PathLike[str]) -> list[Event]:
    """The events of a one-document file of format `fmt` (from `detect_document`)."""
    with gc_paused():
        if fmt == "mini-swe-agent":
            return import_mini_swe_agent(document, path=path)
        return import_swe_agent(document, path=path)


def read_records(fmt: str, records: list[Any], lines: list[int] | None, *, path: str | os.PathLike[str]) -> list[Event]:
    """The events of a JSONL file's records of format `fmt` (from `detect_records`)."""
    with gc_paused():  # many objects, no cycles (see `gc_paused`)
        if fmt == "claude-code":
            return import_claude_code(records, lines, path=path)
        return import_codex(records, lines, path=path)


def read_jsonl(read: Callable[[int], bytes], *, path: str | os.PathLike[str]) -> list[Event] | None:
    """The events of another agent's JSONL log, parsed a chunk at a time (`read(n)` as `iter_lines` takes
    it); None when it is not one, or is unusual: a line that is not JSON, a last line without its
    newline, a single record. The whole-file reader then tells those apart and names any error.

    Reading the whole file first held it three times over (the bytes, its lines, the records): a
    100 MB session peaked at 560 MB, and the page faults of that memory were a tenth of the load.
    """
    records: list[Any] = []
    lines: list[int] = []
    loads = orjson.loads
    fmt = None
    with gc_paused():  # many objects, no cycles (see `gc_paused`)
        for number, batch, ended in iter_line_batches(read):
            if not ended:
                if batch[0].strip():
                    return None
                continue
            sampled = len(records) >= _SAMPLE
            try:
                if all(batch):  # no empty line: one call parses the batch
                    records.extend(map(loads, batch))
                    lines.extend(range(number, number + len(batch)))
                else:
                    for at, line in enumerate(batch, start=number):
                        if line and not line.isspace():
                            records.append(loads(line))
                            lines.append(at)
            except orjson.JSONDecodeError:
                return None  # (a line of white space too: the whole-file reader skips it)
            if not sampled and len(records) >= _SAMPLE and detect_records(records) is None:
                return None  # not another agent's log: read no further
        if len(records) < 2:
            return None  # one record may be a whole document (a trajectory on one line)
        fmt = detect_records(records)
        if fmt is None:
            return None
        return read_records(fmt, records, lines, path=path)


def holds_openhands_events(records: list[Any]) -> bool:
    """Whether any record has an OpenHands event's key (`action`, `observation`, or an SDK `kind`)."""
    return any(isinstance(record, dict) and _OPENHANDS_KEYS & record.keys() for record in records)


def refusal(found: Any, *, path: str | os.PathLike[str], jsonl: bool) -> MalformedEventError:
    """The error for a file of no format read here, saying what was found in it."""
    return MalformedEventError(
        f"not a log of any format read here (OpenHands events, Claude Code, Codex, SWE-agent, mini-swe-agent): {describe(found, jsonl=jsonl)}; "
        "an OpenHands log is a list of events, an object with 'trajectory' or 'history', or JSONL of events",
        path=path,
    )


def describe(found: Any, *, jsonl: bool) -> str:
    """What a file holds, in a few words: the shape, the keys, the `type` values of JSONL records."""
    if jsonl:
        records = found
        types = Counter(str(r.get("type")) for r in records if isinstance(r, dict) and "type" in r)
        first = records[0] if records else None
        text = f"JSONL of {len(records)} record(s)"
        if isinstance(first, dict):
            text += f"; the first has keys {_keys(first)}"
        elif records:
            text += f"; the first is a {_kind(first)}"
        if types:
            text += "; 'type' values " + ", ".join(f"{t!r} x{n}" for t, n in types.most_common(5))
        return text
    if isinstance(found, dict):
        return f"a JSON object with keys {_keys(found)}"
    if isinstance(found, list):
        if not found:
            return "an empty JSON list"
        first = found[0]
        inner = f"an object with keys {_keys(first)}" if isinstance(first, dict) else f"a {_kind(first)}"
        return f"a JSON list of {len(found)} element(s), the first {inner}"
    return f"a JSON {_kind(found)}"


def _keys(record: dict[str, Any]) -> str:
    keys = sorted(map(str, record))
    return "[" + ", ".join(repr(k) for k in keys[:8]) + (", ...]" if len(keys) > 8 else "]")


def _kind(value: Any) -> str:
    return {str: "string", int: "number", float: "number", bool: "boolean", list: "list", dict: "object"}.get(type(value), "null")
