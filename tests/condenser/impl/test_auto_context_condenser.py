"""`auto_context`: AgentScope's six compressions, lightest first, one unit per call."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    REAL_LOGS_DIR,
    real_log_params,
    require_real_log,
    require_real_logs_dir,
)

from openhands_memory.condenser import (
    AutoContextCondenser,
    AutoContextCondenserConfig,
    Condensation,
    Condenser,
    load_condenser_config,
)
from openhands_memory.condenser._model_backed import render_event
from openhands_memory.condenser.impl.auto_context_condenser import (
    COMPRESSION_EVENT_TYPES,
    CURRENT_ROUND_PROMPT,
    ROUND_SUMMARY_PROMPT,
)
from openhands_memory.condenser.impl.large_output_offload_condenser import (
    offload_notice,
)
from openhands_memory.condenser.offline_summary import (
    OFFLINE_SUMMARIZER_NAME,
    OFFLINE_SUMMARY_HEADER,
)
from openhands_memory.errors import CondenserConfigError
from openhands_memory.events import (
    AgentCondensationObservation,
    CondensationAction,
    Event,
    EventSource,
    Observation,
    TaskTrackingAction,
    TaskTrackingObservation,
    ToolCallMetadata,
)
from openhands_memory.testing.condenser_replay import replay_with_condenser
from openhands_memory.testing.fake_llm import FakeLLM, FakeReply
from openhands_memory.view import View

from .._helpers import Session, history_of
from ._model_helpers import NumberedSummaries, fake_config, prompt_of

BIG = "x" * 300  # over a large_payload_threshold of 100
ENORMOUS = 10**9  # a threshold never reached


_NO_MODEL = "no model"


def _condenser(llm: Any = None, **options: Any) -> AutoContextCondenser:
    """A condenser whose thresholds are out of reach unless a test lowers them; no protected tail, small "large".

    `llm` None: a FakeLLM; `_NO_MODEL`: none (offline)."""
    values: dict[str, Any] = {
        "msg_threshold": ENORMOUS,
        "max_token": ENORMOUS,
        "last_keep": 0,
        "large_payload_threshold": 100,
        "offload_single_preview": 20,
    }
    values.update(options)
    if llm is None:
        llm = FakeLLM().llm(fake_config(), sleep=lambda s: None)
    return AutoContextCondenser(None if llm is _NO_MODEL else llm, **values)


def _scripted(*replies: str) -> tuple[FakeLLM, Any]:
    fake = FakeLLM(list(replies), default="a summary")
    return fake, fake.llm(fake_config(), sleep=lambda s: None)


def _condense(condenser: Condenser, view: View) -> Condensation:
    outcome = condenser.condense(view)
    assert isinstance(outcome, Condensation), "expected a condensation"
    return outcome


def _record(condensation: Condensation) -> dict[str, Any]:
    assert condensation.metadata is not None
    return condensation.metadata.extra["compression"]


def _summaries(view: View) -> list[str]:
    return [e.content for e in view if isinstance(e, AgentCondensationObservation)]


def _append(events: list[Event], action: CondensationAction) -> CondensationAction:
    """Append `action` as the stream would: the next id, from the agent."""
    appended = action.model_copy(update={"id": max(e.id for e in events if e.id is not None) + 1, "source": EventSource.AGENT})
    events.append(appended)
    return appended


# -- config ---------------------------------------------------------------------------------------


def test_config_has_agentscopes_defaults() -> None:
    config = AutoContextCondenserConfig(llm_config="condenser")
    assert config.model_dump(exclude={"llm_config"}) == {
        "type": "auto_context",
        "msg_threshold": 100,
        "max_token": 131072,
        "token_ratio": 0.75,
        "last_keep": 50,
        "large_payload_threshold": 5120,
        "offload_single_preview": 200,
        "min_consecutive_tool_messages": 6,
        "current_round_compression_ratio": 0.3,
        "custom_prompt": None,
        "keep_first": 1,
        "max_event_length": 10_000,
        "on_model_error": "raise",
    }
    condenser = Condenser.from_config({"type": "auto_context", "llm_config": {"model": "gpt-4o"}})
    assert isinstance(condenser, AutoContextCondenser)
    assert condenser.token_threshold == 98304


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"msg_treshold": 5}, "condenser 'auto_context': msg_treshold: unknown field. Did you mean 'msg_threshold'?"),
        ({"token_ratio": 0}, "condenser 'auto_context': token_ratio: Input should be greater than 0"),
        ({"current_round_compression_ratio": 1}, "current_round_compression_ratio: Input should be less than 1"),
        ({"offload_single_preview": 5120}, "offload_single_preview (5120) must be less than large_payload_threshold (5120)"),
        ({"custom_prompt": {"previous_round_summary_promt": "x"}}, "custom_prompt.previous_round_summary_promt: unknown field"),
        ({"llm_config": 3}, "llm_config"),
    ],
)
def test_config_rejects_bad_fields(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(CondenserConfigError, match=re.escape(message)):
        Condenser.from_config({"type": "auto_context", "llm_config": {"model": "gpt-4o"}, **fields})


def test_constructor_rejects_what_the_config_rejects() -> None:
    with pytest.raises(CondenserConfigError, match=re.escape("condenser 'auto_context': last_keep: Input should be greater than or equal to 0")):
        _condenser(last_keep=-1)


def test_config_reads_from_toml_with_custom_prompts(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[llm.condenser]\nmodel = "gpt-4o"\n\n[condenser]\ntype = "auto_context"\nllm_config = "condenser"\n'
        'msg_threshold = 40\n[condenser.custom_prompt]\ncurrent_round_compress_prompt = "Squeeze it."\n'
    )
    config = load_condenser_config(path)
    assert isinstance(config, AutoContextCondenserConfig)
    assert config.msg_threshold == 40
    assert config.custom_prompt is not None
    assert config.custom_prompt.current_round_compress_prompt == "Squeeze it."
    assert config.custom_prompt.previous_round_summary_prompt is None


# -- triggers -------------------------------------------------------------------------------------


def test_under_both_thresholds_the_view_is_returned_without_a_model_call() -> None:
    s = Session()
    s.header()
    for i in range(8):
        s.turn(f"cmd{i}", BIG)
    fake = FakeLLM()
    condenser = _condenser(fake.llm(fake_config(), sleep=lambda x: None), msg_threshold=21)
    view = s.view
    assert len(view) == 20
    assert condenser.condense(view) is view
    assert fake.calls == []
    assert condenser.exhausted_count == 0


# -- each strategy --------------------------------------------------------------------------------


def _two_rounds(first_round_turns: int, output: str = "out") -> Session:
    """0 system, 1 task, 2-3 recall, then tool turns (the first round), then a new user message and the agent's reply."""
    s = Session()
    s.header()
    for i in range(first_round_turns):
        s.turn(f"cmd{i}", f"{output}{i}")
    s.user("Now the second part")
    s.agent("On it")
    return s


def test_strategy_1_compresses_a_run_of_past_tool_messages_into_one_persisting_summary() -> None:
    s = _two_rounds(3)  # tool messages 4-9; user 10; agent 11
    fake, llm = _scripted("ran cmd0, cmd1, cmd2: out0-2")
    condenser = _condenser(llm, msg_threshold=12)
    condensation = _condense(condenser, s.view)
    action = condensation.action
    assert sorted(action.forgotten) == [4, 5, 6, 7, 8, 9]
    assert action.summary_persists is True
    assert action.summary_offset == 4
    assert action.summary == "[compressed tool calls: events 4-9]\nran cmd0, cmd1, cmd2: out0-2"
    prompt = prompt_of(fake)
    assert [int(i) for i in re.findall(r"<EVENT id=(\d+)>", prompt)] == [4, 5, 6, 7, 8, 9]
    assert prompt.endswith("Now write the compact record of these tool calls.")
    assert "<CURRENT PLAN>" not in prompt  # no task tracking in this session
    assert _record(condensation) == {
        "event_type": "TOOL_INVOCATION_COMPRESS",
        "compressed_message_count": 6,
        "previous_message_id": 3,
        "next_message_id": 10,
        "over_threshold_after": False,
        "exhausted": False,
    }
    assert condensation.metadata is not None and condensation.metadata.llm_usage is not None
    events = [*s.events]
    _append(events, action)
    view = View.from_events(events)
    assert [e.id for e in view] == [0, 1, 2, 3, None, 10, 11]
    assert condenser.condense(view) is view  # 7 events: under the threshold


def test_strategy_1_needs_min_consecutive_tool_messages_and_respects_last_keep() -> None:
    _, llm = _scripted()
    # Two turns (4 tool messages) are too short a run: the round is summarized instead (strategy 4).
    condensation = _condense(_condenser(llm, msg_threshold=8), _two_rounds(2).view)
    assert _record(condensation)["event_type"] == "PREVIOUS_ROUND_CONVERSATION_SUMMARY"
    # The run reaches into the newest last_keep events: strategy 1 leaves it, strategy 4 takes the round.
    condensation = _condense(_condenser(llm, msg_threshold=12, last_keep=5), _two_rounds(3).view)
    assert _record(condensation)["event_type"] == "PREVIOUS_ROUND_CONVERSATION_SUMMARY"


def _one_round_with_large_output(*, latest_large: bool = False) -> Session:
    """0 system, 1 task, 2-3 recall; 4-5 a call with a large output; 6-7 the latest call (large or not)."""
    s = Session()
    s.header()
    s.turn("cat big.log", BIG)
    s.turn("ls", BIG if latest_large else "small")
    return s


def test_strategy_2_offloads_a_large_output_outside_last_keep_without_a_model() -> None:
    s = _one_round_with_large_output()
    fake = FakeLLM()
    condenser = _condenser(fake.llm(fake_config(), sleep=lambda x: None), msg_threshold=8, last_keep=2)
    condensation = _condense(condenser, s.view)
    action = condensation.action
    assert sorted(action.forgotten) == [4, 5]  # the call and its result: one unit
    assert action.summary_persists is True and action.summary_offset == 4
    assert action.summary is not None
    assert action.summary.startswith("[offloaded tool call: events 4-5]\nCmdRunAction (run, from agent)\ncommand: cat big.log")
    assert action.summary.endswith("CmdOutputObservation (event 5):\n" + "x" * 20 + "\n" + offload_notice(300, 5))
    assert fake.calls == []
    assert condensation.metadata is not None and condensation.metadata.llm_usage is None
    assert _record(condensation)["event_type"] == "LARGE_MESSAGE_OFFLOAD"


def test_strategy_3_offloads_inside_last_keep_but_never_the_latest_response() -> None:
    s = _one_round_with_large_output()
    condensation = _condense(_condenser(msg_threshold=8, last_keep=50), s.view)
    assert _record(condensation)["event_type"] == "LARGE_MESSAGE_OFFLOAD_UNPROTECTED"
    assert sorted(condensation.action.forgotten) == [4, 5]


def test_the_latest_response_and_what_follows_it_are_never_compressed(caplog: pytest.LogCaptureFixture) -> None:
    s = Session()
    s.header()
    s.turn("cat big.log", BIG)  # 4-5: the latest model response and its large result
    condenser = _condenser(msg_threshold=6)
    view = s.view
    with caplog.at_level(logging.WARNING):
        assert condenser.condense(view) is view
        assert condenser.condense(view) is view
    assert condenser.exhausted_count == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        (
            "auto_context: the view is over its threshold (6 events, "
            f"{condenser.token_counter(view)} tokens; thresholds 6 events, {condenser.token_threshold} tokens) "
            "and no strategy has anything left to compress"
        )
    ]


def test_strategy_4_summarizes_a_past_round_in_place() -> None:
    s = _two_rounds(2)  # round 1: 1 task (kept), 2-3 recall, 4-7 two turns; 8 user; 9 agent
    fake, llm = _scripted("round one: ran cmd0 and cmd1")
    condensation = _condense(_condenser(llm, msg_threshold=10), s.view)
    action = condensation.action
    assert sorted(action.forgotten) == [2, 3, 4, 5, 6, 7]
    assert action.summary == "[summary of a past round: events 2-7]\nround one: ran cmd0 and cmd1"
    assert action.summary_offset == 2
    prompt = prompt_of(fake)
    assert prompt.startswith(ROUND_SUMMARY_PROMPT)
    assert prompt.endswith("Now write the summary of this round.")
    assert _record(condensation)["event_type"] == "PREVIOUS_ROUND_CONVERSATION_SUMMARY"


def test_strategy_5_summarizes_a_large_message_of_the_current_round_with_its_handle() -> None:
    s = Session()
    s.header()
    big = s.agent("Here is my analysis: " + BIG)  # 4: large, but no tool output to offload
    s.turn("ls", "small")  # 5-6: the latest response
    fake, llm = _scripted("the analysis says x")
    condensation = _condense(_condenser(llm, max_token=1, token_ratio=1.0), s.view)  # over the token threshold
    action = condensation.action
    assert list(action.forgotten) == [4]
    assert action.summary == (
        "[summary of a large message: event 4]\nthe analysis says x\n"
        f"[event 4: {len(big.content)} characters offloaded; call context_reload with event_id=4 to see all of it]"
    )
    assert _record(condensation)["event_type"] == "CURRENT_ROUND_LARGE_MESSAGE_SUMMARY"
    assert "<EVENT id=4>" in prompt_of(fake)


def test_strategy_6_compresses_the_current_round_to_a_stated_target() -> None:
    s = Session()
    s.header()
    for i in range(4):
        s.turn(f"cmd{i}", f"output number {i} " * 5)  # 4-11
    s.agent("Done so far")  # 12: the latest response
    fake, llm = _scripted("y" * 5000)  # far over the target: cut to it
    condenser = _condenser(llm, msg_threshold=13)
    view = s.view
    condensation = _condense(condenser, view)
    action = condensation.action
    assert sorted(action.forgotten) == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]  # the recall pair too: it is this round's
    # The size of what is compressed: an observation's content, an action as a prompt shows it.
    compressed = [e for e in view if e.id in set(action.forgotten)]
    original = sum(len(e.content) if isinstance(e, Observation) else len(render_event(e)) for e in compressed)
    target = int(0.3 * original)
    prompt = prompt_of(fake)
    assert prompt.startswith(CURRENT_ROUND_PROMPT)
    assert prompt.endswith(
        f"Now write the compact account. It must be at most {target} characters long "
        f"(about 30% of the {original} characters above)."
    )
    assert action.summary is not None
    body = action.summary.split("\n", 1)[1]
    assert len(body) <= target
    assert condensation.metadata is not None
    assert condensation.metadata.extra["summary_cut"] == {"characters": 5000, "target": target}
    assert _record(condensation)["event_type"] == "CURRENT_ROUND_MESSAGE_COMPRESS"


# -- protections, plan, batches -------------------------------------------------------------------


def _task_list(status: str) -> list[dict[str, str]]:
    return [{"id": "t1", "title": "Read the code", "status": "done"}, {"id": "t2", "title": "Fix the bug", "status": status}]


def test_the_plan_is_in_every_prompt_before_the_final_instruction_and_its_latest_event_stays() -> None:
    s = Session()
    s.header()
    metadata = ToolCallMetadata(function_name="task_tracker", tool_call_id="plan_1", model_response={"id": "r_plan"}, total_calls_in_response=1)
    plan = s.add(TaskTrackingAction(command="plan", task_list=_task_list("todo"), tool_call_metadata=metadata))  # 4
    s.add(TaskTrackingObservation(command="plan", task_list=_task_list("in_progress"), cause=plan.id, tool_call_metadata=metadata))  # 5
    for i in range(3):
        s.turn(f"cmd{i}", f"out{i}")  # 6-11
    s.agent("Still working")  # 12
    fake, llm = _scripted("compressed")
    condensation = _condense(_condenser(llm, msg_threshold=13), s.view)
    assert _record(condensation)["event_type"] == "CURRENT_ROUND_MESSAGE_COMPRESS"
    forgotten = sorted(condensation.action.forgotten)
    assert 4 not in forgotten and 5 not in forgotten  # the latest task-tracking event (with its call) stays
    assert forgotten == [2, 3, 6, 7, 8, 9, 10, 11]
    prompt = prompt_of(fake)
    hint = (
        "<CURRENT PLAN>\nThe agent is working through this task list (id: title, with its status). "
        "Keep what the plan still needs, and name the task ids a line is about.\n"
        "- [done] t1: Read the code\n- [in_progress] t2: Fix the bug\n</CURRENT PLAN>"
    )
    assert hint in prompt
    assert prompt.index(hint) < prompt.index("Now write the compact account.")
    assert prompt.rstrip().endswith("characters above).")


def test_plan_calls_in_a_tool_run_get_one_line_each() -> None:
    s = Session()
    s.header()
    metadata = ToolCallMetadata(function_name="task_tracker", tool_call_id="plan_1", model_response={"id": "r_plan"}, total_calls_in_response=1)
    plan = s.add(TaskTrackingAction(command="plan", task_list=_task_list("todo"), tool_call_metadata=metadata))  # 4
    s.add(TaskTrackingObservation(command="plan", task_list=_task_list("todo"), cause=plan.id, tool_call_metadata=metadata))  # 5
    for i in range(3):
        s.turn(f"cmd{i}", f"out{i}")  # 6-11
    metadata2 = ToolCallMetadata(function_name="task_tracker", tool_call_id="plan_2", model_response={"id": "r_plan2"}, total_calls_in_response=1)
    plan2 = s.add(TaskTrackingAction(command="plan", task_list=_task_list("in_progress"), tool_call_metadata=metadata2))  # 12
    s.add(TaskTrackingObservation(command="plan", task_list=_task_list("in_progress"), cause=plan2.id, tool_call_metadata=metadata2))  # 13
    s.user("And another thing")  # 14
    s.agent("ok")  # 15
    fake, llm = _scripted("compressed")
    condensation = _condense(_condenser(llm, msg_threshold=16), s.view)
    assert _record(condensation)["event_type"] == "TOOL_INVOCATION_COMPRESS"
    assert sorted(condensation.action.forgotten) == [4, 5, 6, 7, 8, 9, 10, 11]  # 12-13 hold the current plan
    prompt = prompt_of(fake)
    assert "<EVENT id=4>\nTaskTrackingAction: task list with 2 tasks\n</EVENT>" in prompt
    assert "- [in_progress] t2: Fix the bug" in prompt


def test_a_parallel_batch_is_offloaded_whole() -> None:
    s = Session()
    s.header()
    first, second = s.calls("cat a.log", "cat b.log")  # 4, 5: one response
    s.result(first, BIG)  # 6
    s.result(second, "short")  # 7
    s.agent("Read both")  # 8
    condensation = _condense(_condenser(msg_threshold=9), s.view)
    assert sorted(condensation.action.forgotten) == [4, 5, 6, 7]
    assert condensation.action.summary is not None
    assert offload_notice(300, 6) in condensation.action.summary
    assert "command: cat b.log" in condensation.action.summary


def test_the_first_and_the_latest_user_messages_are_never_compressed() -> None:
    s = Session()
    s.header()  # 1: the first user message
    s.turn("ls", "file " * 16)  # 4-5
    s.user("x" * 400)  # 6: a large latest user message (the current round starts here)
    s.agent("ok")  # 7
    _, llm = _scripted("listed the files")
    outcome = _condense(_condenser(llm, msg_threshold=8), s.view)
    assert _record(outcome)["event_type"] == "PREVIOUS_ROUND_CONVERSATION_SUMMARY"
    assert sorted(outcome.action.forgotten) == [2, 3, 4, 5]


# -- several summaries, re-compression, exhaustion ------------------------------------------------


def test_several_persisting_summaries_stand_at_once_and_a_later_one_lists_an_earlier_ones_id() -> None:
    s = Session()
    s.header()  # 0-3
    for i in range(3):
        s.turn(f"a{i}", f"out a{i}")  # 4-9
    s.agent("first half done")  # 10
    for i in range(3):
        s.turn(f"b{i}", f"out b{i}")  # 11-16
    s.user("Next")  # 17
    s.agent("ok")  # 18
    summaries = NumberedSummaries()
    condenser = _condenser(summaries.llm(), msg_threshold=8)
    events = list(s.events)
    kinds = []
    for _ in range(5):
        outcome = condenser.condense(View.from_events(events))
        if not isinstance(outcome, Condensation):
            break
        kinds.append(_record(outcome)["event_type"])
        _append(events, outcome.action)
    assert kinds == ["TOOL_INVOCATION_COMPRESS", "TOOL_INVOCATION_COMPRESS", "PREVIOUS_ROUND_CONVERSATION_SUMMARY"]
    first, second, third = (e for e in events if isinstance(e, CondensationAction))
    after_two = View.from_events(events[: events.index(third)])
    assert _summaries(after_two) == [
        "[compressed tool calls: events 4-9]\nsummary #1",
        "[compressed tool calls: events 11-16]\nsummary #2",
    ]
    assert [e.id for e in after_two] == [0, 1, 2, 3, None, 10, None, 17, 18]
    # The round summary folds both earlier summaries in: it lists their condensations' ids.
    assert first.id in third.forgotten and second.id in third.forgotten
    final = View.from_events(events)
    assert [e.id for e in final] == [0, 1, None, 17, 18]
    assert _summaries(final) == ["[summary of a past round: events 2-10]\nsummary #3"]


def test_the_last_strategy_that_can_act_says_exhausted_and_the_next_call_returns_the_view() -> None:
    s = Session()
    s.system()
    s.user()
    s.turn("cat big.log", BIG)  # 2-3
    s.turn("ls", "small")  # 4-5: the latest response
    condenser = _condenser(max_token=1, token_ratio=1.0)  # always over the token threshold
    events = list(s.events)
    condensation = _condense(condenser, View.from_events(events))
    record = _record(condensation)
    assert record["event_type"] == "LARGE_MESSAGE_OFFLOAD"
    assert record["over_threshold_after"] is True
    assert record["exhausted"] is True  # the offloaded call alone is left to compress in this round
    _append(events, condensation.action)
    view = View.from_events(events)
    assert condenser.condense(view) is view
    assert condenser.exhausted_count == 1


def test_a_pending_request_under_the_thresholds_gets_the_lightest_compression() -> None:
    s = _one_round_with_large_output()
    s.request()
    condensation = _condense(_condenser(), s.view)
    assert condensation.metadata is not None and condensation.metadata.reason == "request"
    assert _record(condensation)["event_type"] == "LARGE_MESSAGE_OFFLOAD"


def test_a_pending_request_with_nothing_to_compress_is_marked_handled() -> None:
    s = Session()
    s.header()
    s.agent("hi")
    s.request()
    condensation = _condense(_condenser(), s.view)
    assert list(condensation.action.forgotten) == []
    assert "compression" not in (condensation.metadata.extra if condensation.metadata else {})


def test_model_failure_falls_back_to_the_offline_summary_or_skips() -> None:
    fake = FakeLLM([FakeReply(text="")], default=FakeReply(text=""))  # no text: an unusable reply, a transient failure
    llm = fake.llm(fake_config(), sleep=lambda x: None)
    view = _two_rounds(2, output="some output " * 8).view  # 96 characters: not large
    condenser = _condenser(llm, msg_threshold=10, on_model_error="fallback")
    condensation = _condense(condenser, view)
    assert condensation.action.summary == (
        "[summary of a past round: events 2-7]\n"
        f"{OFFLINE_SUMMARY_HEADER}\n"
        "CURRENT_STATE:\n"
        "- other commands run: `cmd0`, `cmd1` (events 4-7)"
    )
    assert condensation.metadata is not None
    extra = condensation.metadata.extra
    assert (extra["outcome"], extra["summarizer"]) == ("fallback", OFFLINE_SUMMARIZER_NAME)
    assert extra["error"].startswith("LLMResponseError: ")
    assert condensation.metadata.llm_usage is not None  # the failed call is still on record
    assert len(fake.calls) == 1
    skipping = _condenser(llm, msg_threshold=10, on_model_error="skip")
    assert skipping.condense(view) is view


# -- a real OpenHands log -------------------------------------------------------------------------

_ESCALATING_LOG = "v0_enyst-playground_issue10730_trajectory_297ev.json"


@pytest.mark.parametrize("with_model", [True, False], ids=["model", "offline"])
def test_escalation_order_on_a_real_openhands_log(with_model: bool) -> None:
    """24 user rounds, 48 large outputs: with small thresholds every strategy fires, lightest first,
    with a model and without one (the offline structured summarizer writes strategies 1, 4, 5, 6)."""
    require_real_logs_dir()
    events = list(history_of(REAL_LOGS_DIR / _ESCALATING_LOG))
    condenser = _condenser(
        NumberedSummaries().llm() if with_model else _NO_MODEL,
        msg_threshold=10,
        max_token=800,
        last_keep=20,
        large_payload_threshold=2000,
        offload_single_preview=200,
    )
    next_id = max(e.id for e in events if e.id is not None) + 1
    view = View.from_events(events)
    fired: list[tuple[str, int]] = []
    records = []
    for _ in range(100):  # bounded: each condensation removes at least one event
        outcome = condenser.condense(view)
        if not isinstance(outcome, Condensation):
            break
        assert outcome.metadata is not None
        records.append(_record(outcome))
        written = _record(outcome)["event_type"] not in ("LARGE_MESSAGE_OFFLOAD", "LARGE_MESSAGE_OFFLOAD_UNPROTECTED")
        assert (outcome.metadata.extra.get("summarizer") == OFFLINE_SUMMARIZER_NAME) is (written and not with_model)
        assert (outcome.metadata.llm_usage is not None) is (written and with_model)
        fired.append((_record(outcome)["event_type"], outcome.metadata.tokens_after))  # type: ignore[arg-type]
        view = view.apply(outcome.action.model_copy(update={"id": next_id}))
        next_id += 1
    kinds = [kind for kind, _ in fired]
    order = {
        "TOOL_INVOCATION_COMPRESS": 1,
        "LARGE_MESSAGE_OFFLOAD": 2,
        "LARGE_MESSAGE_OFFLOAD_UNPROTECTED": 3,
        "PREVIOUS_ROUND_CONVERSATION_SUMMARY": 4,
        "CURRENT_ROUND_LARGE_MESSAGE_SUMMARY": 5,
        "CURRENT_ROUND_MESSAGE_COMPRESS": 6,
    }
    assert [order[k] for k in kinds] == sorted(order[k] for k in kinds)  # never back to a lighter one
    assert sorted(set(kinds), key=order.__getitem__) == list(order)  # all six fired
    tokens = [t for _, t in fired]
    assert tokens == sorted(tokens, reverse=True) and len(set(tokens)) == len(tokens)  # each one made it smaller
    assert [r["exhausted"] for r in records] == [False] * (len(records) - 1) + [True]
    assert condenser.exhausted_count == 1  # the call that ended the loop


def test_over_the_event_threshold_only_a_message_shrunk_in_place_does_not_count() -> None:
    """Strategy 5 leaves the number of events as it is: with only the event threshold reached, strategy 6 acts."""
    s = Session()
    s.header()
    s.agent("Here is my analysis: " + BIG)  # 4: large
    s.turn("ls", "small")  # 5-6: the latest response
    view = s.view
    by_tokens = _condense(_condenser(_scripted()[1], max_token=1, token_ratio=1.0), view)
    assert _record(by_tokens)["event_type"] == "CURRENT_ROUND_LARGE_MESSAGE_SUMMARY"
    by_count = _condense(_condenser(_scripted()[1], msg_threshold=7), view)
    assert _record(by_count)["event_type"] == "CURRENT_ROUND_MESSAGE_COMPRESS"
    assert sorted(by_count.action.forgotten) == [2, 3, 4]


@pytest.mark.parametrize("log", [*real_log_params("v0_"), *real_log_params("v1_")])
def test_replaying_a_real_log_keeps_every_rule(log: Path | None) -> None:
    """Step by step, as a controller would: no tool call split from its result, the head kept, and the
    incremental view (several persisting summaries) equal to the view rebuilt from the log."""
    path = require_real_log(log)
    condenser = _condenser(
        NumberedSummaries().llm(),
        msg_threshold=24,
        max_token=6000,
        last_keep=8,
        large_payload_threshold=2000,
        offload_single_preview=200,
    )
    history = history_of(path)
    replay = replay_with_condenser(history, condenser, keep_first=1, persisting=True)
    assert all(record.extra["compression"]["event_type"] in COMPRESSION_EVENT_TYPES for record in replay.condensations)
    if len(history) > 40:
        assert replay.condensations
