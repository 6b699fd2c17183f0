"""Retention: of the checkable facts in what a pipeline forgot, how many the model can still read at the end.

**Facts** are found without a model, in the events of the agent's history. Each has a kind and a
text; the text has its whitespace collapsed to single spaces and is cut to `FACT_TEXT_CHARS`
characters; facts are told apart by (kind, text).

- `file`: the path of every `FileWriteAction`, and of every `FileEditAction` but a `view`
  (`create`, `str_replace`, `insert`, `undo_edit`, and the older whole-file edits).
- `failed_command`: the command of every `CmdOutputObservation` whose exit code is neither 0
  nor -1 (OpenHands' "unknown"); the exit code is kept as the fact's detail.
- `test`: every pytest node id (`tests/test_x.py::test_y`, `x.py::Class::test[param]`) in the
  output of a `CmdOutputObservation`.
- `instruction`: the text of every `MessageAction` from the user.

**Forgotten events** are the events of the agent's history (condensation actions, condensation
requests and the system prompt aside) that the final view does not show as they were: forgotten
by a condensation, left out of the view the pipeline returned (`recent`), or shown changed
(masked). A fact is forgotten when it comes from a forgotten event.

**Presence**: a forgotten fact is retained when its text occurs in the final view's text: every
text part of every message the model would be sent (the summary included), and the name and
argument values (JSON decoded) of every tool call, whitespace collapsed as for facts. The match is
exact and case-sensitive. `retention` = retained / forgotten facts (None when nothing was forgotten).

**Recovery**: a forgotten fact is recoverable when a search of the whole replayed log with the
fact's text as query (what the agent's `search_history` tool runs) returns, in its first
`RECALL_LIMIT` results, one of the forgotten events the fact comes from. Retained and recoverable
are counted independently: a fact can be both. `recoverability` = recoverable / forgotten facts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from openhands_memory.events import (
    AgentCondensationObservation,
    CmdOutputObservation,
    CondensationAction,
    CondensationRequestAction,
    Event,
    EventSource,
    FileEditAction,
    FileWriteAction,
    MessageAction,
    SystemMessageAction,
    is_agent_history,
)
from openhands_memory.llm.message import Message, TextContent

__all__ = [
    "FACT_KINDS",
    "FACT_TEXT_CHARS",
    "RECALL_LIMIT",
    "Fact",
    "FactKind",
    "RetentionResult",
    "SearchFn",
    "extract_facts",
    "fact_sources",
    "facts_of",
    "forgotten_events",
    "measure_retention",
    "normalize",
    "view_text",
]

FACT_TEXT_CHARS = 60
"""A fact's text is cut to this many characters (after collapsing whitespace)."""

FactKind = Literal["file", "failed_command", "test", "instruction"]
"""What a fact is about (see the module docstring)."""

FACT_KINDS: tuple[FactKind, ...] = ("file", "failed_command", "test", "instruction")
"""Every kind of fact, in the order reports list them."""

RECALL_LIMIT = 5
"""A fact is recoverable when one of its events is among this many search results (`search_history`'s default)."""

SearchFn = Callable[[str], Sequence[int]]
"""A search of the whole log: the ids of the events that best match a plain-text query, best first."""

# A pytest node id: a path ending in .py, one or more ::names, an optional [parameter].
_TEST_ID = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[\w.-]+\.py(?:::[A-Za-z_]\w*)+(?:\[[^\]\s]*\])?")
_LOST_SAMPLE = 10


def normalize(text: str) -> str:
    """`text` with every run of whitespace made one space, and no leading or trailing space."""
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact that can be checked without a model."""

    kind: FactKind
    """What it is about."""
    text: str
    """What must appear in the view (normalized, cut to `FACT_TEXT_CHARS`)."""
    detail: str | None = None
    """More about it, not checked (a failed command's exit code)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data: dict[str, Any] = {"kind": self.kind, "text": self.text}
        if self.detail is not None:
            data["detail"] = self.detail
        return data


def _fact(kind: FactKind, text: str, detail: str | None = None) -> Fact | None:
    text = normalize(text)[:FACT_TEXT_CHARS].rstrip()
    return Fact(kind, text, detail) if text else None


def facts_of(event: Event) -> Iterator[Fact]:
    """The facts one event holds (see the module docstring)."""
    found: list[Fact | None] = []
    if isinstance(event, FileWriteAction) or (isinstance(event, FileEditAction) and event.command != "view"):
        found.append(_fact("file", event.path))
    elif isinstance(event, CmdOutputObservation):
        code = event.exit_code
        if isinstance(code, int) and code not in (0, -1):
            found.append(_fact("failed_command", event.command, f"exit code {code}"))
        found.extend(_fact("test", match) for match in _TEST_ID.findall(event.content))
    elif isinstance(event, MessageAction) and event.source == EventSource.USER:
        found.append(_fact("instruction", event.content))
    yield from (fact for fact in found if fact is not None)


def extract_facts(events: Iterable[Event]) -> list[Fact]:
    """The distinct facts of `events`, in order of first appearance."""
    return list(dict.fromkeys(fact for event in events for fact in facts_of(event)))


def fact_sources(events: Iterable[Event]) -> dict[Fact, set[int]]:
    """The distinct facts of `events`, in order of first appearance, each with the ids of the events it comes from."""
    sources: dict[Fact, set[int]] = {}
    for event in events:
        for fact in facts_of(event):
            ids = sources.setdefault(fact, set())
            if event.id is not None:
                ids.add(event.id)
    return sources


def _is_candidate(event: Event) -> bool:
    return is_agent_history(event) and not isinstance(
        event, CondensationAction | CondensationRequestAction | SystemMessageAction | AgentCondensationObservation
    )


def forgotten_events(history: Iterable[Event], shown: Sequence[Event]) -> list[Event]:
    """The events of `history` the final view `shown` does not show as they were (see the module docstring)."""
    by_id = {event.id: event for event in shown if event.id is not None}
    forgotten = []
    for event in history:
        if not _is_candidate(event):
            continue
        seen = by_id.get(event.id) if event.id is not None else None
        if seen is event or (seen is not None and seen == event):
            continue
        forgotten.append(event)
    return forgotten


def _argument_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _argument_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _argument_strings(item)
    elif value is not None and not isinstance(value, bool):
        yield str(value)


def view_text(messages: Iterable[Message]) -> str:
    """The text a model can read in `messages` (see Presence in the module docstring), normalized."""
    pieces: list[str] = []
    for message in messages:
        pieces.extend(part.text for part in message.content if isinstance(part, TextContent))
        for call in message.tool_calls or ():
            pieces.append(call.function.name)
            try:
                arguments = json.loads(call.function.arguments)
            except ValueError:
                pieces.append(call.function.arguments)
            else:
                pieces.extend(_argument_strings(arguments))
    return normalize("\n".join(pieces))


@dataclass(frozen=True, slots=True)
class RetentionResult:
    """The facts of a run: all of them, the forgotten ones, and which of those the final view still holds."""

    facts: tuple[Fact, ...]
    """Every fact of the agent's history."""
    forgotten: tuple[Fact, ...]
    """The facts of the forgotten events."""
    retained: tuple[Fact, ...]
    """The forgotten facts whose text is in the final view."""
    recoverable: tuple[Fact, ...] | None = None
    """The forgotten facts a search of the log finds one of their events for; None when no search was given."""

    @property
    def retention(self) -> float | None:
        """Retained / forgotten facts; None when nothing was forgotten."""
        return len(self.retained) / len(self.forgotten) if self.forgotten else None

    @property
    def recoverability(self) -> float | None:
        """Recoverable / forgotten facts; None when nothing was forgotten or no search was given."""
        if self.recoverable is None or not self.forgotten:
            return None
        return len(self.recoverable) / len(self.forgotten)

    def to_dict(self) -> dict[str, Any]:
        """Counts (overall and by kind) and up to ten forgotten facts that were lost, JSON-ready.

        `facts_recoverable` and `recoverability` are None (and the counts by kind leave `recoverable`
        out) when no search was given.
        """
        retained = set(self.retained)
        recoverable = self.recoverable
        by_kind: dict[str, dict[str, int]] = {}
        for kind in FACT_KINDS:
            counts = {
                "facts": sum(1 for f in self.facts if f.kind == kind),
                "forgotten": sum(1 for f in self.forgotten if f.kind == kind),
                "retained": sum(1 for f in self.retained if f.kind == kind),
            }
            if recoverable is not None:
                counts["recoverable"] = sum(1 for f in recoverable if f.kind == kind)
            by_kind[kind] = counts
        lost = [f.to_dict() for f in self.forgotten if f not in retained]
        return {
            "facts": len(self.facts),
            "facts_forgotten": len(self.forgotten),
            "facts_retained": len(self.retained),
            "retention": self.retention,
            "facts_recoverable": len(recoverable) if recoverable is not None else None,
            "recoverability": self.recoverability,
            "facts_by_kind": by_kind,
            "lost_facts": lost[:_LOST_SAMPLE],
            "lost_facts_total": len(lost),
        }


def measure_retention(
    history: Sequence[Event], shown: Sequence[Event], messages: Iterable[Message], *, search: SearchFn | None = None
) -> RetentionResult:
    """The facts of `history`, those forgotten in the final view `shown`, those still in its `messages`,
    and, with `search` (a search of the whole log), those it finds an event of (see Recovery in the module docstring)."""
    facts = extract_facts(event for event in history if _is_candidate(event))
    sources = fact_sources(forgotten_events(history, shown))
    forgotten = list(sources)
    text = view_text(messages)
    retained = [fact for fact in forgotten if fact.text in text]
    recoverable = None
    if search is not None:
        recoverable = tuple(fact for fact in forgotten if sources[fact].intersection(search(fact.text)[:RECALL_LIMIT]))
    return RetentionResult(tuple(facts), tuple(forgotten), tuple(retained), recoverable)
