"""The framework: rolling condensers, what each condensation records, the metadata hooks."""

from __future__ import annotations

import ast
import asyncio
import threading
import time
from pathlib import Path

import pytest
from conftest import HANG_GUARD_SECONDS

import openhands_memory.condenser as condenser_package
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
        self.barrier.wait(timeout=HANG_GUARD_SECONDS)  # both calls have recorded before either returns
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



class CondensesOnRequestOnly(Condenser):
    """Not rolling: condenses in its own `condense`, through the public hook, when the agent asks."""

    def __init__(self, *, nothing_to_forget: bool = False) -> None:
        super().__init__()
        self.nothing_to_forget = nothing_to_forget

    def condense(self, view: View) -> View | Condensation:
        if not view.unhandled_condensation_request:
            return view

        def make() -> object:
            self.add_metadata("note", "on request")
            self.record_llm_usage(METRICS)
            if self.nothing_to_forget:
                raise NoCondensationAvailable(self.name, "test")
            return condensation_action(view, [2, 3])

        return self.record_condensation(view, make, reason="request")  # type: ignore[arg-type]


def _requested() -> View:
    s = _session()
    s.request()
    return s.view


def test_a_strategy_that_is_not_rolling_records_its_condensation_through_the_public_hook() -> None:
    condenser = CondensesOnRequestOnly()
    condenser.add_metadata("stale", True)  # recorded outside a call: not this condensation's
    result = condenser.condense(_requested())
    assert isinstance(result, Condensation) and result.metadata is condenser.last_condensation
    meta = result.metadata
    assert meta is not None and (meta.condenser, meta.reason, meta.forgotten) == ("CondensesOnRequestOnly", "request", 2)
    assert meta.extra == {"note": "on request"} and meta.llm_usage == METRICS
    assert result.action.condenser_metadata == meta.to_dict() and result.action.llm_metrics == METRICS


def test_the_hook_times_from_when_deciding_began_and_records_nothing_when_nothing_can_go() -> None:
    view = _requested()
    condenser = CondensesOnRequestOnly()
    # `started` is a `time.perf_counter()` value: one a minute back shows in the record.
    late = condenser.record_condensation(view, lambda: condensation_action(view, [2, 3]), reason="custom", started=time.perf_counter() - 60)
    assert late.metadata is not None and late.metadata.seconds >= 60 and late.metadata.reason == "custom"
    empty = CondensesOnRequestOnly(nothing_to_forget=True)
    with pytest.raises(NoCondensationAvailable):
        empty.condense(view)
    assert empty.last_condensation is None
    after = empty.record_condensation(view, lambda: condensation_action(view, [2]), reason="request")
    assert after.metadata is not None and after.metadata.extra == {}  # the failed call's records were dropped


def _private_recording_steps() -> set[str]:
    """The recording steps of the base classes that strategies must not call (their names start with `_`)."""
    names = set()
    for base in (Condenser, RollingCondenser):
        names |= {name for name, value in vars(base).items() if name.startswith("_") and not name.startswith("__") and callable(value)}
    return names


def test_no_strategy_calls_the_base_classes_private_recording_steps() -> None:
    steps = _private_recording_steps()
    assert {"_begin", "_end", "_finish", "_call"} <= steps
    package = Path(condenser_package.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "base.py" and path.parent == package:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in steps:
                offenders.append(f"{path.relative_to(package)}:{node.lineno}: {node.attr}")
    assert offenders == []
