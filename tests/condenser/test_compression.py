"""Compression records: written through `add_metadata`, read back from the log as typed `CompressionEvent`s."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from openhands_memory.condenser import (
    COMPRESSION_METADATA_KEY,
    Condensation,
    CompressionEvent,
    CompressionEventType,
    CompressionRecord,
    RollingCondenser,
    compression_event,
    compression_events,
    compression_record,
)
from openhands_memory.condenser._boundaries import condensation_action
from openhands_memory.errors import MalformedEventError
from openhands_memory.events import CondensationAction, event_to_json, load_events
from openhands_memory.view import View

from ._helpers import Session

USAGE = {
    "accumulated_cost": 0.0,
    "max_budget_per_task": None,
    "accumulated_token_usage": {"model": "m", "prompt_tokens": 300, "completion_tokens": 40},
    "costs": [],
    "response_latencies": [
        {"model": "m", "latency": 1.5, "response_id": "r1"},
        {"model": "m", "latency": 0.25, "response_id": "r2"},
    ],
    "token_usages": [],
}

RECORD = {
    "event_type": "TOOL_INVOCATION_COMPRESS",
    "compressed_message_count": 4,
    "previous_message_id": 1,
    "next_message_id": 6,
    "over_threshold_after": True,
    "exhausted": False,
}


class CompressesTurns(RollingCondenser):
    """Summarizes ids 2-5 (two tool turns) in place, as a persisting summary, and records the compression."""

    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        return "tokens" if len(view) > 5 else None

    def get_condensation(self, view: View) -> Condensation:
        self.record_llm_usage(USAGE)
        self.add_metadata(COMPRESSION_METADATA_KEY, CompressionRecord.model_validate(RECORD).to_metadata())
        action = condensation_action(view, [2, 3, 4, 5], summary="ran ls twice", summary_offset=2)
        action.summary_persists = True
        return Condensation(action)


def _session() -> Session:
    s = Session()
    s.user()  # 0
    s.agent()  # 1
    s.turn()  # 2, 3
    s.turn()  # 4, 5
    s.agent("done")  # 6
    return s


def _condensed_session() -> Session:
    s = _session()
    result = CompressesTurns().condense(s.view)
    assert isinstance(result, Condensation)
    action = s.add(result.action)  # id 7
    action.timestamp = "2026-01-02T03:04:05"
    return s


def test_a_recorded_compression_reads_back_with_the_frameworks_numbers() -> None:
    s = _condensed_session()
    action = s.events[7]
    assert isinstance(action, CondensationAction)
    metadata = action.condenser_metadata
    assert metadata is not None
    assert compression_events(s.events) == [
        CompressionEvent(
            event_type=CompressionEventType.TOOL_INVOCATION_COMPRESS,
            timestamp="2026-01-02T03:04:05",
            compressed_message_count=4,
            previous_message_id=1,
            next_message_id=6,
            compressed_message_id=7,
            input_tokens=300,
            output_tokens=40,
            model_seconds=1.75,
            tokens_before=metadata["tokens_before"],
            tokens_after=metadata["tokens_after"],
            over_threshold_after=True,
            exhausted=False,
            condenser="CompressesTurns",
        )
    ]
    assert metadata["tokens_before"] > metadata["tokens_after"] > 0


def test_the_records_survive_a_round_trip_through_a_log_file(tmp_path: Path) -> None:
    s = _condensed_session()
    log = tmp_path / "events.jsonl"
    log.write_bytes(b"".join(event_to_json(e) + b"\n" for e in s.events))
    loaded = load_events(log)
    assert compression_events(loaded) == compression_events(s.events)
    event = compression_events(loaded)[0]
    assert event.to_dict()["event_type"] == "TOOL_INVOCATION_COMPRESS"
    # The persisting summary stands in the view where the compressed turns were.
    assert [getattr(e, "content", None) for e in View.from_events(loaded)] == ["Fix the bug", "ok", "ran ls twice", "done"]


def _condensation(event_id: int, metadata: dict[str, Any] | None) -> CondensationAction:
    action = CondensationAction(forgotten_event_ids=[1], condenser_metadata=metadata)
    action.id = event_id
    return action


def test_condensations_without_a_record_and_other_events_are_skipped() -> None:
    s = _session()
    s.condense(forgotten_event_ids=[2, 3])  # OpenHands V0: no metadata at all
    s.add(_condensation(0, {"condenser": "amortized", "extra": {}}))
    s.add(_condensation(0, {"condenser": "amortized", "extra": {"note": 1}}))
    s.add(_condensation(0, {"condenser": "amortized"}))
    assert compression_events(s.events) == []


def test_a_compression_without_model_usage_has_no_model_numbers() -> None:
    metadata = {"condenser": "auto_context", "tokens_before": 900, "tokens_after": 400, "llm_usage": None,
                "extra": {"compression": {**RECORD, "event_type": "LARGE_MESSAGE_OFFLOAD", "exhausted": True}}}  # fmt: skip
    event = compression_event(_condensation(12, metadata))
    assert event is not None
    assert (event.event_type, event.input_tokens, event.output_tokens, event.model_seconds) == (
        CompressionEventType.LARGE_MESSAGE_OFFLOAD, None, None, None,
    )  # fmt: skip
    assert (event.tokens_before, event.tokens_after, event.exhausted, event.compressed_message_id) == (900, 400, True, 12)


def test_keys_a_newer_writer_adds_are_ignored() -> None:
    record = compression_record({"extra": {"compression": {**RECORD, "offloaded_ids": [3]}}})
    assert record == CompressionRecord.model_validate(RECORD)


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"extra": {"compression": {**RECORD, "event_type": "SUMMARIZE"}}}, "invalid compression record: event_type:"),
        ({"extra": {"compression": {k: v for k, v in RECORD.items() if k != "exhausted"}}}, "exhausted: Field required"),
        ({"extra": {"compression": {**RECORD, "compressed_message_count": True}}}, "compressed_message_count:"),
        ({"extra": {"compression": {**RECORD, "compressed_message_count": -1}}}, "compressed_message_count:"),
        ({"extra": {"compression": {**RECORD, "next_message_id": "6"}}}, "next_message_id:"),
        ({"extra": {"compression": {**RECORD, "over_threshold_after": 1}}}, "over_threshold_after:"),
        ({"extra": {"compression": "TOOL_INVOCATION_COMPRESS"}}, "the compression record must be an object, got str"),
        ({"extra": ["compression"]}, "condenser_metadata.extra must be an object, got list"),
        ({"tokens_before": "900", "extra": {"compression": RECORD}}, "condenser_metadata.tokens_before must be an integer"),
        ({"condenser": 3, "extra": {"compression": RECORD}}, "condenser_metadata.condenser must be a string"),
        ({"llm_usage": [], "extra": {"compression": RECORD}}, "condenser_metadata.llm_usage must be an object, got list"),
        (
            {"llm_usage": {**USAGE, "response_latencies": [{"latency": "slow"}]}, "extra": {"compression": RECORD}},
            "response_latencies must be a list",
        ),
        (
            {"llm_usage": {**USAGE, "accumulated_token_usage": {"prompt_tokens": 1.5}}, "extra": {"compression": RECORD}},
            "accumulated_token_usage.prompt_tokens must be an integer",
        ),
    ],
)
def test_a_malformed_record_is_an_error_naming_the_condensation(metadata: dict[str, Any], message: str) -> None:
    s = _session()
    s.add(_condensation(0, metadata))
    with pytest.raises(MalformedEventError, match=r"^id 7: .*" + re.escape(message)) as caught:
        compression_events(s.events)
    assert caught.value.event_id == 7


def test_every_event_type_is_agentscopes_name() -> None:
    assert [t.value for t in CompressionEventType] == [
        "TOOL_INVOCATION_COMPRESS",
        "LARGE_MESSAGE_OFFLOAD",
        "LARGE_MESSAGE_OFFLOAD_UNPROTECTED",
        "PREVIOUS_ROUND_CONVERSATION_SUMMARY",
        "CURRENT_ROUND_LARGE_MESSAGE_SUMMARY",
        "CURRENT_ROUND_MESSAGE_COMPRESS",
    ]
