"""Compression records: what each step of a progressive strategy (`auto_context`) compressed, read back from the log.

A strategy that compresses in steps records, on each condensation it makes, which step acted and
on what, with `Condenser.add_metadata("compression", record)`; the record lands in the log as the
action's `condenser_metadata["extra"]["compression"]`, beside the framework's own numbers (tokens
before and after, model usage). `compression_events(events)` reads those records back as typed
`CompressionEvent`s, AgentScope's `CompressionEvent` fields in snake case. Like every projection of
the log, they are rebuilt from it on demand, never stored apart.

The record a strategy writes (`CompressionRecord.to_metadata()` builds it)::

    {"event_type": "TOOL_INVOCATION_COMPRESS",   # a CompressionEventType
     "compressed_message_count": 7,              # events of the view the step compressed
     "previous_message_id": 12,                  # the kept event just before them (None: none)
     "next_message_id": 20,                      # the kept event just after them (None: none)
     "over_threshold_after": False,              # the context is still over the threshold
     "exhausted": False}                         # and no step has anything left to do
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
)

from openhands_memory.errors import MalformedEventError
from openhands_memory.events import CondensationAction, Event

__all__ = [
    "COMPRESSION_METADATA_KEY",
    "CompressionEvent",
    "CompressionEventType",
    "CompressionRecord",
    "compression_event",
    "compression_events",
    "compression_record",
    "compressions_by_type",
]

COMPRESSION_METADATA_KEY = "compression"
"""The key of `CondensationMetadata.extra` (and of `condenser_metadata["extra"]`) a record goes under."""


class CompressionEventType(StrEnum):
    """Which of the six progressive compressions acted, from the lightest to the heaviest (AgentScope's names)."""

    TOOL_INVOCATION_COMPRESS = "TOOL_INVOCATION_COMPRESS"
    """1: a run of tool calls and results in a past round, summarized."""
    LARGE_MESSAGE_OFFLOAD = "LARGE_MESSAGE_OFFLOAD"
    """2: a large message outside the protected newest ones, offloaded to a preview."""
    LARGE_MESSAGE_OFFLOAD_UNPROTECTED = "LARGE_MESSAGE_OFFLOAD_UNPROTECTED"
    """3: a large message anywhere before the latest model response, offloaded to a preview."""
    PREVIOUS_ROUND_CONVERSATION_SUMMARY = "PREVIOUS_ROUND_CONVERSATION_SUMMARY"
    """4: a past round (a user message and the agent's work on it), summarized."""
    CURRENT_ROUND_LARGE_MESSAGE_SUMMARY = "CURRENT_ROUND_LARGE_MESSAGE_SUMMARY"
    """5: a large message of the current round, summarized (its original offloaded)."""
    CURRENT_ROUND_MESSAGE_COMPRESS = "CURRENT_ROUND_MESSAGE_COMPRESS"
    """6: the current round's messages, compressed to a target share of their size."""


class CompressionRecord(BaseModel):
    """The record one compression step writes into its condensation's metadata (see the module docstring).

    Keys other than these are ignored when reading (a newer writer may add some); a missing or
    mistyped one makes the record malformed.
    """

    model_config = ConfigDict(frozen=True, extra="ignore", use_attribute_docstrings=True)

    event_type: CompressionEventType
    """Which compression acted."""
    compressed_message_count: StrictInt = Field(ge=0)
    """How many events of the view it compressed."""
    previous_message_id: StrictInt | None
    """The id of the kept event just before the compressed range (None: the range starts the view)."""
    next_message_id: StrictInt | None
    """The id of the kept event just after it (None: the range ends the view)."""
    over_threshold_after: StrictBool
    """The context is still over the strategy's threshold after this compression."""
    exhausted: StrictBool
    """No compression had anything left to do, and the context is still over the threshold."""

    def to_metadata(self) -> dict[str, Any]:
        """The JSON dict to record: `condenser.add_metadata(COMPRESSION_METADATA_KEY, record.to_metadata())`."""
        return self.model_dump(mode="json")


@dataclass(frozen=True, slots=True)
class CompressionEvent:
    """One compression, read back from the log: AgentScope's `CompressionEvent` fields, in snake case."""

    event_type: CompressionEventType
    """Which compression acted."""
    timestamp: str | None
    """When the condensation was appended (its `timestamp`, ISO 8601)."""
    compressed_message_count: int
    """How many events of the view it compressed."""
    previous_message_id: int | None
    """The id of the kept event just before the compressed range."""
    next_message_id: int | None
    """The id of the kept event just after it."""
    compressed_message_id: int | None
    """The id of the condensation itself: its summary (or preview) stands for the compressed events,
    and a later condensation forgets that summary by listing this id."""
    input_tokens: int | None
    """Prompt tokens of its model calls (None: no model was called)."""
    output_tokens: int | None
    """Completion tokens of its model calls (None: no model was called)."""
    model_seconds: float | None
    """Seconds its model calls took, by their recorded latencies (None: none recorded)."""
    tokens_before: int | None
    """Tokens of the view before it, by the condenser's counter (None: not counted)."""
    tokens_after: int | None
    """Tokens of the view after it."""
    over_threshold_after: bool
    """The context is still over the threshold after it."""
    exhausted: bool
    """No compression had anything left to do, and the context is still over the threshold."""
    condenser: str | None
    """The condenser that made it (`auto_context`), as recorded."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the type as its name)."""
        data = asdict(self)
        data["event_type"] = self.event_type.value
        return data


def compression_events(events: Iterable[Event]) -> list[CompressionEvent]:
    """The compression records of `events`, in order; condensations without one are skipped.

    Raises:
        MalformedEventError: a condensation's record (or the metadata around it) has the wrong
            shape; the error names the condensation's id.
    """
    found: list[CompressionEvent] = []
    for event in events:
        if isinstance(event, CondensationAction) and event.condenser_metadata is not None:
            compression = compression_event(event)
            if compression is not None:
                found.append(compression)
    return found


def compressions_by_type(compressions: Iterable[CompressionEvent | CompressionRecord]) -> dict[str, int]:
    """How many compressions of each type, in the types' order (lightest first); types that never acted are left out."""
    counts = Counter(c.event_type for c in compressions)
    return {kind.value: counts[kind] for kind in CompressionEventType if counts[kind]}


def compression_event(action: CondensationAction) -> CompressionEvent | None:
    """The compression record of one condensation, or None when it has none.

    Raises:
        MalformedEventError: the record (or the metadata around it) has the wrong shape.
    """
    metadata = action.condenser_metadata
    if metadata is None:
        return None
    record = compression_record(metadata, event_id=action.id)
    if record is None:
        return None
    input_tokens, output_tokens, model_seconds = _model_usage(metadata.get("llm_usage"), action.id)
    return CompressionEvent(
        event_type=record.event_type,
        timestamp=action.timestamp,
        compressed_message_count=record.compressed_message_count,
        previous_message_id=record.previous_message_id,
        next_message_id=record.next_message_id,
        compressed_message_id=action.id,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        model_seconds=model_seconds,
        tokens_before=_count(metadata, "tokens_before", action.id),
        tokens_after=_count(metadata, "tokens_after", action.id),
        over_threshold_after=record.over_threshold_after,
        exhausted=record.exhausted,
        condenser=_text(metadata, "condenser", action.id),
    )


def compression_record(metadata: Mapping[str, Any], *, event_id: int | None = None) -> CompressionRecord | None:
    """The compression record in a condensation's metadata (`CondensationMetadata.to_dict()`, or a
    logged `condenser_metadata`), or None when it has none.

    Raises:
        MalformedEventError: the record has the wrong shape; the error names `event_id` when given.
    """
    extra = metadata.get("extra")
    if extra is None:
        return None
    if not isinstance(extra, Mapping):
        raise _malformed(f"condenser_metadata.extra must be an object, got {type(extra).__name__}", event_id)
    raw = extra.get(COMPRESSION_METADATA_KEY)
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise _malformed(f"the compression record must be an object, got {type(raw).__name__}", event_id)
    try:
        return CompressionRecord.model_validate(raw)
    except ValidationError as exc:
        raise _malformed(f"invalid compression record: {_first_error(exc)}", event_id) from exc


def _model_usage(usage: Any, event_id: int | None) -> tuple[int | None, int | None, float | None]:
    """(input tokens, output tokens, seconds) from `llm_usage` in OpenHands' Metrics JSON shape; Nones without it."""
    if usage is None:
        return None, None, None
    if not isinstance(usage, Mapping):
        raise _malformed(f"condenser_metadata.llm_usage must be an object, got {type(usage).__name__}", event_id)
    totals = usage.get("accumulated_token_usage") or {}
    if not isinstance(totals, Mapping):
        raise _malformed("condenser_metadata.llm_usage.accumulated_token_usage must be an object", event_id)
    tokens = []
    for name in ("prompt_tokens", "completion_tokens"):
        value = totals.get(name, 0)
        if not _is_int(value):
            raise _malformed(f"condenser_metadata.llm_usage.accumulated_token_usage.{name} must be an integer", event_id)
        tokens.append(value)
    latencies = usage.get("response_latencies")
    seconds: float | None = None
    if latencies:
        if not isinstance(latencies, list) or not all(
            isinstance(item, Mapping) and _is_number(item.get("latency")) for item in latencies
        ):
            raise _malformed("condenser_metadata.llm_usage.response_latencies must be a list of {latency: seconds}", event_id)
        seconds = float(sum(item["latency"] for item in latencies))
    return tokens[0], tokens[1], seconds


def _count(metadata: Mapping[str, Any], name: str, event_id: int | None) -> int | None:
    value = metadata.get(name)
    if value is not None and not _is_int(value):
        raise _malformed(f"condenser_metadata.{name} must be an integer or null", event_id)
    return value


def _text(metadata: Mapping[str, Any], name: str, event_id: int | None) -> str | None:
    value = metadata.get(name)
    if value is not None and not isinstance(value, str):
        raise _malformed(f"condenser_metadata.{name} must be a string or null", event_id)
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def _malformed(reason: str, event_id: int | None) -> MalformedEventError:
    return MalformedEventError(reason, event_id=event_id)
