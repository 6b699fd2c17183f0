"""`llm`."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _openhands_interpreter import OPENHANDS_PYTHON, require_openhands
from conftest import HANG_GUARD_SECONDS, real_log_params, require_real_log
from hypothesis import given
from hypothesis import strategies as st

from openhands_memory.condenser import (
    Condensation,
    Condenser,
    LLMSummarizingCondenser,
    PipelineCondenser,
    load_condenser_config,
)
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARIZER_NAME, OFFLINE_SUMMARY_HEADER
from openhands_memory.condenser._model_backed import MIN_SUMMARY_TOKENS, SHRINK_TRIES
from openhands_memory.condenser.impl.llm_summarizing_condenser import SUMMARY_PROMPT
from openhands_memory.errors import (
    LLMConnectionError,
    LLMContextWindowExceededError,
    LLMRateLimitError,
    LLMResponseError,
    NoCondensationAvailable,
)
from openhands_memory.events import AgentCondensationObservation, CondensationAction, event_to_dict
from openhands_memory.llm.llm import LLM
from openhands_memory.testing.condenser_replay import replay_with_condenser
from openhands_memory.testing.fake_llm import FakeLLM, FakeReply, litellm_error
from openhands_memory.testing.strategies import agent_sessions
from openhands_memory.view import View

from .._helpers import history_of, ids
from ._model_helpers import NumberedSummaries, check_llm_metrics, fake_config, fake_llm, prompt_of, round_trips, session


def test_past_max_size_the_older_half_is_summarized_after_the_head() -> None:
    s = session(6)  # 16 events
    _, llm = fake_llm("USER_CONTEXT: fix the bug\nCOMPLETED: ran cmd0-cmd4")
    result = LLMSummarizingCondenser(llm, max_size=12, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    action = result.action
    assert (action.forgotten_events_start_id, action.forgotten_events_end_id) == (4, 13)
    assert action.summary == "USER_CONTEXT: fix the bug\nCOMPLETED: ran cmd0-cmd4" and action.summary_offset == 4
    record = result.metadata
    assert (record.condenser, record.reason, record.events_before, record.events_after, record.forgotten) == ("llm", "size", 16, 7, 10)
    assert record.tokens_before is not None and record.tokens_after is not None and record.tokens_after < record.tokens_before
    assert record.extra["outcome"] == "summary" and record.extra["model"] == "fake-model"
    s.add(action)
    view = s.view
    assert ids(view) == [0, 1, 2, 3, None, 14, 15]
    assert isinstance(view[4], AgentCondensationObservation) and view[4].content == action.summary


def test_the_prompt_has_openhands_sections_and_only_the_forgotten_events() -> None:
    s = session(6)
    fake, llm = fake_llm("S")
    LLMSummarizingCondenser(llm, max_size=12, keep_first=4).condense(s.view)
    prompt = prompt_of(fake)
    for section in ("USER_CONTEXT", "TASK_TRACKING", "COMPLETED", "PENDING", "CURRENT_STATE", "CODE_STATE", "TESTS",
                    "CHANGES", "DEPS", "VERSION_CONTROL_STATUS"):  # fmt: skip
        assert f"{section}:" in prompt, section
    assert prompt.startswith(SUMMARY_PROMPT)
    assert "<PREVIOUS SUMMARY>\nNo previous summary.\n</PREVIOUS SUMMARY>" in prompt
    assert re.findall(r"<EVENT id=(\d+)>", prompt) == [str(i) for i in range(4, 14)]
    assert "<EVENT id=5>\nCmdOutputObservation (run, from environment)\ncommand: cmd0\noutput 0\n</EVENT>" in prompt
    assert prompt.endswith("Now summarize the events using the rules above.")
    assert fake.last_call.tools is None and fake.last_call.tool_choice is None


def test_the_previous_summary_is_folded_into_the_next() -> None:
    s = session(6)
    fake, llm = fake_llm("FIRST SUMMARY", "SECOND SUMMARY")
    condenser = LLMSummarizingCondenser(llm, max_size=12, keep_first=4)
    first = condenser.condense(s.view)
    assert isinstance(first, Condensation)
    s.add(first.action)
    for i in range(6):
        s.turn(f"more{i}")
    second = condenser.condense(s.view)
    assert isinstance(second, Condensation)
    assert "<PREVIOUS SUMMARY>\nFIRST SUMMARY\n</PREVIOUS SUMMARY>" in prompt_of(fake)
    assert "AgentCondensationObservation" not in prompt_of(fake)  # the summary is not also listed as an event
    s.add(second.action)
    summaries = [e for e in s.view if isinstance(e, AgentCondensationObservation)]
    assert [e.content for e in summaries] == ["SECOND SUMMARY"]
    assert s.view.events.index(summaries[0]) == 4


def test_the_summary_goes_after_the_head_as_the_framework_extends_it() -> None:
    s = session(6)
    _, llm = fake_llm("S")
    # keep_first=3 ends inside the recall and its answer (2, 3): the head grows to 4 events.
    result = LLMSummarizingCondenser(llm, max_size=12, keep_first=3).condense(s.view)
    assert isinstance(result, Condensation)
    assert result.action.summary_offset == 4 and result.action.forgotten_events_start_id == 4


def test_nothing_happens_within_budget_and_nothing_is_asked() -> None:
    fake, llm = fake_llm()
    view = session(3).view
    assert LLMSummarizingCondenser(llm, max_size=12, keep_first=4).condense(view) is view
    assert fake.calls == []


def test_max_tokens_triggers_a_summary() -> None:
    s = session(6, output="x" * 400)
    _, llm = fake_llm("S")
    condenser = LLMSummarizingCondenser(llm, max_size=100, keep_first=4, max_tokens=400)
    result = condenser.condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None and result.metadata.reason == "tokens"


def test_a_request_with_nothing_to_forget_only_clears_it_without_asking() -> None:
    s = session(0)
    s.request()
    fake, llm = fake_llm()
    result = LLMSummarizingCondenser(llm, max_size=12, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation)
    assert result.action.forgotten == [] and result.action.summary is None and fake.calls == []


def test_a_request_summarizes_even_within_budget() -> None:
    s = session(2)
    s.request()
    _, llm = fake_llm("S")
    result = LLMSummarizingCondenser(llm, max_size=100, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None and result.metadata.reason == "request"
    assert result.action.summary == "S" and result.action.forgotten


def test_event_text_is_cut_to_max_event_length() -> None:
    s = session(6, output="a" * 3000 + "b" * 3000)
    fake, llm = fake_llm("S")
    LLMSummarizingCondenser(llm, max_size=12, keep_first=4, max_event_length=300).condense(s.view)
    prompt = prompt_of(fake)
    assert prompt.count("\n... [truncated] ...\n") == 5  # the five forgotten outputs
    assert "a" * 2000 not in prompt and "b" * 140 in prompt


def test_a_prompt_over_the_context_window_is_shrunk_and_sent_again() -> None:
    s = session(6, output="z" * 5000)
    fake, llm = fake_llm(litellm_error("ContextWindowExceededError"), litellm_error("ContextWindowExceededError"), "S")
    result = LLMSummarizingCondenser(llm, max_size=12, keep_first=4, max_event_length=4000).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert len(fake.calls) == 3
    sizes = [len(prompt_of(fake, n)) for n in range(3)]
    assert sizes[0] > sizes[1] > sizes[2]
    assert result.metadata.extra["prompt_shrinks"] == 2 and result.metadata.extra["max_event_length"] == 1000
    assert result.action.summary == "S"


def test_a_prompt_that_never_fits_gives_up_after_a_few_tries() -> None:
    s = session(6)
    errors = [litellm_error("ContextWindowExceededError") for _ in range(SHRINK_TRIES + 1)]
    fake, llm = fake_llm(*errors)
    with pytest.raises(LLMContextWindowExceededError):
        LLMSummarizingCondenser(llm, max_size=12, keep_first=4).condense(s.view)
    assert len(fake.calls) == SHRINK_TRIES + 1


# -- failures ---------------------------------------------------------------------------------------

FAILURES: dict[str, tuple[Any, type[Exception], str]] = {
    "empty text": (FakeReply(text=""), LLMResponseError, "the reply has no text and no tool call"),
    "blank text": (FakeReply(text="  \n "), LLMResponseError, "the reply has no text"),
    "only a tool call": (FakeReply.tool_call("think", {"thought": "hm"}), LLMResponseError, "the reply has no text, only 1 tool call"),
    "no choices": ({"id": "x", "choices": [], "usage": {}}, LLMResponseError, "the response has no choices"),
    "connection": (litellm_error("APIConnectionError", "refused"), LLMConnectionError, "refused"),
    "rate limit": (litellm_error("RateLimitError", "slow down"), LLMRateLimitError, "slow down"),
}  # fmt: skip
"""Replies that fail, each sent twice: the model is retried once (`num_retries=1`), then gives up."""


def _with_previous_summary() -> tuple[Any, LLMSummarizingCondenser, FakeLLM]:
    """A session with a standing summary `EARLIER`, over budget again; and a condenser on a fresh fake."""
    s = session(6)
    s.condense(forgotten_events_start_id=4, forgotten_events_end_id=9, summary="EARLIER", summary_offset=4)
    for i in range(8):
        s.turn(f"again{i}")
    fake = FakeLLM()
    llm = fake.llm(fake_config(num_retries=1), sleep=lambda seconds: None)
    return s, LLMSummarizingCondenser(llm, max_size=12, keep_first=4), fake


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_raise_leaves_the_log_as_it_was(failure: str) -> None:
    reply, error, message = FAILURES[failure]
    s, condenser, fake = _with_previous_summary()
    fake.add(reply, reply)
    before = [e.model_copy() for e in s.events]
    view = s.view
    with pytest.raises(error, match=re.escape(message) + ".* \\(gave up after 2 attempts\\)"):
        condenser.condense(view)
    assert len(fake.calls) == 2
    assert s.events == before and s.view == view
    assert condenser.last_condensation is None


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_fallback_forgets_the_same_events_under_the_offline_summary_that_keeps_the_previous_summary(failure: str) -> None:
    reply, error, _ = FAILURES[failure]
    s, condenser, fake = _with_previous_summary()
    condenser.on_model_error = "fallback"
    fake.add(reply, reply)
    expected_plan = condenser.plan(s.view)
    result = condenser.condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.action.forgotten == expected_plan.forgotten_ids
    summary = result.action.summary
    assert summary is not None and summary.startswith(OFFLINE_SUMMARY_HEADER + "\nCURRENT_STATE:\n- EARLIER\n")
    # The commands of the forgotten events: the newest 8, and how many earlier ones are left out.
    assert summary.endswith("- other commands run: `cmd5`, `again0`, `again1`, `again2`, `again3`, `again4`, `again5`, "
                            "`again6` and 2 before them (events 14-15, 17-30)")
    assert result.metadata.extra["outcome"] == "fallback"
    assert result.metadata.extra["summarizer"] == OFFLINE_SUMMARIZER_NAME
    assert result.metadata.extra["error"].startswith(error.__name__)
    assert isinstance(condenser.last_error, error)
    check_llm_metrics(result.action.llm_metrics, calls=0)  # failed calls are not billed
    s.add(result.action)
    assert [e.content for e in s.view if isinstance(e, AgentCondensationObservation)] == [summary]


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_skip_returns_the_view_and_leaves_a_request_pending(failure: str) -> None:
    reply, error, _ = FAILURES[failure]
    s, condenser, fake = _with_previous_summary()
    condenser.on_model_error = "skip"
    s.request()
    fake.add(reply, reply)
    view = s.view
    assert condenser.condense(view) is view
    assert view.unhandled_condensation_request
    assert isinstance(condenser.last_error, error) and condenser.last_condensation is None
    fake.add("RECOVERED")  # the next step asks again
    result = condenser.condense(view)
    assert isinstance(result, Condensation) and result.action.summary == "RECOVERED"
    assert condenser.last_error is None


def test_skip_is_no_condensation_available_from_get_condensation() -> None:
    s = session(6)
    _, llm = fake_llm(FakeReply(text=""))
    condenser = LLMSummarizingCondenser(llm, max_size=12, keep_first=4, on_model_error="skip")
    with pytest.raises(NoCondensationAvailable, match=re.escape("llm: nothing can be forgotten (the model failed, condensing skipped: fake-model: the reply has no text")):
        condenser.get_condensation(s.view)


def test_a_bad_on_model_error_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("on_model_error must be one of raise, fallback, skip, got 'ignore'")):
        LLMSummarizingCondenser(fake_llm()[1], on_model_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape("keep_first (5) must be less than half of max_size (10)")):
        LLMSummarizingCondenser(fake_llm()[1], max_size=10, keep_first=5)


# -- usage records ----------------------------------------------------------------------------------


def test_llm_metrics_are_openhands_shaped_and_round_trip_through_the_event_model() -> None:
    s = session(6)
    _, llm = fake_llm("earlier use", litellm_error("ContextWindowExceededError"), FakeReply(text="S", prompt_tokens=1000, completion_tokens=50))
    llm.completion([{"role": "user", "content": "hello"}])
    result = LLMSummarizingCondenser(llm, max_size=12, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    metrics = result.action.llm_metrics
    check_llm_metrics(metrics, calls=1)  # this condensation's call only, not the earlier use
    assert metrics is not None
    assert metrics["accumulated_cost"] == pytest.approx(1000 * 1e-6 + 50 * 2e-6)
    assert metrics["accumulated_token_usage"]["prompt_tokens"] == 1000
    assert result.metadata.llm_usage == metrics
    action = result.action.model_copy(update={"id": 16})
    assert round_trips(action)
    assert event_to_dict(action)["llm_metrics"] == metrics


_LOAD = """
import json, sys
from openhands.events.serialization import event_from_dict
from openhands.memory.view import View
events = [event_from_dict(d) for d in json.load(sys.stdin)]
view = View.from_events(events)
last = events[-1]
print(json.dumps({"view_ids": [e.id for e in view], "summary": view[4].message,
                  "cost": last.llm_metrics.accumulated_cost, "prompt_tokens": last.llm_metrics.accumulated_token_usage.prompt_tokens,
                  "calls": len(last.llm_metrics.token_usages)}))
"""


@pytest.mark.slow
def test_openhands_loads_our_summary_and_its_llm_metrics() -> None:
    require_openhands()
    s = session(6)
    _, llm = fake_llm(FakeReply(text="THE SUMMARY", prompt_tokens=700, completion_tokens=30))
    result = LLMSummarizingCondenser(llm, max_size=12, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation)
    s.add(result.action)
    payload = json.dumps([event_to_dict(e) for e in s.events])
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([str(OPENHANDS_PYTHON), "-c", _LOAD], input=payload, capture_output=True, text=True, env=env, timeout=HANG_GUARD_SECONDS)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded["view_ids"] == [0, 1, 2, 3, -1, 14, 15]
    assert loaded["summary"] == "THE SUMMARY"
    assert loaded["cost"] == pytest.approx(700 * 1e-6 + 30 * 2e-6) and loaded["prompt_tokens"] == 700 and loaded["calls"] == 1


# -- the summary budget: a summary never makes the prompt grow ---------------------------------------


def _summary_tokens(condenser: LLMSummarizingCondenser, text: str) -> int:
    return condenser.token_counter([AgentCondensationObservation(content=text)])


def test_a_summary_longer_than_its_budget_is_cut_to_fit_and_the_condensation_records_it() -> None:
    s = session(12, output="x" * 400)
    _, llm = fake_llm("S" * 200_000)
    condenser = LLMSummarizingCondenser(llm, max_size=24, keep_first=4)
    plan = condenser.plan(s.view)
    replaced = condenser.token_counter(plan.forgotten_events)
    budget = condenser.summary_budget(plan)
    assert budget == replaced // 2 and budget > MIN_SUMMARY_TOKENS
    result = condenser.condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    summary = result.action.summary
    assert summary is not None and summary.startswith("SSS") and summary.endswith("SSS") and "[truncated]" in summary
    kept = _summary_tokens(condenser, summary)
    assert budget * 0.9 <= kept <= budget
    assert result.metadata.extra["summary_cut"] == {"tokens": _summary_tokens(condenser, "S" * 200_000), "budget": budget, "kept_tokens": kept}
    record = result.metadata
    assert record.tokens_after is not None and record.tokens_before is not None
    assert record.tokens_after <= record.tokens_before - replaced // 2


def test_the_budget_counts_the_standing_summary_it_replaces() -> None:
    s = session(6, output="x" * 400)
    s.condense(forgotten_events_start_id=4, forgotten_events_end_id=9, summary="E" * 8000, summary_offset=4)
    for i in range(8):
        s.turn(f"again{i}")
    _, llm = fake_llm("S" * 200_000)
    condenser = LLMSummarizingCondenser(llm, max_size=12, keep_first=4, max_summary_share=0.25)
    plan = condenser.plan(s.view)
    assert plan.previous_summary is not None
    replaced = condenser.token_counter([*plan.forgotten_events, plan.previous_summary])
    assert condenser.summary_budget(plan) == replaced // 4
    result = condenser.condense(s.view)
    assert isinstance(result, Condensation) and result.action.summary is not None
    assert _summary_tokens(condenser, result.action.summary) <= replaced // 4


def test_a_short_summary_is_never_cut_even_over_its_share() -> None:
    s = session(6)  # ten small events are forgotten: half of them is less than the floor
    text = "USER_CONTEXT: fix the parser" + ", and the reader" * 20
    _, llm = fake_llm(text)
    condenser = LLMSummarizingCondenser(llm, max_size=12, keep_first=4)
    plan = condenser.plan(s.view)
    assert condenser.summary_budget(plan) == MIN_SUMMARY_TOKENS
    assert _summary_tokens(condenser, text) > condenser.token_counter(plan.forgotten_events) // 2
    result = condenser.condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.action.summary == text
    assert "summary_cut" not in result.metadata.extra


def test_a_summary_that_cannot_be_cut_to_fit_is_left_out_and_the_reason_recorded() -> None:
    def counter(events: Any) -> int:
        # A counter for which any summary is huge: no cut fits.
        return sum(100_000 if isinstance(e, AgentCondensationObservation) else 10 for e in events)

    s = session(6)
    _, llm = fake_llm("a fine summary")
    result = LLMSummarizingCondenser(llm, max_size=12, keep_first=4, token_counter=counter).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.action.summary is None and result.action.summary_offset is None
    assert (result.action.forgotten_events_start_id, result.action.forgotten_events_end_id) == (4, 13)
    assert result.metadata.extra["summary_dropped"] == (
        "a summary of 100000 tokens cannot be cut to fit 128 tokens (0.5 of the tokens it replaces)"
    )


@pytest.mark.parametrize("share", [0, 1, 1.5, -0.1])
def test_a_summary_share_outside_zero_to_one_is_refused(share: float) -> None:
    _, llm = fake_llm()
    with pytest.raises(ValueError, match=re.escape(f"max_summary_share ({share}) must be between 0 and 1 (both excluded)")):
        LLMSummarizingCondenser(llm, max_summary_share=share)


# -- configs ----------------------------------------------------------------------------------------


def test_from_config_builds_it_with_a_condenser_model_and_a_custom_prompt() -> None:
    condenser = Condenser.from_config(
        {"type": "llm", "llm_config": "fast", "max_size": 12, "keep_first": 4, "max_event_length": 500,
         "summary_prompt": "Summarize tersely, as a haiku.", "on_model_error": "fallback"},
        llm_configs={"fast": {"model": "fake-model", "caching_prompt": True}},
    )  # fmt: skip
    assert isinstance(condenser, LLMSummarizingCondenser)
    assert (condenser.max_size, condenser.keep_first, condenser.max_event_length, condenser.on_model_error) == (12, 4, 500, "fallback")
    assert condenser.llm.config.caching_prompt is False and condenser.llm.config.usage_id == "condenser"
    fake = FakeLLM(["haiku"])
    condenser.llm = LLM(condenser.llm.config, completion_fn=fake)
    result = condenser.condense(session(6).view)
    assert isinstance(result, Condensation) and result.action.summary == "haiku"
    prompt = prompt_of(fake)
    assert prompt.startswith("Summarize tersely, as a haiku.\n\n<PREVIOUS SUMMARY>")
    assert "VERSION_CONTROL_STATUS" not in prompt


def test_the_summary_share_comes_from_the_config_and_is_checked_there() -> None:
    from openhands_memory.errors import CondenserConfigError

    condenser = Condenser.from_config({"type": "llm", "llm_config": {"model": "m"}, "max_summary_share": 0.2})
    assert isinstance(condenser, LLMSummarizingCondenser) and condenser.max_summary_share == 0.2
    assert Condenser.from_config({"type": "llm", "llm_config": {"model": "m"}}).max_summary_share == 0.5  # type: ignore[attr-defined]
    with pytest.raises(CondenserConfigError, match=re.escape("condenser 'llm': max_summary_share: Input should be less than 1")):
        Condenser.from_config({"type": "llm", "llm_config": {"model": "m"}, "max_summary_share": 1})


def test_a_bad_on_model_error_in_a_config_is_a_config_error() -> None:
    from openhands_memory.errors import CondenserConfigError

    with pytest.raises(CondenserConfigError, match=re.escape("condenser 'llm': on_model_error: Input should be 'raise', 'fallback' or 'skip'")):
        Condenser.from_config({"type": "llm", "llm_config": {"model": "m"}, "on_model_error": "retry"})


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_mock_response_runs_a_pipeline_from_a_config_file_offline(tmp_path: Path, suffix: str) -> None:
    mock = "USER_CONTEXT: offline summary\nPENDING: nothing"
    if suffix == ".toml":
        text = (
            '[llm.condenser]\nmodel = "gpt-4o-mini"\nmock_response = """' + mock + '"""\n\n'
            '[condenser]\ntype = "pipeline"\ncondensers = [\n'
            '  { type = "browser_output_masking", attention_window = 1 },\n'
            '  { type = "llm", llm_config = "condenser", max_size = 12, keep_first = 4 },\n]\n'
        )
    else:
        text = json.dumps({"condenser": {"type": "pipeline", "condensers": [
            {"type": "browser_output_masking", "attention_window": 1},
            {"type": "llm", "llm_config": {"model": "gpt-4o-mini", "mock_response": mock}, "max_size": 12, "keep_first": 4},
        ]}})  # fmt: skip
    path = tmp_path / f"config{suffix}"
    path.write_text(text)
    pipeline = Condenser.from_config(load_condenser_config(path))
    assert isinstance(pipeline, PipelineCondenser)
    llm_condenser = pipeline.condensers[1]
    assert isinstance(llm_condenser, LLMSummarizingCondenser) and llm_condenser.llm.completion_fn is None
    s = session(6)
    result = pipeline.condense(s.view)  # litellm's own mock path: no network, no fake
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.action.summary == mock and result.metadata.condenser == "llm"
    metrics = result.action.llm_metrics
    check_llm_metrics(metrics, calls=1)
    assert metrics is not None and metrics["token_usages"][0]["prompt_tokens"] > 0
    s.add(result.action)
    assert isinstance(s.view[4], AgentCondensationObservation) and s.view[4].content == mock


# -- replays ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("log", real_log_params("v0_"))
def test_real_logs_replay_step_by_step_with_every_summary_folded_into_the_next(log: Path | None) -> None:
    history = history_of(require_real_log(log))
    model = NumberedSummaries()
    condenser = LLMSummarizingCondenser(model.llm(), max_size=30, keep_first=4, max_event_length=2000)
    replay = replay_with_condenser(history, condenser, keep_first=4)
    assert replay.largest_view <= 31
    calls = model.fake.calls
    assert len(calls) == sum(1 for r in replay.condensations if r.extra.get("outcome") == "summary")
    # Each prompt carries the summary standing at that step: ours, or one OpenHands recorded in the log.
    recorded = [e.summary[:100] for e in history if isinstance(e, CondensationAction) and e.summary]
    for n in range(1, len(calls)):
        previous = prompt_of(model.fake, n).split("<PREVIOUS SUMMARY>\n", 1)[1].split("\n</PREVIOUS SUMMARY>", 1)[0]
        assert previous == f"summary #{n}" or previous[:100] in recorded, n
    for record in replay.condensations:
        if record.extra.get("outcome") == "summary":
            check_llm_metrics(record.llm_usage, calls=1)
    if calls:
        summaries = [e for e in View.from_events(replay.history) if isinstance(e, AgentCondensationObservation)]
        assert [e.content for e in summaries] == [f"summary #{len(calls)}"]


@given(agent_sessions(max_turns=30), st.integers(0, 2**32 - 1), st.integers(0, 3), st.integers(8, 24))
def test_random_sessions_with_a_flaky_model_replay_validly(history: list[Any], seed: int, keep_first: int, max_size: int) -> None:
    import random

    rng = random.Random(seed)
    replies = [rng.choice(["ok summary", FakeReply(text=""), litellm_error("ContextWindowExceededError")]) for _ in range(200)]
    fake = FakeLLM(replies, default="ok summary")
    llm = fake.llm(fake_config(), sleep=lambda seconds: None)
    condenser = LLMSummarizingCondenser(llm, max_size=max_size, keep_first=keep_first, on_model_error="fallback")
    replay = replay_with_condenser(history, condenser, keep_first=keep_first)
    for record in replay.condensations:
        assert record.events_after <= record.events_before
        assert record.extra.get("outcome") in (None, "summary", "fallback")
