"""Hand-built compression records, as `auto_context` writes them: `compressing_condensation`, `compressed_session`."""

from __future__ import annotations

from typing import Any

from openhands_memory.condenser import (
    COMPRESSION_METADATA_KEY,
    CompressionEventType,
    CompressionRecord,
)
from openhands_memory.events import (
    CondensationAction,
    Event,
    EventSource,
    MessageAction,
)
from openhands_memory.testing.sessions import SessionBuilder

__all__ = ["SUMMARIZER_USAGE", "compressed_session", "compressing_condensation"]

SUMMARIZER_USAGE: dict[str, Any] = {
    "accumulated_cost": 0.0,
    "max_budget_per_task": None,
    "accumulated_token_usage": {"model": "m", "prompt_tokens": 300, "completion_tokens": 40},
    "costs": [],
    "response_latencies": [{"model": "m", "latency": 1.5, "response_id": "r1"}],
    "token_usages": [{"model": "m", "prompt_tokens": 300, "completion_tokens": 40}],
}
"""One summarizer call of 300 + 40 tokens that took 1.5 s, in OpenHands' Metrics JSON shape."""


def compressing_condensation(
    forgotten: list[int],
    event_type: CompressionEventType | str,
    *,
    previous_id: int | None,
    next_id: int | None,
    tokens_before: int | None = None,
    tokens_after: int | None = None,
    summary: str | None = None,
    summary_offset: int | None = None,
    llm_usage: dict[str, Any] | None = None,
    over_threshold_after: bool = False,
    exhausted: bool = False,
    condenser: str = "auto_context",
) -> CondensationAction:
    """A persisting condensation of `forgotten` whose metadata records one compression of `event_type`.

    The metadata has the framework's keys (`CondensationMetadata.to_dict()`), with the record under
    `extra["compression"]` and `compressed_message_count` = `len(forgotten)`.
    """
    record = CompressionRecord(
        event_type=CompressionEventType(event_type),
        compressed_message_count=len(forgotten),
        previous_message_id=previous_id,
        next_message_id=next_id,
        over_threshold_after=over_threshold_after,
        exhausted=exhausted,
    )
    metadata = {
        "condenser": condenser,
        "reason": "tokens",
        "tokens_before": tokens_before,
        "tokens_after": tokens_after,
        "forgotten": len(forgotten),
        "seconds": 0.0,
        "llm_usage": llm_usage,
        "extra": {COMPRESSION_METADATA_KEY: record.to_metadata()},
    }
    return CondensationAction(
        forgotten_event_ids=list(forgotten),
        summary=summary,
        summary_offset=summary_offset,
        summary_persists=True,
        condenser_metadata=metadata,
        llm_metrics=llm_usage,
    )


def compressed_session() -> list[Event]:
    """A short session with two compressions, ids 0-11.

    0 system, 1 task, 2-7 three tool turns (`ls`, `cat a.py`, `pytest`), 8: a tool-invocation
    compression of 2-5 (model-backed: `SUMMARIZER_USAGE`; 1200 -> 700 tokens, still over the
    threshold), 9 the agent says `Checking`, 10: an unprotected offload of 6-7 (no model; 700 ->
    400 tokens, exhausted; the event before them is summary 8, named by its condensation's id),
    11 the agent says `Done`. Both summaries persist: the view is system, task, summary 8,
    summary 10, `Checking`, `Done`.
    """
    s = SessionBuilder()
    s.system()
    s.user()
    for command in ("ls", "cat a.py", "pytest"):
        s.turn(command, f"output of {command}")
    s.add(
        compressing_condensation(
            [2, 3, 4, 5], CompressionEventType.TOOL_INVOCATION_COMPRESS, previous_id=1, next_id=6,
            tokens_before=1200, tokens_after=700, summary="Ran ls and cat a.py.", summary_offset=2,
            llm_usage=SUMMARIZER_USAGE, over_threshold_after=True,
        )
    )  # fmt: skip
    s.agent("Checking")
    s.add(
        compressing_condensation(
            [6, 7], CompressionEventType.LARGE_MESSAGE_OFFLOAD_UNPROTECTED, previous_id=8, next_id=9,
            tokens_before=700, tokens_after=400, summary="pytest: 3 passed (offloaded, id 7)", summary_offset=3,
            over_threshold_after=True, exhausted=True,
        )
    )  # fmt: skip
    s.add(MessageAction(content="Done"), EventSource.AGENT)
    for number, event in enumerate(s.events):
        event.timestamp = f"2026-01-01T00:00:{number:02d}"
    return s.events
