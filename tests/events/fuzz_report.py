"""Damaged OpenHands logs for every public loader, and a standalone run that counts how each answered.

An input is a short slice of a real log (`$OPENHANDS_MEMORY_LOGS` or `../shared/fixtures/openhands-logs`) or of a synthetic
session, laid out one way `load_events` reads (a JSON list, a `trajectory` or `history` wrapper,
JSONL, a session folder, the old flattened form; SDK logs as a list or JSONL), then damaged: keys
deleted, values of the wrong type, kinds swapped, huge numbers, NaN, deep nesting, records dropped
or repeated, bytes flipped, bad UTF-8, truncation, odd file names in a session folder.

Every loader must either load the input or raise the library's typed error naming the place (the
file, and the line or position when the problem is inside it); nothing else may escape. The
hypothesis tests in `test_fuzz_loading.py` check that; run this module alone for the numbers of a
longer run::

    python -m tests.events.fuzz_report --count 3000 [--seed 0]

All randomness comes from one `random.Random`, so hypothesis can drive (and shrink) it through
`st.randoms()`, and a seed reproduces a standalone run.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openhands_memory.errors import CorruptRecordError, MalformedEventError, OpenHandsMemoryError, StoreError
from openhands_memory.events import event_from_dict, event_from_json, event_to_json, load_events, load_session_folder
from openhands_memory.stream import EventStream, import_session_folder
from openhands_memory.testing.synthetic import synthetic_session_dicts

REAL_LOGS_DIR = Path(
    os.environ.get("OPENHANDS_MEMORY_LOGS", "").strip()
    or Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "openhands-logs"
).expanduser()
"""The real OpenHands logs (see INDEX.md there): `OPENHANDS_MEMORY_LOGS`, else ../shared, as the tests find them."""

MAX_SLICE = 24
"""The most records an input keeps from its log: enough for tool calls, condensations and batches."""

LAYOUTS = ("json", "trajectory", "history", "jsonl", "folder", "legacy")
"""How the records are written: what `load_events` must tell apart."""


# -- base logs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseLog:
    """A log to cut inputs from."""

    name: str
    records: list[Any]
    is_sdk: bool


def real_base_logs(folder: Path = REAL_LOGS_DIR) -> list[BaseLog]:
    """The real logs of `folder`, parsed (empty when the folder is missing)."""
    logs = []
    for path in sorted(folder.glob("*.json")):
        records = json.loads(path.read_bytes())
        logs.append(BaseLog(path.name, records, path.name.startswith("v1_")))
    return logs


def synthetic_base_logs() -> list[BaseLog]:
    """A few synthetic V0 sessions, with condensations and parallel tool calls."""
    return [
        BaseLog(f"synthetic-{seed}", synthetic_session_dicts(60, seed=seed, condense_every=20, parallel_every=3), False)
        for seed in range(3)
    ]


# -- raw JSON the records cannot hold as Python values ------------------------------------------


@dataclass(frozen=True)
class Raw:
    """A value written as literal JSON text (NaN, a 40-digit number, 5000 nested lists).

    `value` is what a Python caller of `event_from_dict` would pass for it.
    """

    text: str
    value: Any = field(compare=False, repr=False)


def _deep(depth: int, *, as_dict: bool) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = {"a": value} if as_dict else [value]
    return value


RAW_VALUES = (
    Raw("NaN", float("nan")),
    Raw("Infinity", float("inf")),
    Raw("-Infinity", float("-inf")),
    Raw("1" + "0" * 40, 10**40),
    Raw("-" + "9" * 25, -(10**25 - 1)),
    Raw("18446744073709551616", 2**64),
    Raw("1e400", float("inf")),
    Raw("[" * 5000 + "]" * 5000, _deep(4999, as_dict=False)),
    Raw('{"a":' * 3000 + "0" + "}" * 3000, _deep(3000, as_dict=True)),
    Raw("[" * 1030 + "]" * 1030, _deep(1029, as_dict=False)),
    Raw("[" * 1015 + "]" * 1015, _deep(1014, as_dict=False)),  # just within orjson's limit of 1024
    Raw('{"a":' * 1010 + "0" + "}" * 1010, _deep(1010, as_dict=True)),
)
"""Values orjson cannot read, or reads with a surprise (huge ints become floats)."""

WRONG_VALUES: tuple[Any, ...] = (
    None, True, False, 0, -1, 1.5, 2**63 - 1, -(2**63), "", "x", "0", "²", "\u0000", [], {}, [1, "a"],
    {"a": 1}, [[]], {"kind": "ActionEvent"}, {"action": "run"}, ["run"], "ActionEvent", "run", "agent",
)
"""Values of the wrong type (or a plausible value in the wrong place)."""

RECORD_KEYS = (
    "id", "timestamp", "source", "message", "cause", "action", "observation", "args", "extras", "content",
    "success", "timeout", "tool_call_metadata", "llm_metrics", "kind", "action_id", "tool_call_id", "tool_name",
    "llm_response_id", "llm_message", "thought", "forgotten_event_ids", "summary", "summary_offset",
    "forgotten_events_start_id", "forgotten_events_end_id", "command", "path", "system_prompt", "tools", "error",
)
"""Keys of V0 and SDK events, to build records of random shape from."""

KIND_NAMES = (
    "run", "read", "edit", "message", "system", "condensation", "condensation_request", "finish", "think",
    "recall", "null", "error", "mcp", "browse", "agent_state_changed", "change_agent_state", "delegate",
    "ActionEvent", "ObservationEvent", "MessageEvent", "SystemPromptEvent", "Condensation", "AgentErrorEvent",
    "CondensationRequest", "UserRejectObservation", "ExecuteBashAction", "TerminalObservation", "FileEditorAction",
)
"""Kind names of both generations, to swap in where another kind was."""

BAD_BYTES = (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x00", b"\xef\xbb\xbf", b"\x80\x80")
"""Invalid UTF-8 (and a NUL, and a misplaced byte-order mark)."""

ODD_FILE_NAMES = ("².json", "٣.json", "-1.json", "1.5.json", "notes.json", "0007.json", "7.json", " 3.json", "3 .json")
"""Names a session folder might hold besides `<id>.json`."""


# -- the damage --------------------------------------------------------------------------------


def _containers(records: list[Any], rng: random.Random) -> list[tuple[Any, Any]]:
    """(container, key) for nodes of the records, the top level of each record favoured."""
    slots: list[tuple[Any, Any]] = [(records, i) for i in range(len(records))]
    if rng.random() < 0.5:  # the envelope: ids, kinds, payloads, sources
        for record in records:
            if isinstance(record, dict):
                slots.extend((record, key) for key in record)
        return slots
    stack: list[Any] = [records]
    while stack and len(slots) < 5000:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            slots.append((node, key))
            if isinstance(value, dict | list):
                stack.append(value)
    return slots


def _set(slot: tuple[Any, Any], value: Any) -> None:
    container, key = slot
    container[key] = value


def mutate_records(records: list[Any], rng: random.Random) -> list[str]:
    """Damage the records in place, 0 to 3 times; returns what was done."""
    done = []
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        op = rng.choice(("delete", "wrong", "wrong", "raw", "kind", "records", "convert", "invent"))
        slots = _containers(records, rng)
        if not slots:
            break
        slot = rng.choice(slots)
        container, key = slot
        if op == "delete":
            del container[key]
            done.append(f"deleted {key!r}")
        elif op == "wrong":
            value = rng.choice(WRONG_VALUES)
            _set(slot, json.loads(json.dumps(value)))
            done.append(f"{key!r} = {value!r}")
        elif op == "raw":
            raw = rng.choice(RAW_VALUES)
            _set(slot, raw)
            done.append(f"{key!r} = {raw.text[:12]}...")
        elif op == "kind":
            record = rng.choice(records) if records else None
            if isinstance(record, dict):
                key = rng.choice(("action", "observation", "kind"))
                record[key] = rng.choice(KIND_NAMES)
                done.append(f"{key} = {record[key]!r}")
        elif op == "records" and records:
            how = rng.choice(("drop", "repeat", "swap"))
            i, j = rng.randrange(len(records)), rng.randrange(len(records))
            if how == "drop":
                del records[i]
            elif how == "repeat":
                records.insert(j, json.loads(json.dumps(records[i], default=_raw_text_for_copy)))
            else:
                records[i], records[j] = records[j], records[i]
            done.append(f"{how} record {i}")
        elif op == "invent":
            at = rng.randrange(len(records) + 1)
            records.insert(at, _invented_record(rng))
            done.append(f"invented record at {at}")
        elif op == "convert" and records:
            # One record of the other generation, or payloads in the wrong place.
            i = rng.randrange(len(records))
            record = records[i]
            if isinstance(record, dict):
                for old, new in (("kind", "action"), ("action", "kind"), ("args", "extras"), ("observation", "kind")):
                    if old in record and rng.random() < 0.5:
                        record[new] = record.pop(old)
                        done.append(f"record {i}: {old} -> {new}")
                        break
    return done


def _invented_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 3 and roll < 0.2:
        return {rng.choice(RECORD_KEYS): _invented_value(rng, depth + 1) for _ in range(rng.randrange(4))}
    if depth < 3 and roll < 0.3:
        return [_invented_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    if roll < 0.5:
        return rng.choice(KIND_NAMES)
    if roll < 0.55:
        return rng.choice(RAW_VALUES)
    return json.loads(json.dumps(rng.choice(WRONG_VALUES)))


def _invented_record(rng: random.Random) -> dict[str, Any]:
    """A record of random shape, made of event keys and plausible or wrong values."""
    record = {rng.choice(RECORD_KEYS): _invented_value(rng) for _ in range(rng.randrange(1, 8))}
    if rng.random() < 0.7:  # most real records name their kind
        key = rng.choice(("action", "observation", "kind"))
        record[key] = rng.choice(KIND_NAMES)
    return record


def _raw_text_for_copy(value: Any) -> Any:
    if isinstance(value, Raw):
        return value.text  # a copied record keeps a string in its place; good enough damage
    raise TypeError(type(value).__name__)


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str | None]:
    """Damage a file's bytes; returns the bytes and what was done."""
    if not data:
        return data, None
    at = rng.randrange(len(data) + 1)
    op = rng.choice(("flip", "bad_utf8", "truncate", "cut", "newline", "bom"))
    if op == "flip" and at < len(data):
        return data[:at] + bytes([data[at] ^ rng.randrange(1, 256)]) + data[at + 1 :], f"flipped byte {at}"
    if op == "bad_utf8":
        bad = rng.choice(BAD_BYTES)
        return data[:at] + bad + data[at:], f"inserted {bad!r} at {at}"
    if op == "truncate":
        return data[:at], f"truncated at {at}"
    if op == "cut":
        return data[:at] + data[at + rng.randrange(1, 64) :], f"cut bytes at {at}"
    if op == "newline":
        return data[:at] + b"\n" + data[at:], f"newline at {at}"
    return b"\xef\xbb\xbf" + data, "byte-order mark"


# -- layouts -----------------------------------------------------------------------------------


def _dumps(value: Any) -> bytes:
    """JSON text for records that may hold `Raw` values (which the standard encoder cannot write)."""
    raws: dict[str, str] = {}

    def placeholder(obj: Any) -> str:
        if isinstance(obj, Raw):
            token = f"@@raw{len(raws)}@@"
            raws[f'"{token}"'] = obj.text
            return token
        raise TypeError(type(obj).__name__)

    text = json.dumps(value, ensure_ascii=False, default=placeholder)
    for token, raw in raws.items():
        text = text.replace(token, raw)
    return text.encode("utf-8", "surrogatepass")


def _flatten(record: Any) -> Any:
    """The old flattened form of a V0 record: payload merged into the top level, no id, time or source."""
    if not isinstance(record, dict):
        return record
    out = {k: v for k, v in record.items() if k not in ("id", "timestamp", "source", "args", "extras")}
    for key in ("args", "extras"):
        if isinstance(record.get(key), dict):
            out.update(record[key])
    return out


def write_layout(records: list[Any], layout: str, folder: Path, rng: random.Random) -> tuple[Path, list[str]]:
    """Write the records at `folder` in `layout`, damage the bytes; returns the path to load and what was done."""
    done: list[str] = []
    damaged = rng.random() < 0.35  # the bytes of one file (of a session folder: of one of its files)

    def write(path: Path, body: bytes) -> None:
        nonlocal damaged
        if damaged and (layout != "folder" or rng.random() < 0.3):
            body, what = mutate_bytes(body, rng)
            damaged = False
            done.append(f"{path.name}: {what}")
        path.write_bytes(body)

    if layout == "folder":
        events = folder / "session" / "events"
        events.mkdir(parents=True)
        for index, record in enumerate(records):
            event_id = record.get("id") if isinstance(record, dict) else None
            name = f"{event_id if isinstance(event_id, int) and not isinstance(event_id, bool) else index}.json"
            write(events / name, _dumps(record))
        if rng.random() < 0.3:
            name = rng.choice(ODD_FILE_NAMES)
            write(events / name, _dumps(rng.choice(records) if records else {}))
            done.append(f"extra file {name!r}")
        return folder / "session", done
    if layout == "jsonl":
        path = folder / "log.jsonl"
        write(path, b"".join(_dumps(r) + b"\n" for r in records))
        return path, done
    document: Any = records
    if layout == "trajectory":
        document = {"trajectory": records}
    elif layout == "history":
        document = {"instance_id": "fuzz", "history": records, "metrics": {}}
    elif layout == "legacy":
        document = [_flatten(r) for r in records]
    path = folder / "log.json"
    write(path, _dumps(document))
    return path, done


# -- one input ---------------------------------------------------------------------------------


@dataclass
class FuzzInput:
    """One damaged log: its records (after damage), where it was written, and the story of its damage."""

    base: str
    layout: str
    records: list[Any]
    path: Path
    damage: list[str]

    def describe(self) -> str:
        return f"{self.base} as {self.layout}: {'; '.join(self.damage) or 'undamaged slice'}"


def make_input(bases: list[BaseLog], rng: random.Random, folder: Path) -> FuzzInput:
    """Cut, lay out and damage one input under `folder` (which must be empty)."""
    base = rng.choice(bases)
    start = rng.randrange(len(base.records))
    stop = min(len(base.records), start + rng.randint(1, MAX_SLICE))
    # A deep copy that keeps no references into the base log, which later inputs reuse.
    records = json.loads(json.dumps(base.records[start:stop]))
    layouts = ("json", "jsonl", "trajectory") if base.is_sdk else LAYOUTS
    layout = rng.choice(layouts)
    damage = [f"records {start}:{stop}", *mutate_records(records, rng)]
    path, byte_damage = write_layout(records, layout, folder, rng)
    return FuzzInput(base.name, layout, records, path, damage + byte_damage)


# -- the loaders and what counts as a good answer -------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """How one loader answered one input."""

    entry: str
    result: str
    """`loaded`, the typed error's class name, or `other: <class>` for anything that must not escape."""
    ok: bool
    detail: str = ""


def _resolve(value: Any) -> Any:
    """The records with each `Raw` replaced by its Python value (what `event_from_dict` would be given)."""
    if isinstance(value, Raw):
        return value.value
    if isinstance(value, dict):
        return {k: _resolve(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v) for v in value]
    return value


def _judge(entry: str, call: Callable[[], object], *, place: str) -> Outcome:
    """Run one loader and judge its answer.

    `place` is what a typed error must name: "file" (its `path`), "file+position" (also a line or
    an event's position, unless the whole file is the problem), "file+line", or "position" (the
    `index` the caller gave).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a torn tail set aside is a RecoveryWarning: a good answer
            result = call()
            if isinstance(result, EventStream):
                result.close()
    except (MalformedEventError, StoreError) as exc:
        name = type(exc).__name__
        missing = _missing_place(exc, place)
        if missing:
            return Outcome(entry, name, False, f"{missing} not named: {exc}")
        return Outcome(entry, name, True, str(exc)[:200])
    except Exception as exc:  # noqa: BLE001 - exactly what this harness looks for
        return Outcome(entry, f"other: {type(exc).__name__}", False, f"{type(exc).__name__}: {str(exc)[:300]}")
    return Outcome(entry, "loaded", True)


# Problems of a whole file, which has no better place than its name.
_WHOLE_FILE = ("expected a list of events", "not a JSON list", "not a log of any format read here")


def _missing_place(exc: OpenHandsMemoryError, place: str) -> str | None:
    if not isinstance(exc, MalformedEventError | CorruptRecordError):
        return None
    if place == "position":
        return "the position" if isinstance(exc, MalformedEventError) and exc.index is None else None
    if exc.path is None:
        return "the file"
    if place == "file+line" and exc.line is None:
        return "the line"
    if place == "file+position" and exc.line is None and exc.index is None:
        if not exc.reason.startswith(_WHOLE_FILE):
            return "the line or position"
    return None


def _event_from_each(records: list[Any]) -> object:
    """`event_from_dict` on each record, then writing each back (which may refuse a value JSON cannot hold)."""
    for index, record in enumerate(_resolve(records)):
        try:
            event = event_from_dict(record, index=index)
        except MalformedEventError as exc:
            if "SDK (V1) event" in exc.reason:
                continue  # SDK records are imported as a whole log, never one by one
            raise
        try:
            event_to_json(event)
        except MalformedEventError as exc:
            if exc.event_id is None and event.id is not None:
                raise  # writing an event back must name it
            raise exc.at(index=index) from exc
    return None


def _open_copy(path: Path) -> Callable[[], object]:
    def call() -> object:
        # Opening may repair a torn tail: work on a copy so the other loaders see the same bytes.
        copy = path.with_name("store.jsonl")
        shutil.copyfile(path, copy)
        return EventStream.open(copy)

    return call


def _from_each_line(path: Path) -> object:
    for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
        if line.strip():
            try:
                event_from_json(line, path=path, line=number)
            except MalformedEventError as exc:
                if "SDK (V1) event" in exc.reason:
                    continue  # as in `_event_from_each`
                raise
    return None


def run_loaders(fuzz_input: FuzzInput) -> Iterator[Outcome]:
    """Every public loader that reads this input's layout, each judged."""
    path = fuzz_input.path
    if fuzz_input.layout == "folder":  # each file is the place of its own event
        yield _judge("load_events", lambda: load_events(path), place="file")
        yield _judge("load_session_folder", lambda: load_session_folder(path), place="file")
        yield _judge("import_session_folder", lambda: import_session_folder(path), place="file")
    else:
        yield _judge("load_events", lambda: load_events(path), place="file+position")
    yield _judge("event_from_dict", lambda: _event_from_each(fuzz_input.records), place="position")
    if fuzz_input.layout == "jsonl":
        yield _judge("EventStream.open", _open_copy(path), place="file+line")
        yield _judge("event_from_json", lambda: _from_each_line(path), place="file+line")


# -- the standalone run ----------------------------------------------------------------------------


def run(count: int, seed: int, bases: list[BaseLog]) -> tuple[Counter[str], Counter[tuple[str, str]], list[str]]:
    """Make and load `count` inputs; returns outcomes per input (by worst answer), per loader, and failures."""
    rng = random.Random(seed)
    by_input: Counter[str] = Counter()
    by_entry: Counter[tuple[str, str]] = Counter()
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="oh-fuzz-") as tmp:
        for number in range(count):
            folder = Path(tmp) / str(number)
            folder.mkdir()
            fuzz_input = make_input(bases, rng, folder)
            outcomes = list(run_loaders(fuzz_input))
            for outcome in outcomes:
                by_entry[(outcome.entry, outcome.result)] += 1
            bad = [o for o in outcomes if not o.ok]
            if bad:
                by_input[f"other ({bad[0].result.removeprefix('other: ')})"] += 1
                failures.append(f"#{number} {fuzz_input.describe()}\n    {bad[0].entry}: {bad[0].detail}")
            else:
                by_input[outcomes[0].result] += 1  # what load_events did
            shutil.rmtree(folder)
    return by_input, by_entry, failures


def main(argv: list[str] | None = None) -> int:
    """Run the fuzz inputs and print how the loaders answered; exit 1 if anything escaped."""
    parser = argparse.ArgumentParser(prog="python -m tests.events.fuzz_report", description=main.__doc__)
    parser.add_argument("--count", type=int, default=3000, help="how many inputs (default 3000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--logs", type=Path, default=REAL_LOGS_DIR, help="the folder of real OpenHands logs")
    parser.add_argument("--show", type=int, default=10, help="how many failures to print")
    args = parser.parse_args(argv)
    # Session folders with odd file names are logged as they load; the counts below say enough.
    logging.getLogger("openhands_memory").setLevel(logging.ERROR)
    bases = real_base_logs(args.logs) + synthetic_base_logs()
    real = sum(1 for b in bases if not b.name.startswith("synthetic-"))
    began = time.perf_counter()
    by_input, by_entry, failures = run(args.count, args.seed, bases)
    elapsed = time.perf_counter() - began
    others = sum(n for k, n in by_input.items() if k.startswith("other"))
    typed = ", ".join(f"{k} {n}" for k, n in sorted(by_input.items()) if k not in ("loaded",) and not k.startswith("other"))
    print(f"{args.count} inputs ({real} real logs, {len(bases) - real} synthetic sessions, seed {args.seed}, "
          f"{elapsed:.0f} s): loaded {by_input['loaded']}, {typed}, other {others}")
    print("by loader:")
    for entry in sorted({e for e, _ in by_entry}):
        results = ", ".join(f"{r} {n}" for (e, r), n in sorted(by_entry.items()) if e == entry)
        print(f"  {entry}: {results}")
    for failure in failures[: args.show]:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
