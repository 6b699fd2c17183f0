"""Replaying logs through a pipeline: per-step views, messages and tokens, condensations, the saved log."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import REAL_LOGS_DIR, REPO_ROOT, require_real_logs_dir

from openhands_memory.condenser import (
    COMPRESSION_METADATA_KEY,
    CompressionEventType,
    CompressionRecord,
    Condensation,
    Condenser,
    NoOpCondenser,
)
from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.errors import CondenserConfigError, StepNotFoundError
from openhands_memory.events import CmdRunAction, CondensationAction, ToolCallMetadata, agent_history, load_events
from openhands_memory.history import DEFAULT_CONDENSER_CONFIG
from openhands_memory.pipeline import DEFAULT_OFFLINE_CONDENSER_CONFIG
from openhands_memory.llm import LLM, LLMConfig, PromptPricing
from openhands_memory.prompt_tokens import prompt_text
from openhands_memory.replay import (
    Pipeline,
    load_pipeline,
    replay_events,
    replay_log,
    snapshot_at,
    write_log,
)
from openhands_memory.view import View

from ._helpers import ForgetOldest, Log

BUNDLED = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"
ENYST = REAL_LOGS_DIR / "v0_enyst-playground_issue10730_trajectory_297ev.json"


def test_every_step_is_measured_and_the_totals_add_up() -> None:
    report = replay_log(BUNDLED, tokenizer="approximate")
    assert report.events == 300 and report.pipeline.startswith("default pipeline (cache_aware(browser_output_masking, llm))")
    assert len(report.steps) == 120 and [s.number for s in report.steps] == list(range(1, 121))
    assert report.total_prompt_tokens == sum(s.tokens for s in report.steps)
    assert report.peak_tokens == max(s.tokens for s in report.steps) == report.peak_step.tokens  # type: ignore[union-attr]
    assert report.final_tokens == report.steps[-1].tokens
    # The default pipeline condensed: the log's own two condensations were dropped, new ones made.
    assert report.condensations and not any(c.recorded for c in report.condensations)
    assert len(report.history) == 300 - 2 + len(report.condensations)
    for condensation in report.condensations:
        assert condensation.metadata is not None and condensation.metadata["condenser"] == "llm"
        assert condensation.events_after < condensation.events_before
    assert sum(s.condensations for s in report.steps) == len(report.condensations)


def test_tokens_are_gpt_4o_s_tokens_of_the_prompt_sent_tools_and_messages() -> None:
    report = replay_log(BUNDLED, tokenizer="gpt-4o")
    assert report.model == "gpt-4o" and not report.tokens_estimated
    step = report.steps[40]
    snapshot = snapshot_at(load_events(BUNDLED), step.number, condenser=Condenser.from_config(dict(DEFAULT_CONDENSER_CONFIG)), recorded=False)
    assert len(snapshot.shown) == step.view_events and len(snapshot.messages) == step.messages
    tools = snapshot.shown[0].tools  # type: ignore[attr-defined]
    encode = LLM(LLMConfig(model="gpt-4o")).encode
    tools_tokens = len(encode(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS, default=str).decode()))
    message_tokens = sum(len(encode(prompt_text(m.to_litellm_dict()))) for m in snapshot.messages)
    assert tools_tokens > 0 and step.tokens == tools_tokens + message_tokens


def test_counting_tokens_needs_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the replay reached for the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    report = replay_log(BUNDLED, tokenizer="gpt-4o-mini")
    assert report.peak_tokens > 0 and not report.tokens_estimated


def _tokenizer_calls(monkeypatch: pytest.MonkeyPatch) -> list[None]:
    """Each message the model's tokenizer counts from now on (the costly part of a replay), recorded."""
    count = LLM._count_message
    calls: list[None] = []

    def counting(self: LLM, message: dict[str, Any]) -> tuple[int, bool]:
        calls.append(None)
        return count(self, message)

    monkeypatch.setattr(LLM, "_count_message", counting)
    return calls


# A replay counts each message once, however many steps show it (measured: 378 counts for the
# bundled log's 8,252 messages over 120 steps, 223 for the real log's 3,808 over 96): the work
# grows with the log, not with steps x messages. Counted, not timed: the same on a loaded machine.


def test_the_bundled_log_replays_counting_each_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _tokenizer_calls(monkeypatch)
    report = replay_log(BUNDLED)
    shown = sum(step.messages for step in report.steps)
    assert len(calls) <= 2 * report.events < shown / 10, (len(calls), shown)


def test_a_real_log_of_three_hundred_events_replays_counting_each_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    require_real_logs_dir()
    calls = _tokenizer_calls(monkeypatch)
    # The default before issue 39, which shows the most messages per step: each is counted once all the same.
    report = replay_log(ENYST, condenser=Condenser.from_config(dict(DEFAULT_OFFLINE_CONDENSER_CONFIG)))
    assert report.events == 297 and report.steps
    shown = sum(step.messages for step in report.steps)
    assert len(calls) <= 2 * report.events < shown / 5, (len(calls), shown)


@pytest.mark.parametrize("name", ["replayed.jsonl", "replayed.json", "replayed-session"])
def test_the_saved_log_loads_with_the_view_the_replay_ended_with(tmp_path: Path, name: str) -> None:
    report = replay_log(BUNDLED, tokenizer="approximate")
    target = tmp_path / name
    layout = write_log(report.history, target)
    assert layout == {"replayed.jsonl": "jsonl", "replayed.json": "json", "replayed-session": "session folder"}[name]
    loaded = load_events(target)
    assert View.from_events(agent_history(loaded)) == report.final_view
    # Replaying the saved log with its (now recorded) condensations shows the model the same views.
    again = replay_events(loaded, recorded=True, condenser=Condenser.from_config(dict(DEFAULT_CONDENSER_CONFIG)), tokenizer="approximate")
    assert not any(not c.recorded for c in again.condensations)
    assert [s.view_events for s in again.steps] == [s.view_events for s in report.steps]


def test_write_log_never_mixes_two_sessions_in_one_folder(tmp_path: Path) -> None:
    events = load_events(BUNDLED)
    write_log(events, tmp_path / "session")
    with pytest.raises(FileExistsError, match="already holds a session's events"):
        write_log(events, tmp_path / "session")


def test_recorded_replays_the_log_s_own_condensations_and_a_pipeline_can_run_on_top() -> None:
    recorded = replay_log(BUNDLED, recorded=True, tokenizer="approximate")
    assert recorded.pipeline == "recorded condensations"
    assert [(c.recorded, c.id) for c in recorded.condensations] == [(True, 120), (True, 243)]
    assert recorded.final_view == View.from_events(agent_history(load_events(BUNDLED)))
    on_top = replay_log(BUNDLED, recorded=True, condenser=Pipeline(ForgetOldest(size=60, keep=4), "forget"), tokenizer="approximate")
    assert on_top.pipeline == "recorded condensations + forget"
    assert {c.recorded for c in on_top.condensations} == {True, False}
    assert on_top.peak_view_events <= 61


def test_a_config_file_builds_the_pipeline_and_bad_ones_name_the_field(tmp_path: Path) -> None:
    good = tmp_path / "pipeline.toml"
    good.write_text('[condenser]\ntype = "pipeline"\ncondensers = [{ type = "recent", max_events = 30, keep_first = 2 }]\n')
    pipeline = load_pipeline(good)
    assert pipeline.description == f"{good} (recent)"
    report = replay_log(BUNDLED, condenser=pipeline, tokenizer="approximate")
    assert report.peak_view_events <= 31 and not report.condensations
    bad = tmp_path / "bad.toml"
    bad.write_text('[condenser]\ntype = "recent"\nmax_event = 3\n')
    with pytest.raises(CondenserConfigError, match=re.escape(f"{bad}: condenser 'recent': max_event: unknown field. Did you mean 'max_events'?")):
        load_pipeline(bad)
    with pytest.raises(CondenserConfigError, match=re.escape("missing.toml: no such file")) as raised:
        load_pipeline(tmp_path / "missing.toml")
    assert raised.value.exit_code == 2


def test_a_snapshot_shows_a_step_or_the_end_and_refuses_steps_the_log_lacks() -> None:
    log = Log()
    log.header()
    log.turns(3)
    first = snapshot_at(log.events, 1)
    assert first.step == 1 and first.event is log.events[2] and len(first.view) == 2
    assert [m.role for m in first.messages] == ["system", "user"]
    end = snapshot_at(log.events)
    assert end.step is None and end.steps == 3 and len(end.shown) == 8
    assert [m.role for m in end.messages][-2:] == ["assistant", "tool"]
    with pytest.raises(StepNotFoundError, match=re.escape("no step 4: the log has 3 agent steps (steps count from 1)")):
        snapshot_at(log.events, 4)
    with pytest.raises(StepNotFoundError, match=re.escape("no step 0: the log has 3 agent steps")):
        snapshot_at(log.events, 0)


def test_progress_is_reported_until_every_event_is_done() -> None:
    calls: list[tuple[int, int | None]] = []
    replay_events(load_events(BUNDLED), tokenizer="approximate", progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (0, 300) and calls[-1] == (300, 300)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_the_messages_at_each_step_are_what_conversation_memory_renders() -> None:
    log = Log()
    log.header()
    log.turns(4)
    report = replay_events(log.events, condenser=ForgetOldest(size=6), tokenizer="approximate")
    memory = ConversationMemory(system_prompt="")
    for step in report.steps:
        snapshot = snapshot_at(log.events, step.number, condenser=ForgetOldest(size=6), recorded=False)
        assert len(memory.process_events(snapshot.shown, None)) == step.messages
    assert any(isinstance(e, CondensationAction) for e in report.history)


def test_a_nested_pipeline_is_named_by_all_its_members(tmp_path: Path) -> None:
    nested = tmp_path / "nested.toml"
    nested.write_text(
        '[condenser]\ntype = "pipeline"\ncondensers = [\n'
        '  { type = "pipeline", condensers = [{ type = "observation_masking" }, { type = "browser_output_masking" }] },\n'
        '  { type = "recent", max_events = 30 },\n]\n'
    )
    assert load_pipeline(nested).description == f"{nested} (observation_masking, browser_output_masking, recent)"


def test_a_step_whose_view_leaves_a_tool_call_unanswered_counts_the_repair() -> None:
    log = Log()
    log.header()
    metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id="orphan", model_response={"id": "r0", "choices": []})
    log.add(CmdRunAction(command="never answered", tool_call_metadata=metadata))
    log.calls("ls")
    report = replay_events(log.events, condenser=NoOpCondenser(), tokenizer="approximate")
    assert [s.tool_call_repairs for s in report.steps] == [0, 1]
    assert report.tool_call_repairs == 1 and report.summary()["tool_call_repairs"] == 1
    assert report.to_dict()["per_step"][1]["tool_call_repairs"] == 1


def test_a_pipeline_file_s_history_policy_trims_every_step_s_chat(tmp_path: Path) -> None:
    pipeline_file = tmp_path / "window.toml"
    pipeline_file.write_text('[condenser]\ntype = "noop"\n\n[history_policy]\nmax_messages = 6\n')
    pipeline = load_pipeline(pipeline_file)
    assert pipeline.history_policy is not None and pipeline.history_policy.max_messages == 6
    assert pipeline.description.endswith("(noop) + history_policy(max_messages=6)")
    plain = replay_log(BUNDLED, condenser=NoOpCondenser(), tokenizer="approximate")
    trimmed = replay_log(BUNDLED, condenser=pipeline, tokenizer="approximate")
    # The system message and the first user message are pinned; at most 6 others (whole tool exchanges).
    assert max(s.messages for s in trimmed.steps) <= 2 + 6
    late_plain, late = plain.steps[-1], trimmed.steps[-1]
    assert late.messages_trimmed == late_plain.messages - late.messages > 0
    assert late.tokens < late_plain.tokens and trimmed.messages_trimmed == sum(s.messages_trimmed for s in trimmed.steps)
    assert trimmed.tool_call_repairs == 0
    # A snapshot shows the chat the policy left.
    snapshot = snapshot_at(load_events(BUNDLED), 120, condenser=pipeline, recorded=False)
    assert len(snapshot.messages) == late.messages


class OffloadOldest(ForgetOldest):
    """`ForgetOldest`, recording each condensation as a large-message offload (no model)."""

    def get_condensation(self, view: View) -> Condensation:
        condensation = super().get_condensation(view)
        kept = [e.id for e in view.events if e.id is not None and not condensation.action.forgets(e.id)]
        record = CompressionRecord(
            event_type=CompressionEventType.LARGE_MESSAGE_OFFLOAD, compressed_message_count=2,
            previous_message_id=kept[self.keep - 1], next_message_id=kept[self.keep],
            over_threshold_after=False, exhausted=False,
        )  # fmt: skip
        self.add_metadata(COMPRESSION_METADATA_KEY, record.to_metadata())
        return condensation


def test_the_compressions_a_pipeline_records_are_in_the_report() -> None:
    log = Log()
    log.header()
    log.turns(4)  # ids 2-9
    report = replay_events(log.events, condenser=OffloadOldest(5), tokenizer="approximate")
    made = [c for c in report.condensations if not c.recorded]
    assert len(made) >= 2
    compressions = report.compressions
    assert [c.compressed_message_id for c in compressions] == [c.id for c in made]
    assert {c.event_type for c in compressions} == {CompressionEventType.LARGE_MESSAGE_OFFLOAD}
    assert all(c.previous_message_id == 1 and c.condenser == "OffloadOldest" for c in compressions)
    assert all(c.tokens_before is not None and c.tokens_after is not None and c.tokens_after < c.tokens_before for c in compressions)
    assert report.summary()["compressions"] == {"LARGE_MESSAGE_OFFLOAD": len(made)}
    assert [c["compressed_message_id"] for c in report.to_dict()["compression_list"]] == [c.id for c in made]


def test_a_replay_priced_with_the_prompt_cache_reads_the_logs_idle_gaps() -> None:
    require_real_logs_dir()
    report = replay_log(ENYST, tokenizer="approximate", pricing=[PromptPricing.for_model("claude-sonnet-4-5")])
    costs = report.costs["claude-sonnet-4-5"]
    # A session over several days: some requests come after the 5-minute cache expired.
    assert costs["cold_starts"] > 0 and costs["cold_start_cost"] > 0
    assert report.timed_steps == len(report.steps)
    assert costs["prompt_cost"] < costs["prompt_cost_without_cache"]
    assert len(costs["per_step_cost"]) == len(report.steps)
    assert report.summary()["costs"]["claude-sonnet-4-5"]["cold_starts"] == costs["cold_starts"]
    assert "per_step_cost" not in report.summary()["costs"]["claude-sonnet-4-5"]


def test_secrets_are_hidden_in_the_report_the_snapshot_and_the_saved_log(tmp_path: Path) -> None:
    secret = "sk-live-7f3a9c2e51"
    log = Log()
    log.header()
    log.calls(f"deploy --token {secret}")
    log.turns(3)
    secrets = {"TOKEN": secret}
    report = replay_events(log.events, tokenizer="approximate", secrets=secrets)
    snapshot = snapshot_at(log.events, secrets=secrets)
    shown = repr(report.history) + repr(report.final_view) + repr(snapshot.messages) + repr(snapshot.view)
    assert secret not in shown and "deploy --token <secret_hidden>" in shown
    write_log(report.history, tmp_path / "replayed.jsonl")
    assert secret.encode() not in (tmp_path / "replayed.jsonl").read_bytes()
    assert secret in repr(log.events) and secret in repr(replay_events(log.events, tokenizer="approximate").history)  # only read
