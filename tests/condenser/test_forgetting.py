"""Planning what to forget, the progress rule, and the summarizing base class."""

from __future__ import annotations

import pytest

from openhands_memory.condenser import Condensation, ForgettingCondenser, SummarizingCondenser
from openhands_memory.condenser._views import apply_condensation
from openhands_memory.condenser.forgetting import ForgettingPlan, plan_forgetting
from openhands_memory.condenser.forgetting import check_sizes, plan_keeping
from openhands_memory.events import AgentCondensationObservation, ErrorObservation

from ._helpers import Session, ids


def _long_session(turns: int = 10) -> Session:
    s = Session()
    s.header()  # 0-3
    for i in range(turns):
        s.turn(f"cmd {i}")
    return s


def test_the_plan_keeps_the_head_and_the_newest_events_within_budget() -> None:
    view = _long_session().view  # 24 events
    plan = plan_forgetting(view, keep_first=4, max_events=10)
    kept = [e.id for i, e in enumerate(view) if i not in plan.forgotten]
    assert kept == [0, 1, 2, 3, 18, 19, 20, 21, 22, 23]
    assert plan.forgotten_ids == list(range(4, 18)) and plan.head_end == 4 and not plan.forced


def test_the_plan_never_cuts_into_a_batch_of_parallel_calls() -> None:
    s = _long_session(2)  # 0-7
    a, b = s.calls("a", "b")  # 8, 9
    s.result(b)  # 10
    s.result(a)  # 11
    s.turn()  # 12, 13
    plan = plan_forgetting(s.view, keep_first=4, max_events=7)  # would start the tail at 11
    assert plan.forgotten_ids == list(range(4, 12))


def test_a_summary_counts_toward_the_budget_and_goes_after_the_head() -> None:
    view = _long_session().view
    plan = plan_forgetting(view, keep_first=4, max_events=10, new_summary=True)
    # 8 events and the summary: one more turn (2 events) would be 11.
    assert len(view) - len(plan.forgotten) + 1 == 9
    assert plan.summary_offset == 4
    after = apply_condensation(view, plan.action(summary="S"))
    assert len(after) == 9 and isinstance(after[4], AgentCondensationObservation)


def test_the_token_budget_moves_the_cut_further() -> None:
    s = Session()
    s.header()
    for i in range(6):
        s.turn(f"c{i}", content="x" * 400)  # about 100 tokens per result
    view = s.view
    by_events = plan_forgetting(view, keep_first=4, max_events=100)
    assert by_events.forgotten == ()
    by_tokens = plan_forgetting(view, keep_first=4, max_tokens=300, token_counter=lambda events: sum(len(getattr(e, "content", "")) for e in events) // 4)
    assert by_tokens.forgotten_ids == list(range(4, 12))  # two results (and their calls) stay
    with pytest.raises(ValueError, match="max_tokens needs a token_counter"):
        plan_forgetting(view, max_tokens=10)


def test_the_newest_unit_stays_even_over_budget() -> None:
    view = _long_session(3).view
    plan = plan_forgetting(view, keep_first=4, max_events=1)
    assert ids(view)[-2:] == [8, 9] and plan.forgotten_ids == [4, 5, 6, 7]


def test_a_request_with_nothing_over_budget_forgets_the_oldest_forgettable_unit() -> None:
    s = _long_session(2)
    s.request()
    plan = plan_forgetting(s.view, keep_first=4, max_events=100)
    assert plan.forced and plan.forgotten_ids == [4, 5]


def test_a_request_with_nothing_forgettable_forgets_nothing() -> None:
    s = Session()
    s.header()
    s.calls("make")  # open: its result has not come, so it must stay
    s.request()
    plan = plan_forgetting(s.view, keep_first=4, max_events=100)
    assert plan.forgotten == () and not plan.forced
    # An error without cause is a unit of its own: that one may go.
    s.add(ErrorObservation(content="restarted"))
    s.request()
    assert plan_forgetting(s.view, keep_first=4, max_events=100).forgotten_ids == [6]


def test_sizes_follow_openhands_rules() -> None:
    check_sizes(4, 10)
    with pytest.raises(ValueError, match=r"keep_first \(5\) must be less than half of max_size \(10\)"):
        check_sizes(5, 10)
    with pytest.raises(ValueError, match=r"keep_first \(-1\) cannot be negative"):
        check_sizes(-1, 10)
    with pytest.raises(ValueError, match=r"max_size \(1\) must be at least 2"):
        check_sizes(0, 1)
    with pytest.raises(ValueError, match=r"max_tokens \(0\) must be at least 1"):
        ForgettingCondenser(max_tokens=0)


class EchoSummarizer(SummarizingCondenser):
    """Summarizes by listing the forgotten ids and the previous summaries."""

    def summarize(self, plan: ForgettingPlan) -> str:
        self.record_llm_usage({"accumulated_cost": 0.5, "costs": [], "response_latencies": [], "token_usages": []})
        previous = " | ".join(self.summaries_in(plan))
        return f"[{previous}] forgot {plan.forgotten_ids}"


def test_a_summarizer_replaces_the_standing_summary_and_folds_it_in() -> None:
    s = _long_session(6)  # 16 events
    condenser = EchoSummarizer(max_size=12, keep_first=4)
    first = condenser.condense(s.view)
    assert isinstance(first, Condensation)
    assert first.action.summary == "[] forgot [4, 5, 6, 7, 8, 9, 10, 11, 12, 13]"
    assert first.action.summary_offset == 4
    assert first.action.llm_metrics == {"accumulated_cost": 0.5, "costs": [], "response_latencies": [], "token_usages": []}
    s.add(first.action)
    for i in range(6):
        s.turn(f"more {i}")
    second = condenser.condense(s.view)
    assert isinstance(second, Condensation)
    assert second.action.summary is not None and second.action.summary.startswith("[[] forgot [4, 5")
    s.add(second.action)
    view = s.view
    # Head 4 + summary + the newest turn (2): one over max_size // 2, as turns come in pairs.
    assert len(view) == 7 and isinstance(view[4], AgentCondensationObservation)
    assert sum(isinstance(e, AgentCondensationObservation) for e in view) == 1


def test_a_summarizer_asked_with_nothing_to_forget_only_clears_the_request() -> None:
    s = Session()
    s.header()
    s.request()
    result = EchoSummarizer(max_size=12, keep_first=4).condense(s.view)
    assert isinstance(result, Condensation)
    assert result.action.forgotten == [] and result.action.summary is None
    s.add(result.action)
    assert not s.view.unhandled_condensation_request


def test_a_summarizer_truncates_long_event_text() -> None:
    condenser = EchoSummarizer(max_event_length=10)
    assert condenser.truncate("short") == "short"
    assert condenser.truncate("a" * 5 + "b" * 20 + "c" * 5) == "aaaaa\n... [truncated] ...\nccccc"


def test_keeping_picked_events_keeps_their_units_and_the_head() -> None:
    s = _long_session(4)  # 0-3 header, turns 4-11
    plan = plan_keeping(s.view, [7, 10], keep_first=2)
    assert plan.forgotten_ids == [2, 3, 4, 5, 8, 9]  # 6-7 and 10-11 kept whole
    everything = plan_keeping(s.view, range(100), keep_first=4)
    assert everything.forgotten == ()
    s.request()
    forced = plan_keeping(s.view, range(100), keep_first=4)
    assert forced.forced and forced.forgotten_ids == [4, 5]
