"""What a recorded log holds: events and tokens by kind, the largest events, unanswered tool calls, condensations
and the compression records of a progressive strategy (`compression_events`).

`inspect_log(path)` reads a log (any layout `load_events` reads) and returns a `LogInspection`.
Tokens are estimated offline at four characters a token (`ApproximateTokenCounter`): enough to
see where a log's weight is, without loading a tokenizer. Tool calls are matched by
`tool_call_id` within the agent's history, as `ConversationMemory` matches them: a call whose
result never came (or a result whose call is missing) is shown to no model as it was recorded.
"""

from __future__ import annotations

import heapq
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from openhands_memory.condenser import (
    CACHE_DECISION_KEY,
    ApproximateTokenCounter,
    CompressionEvent,
    compression_events,
)
from openhands_memory.events import (
    Action,
    log_format,
    AgentFinishAction,
    AgentRejectAction,
    CondensationAction,
    CondensationRequestAction,
    Event,
    MessageAction,
    Observation,
    SystemMessageAction,
    UnknownAction,
    UnknownObservation,
    is_agent_history,
)
from openhands_memory.stream.locations import load_log, shown_location
from openhands_memory.view import View

__all__ = ["CondensationInfo", "KindStats", "LargeEvent", "LogInspection", "OrphanEvent", "inspect_events", "inspect_log"]

# Actions that carry a tool call's metadata but never get a result: the model's own words.
_NO_RESULT = (AgentFinishAction, MessageAction, CondensationRequestAction, CondensationAction, AgentRejectAction, SystemMessageAction)


@dataclass(frozen=True, slots=True)
class KindStats:
    """How many events of one kind a log holds, and their estimated tokens."""

    kind: str
    """The event class (`CmdRunAction`), or `chat (unknown action)` for a kind we do not model."""
    events: int
    """Events of this kind."""
    tokens: int
    """Their estimated prompt tokens."""


@dataclass(frozen=True, slots=True)
class LargeEvent:
    """One of the largest events of a log."""

    id: int | None
    """Its id."""
    kind: str
    """Its kind (see `KindStats.kind`)."""
    tokens: int
    """Its estimated prompt tokens."""
    preview: str
    """The start of its description, on one line."""


@dataclass(frozen=True, slots=True)
class OrphanEvent:
    """A tool call without its result, or a result without its call."""

    id: int | None
    """The event's id."""
    kind: str
    """Its kind."""
    tool_call_id: str
    """The call's id."""
    function_name: str
    """The tool called."""
    problem: Literal["no result", "no call"]
    """`no result`: a call nothing answered; `no call`: a result for a call not in the history."""


@dataclass(frozen=True, slots=True)
class CondensationInfo:
    """One condensation of a log and what it forgot."""

    id: int | None
    """Its id."""
    forgotten: int
    """Events of the log it forgets."""
    first_forgotten: int | None
    """The smallest id it forgets."""
    last_forgotten: int | None
    """The largest id it forgets."""
    forgotten_kinds: dict[str, int]
    """Events forgotten, by kind, most first."""
    summary: str | None
    """The summary it leaves, if any."""
    summary_offset: int | None
    """Where the summary goes in the view."""
    condenser: str | None
    """The condenser that made it, when the log recorded it (`condenser_metadata`)."""
    reason: str | None
    """Why it was made, when recorded."""
    tokens_before: int | None
    """Tokens in view before it, when recorded."""
    tokens_after: int | None
    """Tokens in view after it, when recorded."""
    cache_decision: dict[str, Any] | None = None
    """Why a cache-aware scheduler let it happen, when recorded (`cache_aware`: the reason, the
    cache state, the expected cost before and after; see `openhands_memory.condenser.CACHE_DECISION_KEY`)."""


@dataclass(slots=True)
class LogInspection:
    """What one log holds."""

    source: str
    """Where the log came from."""
    events: int = 0
    """Events in the log."""
    format: str = "openhands"
    """The agent whose format the log was read from (`events.log_format`)."""
    agent_history_events: int = 0
    """Events of the agent's history (what views are built from)."""
    view_events: int = 0
    """Events in the view after the last event (the log's condensations applied)."""
    forgotten_events: int = 0
    """Ids the log's condensations forgot."""
    tokens: int = 0
    """Estimated tokens of every event of the agent's history."""
    view_tokens: int = 0
    """Estimated tokens of the view after the last event."""
    by_kind: list[KindStats] = field(default_factory=list)
    """Events and tokens by kind, most tokens first."""
    largest: list[LargeEvent] = field(default_factory=list)
    """The largest events, largest first."""
    orphans: list[OrphanEvent] = field(default_factory=list)
    """Tool calls without a result and results without a call, in log order."""
    condensations: list[CondensationInfo] = field(default_factory=list)
    """The log's condensations, in order."""
    condensation_requests: int = 0
    """Condensation requests in the log."""
    compressions: list[CompressionEvent] = field(default_factory=list)
    """The compression records of its condensations (a progressive strategy's steps), in order."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def kind_label(event: Event) -> str:
    """How an inspection names an event's kind: its class, or `<kind> (unknown action|observation)`."""
    if isinstance(event, UnknownAction | UnknownObservation):
        return f"{event.kind} (unknown {event.kind_key})"
    return type(event).__name__


def _preview(event: Event, width: int = 80) -> str:
    text = event.message
    if not text.strip():  # some kinds record no description: show their first text field
        values = event.__dict__
        text = next((v for name in event.payload_fields if isinstance(v := values[name], str) and v.strip()), "")
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def inspect_events(events: Iterable[Event], *, source: str = "<events>", top: int = 10) -> LogInspection:
    """Inspect a log's events (see the module docstring); `top` is how many of the largest to list.

    Raises:
        MalformedEventError: a condensation's compression record is malformed (the message names its id).
    """
    events = list(events)
    counter = ApproximateTokenCounter()
    report = LogInspection(source=source, events=len(events), format=log_format(events))
    history = [e for e in events if is_agent_history(e)]
    report.agent_history_events = len(history)
    counts: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    sized: list[tuple[int, int, Event]] = []
    for index, event in enumerate(history):
        label = kind_label(event)
        size = counter.event_tokens(event)
        counts[label] += 1
        tokens[label] += size
        if not isinstance(event, CondensationAction | CondensationRequestAction):
            sized.append((size, -index, event))
    report.tokens = sum(tokens.values())
    report.by_kind = [KindStats(k, counts[k], tokens[k]) for k in sorted(counts, key=lambda k: (-tokens[k], -counts[k], k))]
    report.largest = [
        LargeEvent(e.id, kind_label(e), size, _preview(e)) for size, _, e in heapq.nlargest(top, sized, key=lambda t: t[:2])
    ]
    report.orphans = _orphans(history)
    view = View.from_events(history)
    report.view_events = len(view)
    report.forgotten_events = len(view.forgotten_event_ids)
    report.view_tokens = counter(view)
    by_id = {e.id: e for e in events if e.id is not None}
    for event in history:
        if isinstance(event, CondensationRequestAction):
            report.condensation_requests += 1
        elif isinstance(event, CondensationAction):
            report.condensations.append(_condensation_info(event, by_id))
    report.compressions = compression_events(history)
    return report


def inspect_log(path: str | os.PathLike[str], *, top: int = 10) -> LogInspection:
    """Load a log and inspect it.

    Raises:
        FileNotFoundError: no log at `path`.
        MalformedEventError: the log cannot be read (the message names the file and line), or a
            condensation's compression record is malformed (the message names its id).
    """
    return inspect_events(load_log(path), source=shown_location(path), top=top)


def _orphans(history: list[Event]) -> list[OrphanEvent]:
    calls: dict[str, Event] = {}
    results: dict[str, Event] = {}
    for event in history:
        metadata = event.tool_call_metadata
        if metadata is None:
            continue
        if isinstance(event, Observation):
            results.setdefault(metadata.tool_call_id, event)
        elif isinstance(event, Action) and (
            not isinstance(event, _NO_RESULT) or (isinstance(event, AgentFinishAction) and event.result_recorded)
        ):
            calls.setdefault(metadata.tool_call_id, event)
    found: list[tuple[int, OrphanEvent]] = []
    positions = {id(e): i for i, e in enumerate(history)}
    for call_id, event in calls.items():
        if call_id not in results:
            found.append((positions[id(event)], _orphan(event, "no result")))
    for call_id, event in results.items():
        if call_id not in calls:
            found.append((positions[id(event)], _orphan(event, "no call")))
    return [orphan for _, orphan in sorted(found, key=lambda pair: pair[0])]


def _orphan(event: Event, problem: Literal["no result", "no call"]) -> OrphanEvent:
    metadata = event.tool_call_metadata
    assert metadata is not None
    return OrphanEvent(event.id, kind_label(event), metadata.tool_call_id, metadata.function_name, problem)


def _condensation_info(action: CondensationAction, by_id: dict[int, Event]) -> CondensationInfo:
    if action.forgotten_event_ids is not None:
        forgotten = [by_id[i] for i in action.forgotten_event_ids if i in by_id]
    else:  # a range: look at the events the log holds, never at each id of the range (it may be huge)
        forgotten = [e for i, e in by_id.items() if action.forgets(i)]
    kinds = Counter(kind_label(e) for e in forgotten)
    ids = [e.id for e in forgotten if e.id is not None]
    record = action.condenser_metadata or {}
    extra = record.get("extra")
    decision = extra.get(CACHE_DECISION_KEY) if isinstance(extra, dict) else None

    return CondensationInfo(
        id=action.id,
        forgotten=len(forgotten),
        first_forgotten=min(ids) if ids else None,
        last_forgotten=max(ids) if ids else None,
        forgotten_kinds=dict(kinds.most_common()),
        summary=action.summary,
        summary_offset=action.summary_offset,
        condenser=record.get("condenser"),
        reason=record.get("reason"),
        tokens_before=record.get("tokens_before"),
        tokens_after=record.get("tokens_after"),
        cache_decision=dict(decision) if isinstance(decision, dict) else None,
    )
