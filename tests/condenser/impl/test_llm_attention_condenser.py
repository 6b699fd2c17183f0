"""`llm_attention`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import real_log_params, require_real_log
from hypothesis import given
from hypothesis import strategies as st

from openhands_memory.condenser import AmortizedForgettingCondenser, Condensation, Condenser, LLMAttentionCondenser
from openhands_memory.condenser._views import apply_condensation
from openhands_memory.condenser.impl.llm_attention_condenser import SELECT_EVENTS_TOOL_NAME, ImportantEventSelection
from openhands_memory.errors import LLMResponseError, LLMServiceUnavailableError
from openhands_memory.events import AgentCondensationObservation
from openhands_memory.llm.llm import LLM
from openhands_memory.testing.condenser_replay import check_condensation, replay_with_condenser
from openhands_memory.testing.fake_llm import FakeLLM, FakeReply, litellm_error
from openhands_memory.testing.strategies import agent_sessions

from .._helpers import Session, history_of, ids
from ._model_helpers import RandomPicks, candidate_ids, check_llm_metrics, fake_llm, prompt_of, round_trips, session

FORCED = {"type": "function", "function": {"name": SELECT_EVENTS_TOOL_NAME}}


def pick(*event_ids: Any) -> FakeReply:
    return FakeReply.tool_call(SELECT_EVENTS_TOOL_NAME, {"ids": list(event_ids)})


def test_the_model_picks_are_kept_with_their_units_and_the_rest_is_trimmed_to_the_target() -> None:
    s = session(10)  # 0-3 header, turns (4, 5) ... (22, 23): 24 events
    # Half of 20 is 10: the head (4) and the newest turn (22, 23) leave room for 4 events, two turns.
    _, llm = fake_llm(pick(9, 4, 15, 6))
    result = LLMAttentionCondenser(llm, max_size=20, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.action.summary is None
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3, 4, 5, 8, 9, 22, 23]  # 9 brings 8, 4 brings 5; 15 and 6 do not fit
    assert result.metadata.extra["units_picked"] == 2 and result.metadata.extra["outcome"] == "ranked"
    assert (result.metadata.condenser, result.metadata.reason, result.metadata.events_after) == ("llm_attention", "size", 10)


def test_the_forced_tool_call_and_the_prompt() -> None:
    s = session(10)
    fake, llm = fake_llm(pick(4))
    LLMAttentionCondenser(llm, max_size=20, keep_first=4).condense(s.view)
    call = fake.last_call
    assert call.tool_choice == FORCED and call.tools == [ImportantEventSelection.tool()]
    assert call.tools[0]["function"]["parameters"]["properties"]["ids"] == {
        "type": "array", "items": {"type": "integer"}, "description": "The ids of the events to keep, most important first.",
    }  # fmt: skip
    prompt = prompt_of(fake)
    assert "At most 4 of them can stay" in prompt
    kept, ranked = prompt.split("</ALWAYS KEPT>")
    assert re.findall(r"<EVENT id=(\d+)>", kept) == ["0", "1", "2", "3", "22", "23"]  # the head and the newest turn
    assert candidate_ids(prompt) == list(range(4, 22))
    assert ranked.rstrip().endswith(f"Now call {SELECT_EVENTS_TOOL_NAME} with the ids, most important first.")


def test_too_few_picks_are_topped_up_with_the_newest_events_as_openhands_does() -> None:
    s = session(10)
    _, llm = fake_llm(pick(4))
    result = LLMAttentionCondenser(llm, max_size=20, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation)
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3, 4, 5, 20, 21, 22, 23]


def test_invented_and_repeated_ids_are_ignored() -> None:
    s = session(10)
    _, llm = fake_llm(pick(999, 9, 9, -1, 8, 2, 17))
    result = LLMAttentionCondenser(llm, max_size=20, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3, 8, 9, 16, 17, 22, 23]  # 2 is in the head anyway
    assert result.metadata.extra["ids_ignored"] == 3  # 999, -1 and the second 9 (8 is a new id of the same unit)


def test_a_pick_in_a_batch_of_parallel_calls_keeps_the_whole_batch() -> None:
    s = Session()
    s.header()
    for i in range(4):
        s.turn(f"a{i}")  # 4-11
    batch = s.calls("x", "y", "z")  # 12-14
    for action in batch:
        s.result(action)  # 15-17
    for i in range(4):
        s.turn(f"b{i}")  # 18-25
    _, llm = fake_llm(pick(16))
    result = LLMAttentionCondenser(llm, max_size=24, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation)
    check_condensation(s.view, result.action, keep_first=4)
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3, *range(12, 18), 24, 25]


def test_a_pick_too_big_for_the_room_is_skipped_for_smaller_ones() -> None:
    s = Session()
    s.header()
    batch = s.calls("x", "y", "z")  # 4-6
    for action in batch:
        s.result(action)  # 7-9
    for i in range(6):
        s.turn(f"b{i}")  # 10-21
    _, llm = fake_llm(pick(5, 11))
    result = LLMAttentionCondenser(llm, max_size=16, keep_first=4).condense(s.view)  # room: 8 - 4 - 2 = 2
    assert isinstance(result, Condensation)
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3, 10, 11, 20, 21]


def test_summaries_are_kept_since_none_replaces_them() -> None:
    s = session(2)
    s.condense(forgotten_event_ids=[4, 5], summary="V1 SUMMARY", summary_offset=4, summary_persists=True)  # 8
    for i in range(8):
        s.turn(f"more{i}")  # 9-24
    view = s.view
    assert isinstance(view[4], AgentCondensationObservation) and view[4].id is None
    fake, llm = fake_llm(pick(10))
    result = LLMAttentionCondenser(llm, max_size=20, keep_first=4).condense(view)
    assert isinstance(result, Condensation)
    assert "<EVENT>\nAgentCondensationObservation" in prompt_of(fake).split("</ALWAYS KEPT>")[0]
    after = apply_condensation(view, result.action)
    assert [e.content for e in after if isinstance(e, AgentCondensationObservation)] == ["V1 SUMMARY"]


def test_the_model_is_not_asked_when_everything_fits_or_nothing_can() -> None:
    s = session(2)
    s.request()
    fake, llm = fake_llm()
    condenser = LLMAttentionCondenser(llm, max_size=20, keep_first=4)
    result = condenser.condense(s.view)  # a request within budget: the oldest unit goes
    assert isinstance(result, Condensation) and result.action.forgotten == [4, 5]
    tight = session(6)  # 16 events; half of 12 is 6: the head and the newest turn fill it
    result = LLMAttentionCondenser(llm, max_size=12, keep_first=4).condense(tight.view)
    assert isinstance(result, Condensation) and result.action.forgotten == list(range(4, 14))
    assert fake.calls == []


def test_without_native_tool_calling_it_asks_for_json_text() -> None:
    s = session(10)
    fake, llm = fake_llm(FakeReply(text='Sure: {"ids": [9, 4]}'), native_tool_calling=False)
    result = LLMAttentionCondenser(llm, max_size=20, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation)
    assert fake.last_call.tools is None and fake.last_call.tool_choice is None
    assert prompt_of(fake).endswith('Answer with a JSON object and nothing else: {"ids": [the ids, most important first]}.')
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3, 4, 5, 8, 9, 22, 23]


def test_a_bare_json_list_as_text_is_read_too() -> None:
    s = session(10)
    _, llm = fake_llm(FakeReply(text="[9, 4]"))
    result = LLMAttentionCondenser(llm, max_size=20, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation)
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3, 4, 5, 8, 9, 22, 23]


GARBAGE: dict[str, tuple[Any, type[Exception], str]] = {
    "no id in view": (pick(999, 1000), LLMResponseError, "select_important_events: none of the 2 ids chosen is an event in view"),
    "no ids at all": (pick(), LLMResponseError, "select_important_events: none of the 0 ids chosen is an event in view"),
    "wrong schema": (FakeReply.tool_call(SELECT_EVENTS_TOOL_NAME, {"events": [4]}), LLMResponseError, "select_important_events: ids: Field required"),
    "ids not integers": (FakeReply.tool_call(SELECT_EVENTS_TOOL_NAME, {"ids": ["four"]}), LLMResponseError, "select_important_events: ids.0: Input should be a valid integer"),
    "arguments not JSON": (FakeReply.tool_call(SELECT_EVENTS_TOOL_NAME, '{"ids": [4,'), LLMResponseError, "arguments are not valid JSON"),
    "prose": (FakeReply(text="The first ones, I think."), LLMResponseError, "the reply does not call select_important_events: 'The first ones, I think.'"),
    "another tool": (FakeReply.tool_call("think", {}), LLMResponseError, "the reply calls think, not select_important_events"),
    "server error": (litellm_error("InternalServerError", "boom"), LLMServiceUnavailableError, "boom"),
}  # fmt: skip


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
def test_garbage_raises_and_leaves_the_log_as_it_was(garbage: str) -> None:
    reply, error, message = GARBAGE[garbage]
    s = session(10)
    before = [e.model_copy() for e in s.events]
    _, llm = fake_llm(reply)
    condenser = LLMAttentionCondenser(llm, max_size=20, keep_first=4, strict_response=True)
    with pytest.raises(error, match=re.escape(message)):
        condenser.condense(s.view)
    assert s.events == before and condenser.last_condensation is None


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
def test_garbage_falls_back_to_forgetting_like_amortized(garbage: str) -> None:
    reply, error, _ = GARBAGE[garbage]
    s = session(10)
    _, llm = fake_llm(reply)
    result = LLMAttentionCondenser(llm, max_size=20, keep_first=4, on_model_error="fallback", strict_response=True).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    amortized = AmortizedForgettingCondenser(max_size=20, keep_first=4).condense(s.view)
    assert isinstance(amortized, Condensation)
    assert result.action.forgotten == amortized.action.forgotten and result.action.summary is None
    assert result.metadata.extra["outcome"] == "fallback" and result.metadata.extra["error"].startswith(error.__name__)
    check_llm_metrics(result.action.llm_metrics, calls=0 if garbage in ("server error", "arguments not JSON") else 1)


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
def test_garbage_is_skipped_and_a_request_stays_pending(garbage: str) -> None:
    reply, error, _ = GARBAGE[garbage]
    s = session(10)
    s.request()
    _, llm = fake_llm(reply)
    view = s.view
    condenser = LLMAttentionCondenser(llm, max_size=20, keep_first=4, on_model_error="skip", strict_response=True)
    assert condenser.condense(view) is view and view.unhandled_condensation_request
    assert isinstance(condenser.last_error, error)


@pytest.mark.parametrize(
    ("reply", "recorded"),
    [
        (pick(), "empty selection"),
        (pick(999, 1000), "select_important_events: none of the 2 ids chosen is an event in view"),
    ],
    ids=["no ids at all", "no id in view"],
)
def test_an_empty_selection_keeps_the_newest_events_as_openhands_does(
    reply: FakeReply, recorded: str, caplog: pytest.LogCaptureFixture
) -> None:
    # OpenHands 0.62 (llm_attention_condenser.py): with no ids from the model, the tail of the view
    # fills the target: 24 events, max_size=20, keep_first=4 keeps the head and the newest 6 events.
    s = session(10)
    _, llm = fake_llm(reply)
    result = LLMAttentionCondenser(llm, max_size=20, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    s.add(result.action)
    assert ids(s.view) == [0, 1, 2, 3, 18, 19, 20, 21, 22, 23]
    assert result.metadata.extra["unusable_model_answer"] == recorded
    assert result.metadata.extra["units_picked"] == 0
    assert "keeping the newest events instead" in caplog.text


def test_a_reply_that_is_no_selection_still_raises_without_strict_response() -> None:
    # OpenHands fails on a reply it cannot parse as a selection, too (pydantic's ValidationError).
    _, llm = fake_llm(FakeReply(text="The first ones, I think."))
    with pytest.raises(LLMResponseError, match="the reply does not call select_important_events"):
        LLMAttentionCondenser(llm, max_size=20, keep_first=4).condense(session(10).view)


def test_llm_metrics_are_openhands_shaped_and_round_trip() -> None:
    _, llm = fake_llm(FakeReply.tool_call(SELECT_EVENTS_TOOL_NAME, {"ids": [9]}, text=None))
    result = LLMAttentionCondenser(llm, max_size=20, keep_first=4).condense(session(10).view)
    assert isinstance(result, Condensation) and result.metadata is not None
    check_llm_metrics(result.action.llm_metrics, calls=1)
    assert result.metadata.llm_usage == result.action.llm_metrics
    assert round_trips(result.action.model_copy(update={"id": 24}))


def test_from_config() -> None:
    condenser = Condenser.from_config(
        {"type": "llm_attention", "llm_config": {"model": "fake-model"}, "max_size": 20, "keep_first": 4,
         "max_event_length": 50, "on_model_error": "fallback"}
    )  # fmt: skip
    assert isinstance(condenser, LLMAttentionCondenser)
    assert (condenser.max_size, condenser.keep_first, condenser.max_event_length, condenser.on_model_error) == (20, 4, 50, "fallback")
    assert condenser.llm.config.caching_prompt is False and condenser.llm.config.usage_id == "condenser"
    fake = FakeLLM([pick(4)])
    condenser.llm = LLM(condenser.llm.config, completion_fn=fake)
    result = condenser.condense(session(10, output="o" * 500).view)
    assert isinstance(result, Condensation)
    assert "o" * 60 not in prompt_of(fake) and "[truncated]" in prompt_of(fake)


@pytest.mark.parametrize("log", real_log_params("v0_"))
def test_real_logs_replay_step_by_step_with_random_picks(log: Path | None) -> None:
    history = history_of(require_real_log(log))
    model = RandomPicks(seed=7)
    condenser = LLMAttentionCondenser(model.llm(), max_size=30, keep_first=4)
    replay = replay_with_condenser(history, condenser, keep_first=4)
    assert replay.largest_view <= 31
    for record in replay.condensations:
        assert record.events_after <= 15 + 6  # half of 30, over only by the newest unit or what is kept for good
        if record.extra.get("outcome") == "ranked":
            check_llm_metrics(record.llm_usage, calls=1)


@given(agent_sessions(max_turns=30), st.integers(0, 2**32 - 1), st.integers(0, 3), st.integers(8, 24), st.none() | st.integers(200, 3000))
def test_random_sessions_with_random_picks_keep_every_promise(
    history: list[Any], seed: int, keep_first: int, max_size: int, max_tokens: int | None
) -> None:
    model = RandomPicks(seed)
    condenser = LLMAttentionCondenser(model.llm(), max_size=max_size, keep_first=keep_first, max_tokens=max_tokens)
    replay = replay_with_condenser(history, condenser, keep_first=keep_first)
    assert len(model.answers) == sum(1 for r in replay.condensations if r.extra.get("outcome") == "ranked")
    for record in replay.condensations:
        assert record.events_after <= record.events_before
