"""Inspecting a log: kinds and tokens, the largest events, unanswered tool calls, condensations."""

from __future__ import annotations

from conftest import REAL_LOGS_DIR, REPO_ROOT, require_real_logs_dir

from openhands_memory.events import (
    AgentFinishAction,
    CmdOutputObservation,
    CmdRunAction,
    EventSource,
    NullObservation,
    ToolCallMetadata,
)
from openhands_memory.replay import inspect_events, inspect_log
from openhands_memory.testing.compression import compressed_session

from ._helpers import Log

BUNDLED = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"


def test_the_bundled_log_by_kind_with_its_two_condensations() -> None:
    report = inspect_log(BUNDLED, top=5)
    assert report.events == 300 and report.agent_history_events == sum(k.events for k in report.by_kind)
    assert report.tokens == sum(k.tokens for k in report.by_kind)
    assert [k.tokens for k in report.by_kind] == sorted((k.tokens for k in report.by_kind), reverse=True)
    assert len(report.largest) == 5 and [e.tokens for e in report.largest] == sorted((e.tokens for e in report.largest), reverse=True)
    assert report.orphans == []
    spans = [(c.id, c.first_forgotten, c.last_forgotten, c.summary_offset) for c in report.condensations]
    assert spans == [(120, 4, 89, 4), (243, 90, 212, 4)]
    assert report.condensations[0].forgotten == 86 and sum(report.condensations[0].forgotten_kinds.values()) == 86
    assert report.view_events < report.agent_history_events


def test_unanswered_calls_and_results_without_a_call_are_listed_in_log_order() -> None:
    log = Log()
    log.header()
    log.calls("ls")
    lost = CmdRunAction(command="sleep 99", tool_call_metadata=ToolCallMetadata(function_name="execute_bash", tool_call_id="lost"))
    log.add(lost)
    stray = ToolCallMetadata(function_name="execute_bash", tool_call_id="stray")
    log.add(CmdOutputObservation(content="who asked?", tool_call_metadata=stray))
    finish = ToolCallMetadata(function_name="finish", tool_call_id="fin")
    log.add(AgentFinishAction(final_thought="done", tool_call_metadata=finish))  # a finish is never answered
    log.add(NullObservation(content=""), EventSource.ENVIRONMENT)
    report = inspect_events(log.events)
    assert [(o.id, o.tool_call_id, o.problem) for o in report.orphans] == [(4, "lost", "no result"), (5, "stray", "no call")]
    assert report.events == 8 and report.agent_history_events == 7
    kinds = {k.kind: k.events for k in report.by_kind}
    assert kinds["CmdRunAction"] == 2 and "NullObservation" not in kinds


def test_a_real_log_s_condensations_say_what_they_forgot() -> None:
    require_real_logs_dir()
    report = inspect_log(REAL_LOGS_DIR / "v0_enyst-playground_issue10730_trajectory_297ev.json")
    spans = [(c.first_forgotten, c.last_forgotten, c.forgotten) for c in report.condensations]
    assert spans == [(9, 74, 66), (75, 160, 86)]
    assert all(c.summary and c.summary.startswith("USER_CONTEXT") for c in report.condensations)
    assert report.condensations[0].condenser is None  # OpenHands records no condenser metadata


def test_a_kind_we_do_not_model_is_named_by_its_kind() -> None:
    require_real_logs_dir()
    report = inspect_log(REAL_LOGS_DIR / "v0_oas_claude-sonnet_traj_safety-signatories.json")
    assert "chat (unknown action)" in {k.kind for k in report.by_kind}
    assert report.largest[0].kind in ("BrowserOutputObservation", "CmdOutputObservation", "IPythonRunCellObservation")


def test_a_log_s_compression_records_are_listed_typed_and_in_its_json() -> None:
    report = inspect_events(compressed_session())
    assert [(c.compressed_message_id, c.event_type.value, c.compressed_message_count, c.tokens_before, c.tokens_after)
            for c in report.compressions] == [
        (8, "TOOL_INVOCATION_COMPRESS", 4, 1200, 700),
        (10, "LARGE_MESSAGE_OFFLOAD_UNPROTECTED", 2, 700, 400),
    ]  # fmt: skip
    assert [c.condenser for c in report.condensations] == ["auto_context", "auto_context"]
    data = report.to_dict()["compressions"][0]
    assert (data["event_type"], data["input_tokens"], data["output_tokens"], data["model_seconds"]) == (
        "TOOL_INVOCATION_COMPRESS", 300, 40, 1.5,
    )  # fmt: skip
    plain = Log()
    plain.header()
    assert inspect_events(plain.events).compressions == []


def test_a_cache_aware_condensations_decision_is_shown_with_it() -> None:
    from openhands_memory.condenser import Condenser
    from openhands_memory.replay import replay_events

    from condenser.impl.test_cache_aware_condenser import AMORTIZED, PRICING, session

    scheduler = Condenser.from_config({"type": "cache_aware", "pricing": PRICING, "condenser": AMORTIZED, "horizon_steps": 20, "min_cut": 0})
    report = replay_events(session(30), condenser=scheduler, tokenizer="approximate")
    inspected = inspect_events(report.history)
    decisions = [c.cache_decision for c in inspected.condensations]
    assert decisions and all(d is not None for d in decisions)
    first = decisions[0]
    assert first is not None
    assert (first["reason"], first["cache"]) == ("pays", "warm")
    assert first["expected_cost_after"] < first["expected_cost_before"]
    assert inspected.to_dict()["condensations"][0]["cache_decision"] == first
