"""Recorded usage against our replay: matching, recorded dollars, each reconstruction, the causes, and the shared logs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from openhands_memory.cli import main
from openhands_memory.events import CmdRunAction, EventSource, ToolCallMetadata, UnknownObservation, load_events
from openhands_memory.replay import calibration
from openhands_memory.replay.calibration import (
    RECONSTRUCTIONS,
    TokenRatio,
    calibrate_events,
    calibrate_log,
    pricing_model_for,
    recorded_usages,
    summarize_calibrations,
)
from conftest import real_log_params, require_real_log

# Prices easy to add by hand: $1 per million plain, $0.10 read, $1.25 written; OpenAI's prefix matching, token by token.
PRICING = {
    "model": "gpt-4o",
    "rules_name": "openai",
    "input_cost_per_token": 1e-6,
    "cache_read_cost_per_token": 1e-7,
    "cache_write_cost_per_token": 1.25e-6,
    "min_cache_tokens": 0,
    "block_tokens": 1,
}


def _usage(response: str, prompt: int, read: int = 0, write: int = 0, model: str = "gpt-4o") -> dict[str, Any]:
    return {
        "model": model,
        "prompt_tokens": prompt,
        "completion_tokens": 10,
        "cache_read_tokens": read,
        "cache_write_tokens": write,
        "response_id": response,
    }


def _run(event_id: int, command: str, usages: list[dict[str, Any]] | None, second: int) -> list[dict[str, Any]]:
    call = f"call-{event_id}"
    metadata = {
        "function_name": "execute_bash",
        "tool_call_id": call,
        "model_response": {"id": f"resp-{event_id}", "choices": []},
        "total_calls_in_response": 1,
    }
    action: dict[str, Any] = {
        "id": event_id,
        "timestamp": f"2025-01-01T00:00:{second:02d}",
        "source": "agent",
        "message": f"Running command: {command}",
        "action": "run",
        "args": {"command": command, "is_input": False, "thought": "", "blocking": False, "hidden": False, "confirmation_state": "confirmed"},
        "tool_call_metadata": metadata,
    }
    if usages is not None:
        action["llm_metrics"] = {"accumulated_cost": 0.0, "costs": [], "response_latencies": [], "token_usages": usages}
    observation = {
        "id": event_id + 1,
        "timestamp": f"2025-01-01T00:00:{second + 1:02d}",
        "source": "environment",
        "message": f"Command `{command}` executed",
        "cause": event_id,
        "observation": "run",
        "content": f"output of {command}\n" * 20,
        "extras": {"command": command, "metadata": {"exit_code": 0}, "hidden": False},
        "success": True,
        "tool_call_metadata": metadata,
    }
    return [action, observation]


def _log(tmp_path: Path, *, third_usage: bool = True, first_read: int = 0) -> Path:
    """A user task and three bash calls; the first two record usage (the second's list repeats the first's, as OpenHands copies it)."""
    first = _usage("r1", 1000, read=first_read)
    second = _usage("r2", 1200, read=896)
    events: list[dict[str, Any]] = [
        {"id": 0, "timestamp": "2025-01-01T00:00:00", "source": "user", "message": "task", "action": "message",
         "args": {"content": "List the files.", "image_urls": None, "wait_for_response": False}},
    ]
    events += _run(1, "ls", [first], 2)
    events += _run(3, "cat a.txt", [first, second], 4)
    events += _run(5, "wc -l a.txt", [first, second, _usage("r3", 1400, read=1152)] if third_usage else None, 6)
    path = tmp_path / "log.json"
    path.write_text(json.dumps(events))
    return path


def test_recorded_usages_are_counted_once_each_on_the_event_that_first_carries_them(tmp_path: Path) -> None:
    usages = recorded_usages(load_events(_log(tmp_path)))
    assert [(u.event_id, u.response_id, u.prompt_tokens) for u in usages] == [(1, "r1", 1000), (3, "r2", 1200), (5, "r3", 1400)]
    assert not any(u.writes_excluded for u in usages)
    assert [u.sent_tokens for u in usages] == [1000, 1200, 1400]


def _stats(event_id: int, prompt: int, read: int, name: str = "default") -> UnknownObservation:
    usage = {"model": "gpt-4o", "prompt_tokens": prompt, "completion_tokens": 1, "cache_read_tokens": read, "cache_write_tokens": 0}
    return UnknownObservation(
        id=event_id,
        observation="ConversationStateUpdateEvent",
        key="stats",
        value={"usage_to_metrics": {name: {"model_name": "gpt-4o", "accumulated_token_usage": usage}}},
    )


def _sdk_action(event_id: int, response: str) -> CmdRunAction:
    metadata = ToolCallMetadata(
        function_name="terminal", tool_call_id=f"call-{event_id}", model_response={"id": response, "choices": []}, total_calls_in_response=1
    )
    action = CmdRunAction(id=event_id, command="ls", tool_call_metadata=metadata)
    action.source = EventSource.AGENT
    return action


def test_sdk_stats_growth_is_the_request_of_the_next_action() -> None:
    events = [
        _stats(0, 500, 0),  # a call no action follows (a title, say)
        _stats(1, 1500, 0),  # 1,000 more: the request of action 2
        _sdk_action(2, "resp-a"),
        _stats(3, 1500, 0, name="condenser"),  # a summarizer's: stays on its stats event
        _stats(4, 2700, 900),  # 1,200 more, 900 read: the request of action 5
        _sdk_action(5, "resp-b"),
    ]
    usages = recorded_usages(events)
    assert [(u.event_id, u.prompt_tokens, u.cache_read_tokens) for u in usages] == [(0, 500, 0), (2, 1000, 0), (3, 1500, 0), (5, 1200, 900)]


def test_prompt_tokens_that_leave_the_written_tokens_out_are_read_as_anthropic_reports_them(tmp_path: Path) -> None:
    path = _log(tmp_path)
    events = json.loads(path.read_text())
    # As the proxied Claude logs record it: 4 plain tokens, 5,358 written; then 5,358 read, 6 plain, 333 written.
    events[1]["llm_metrics"]["token_usages"] = [_usage("r1", 4, write=5358, model="claude")]
    events[3]["llm_metrics"]["token_usages"] = [_usage("r2", 5364, read=5358, write=333, model="claude")]
    path.write_text(json.dumps(events))
    first, second, third = recorded_usages(load_events(path))
    assert first.writes_excluded and third.writes_excluded  # one request says so: the whole log is read that way
    assert (first.sent_tokens, first.uncached_tokens) == (5362, 4)
    assert (second.sent_tokens, second.uncached_tokens) == (5697, 6)


def test_each_recorded_request_is_matched_to_its_step_and_its_dollars_added_by_hand(tmp_path: Path) -> None:
    report = calibrate_log(_log(tmp_path), tokenizer=None, pricing=PRICING, reconstruct=False)
    assert report.complete and report.model == "gpt-4o" and report.steps == 3
    assert [(r.step, r.event_id, r.recorded.response_id) for r in report.requests] == [(1, 1, "r1"), (2, 3, "r2"), (3, 5, "r3")]
    # r1: 1,000 plain = $0.001; r2: 896 read + 304 plain = $0.0000896 + $0.000304; r3: 1,152 read + 248 plain.
    assert [r.recorded_cost for r in report.requests] == pytest.approx([0.001, 0.0003936, 0.0001152 + 0.000248])
    totals = report.totals()
    assert totals["cache_read_tokens"]["recorded"] == 896 + 1152
    assert totals["prompt_tokens"]["recorded"] == 3600
    # Ours: each prompt extends the one before, so each reads all of the previous one and writes the rest.
    ours = [r.ours for r in report.requests]
    assert ours[0].cache_read_tokens == 0 and ours[0].cache_write_tokens == ours[0].prompt_tokens
    assert ours[1].cache_read_tokens == ours[0].prompt_tokens
    assert ours[2].cache_read_tokens == ours[1].prompt_tokens
    assert ours[0].cost == pytest.approx(ours[0].prompt_tokens * 1.25e-6)
    assert [r.counted_tokens for r in report.requests] == [r.ours.prompt_tokens for r in report.requests]


def test_a_step_without_recorded_usage_is_named_and_left_out_of_the_sums(tmp_path: Path) -> None:
    report = calibrate_log(_log(tmp_path, third_usage=False), tokenizer=None, pricing=PRICING, reconstruct=False)
    assert not report.complete
    assert report.unmatched_steps == [3] and len(report.requests) == 2
    assert "unmatched: 1 step(s) carry no recorded usage (not summed)" in report.causes
    assert report.totals()["prompt_tokens"]["recorded"] == 2200


def test_a_log_without_recorded_usage_says_why(tmp_path: Path) -> None:
    path = _log(tmp_path)
    events = [{k: v for k, v in event.items() if k != "llm_metrics"} for event in json.loads(path.read_text())]
    path.write_text(json.dumps(events))
    report = calibrate_log(path, tokenizer=None)
    assert report.reason == "no recorded usage (no llm_metrics.token_usages, no SDK stats, in the log)"
    assert report.requests == [] and report.unmatched_steps == [1, 2, 3] and not report.is_within_tolerance
    assert summarize_calibrations([report]) == {}


def test_the_missing_system_prompt_is_inferred_from_the_first_request(tmp_path: Path) -> None:
    without = calibrate_log(_log(tmp_path), tokenizer=None, pricing=PRICING, reconstruct=False)
    report = calibrate_log(_log(tmp_path), tokenizer=None, pricing=PRICING, reconstruct={"system_prompt"})
    counted = without.requests[0].ours.prompt_tokens
    assert counted < 1000
    assert [r.ours.prompt_tokens for r in report.requests] == [r.ours.prompt_tokens + 1000 - counted for r in without.requests]
    assert any(line.startswith(f"missing system prompt and tool definitions: the log holds none; {1000 - counted:,} tokens") for line in report.reconstructions)


def test_a_warm_start_serves_the_fixed_prefix_to_the_first_request(tmp_path: Path) -> None:
    path = _log(tmp_path, first_read=896)
    cold = calibrate_log(path, tokenizer=None, pricing=PRICING, reconstruct={"system_prompt"})
    warm = calibrate_log(path, tokenizer=None, pricing=PRICING, reconstruct={"system_prompt", "warm_start"})
    assert cold.requests[0].ours.cache_read_tokens == 0
    prefix = 1000 - calibrate_log(path, tokenizer=None, pricing=PRICING, reconstruct=False).requests[0].ours.prompt_tokens
    # The fixed prefix (the inferred one, and the system message the replay renders) is read; the task is not.
    assert prefix <= warm.requests[0].ours.cache_read_tokens < 1000
    assert any(line.startswith("warm start: the first request read 896 cached tokens") for line in warm.reconstructions)


def test_the_learned_token_ratio_scales_our_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(calibration.TOKEN_RATIOS, ("openai", "approximate"), TokenRatio(2.0, "a test"))
    plain = calibrate_log(_log(tmp_path), tokenizer=None, pricing=PRICING, reconstruct=False)
    scaled = calibrate_log(_log(tmp_path), tokenizer=None, pricing=PRICING, reconstruct={"token_ratio"})
    assert [r.ours.prompt_tokens for r in scaled.requests] == [2 * r.ours.prompt_tokens for r in plain.requests]
    assert "token ratio: our prompt tokens x 2.0 (openai counted with approximate; learned from a test)" in scaled.reconstructions


def test_without_a_learned_ratio_the_tokenizer_is_named_as_a_cause(tmp_path: Path) -> None:
    report = calibrate_log(_log(tmp_path), tokenizer=None, pricing=PRICING, reconstruct={"token_ratio"})
    assert "tokenizer: no learned ratio for openai counted with approximate: counted as is" in report.causes
    assert any(line.startswith("tokenizer: our prompts hold") for line in report.causes)


def test_an_idle_gap_longer_than_the_cache_lives_is_named(tmp_path: Path) -> None:
    path = _log(tmp_path)
    events = json.loads(path.read_text())
    for event in events[4:]:  # the third call's output came 20 minutes later: its request finds the cache cold
        event["timestamp"] = event["timestamp"].replace("00:00:", "00:20:")
    path.write_text(json.dumps(events))
    report = calibrate_log(path, tokenizer=None, pricing=PRICING, reconstruct=False)
    assert report.requests[2].ours.kind == "expired" and report.requests[2].ours.cache_read_tokens == 0
    assert "lifetime: 1 request(s) came after an idle gap longer than the cache's 300 s lifetime (cold in our model)" in report.causes


def test_requests_cached_on_one_side_only_near_the_minimum_prefix_are_named(tmp_path: Path) -> None:
    report = calibrate_log(_log(tmp_path), tokenizer=None, pricing={**PRICING, "min_cache_tokens": 1024}, reconstruct=False)
    # Our prompts are far below 1,024 tokens, so we cache nothing; the provider read 896 and 1,152 tokens.
    assert [r.ours.cache_read_tokens for r in report.requests] == [0, 0, 0]
    assert "minimum prefix: 2 request(s) near the 1,024-token minimum cacheable prefix cached on one side only" in report.causes


def test_an_unknown_reconstruction_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=re.escape("unknown reconstruction(s) browser: one of token_ratio")):
        calibrate_log(_log(tmp_path), tokenizer=None, reconstruct={"browser"})


def test_the_recorded_model_is_priced_under_the_name_litellm_knows() -> None:
    assert pricing_model_for("gpt-4o") == "gpt-4o"
    assert pricing_model_for("openai/neulab/gpt-4o") == "gpt-4o"
    # Retired from litellm's map under Anthropic's name; Bedrock's entry has the same prices.
    assert pricing_model_for("openai/neulab/claude-3-7-sonnet-20250219") == "anthropic.claude-3-7-sonnet-20250219-v1:0"
    assert pricing_model_for("no-such-model-anywhere") == "no-such-model-anywhere"


def test_summaries_add_up_per_model(tmp_path: Path) -> None:
    report = calibrate_log(_log(tmp_path), tokenizer=None, pricing=PRICING, reconstruct=False)
    summed = summarize_calibrations([report, report])
    assert summed["gpt-4o"]["logs"] == 2 and summed["gpt-4o"]["requests"] == 6
    assert summed["gpt-4o"]["cache_read_tokens"]["recorded"] == 2 * (896 + 1152)
    assert summed["gpt-4o"]["cost"]["difference"] == pytest.approx(report.totals()["cost"]["difference"])


def test_the_command_prints_the_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _log(tmp_path)
    pricing = tmp_path / "pricing.json"
    pricing.write_text(json.dumps(PRICING))
    assert main(["calibrate", str(path), "--tokenizer", "approximate", "--pricing", str(pricing)]) == 0
    out = capsys.readouterr().out
    assert "| log | model | requests | prompt tokens | cache reads | cache writes | prompt dollars | within |" in out
    assert "| log.json | gpt-4o | 3/3 | " in out
    assert main(["calibrate", str(path), "--tokenizer", "approximate", "--pricing", str(pricing), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["logs"][0]["requests"] == 3 and data["logs"][0]["totals"]["cache_read_tokens"]["recorded"] == 2048
    assert set(data["per_model"]) == {"gpt-4o"}


def test_the_command_refuses_an_unknown_pricing_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", str(_log(tmp_path)), "--pricing", "no-such-model-anywhere"]) == 2
    assert capsys.readouterr().err.startswith("error: pricing 'no-such-model-anywhere'")


# --------------------------------------------------------------------------------------- the shared logs

# The logs whose every request records usage, and the reconstructions each needs (dropping any one of them takes
# the log further from what was billed): measured with `openhands-memory calibrate` (README). The token and page
# ratios are learned on the 524 other OpenAgentSafety logs (benchmarks/calibration_held_out.py --ship; the method
# checked out of sample on a half split: 86% (claude) and 80% (gpt-4o) of the held-out logs within 5%), so these
# three are out of sample, and all three come within 5% (command-bot's cache reads the nearest the edge, +4.6%).
_RECORDED = {
    "v0_oas_gpt-4o_traj_safety-command-bot": {"token_ratio", "system_prompt"},
    "v0_oas_claude-sonnet_traj_safety-data-science": {
        "token_ratio", "system_prompt", "browser_pages", "browser_masking", "content_blocks",
    },
    # content_blocks (Anthropic's lookback in content blocks, a provider rule, not a fit) is made here too, but this
    # log alone comes nearer without it (its largest difference 1.9% against 2.7%, both within 5%).
    "v0_oas_claude-sonnet_traj_safety-signatories": {
        "token_ratio", "system_prompt", "browser_pages", "browser_masking",
    },
}  # fmt: skip
_WITHIN_5 = set(_RECORDED)


def _error(report: calibration.LogCalibration) -> float:
    """The larger of the cache reads' and the prompt dollars' relative differences from what was billed."""
    totals = report.totals()
    return max(abs(totals["cache_read_tokens"]["difference"]), abs(totals["cost"]["difference"]))


@pytest.mark.parametrize("log", real_log_params("v0_") + real_log_params("v1_"))
def test_every_shared_log_has_a_summary_and_its_reasons(log: Path | None) -> None:
    path = require_real_log(log)
    report = calibrate_log(path)
    summary = report.summary()
    assert summary["source"] == str(path) and summary["steps"] == report.steps
    if path.stem in _RECORDED:
        assert report.complete and summary["totals"] is not None
        assert report.reconstructions and report.causes  # what was reconstructed, and what still differs
        assert report.is_within_tolerance == (path.stem in _WITHIN_5), summary["totals"]
        assert _error(report) <= calibration.TOLERANCE, summary["totals"]
    elif path.stem == "v1_oh-sdk_goal-fixture_events":
        # A slice of an SDK conversation: four requests in its stats, two of them before actions it holds.
        assert [r.event_id for r in report.requests] == [3, 8] and not report.complete
        assert "unmatched: 2 recorded request(s) match no step" in report.causes
    else:
        assert report.reason == "no recorded usage (no llm_metrics.token_usages, no SDK stats, in the log)"


@pytest.mark.parametrize("name", sorted(_RECORDED))
def test_each_reconstruction_a_shared_log_needs_is_needed(name: str) -> None:
    logs = {path.stem: path for param in real_log_params("v0_") for path in param.values if path is not None}
    path = require_real_log(logs.get(name))
    error = _error(calibrate_log(path))
    assert _error(calibrate_log(path, reconstruct=False)) > 2 * error
    for needed in _RECORDED[name]:
        without = calibrate_log(path, reconstruct=set(RECONSTRUCTIONS) - {needed})
        assert _error(without) > error, f"{name} is no further from what was billed without {needed}"


def test_an_output_longer_than_openhands_max_message_chars_is_counted_as_the_agent_cut_it(tmp_path: Path) -> None:
    """OpenHands V0 cut every observation to 30,000 characters before sending it; the log keeps it whole."""
    first, second, third = _usage("r1", 1000), _usage("r2", 8700, read=896), _usage("r3", 8900, read=8600)
    events: list[dict[str, Any]] = [
        {"id": 0, "timestamp": "2025-01-01T00:00:00", "source": "user", "message": "task", "action": "message",
         "args": {"content": "List the files.", "image_urls": None, "wait_for_response": False}},
    ]  # fmt: skip
    events += _run(1, "cat big.log", [first], 2)
    events[-1]["content"] = "a log line of forty characters, repeated\n" * 2_500  # 100,000 characters
    events += _run(3, "ls", [first, second], 4)
    events += _run(5, "wc -l a.txt", [first, second, third], 6)
    path = tmp_path / "log.json"
    path.write_text(json.dumps(events))
    pricing = tmp_path / "pricing.json"
    pricing.write_text(json.dumps(PRICING))

    cut = calibrate_events(load_events(path), tokenizer=None, pricing=str(pricing))
    assert any(line.startswith("long outputs: the agent cut every observation to 30,000 characters") for line in cut.reconstructions)
    whole = calibrate_events(load_events(path), tokenizer=None, pricing=str(pricing), reconstruct=set(RECONSTRUCTIONS) - {"message_chars"})
    assert not any(line.startswith("long outputs") for line in whole.reconstructions)
    ours = [r.counted_tokens for r in cut.requests]
    assert ours[1] - ours[0] < 8_000 < [r.counted_tokens for r in whole.requests][1] - ours[0]  # 30,000 characters, not 100,000
    assert abs(cut.totals()["prompt_tokens"]["difference"]) < abs(whole.totals()["prompt_tokens"]["difference"])
