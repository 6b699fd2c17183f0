"""The framework: rolling condensers, what each condensation records, the metadata hooks."""

from __future__ import annotations

import asyncio
import threading

import pytest

from openhands_memory.condenser import Condensation, CondensationMetadata, Condenser, RollingCondenser
from openhands_memory.condenser._boundaries import condensation_action
from openhands_memory.errors import NoCondensationAvailable, OpenHandsMemoryError
from openhands_memory.view import View

from ._helpers import Session

METRICS = {
    "accumulated_cost": 0.01,
    "max_budget_per_task": None,
    "accumulated_token_usage": {"model": "m", "prompt_tokens": 100, "completion_tokens": 20},
    "costs": [{"model": "m", "cost": 0.01, "timestamp": 1.0}],
    "response_latencies": [],
    "token_usages": [],
}


class ForgetFirstTurn(RollingCondenser):
    """Forgets ids 2 and 3 when the view has more than 4 events; says so in its metadata."""

    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        return "size" if len(view) > 4 else super().condensation_reason(view)

    def get_condensation(self, view: View) -> Condensation:
        self.add_metadata("note", "first turn")
        self.record_llm_usage(METRICS)
        return Condensation(condensation_action(view, [2, 3], summary="ran ls", summary_offset=2))


class DecidesWithShouldCondense(RollingCondenser):
    """OpenHands' API: only should_condense and get_condensation."""

    def should_condense(self, view: View) -> bool:
        return len(view) > 2

    def get_condensation(self, view: View) -> Condensation:
        raise NoCondensationAvailable(self.name, "test")


def _session() -> Session:
    s = Session()
    s.user()  # 0
    s.agent()  # 1
    s.turn()  # 2, 3
    s.turn()  # 4, 5
    return s


def test_a_rolling_condenser_returns_the_view_until_it_should_condense() -> None:
    s = Session()
    s.user()
    view = s.view
    condenser = ForgetFirstTurn()
    assert condenser.condense(view) is view
    assert condenser.last_condensation is None


def test_a_condensation_records_reason_sizes_tokens_usage_and_time() -> None:
    view = _session().view
    condenser = ForgetFirstTurn()
    result = condenser.condense(view)
    assert isinstance(result, Condensation)
    meta = result.metadata
    assert isinstance(meta, CondensationMetadata)
    assert meta is condenser.last_condensation
    assert (meta.condenser, meta.reason, meta.events_before, meta.events_after, meta.forgotten) == (
        "ForgetFirstTurn", "size", 6, 5, 2,
    )  # fmt: skip
    assert meta.tokens_before == condenser.token_counter(view)
    assert meta.tokens_after is not None and meta.tokens_after < meta.tokens_before
    assert meta.seconds >= 0 and meta.extra == {"note": "first turn"}
    assert meta.llm_usage == METRICS
    assert result.action.llm_metrics == METRICS  # where OpenHands reads model usage
    assert result.action.summary_persists is None
    assert meta.to_dict()["reason"] == "size"


def test_each_condensation_starts_a_new_metadata_batch() -> None:
    condenser = ForgetFirstTurn()
    condenser.add_metadata("stale", True)
    result = condenser.condense(_session().view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert "stale" not in result.metadata.extra


def test_a_request_is_the_reason_when_the_view_has_one() -> None:
    s = Session()
    s.user()
    s.turn()
    s.request()
    result = ForgetFirstTurn().condense(s.view)
    assert isinstance(result, Condensation) and result.metadata is not None
    assert result.metadata.reason == "request"


def test_should_condense_subclasses_get_a_custom_reason_and_nothing_available_returns_the_view() -> None:
    view = _session().view
    condenser = DecidesWithShouldCondense()
    assert condenser.condense(view) is view
    with pytest.raises(NoCondensationAvailable, match="DecidesWithShouldCondense: nothing can be forgotten \\(test\\)"):
        condenser.get_condensation(view)
    assert issubclass(NoCondensationAvailable, OpenHandsMemoryError)


def test_acondense_gives_the_same_result() -> None:
    view = _session().view
    result = asyncio.run(ForgetFirstTurn().acondense(view))
    assert isinstance(result, Condensation) and result.action.forgotten == [2, 3]


def test_condensers_are_abstract() -> None:
    with pytest.raises(TypeError):
        Condenser()  # type: ignore[abstract]
    with pytest.raises(TypeError):
        RollingCondenser()  # type: ignore[abstract]


class RecordsItsView(RollingCondenser):
    """Forgets event 2 and records the size of the view it was given, after waiting for a second call."""

    def __init__(self, barrier: threading.Barrier) -> None:
        super().__init__()
        self.barrier = barrier

    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        return "size"

    def get_condensation(self, view: View) -> Condensation:
        self.add_metadata("view_size", len(view))
        self.record_llm_usage({**METRICS, "accumulated_cost": float(len(view))})
        self.barrier.wait(timeout=10)  # both calls have recorded before either returns
        return Condensation(condensation_action(view, [2]))


def test_overlapping_acondense_calls_on_one_instance_keep_their_own_records() -> None:
    s = _session()
    small, large = View.from_events(s.events[:5]), s.view
    condenser = RecordsItsView(threading.Barrier(2))

    async def both() -> list[View | Condensation]:
        return list(await asyncio.gather(condenser.acondense(small), condenser.acondense(large)))

    results = asyncio.run(both())
    for view, result in zip((small, large), results, strict=True):
        assert isinstance(result, Condensation) and result.metadata is not None
        assert result.metadata.extra == {"view_size": len(view)}
        assert result.metadata.llm_usage is not None and result.metadata.llm_usage["accumulated_cost"] == len(view)
        assert result.action.llm_metrics == result.metadata.llm_usage

