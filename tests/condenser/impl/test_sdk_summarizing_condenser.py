"""`sdk_summarizing`: the OpenHands SDK's `LLMSummarizingCondenser` rules, one by one, on hand-built views.

The proof that these are the SDK's decisions is the differential test against the SDK itself
(`tests/integrations/openhands_sdk/test_sdk_summarizing_matches_sdk.py`, Python 3.12+); these
tests pin each rule where the SDK cannot be installed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

from openhands_memory.condenser import Condensation, Condenser, SdkSummarizingCondenser
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARIZER_NAME
from openhands_memory.errors import CondenserConfigError
from openhands_memory.events import AgentCondensationObservation, CondensationAction, Event
from openhands_memory.view import View

from .._helpers import Session
from ._model_helpers import fake_llm, prompt_of


def conversation(turns: int) -> Session:
    """System prompt, the task, then `turns` tool calls with their results: 2 + 2 * turns events, ids in order."""
    s = Session()
    s.system()
    s.user()
    for index in range(turns):
        s.turn(f"cmd{index}")
    return s


def forgotten_ids(view: View, action: CondensationAction) -> list[int]:
    listed = action.forgotten_lookup()
    return [e.id for e in view if e.id is not None and e.id in listed]


def condensed(condenser: Condenser, view: View) -> Condensation:
    result = condenser.condense(view)
    assert isinstance(result, Condensation) and result.metadata is not None
    return result


class PerEvent:
    """Each event weighs `weight` tokens (the token rule's arithmetic made visible)."""

    def __init__(self, weight: int = 10) -> None:
        self.weight = weight

    def __call__(self, events: Sequence[Event]) -> int:
        return self.weight * len(events)


def test_defaults_are_the_sdks() -> None:
    condenser = Condenser.from_config({"type": "sdk_summarizing"})
    assert isinstance(condenser, SdkSummarizingCondenser)
    assert (condenser.max_size, condenser.keep_first, condenser.max_tokens, condenser.minimum_progress) == (240, 2, None, 0.1)
    default_condenser = Condenser.from_config({"type": "sdk_summarizing", "max_size": 80, "keep_first": 4})
    assert (default_condenser.max_size, default_condenser.keep_first) == (80, 4)


def test_keep_first_must_leave_room_as_the_sdk_validates() -> None:
    # The SDK: max_size // 2 - keep_first - 1 > 0 (stricter than OpenHands V0's keep_first < max_size // 2).
    with pytest.raises(CondenserConfigError, match=re.escape("keep_first (3) must be less than max_size // 2 - 1 (3)")):
        Condenser.from_config({"type": "sdk_summarizing", "max_size": 8, "keep_first": 3})
    assert Condenser.from_config({"type": "sdk_summarizing", "max_size": 8, "keep_first": 2}).keep_first == 2


def test_within_every_limit_the_view_is_returned() -> None:
    view = conversation(5).view  # 12 events
    assert SdkSummarizingCondenser(max_size=12).condense(view) is view


def test_over_max_size_it_is_soft_and_keeps_max_size_half_minus_head_from_the_tail() -> None:
    view = conversation(10).view  # 22 events: 0 system, 1 user, then pairs
    result = condensed(SdkSummarizingCondenser(max_size=20, keep_first=2), view)
    # Suffix kept: 20 // 2 - 2 - 1 = 7; naive end 22 - 7 = 15, inside the pair (14, 15): snapped to 16.
    assert forgotten_ids(view, result.action) == list(range(2, 16))
    assert result.action.summary_offset == 2 and result.action.summary_persists is True
    record = result.metadata
    assert record is not None and record.reason == "size"
    assert (record.extra["sdk_reasons"], record.extra["requirement"]) == (["events"], "soft")
    assert record.extra["summarizer"] == OFFLINE_SUMMARIZER_NAME


def test_a_request_is_hard_and_keeps_half_the_view_minus_head_from_the_tail() -> None:
    s = conversation(10)
    s.request()
    view = s.view
    result = condensed(SdkSummarizingCondenser(max_size=240, keep_first=2), view)
    # Suffix: 22 // 2 - 2 - 1 = 8; naive end 14 is a pair boundary.
    assert forgotten_ids(view, result.action) == list(range(2, 14))
    assert result.metadata is not None and result.metadata.reason == "request"
    assert result.metadata.extra["requirement"] == "hard"


def test_over_the_token_limit_it_is_hard_and_drops_the_shortest_prefix_worth_the_excess() -> None:
    view = conversation(10).view  # 22 events, 220 tokens
    result = condensed(SdkSummarizingCondenser(max_size=240, keep_first=2, max_tokens=150, token_counter=PerEvent()), view)
    # Excess over half the limit: 220 - 75 = 145 tokens, so the shortest prefix after the head worth
    # more than that is 15 events (150 tokens): 5 stay, and the cut at 17 snaps to the pair boundary 18.
    assert forgotten_ids(view, result.action) == list(range(2, 18))
    record = result.metadata
    assert record is not None and record.reason == "tokens"
    assert (record.extra["sdk_reasons"], record.extra["requirement"]) == (["tokens"], "hard")


def test_the_token_limit_is_the_smaller_of_max_tokens_and_the_agent_models_input_limit() -> None:
    view = conversation(10).view  # 220 tokens
    assert SdkSummarizingCondenser(max_tokens=500, max_input_tokens=230, token_counter=PerEvent()).condense(view) is view
    condenser = SdkSummarizingCondenser(max_tokens=500, max_input_tokens=200, token_counter=PerEvent())
    assert condenser.token_limit == 200
    assert condensed(condenser, view).metadata.extra["sdk_reasons"] == ["tokens"]  # type: ignore[union-attr]


def test_the_strictest_reason_sets_the_suffix() -> None:
    s = conversation(10)
    s.request()
    view = s.view  # 22 events: a request keeps 8, max_size 20 keeps 7
    result = condensed(SdkSummarizingCondenser(max_size=20, keep_first=2), view)
    assert result.metadata is not None and result.metadata.extra["sdk_reasons"] == ["events", "request"]
    assert forgotten_ids(view, result.action) == list(range(2, 16))


def test_parallel_calls_and_their_results_are_never_split() -> None:
    s = conversation(5)  # 0..11
    first, second = s.calls("a", "b")  # 12, 13
    s.result(first)  # 14
    s.result(second)  # 15
    for index in range(3):
        s.turn(f"tail{index}")  # 16..21
    view = s.view  # 22 events; max_size 20: naive end 15, inside the batch
    result = condensed(SdkSummarizingCondenser(max_size=20, keep_first=2), view)
    assert forgotten_ids(view, result.action) == list(range(2, 16))


def thinking(action: Event) -> Event:
    """`action` as the first call of a model response with thinking blocks (as the V1 import writes it)."""
    metadata = action.tool_call_metadata
    assert metadata is not None
    metadata.model_response = {
        "id": metadata.response_id,
        "choices": [{"message": {"role": "assistant", "thinking_blocks": [{"type": "thinking", "thinking": "hm"}],
                                 "tool_calls": [{"id": metadata.tool_call_id}]}}],
    }  # fmt: skip
    return action


def test_a_tool_loop_is_forgotten_whole_and_ends_at_the_next_message() -> None:
    s = conversation(4)  # 0..9
    action, _ = s.turn("think first")  # 10, 11: a thinking response opens a tool loop
    thinking(action)
    s.turn("then this")  # 12, 13: in the loop
    s.turn("and this")  # 14, 15: in the loop
    s.agent("done with that")  # 16: ends it
    s.turn("x")  # 17, 18
    s.turn("y")  # 19, 20
    s.turn("z")  # 21, 22
    view = s.view  # 23 events; max_size 20: naive end 23 - 7 = 16, after the loop
    assert forgotten_ids(view, condensed(SdkSummarizingCondenser(max_size=20, keep_first=2), view).action) == list(range(2, 16))
    s.events.pop(16)  # no message: the loop runs to the end of the view, and the SDK forgets all of it
    s.turn("w")
    view = s.view
    result = condensed(SdkSummarizingCondenser(max_size=20, keep_first=2), view)
    assert forgotten_ids(view, result.action) == [e.id for e in view][2:]


def test_the_system_prompt_and_the_first_user_message_are_never_forgotten() -> None:
    view = conversation(10).view
    result = condensed(SdkSummarizingCondenser(max_size=20, keep_first=0), view)
    # The SDK starts past the system prompt (index 1); the task at 1 is kept too, as this library
    # promises. The suffix is 20 // 2 - 0 - 1 = 9: the cut at 13 snaps to 14.
    assert forgotten_ids(view, result.action) == list(range(2, 14))
    assert result.metadata is not None and "first user message (#1)" in result.metadata.extra["sdk_deviation"]


def loop_in_the_head() -> Session:
    """41 events: the system prompt, the task, a thinking model's tool loop (2-23), a message (24), 8 tool calls (25-40)."""
    s = Session()
    s.system()
    s.user()
    action, _ = s.turn("think")
    thinking(action)
    for index in range(10):
        s.turn(f"loop{index}")
    s.agent("so far")
    for index in range(8):
        s.turn(f"after{index}")
    return s


def test_too_little_progress_leaves_a_soft_requirement_alone() -> None:
    view = loop_in_the_head().view
    # keep_first 3 ends inside the loop, so forgetting starts at 24; the suffix of 40 // 2 - 3 - 1 = 16
    # puts the cut at 25: one event, under minimum_progress (0.1 of 41).
    assert SdkSummarizingCondenser(max_size=40, keep_first=3).condense(view) is view
    result = condensed(SdkSummarizingCondenser(max_size=40, keep_first=3, minimum_progress=0.02), view)
    assert forgotten_ids(view, result.action) == [24]


def test_a_hard_requirement_that_cannot_be_met_resets_the_context_after_the_head() -> None:
    s = loop_in_the_head()
    s.request()
    view = s.view
    result = condensed(SdkSummarizingCondenser(max_size=40, keep_first=3), view)
    # The request's suffix (41 // 2 - 3 - 1 = 16) gives the same single event: a hard reset. The SDK
    # would keep the system prompt only; we keep the head (up to the loop's end) and summarize the rest.
    assert forgotten_ids(view, result.action) == list(range(24, 41))
    assert result.action.summary_offset == 24 and result.action.summary
    extra = result.metadata.extra  # type: ignore[union-attr]
    assert extra["hard_context_reset"] == {"kept_head": 24} and "kept the first 24 events" in extra["sdk_deviation"]


def test_a_request_with_nothing_after_the_head_is_only_marked_handled() -> None:
    s = Session()
    s.system()
    s.user()
    s.request()
    view = s.view
    result = condensed(SdkSummarizingCondenser(), view)
    assert forgotten_ids(view, result.action) == [] and result.action.summary is None
    s.add(result.action)
    assert not s.view.unhandled_condensation_request


def test_summaries_persist_and_a_later_condensation_folds_them_in() -> None:
    fake, llm = fake_llm("FIRST SUMMARY", "SECOND SUMMARY")
    s = conversation(10)
    condenser = SdkSummarizingCondenser(llm, max_size=20, keep_first=2)
    first = condensed(condenser, s.view).action
    s.add(first)
    for index in range(12):
        s.turn(f"more{index}")
    view = s.view
    assert isinstance(view[2], AgentCondensationObservation) and view[2].cause == first.id
    second = condensed(condenser, view).action
    # The first summary is forgotten by its condensation's id (the SDK forgets "<id>-summary") and
    # given to the model as the previous summary.
    assert first.id in second.forgotten_lookup()
    assert "<PREVIOUS SUMMARY>\nFIRST SUMMARY\n</PREVIOUS SUMMARY>" in prompt_of(fake)
    s.add(second)
    after = s.view
    assert [e.cause for e in after if isinstance(e, AgentCondensationObservation)] == [second.id]
    assert after[2].cause == second.id and after[2].content == "SECOND SUMMARY"


def test_with_a_model_the_summary_is_the_models() -> None:
    fake, llm = fake_llm("USER_CONTEXT: fix the bug")
    view = conversation(10).view
    result = condensed(SdkSummarizingCondenser(llm, max_size=20, keep_first=2), view)
    assert result.action.summary == "USER_CONTEXT: fix the bug"
    assert "<EVENT id=2>" in prompt_of(fake) and "<EVENT id=16>" not in prompt_of(fake)
    assert result.metadata is not None and result.metadata.extra["outcome"] == "summary"


def test_calls_without_results_are_not_counted_or_forgotten() -> None:
    s = conversation(9)  # 20 events
    (pending,) = s.calls("never answered")  # 20: not in the SDK's view
    view = s.view
    condenser = SdkSummarizingCondenser(max_size=20, keep_first=2)
    assert condenser.condense(view) is view  # 20 events in the SDK's view: not over max_size
    s.turn("answered")
    view = s.view
    result = condensed(condenser, view)
    assert pending.id not in forgotten_ids(view, result.action)
    assert forgotten_ids(view, result.action) == list(range(2, 16))


def test_a_second_result_of_a_forgotten_call_is_forgotten_with_it() -> None:
    # Found by hypothesis (issue 40): the SDK's view leaves the second result out, so the range
    # forgot the call and its first result and kept the second, answering a call no longer in view.
    s = Session()
    s.user()  # 0
    for number in range(5):
        s.agent(f"step {number}")  # 1-5
    (call,) = s.calls("cat a.txt")  # 6
    s.result(call, "a")  # 7
    s.result(call, "a, again")  # 8: not in the SDK's view
    view = s.view
    result = condensed(SdkSummarizingCondenser(max_size=4, keep_first=0), view)
    assert forgotten_ids(view, result.action) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert [e.id for e in view.apply(result.action)] == [0, None]


def build(**config: Any) -> Condenser:
    return Condenser.from_config({"type": "sdk_summarizing", **config})


def test_pipeline_files_build_it() -> None:
    condenser = build(max_size=80, keep_first=4, llm_config={"model": "gpt-4o"})
    assert isinstance(condenser, SdkSummarizingCondenser) and condenser.llm is not None
