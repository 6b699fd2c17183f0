"""One check of a log's ids and references, shared by every reader (`load_events`, streams, the CLI).

Two levels:
- an *error* means the events are not a log: an id that is negative, repeated, or not greater than
  the one before it, or missing (readers number the events only of a log where none has an id).
  `EventStream.open` and `repair_log` decide by the same rule (`id_order_problem`). Ids name events (a condensation forgets by id, a `cause` points by id), so a
  log with such ids cannot be read without guessing which event an id means; every reader refuses it.
- a *warning* is something OpenHands itself writes (a slice of a log whose references point
  outside it, a `cause` that is not an earlier event): the log loads, every id as written, and
  the finding is reported (logged at WARNING by `load_events`, listed by `openhands-memory validate`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from openhands_memory.events.actions import CondensationAction
from openhands_memory.events.base import Event

__all__ = ["ValidationFinding", "ValidationReport", "validate_events", "id_order_problem"]


@dataclass(frozen=True)
class ValidationFinding:
    """One thing wrong with a log: where, which event, what, and why it matters."""

    level: Literal["error", "warning"]
    """`error`: readers refuse the log; `warning`: it loads, and the finding is reported."""
    what: str
    """What is wrong, with the values involved."""
    why: str
    """Why it matters to a reader of the log."""
    event_id: int | None = None
    """The id of the event concerned, as the file has it."""
    index: int | None = None
    """The event's position in the log (0 = first)."""
    line: int | None = None
    """The JSONL line the event is on (None for a JSON list or a folder)."""
    path: str | None = None
    """The file the log was read from, if any."""

    def describe(self) -> str:
        """One line: `file:line: level: id N: what (why)`."""
        place = self.path or "<events>"
        if self.line is not None:
            place += f":{self.line}"
        elif self.index is not None:
            place += f": event #{self.index}"
        ident = f"id {self.event_id}: " if self.event_id is not None else ""
        return f"{place}: {self.level}: {ident}{self.what} ({self.why})"

    def to_dict(self) -> dict[str, Any]:
        """The finding as plain JSON values."""
        return {
            "path": self.path,
            "line": self.line,
            "index": self.index,
            "event_id": self.event_id,
            "level": self.level,
            "what": self.what,
            "why": self.why,
        }


@dataclass
class ValidationReport:
    """The findings of one validation, errors and warnings in log order."""

    path: str | None = None
    """The file validated, if any."""
    events: int = 0
    """How many events were checked."""
    findings: list[ValidationFinding] = field(default_factory=list)
    """Every finding, in log order."""

    @property
    def errors(self) -> list[ValidationFinding]:
        """The findings that make readers refuse the log."""
        return [f for f in self.findings if f.level == "error"]

    @property
    def warnings(self) -> list[ValidationFinding]:
        """The findings that are only reported."""
        return [f for f in self.findings if f.level == "warning"]

    @property
    def is_valid(self) -> bool:
        """Whether the log has no error (warnings allowed)."""
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON values."""
        return {
            "path": self.path,
            "events": self.events,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [f.to_dict() for f in self.findings],
        }


_ID_WHY = "ids name events: condensations forget and causes point by id, so a reader would have to guess"


MAX_STORABLE_ID = 2**63 - 1
"""The largest id (or cause) a database keeps: PostgreSQL's bigint."""

_BIGINT_WHY = "the log loads, but a database (PostgreSQL's bigint) cannot store it: convert refuses the event"


def id_order_problem(event_id: int, last_id: int | None, seen: bool = False) -> str | None:
    """Why `event_id` cannot follow `last_id` in a log (None when it can); the one rule every reader applies."""
    if event_id < 0:
        return f"negative id {event_id}"
    if seen:
        return f"duplicate id {event_id}"
    if last_id is not None and event_id <= last_id:
        return f"id {event_id} is not greater than the id before it ({last_id}): out of order"
    return None


def validate_events(
    events: Sequence[Event],
    *,
    path: str | os.PathLike[str] | None = None,
    lines: Sequence[int] | None = None,
) -> ValidationReport:
    """Check a log's ids and references; `lines[i]` is the JSONL line of `events[i]`, when known.

    Time and memory are linear in the number of events (a condensation's id range is checked by its
    bounds, never expanded).
    """
    where = None if path is None else os.fspath(path)
    report = ValidationReport(path=where, events=len(events))
    seen: set[int] = set()
    last_id: int | None = None

    def add(level: Literal["error", "warning"], index: int, event: Event, what: str, why: str) -> None:
        line = lines[index] if lines is not None and index < len(lines) else None
        report.findings.append(ValidationFinding(level, what, why, event.id, index, line, where))

    for index, event in enumerate(events):
        event_id = event.id
        if event_id is None:
            add("error", index, event, "event without an id", _ID_WHY)
            continue
        if last_id is not None and event_id > last_id >= 0:
            last_id = event_id  # the usual case: greater than every id before it, so neither seen nor negative
        else:
            problem = id_order_problem(event_id, last_id, event_id in seen)
            if problem is not None:
                add("error", index, event, problem, _ID_WHY)
            last_id = event_id if last_id is None else max(last_id, event_id)
        seen.add(event_id)
        if event_id > MAX_STORABLE_ID:
            add("warning", index, event, f"id {event_id} is past 2**63 - 1", _BIGINT_WHY)
        cause = event.cause
        if cause is not None:
            if cause > MAX_STORABLE_ID:
                add("warning", index, event, f"cause {cause} is past 2**63 - 1", _BIGINT_WHY)
            if cause >= event_id:
                add(
                    "warning",
                    index,
                    event,
                    f"cause {cause} is not an earlier event",
                    "an event answers or follows an earlier one; the link is kept but means nothing",
                )
            elif cause not in seen:
                add(
                    "warning",
                    index,
                    event,
                    f"cause {cause} is not in the log",
                    "the log may be a slice; the link is kept as written",
                )
        if isinstance(event, CondensationAction):
            _check_condensation(event, index, seen, add)
    return report


def _check_condensation(event: CondensationAction, index: int, seen: set[int], add: Any) -> None:
    """Warn when a condensation forgets ids the log does not have before it (a slice, or a later id)."""
    assert event.id is not None
    if event.forgotten_event_ids is not None:
        later = [i for i in event.forgotten_event_ids if i >= event.id]
        missing = [i for i in event.forgotten_event_ids if i < event.id and i not in seen]
    else:
        start, end = event.forgotten_events_start_id, event.forgotten_events_end_id
        assert start is not None and end is not None
        later = [end] if end >= event.id else []
        missing = []  # a range may well span the gaps OpenHands leaves in its ids
    if later:
        add(
            "warning",
            index,
            event,
            f"forgets ids at or after its own ({_some(later)})",
            "a condensation can only forget what came before it; those later events are hidden from the view",
        )
    if missing:
        add(
            "warning",
            index,
            event,
            f"forgets ids the log does not have ({_some(missing)})",
            "the log may be a slice; nothing in it is hidden by them",
        )


def _some(ids: list[int]) -> str:
    shown = ", ".join(str(i) for i in ids[:5])
    return shown + (f", ... {len(ids)} in all" if len(ids) > 5 else "")
