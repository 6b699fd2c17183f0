"""Invariants of every registered strategy, over random sessions and random small configs.

DESIGN.md invariant 5: a condenser never forgets what it promised to keep and never splits a tool
call from its result; and the controller loop always ends (a request is always handled by a
strategy that says it handles requests). Nothing here names a strategy: each test runs once per
built-in strategy the registry holds, with configs drawn from its config model
(`openhands_memory.testing.condenser_configs`); a pipeline's members are random offline strategies.
A replay may end with the loop guard's `CondensationStalledError` only on a session that cannot fit
the budget drawn (`_cannot_fit`); the counterexamples hypothesis found run first
(`COUNTEREXAMPLES`, `STREAM_COUNTEREXAMPLES`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from openhands_memory.condenser import Condensation, Condenser
from openhands_memory.condenser._boundaries import analyze
from openhands_memory.condenser._model_backed import MIN_SUMMARY_TOKENS
from openhands_memory.condenser.config import size_role
from openhands_memory.condenser.tokens import ApproximateTokenCounter
from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.errors import CondensationStalledError
from openhands_memory.events import Event
from openhands_memory.testing.condenser_configs import (
    BUILTIN_TYPES,
    REPLAYABLE_SIZES,
    any_config,
    nested_config_fields,
    promised_head,
    strategy_of,
    writes_persisting_summaries,
)
from openhands_memory.testing.condenser_replay import (
    CondenserReplay,
    check_condensation,
    check_derived_view,
    replay_with_condenser,
)
from openhands_memory.testing.strategies import agent_sessions, event_streams
from openhands_memory.view import View

from ._helpers import Session

# Each strategy gets a share of the profile's examples: the suite grows with the registry, not by its square.
PER_STRATEGY = settings(max_examples=max(5, settings().max_examples // 4))

_F = TypeVar("_F", bound=Callable[..., Any])


def _configs_in(config: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """`config` and every config it nests (a pipeline's members, a wrapper's strategy)."""
    yield config
    config_cls = strategy_of(config["type"]).config_cls
    assert config_cls is not None
    for name, is_list in nested_config_fields(config_cls).items():
        value = config.get(name)
        for member in (value or []) if is_list else [value] if value is not None else []:
            yield from _configs_in(member)


def _sizes(config: Mapping[str, Any], role: str) -> list[int]:
    """The sizes of `role` (`tokens`, `first`, ...) that `config` and the configs it nests set or default to."""
    sizes = []
    for inner in _configs_in(config):
        config_cls = strategy_of(inner["type"]).config_cls
        assert config_cls is not None
        for name, field in config_cls.model_fields.items():
            value = inner.get(name, field.default)
            if size_role(field) == role and isinstance(value, int):
                sizes.append(value)
    return sizes


def _cannot_fit(history: list[Event], config: Mapping[str, Any]) -> bool:
    """Whether a step of `history` may not fit `config`'s smallest token budget, whatever is forgotten.

    It may when the head a condenser keeps for good (the largest `first` any config sets, grown to
    whole units, with the system prompt and the first user message), the largest other unit (the
    newest at some step, always kept whole) and a summary of `MIN_SUMMARY_TOKENS` (never cut) take
    more tokens than the budget. `agent_sessions` writes texts of up to a few thousand characters,
    so a head or a batch of parallel calls alone can fill a budget `REPLAYABLE_SIZES` draws.
    """
    budgets = _sizes(config, "tokens")
    if not budgets:
        return False
    structure = analyze(View.from_events(history))
    units: dict[int, list[Event]] = {}
    for event, unit in zip(structure.events, structure.unit_of, strict=True):
        units.setdefault(unit, []).append(event)
    head = structure.pinned_units(max(_sizes(config, "first"), default=0))
    counter = ApproximateTokenCounter()
    kept = counter([event for unit in head for event in units[unit]])
    newest = max((counter(events) for unit, events in units.items() if unit not in head), default=0)
    return kept + newest + MIN_SUMMARY_TOKENS > min(budgets)


STEP_LIMIT = 64
"""The loop guard's limit of condensations at one step in these replays. A controller's default
(`MAX_CONDENSATIONS_PER_STEP`, 8) is a safety net, not a promise of the strategies: `auto_context`
compresses one unit per call, the first ones first, so a step that crosses its threshold with many
small units in view may take more than eight calls, each one making the prompt smaller (hypothesis
found one, issue 40). A condensation that does not make the prompt smaller still stops the replay
at once."""


def _replay(history: list[Event], condenser: Condenser, config: Mapping[str, Any]) -> CondenserReplay | None:
    """`replay_with_condenser` checking `config`'s promises; None when the loop guard stopped a replay whose
    budget cannot be met (`_cannot_fit`), as it stops a controller. Any other stall fails."""
    try:
        return replay_with_condenser(
            history, condenser, keep_first=promised_head(config), persisting=writes_persisting_summaries(config),
            max_condensations_per_step=STEP_LIMIT,
        )  # fmt: skip
    except AssertionError as exc:
        if isinstance(exc.__cause__, CondensationStalledError) and _cannot_fit(history, config):
            return None
        raise


def _summary_outweighs_the_older_round() -> tuple[list[Event], dict[str, Any]]:
    """A session whose last two rounds fill `compact_history`'s budget exactly, after an older round of a few tokens.

    Found by hypothesis (issue 40): the condensation forgot the older round under a summary longer than
    it (one under `MIN_SUMMARY_TOKENS` is never cut), so the prompt grew, still over budget, and the
    loop guard stopped the next condensation (`CondensationStalledError`). Now it trims instead.
    """
    s = Session()
    s.header()  # 0-3
    s.turn("ls", "a.txt")  # 4, 5: the older round
    s.turn("cat a.txt", "A" * 8000)  # 6, 7
    s.turn("cat b.txt", "B" * 8000)  # 8, 9: the last two rounds, kept
    s.calls("wc -l a.txt")  # 10: the step that asks
    budget = ApproximateTokenCounter()([e for e in s.events[:-1] if e.id not in (4, 5)])
    return s.events, {
        "type": "compact_history", "keep_first": 1, "max_event_length": 60, "max_tokens": budget,
        "keep_last_rounds": 2, "keep_last_messages": 8, "compact_over_chars": 60, "preview_chars": 20,
    }  # fmt: skip


def _head_over_the_budget() -> tuple[list[Event], dict[str, Any]]:
    """A session whose kept head alone (task, recall, a call and its result) is over `sdk_summarizing`'s budget.

    Found by hypothesis (issue 40): no condensation can fit it, so the loop guard stops the replay,
    as it would stop a controller; `_cannot_fit` says so and the properties accept the stop.
    """
    s = Session()
    task = s.user("Fix the bug. " + "pytest cache " * 400)  # 0
    s.recall(task.content)  # 1, 2
    s.turn("cat log", "E" * 6000)  # 3, 4: the end of the head
    s.turn("ls", "x" * 4000)  # 5, 6
    s.calls("ls -a")  # 7: the step that asks
    return s.events, {
        "type": "sdk_summarizing", "keep_first": 4, "max_event_length": 1, "max_size": 12, "max_tokens": None,
        "max_input_tokens": 4000,
    }  # fmt: skip


def _many_small_outputs_before_a_large_one() -> tuple[list[Event], dict[str, Any]]:
    """Nine calls with 200-character outputs, then one with 12,000: over `auto_context`'s token threshold at one step.

    It offloads one call per condensation, the first ones first, each making the prompt a little
    smaller, and the large output at the eleventh. Found by hypothesis (issue 40): the loop guard's
    default limit of 8 condensations at one step stopped the replay; `STEP_LIMIT` gives it room.
    """
    s = Session()
    s.header()  # 0-3
    for number in range(9):
        s.turn(f"cat part{number}", "m" * 200)  # 4-21
    s.turn("cat big", "B" * 12000)  # 22, 23
    s.turn("ls", "ok")  # 24, 25: the latest response
    s.calls("wc -l big")  # 26: the step that asks
    return s.events, {
        "type": "auto_context", "keep_first": 0, "max_event_length": 1, "msg_threshold": 30, "max_token": 4000,
        "last_keep": 0, "large_payload_threshold": 1, "offload_single_preview": 0,
    }  # fmt: skip


COUNTEREXAMPLES: dict[str, list[tuple[list[Event], dict[str, Any]]]] = {
    "auto_context": [_many_small_outputs_before_a_large_one()],
    "compact_history": [_summary_outweighs_the_older_round()],
    "sdk_summarizing": [_head_over_the_budget()],
}
"""(history, config) pairs hypothesis found for a strategy, replayed first by the replay properties."""


def _second_result_of_a_forgotten_call() -> tuple[list[Event], dict[str, Any]]:
    """A call answered twice at the end of a stream over `sdk_summarizing`'s `max_size`.

    Found by hypothesis (issue 40): the SDK's view leaves a second result out, so the condensation
    forgot the call and its first result and kept the second. Now it goes with its call.
    """
    s = Session()
    s.user()  # 0
    for number in range(5):
        s.agent(f"step {number}")  # 1-5
    (call,) = s.calls("cat a.txt")  # 6
    s.result(call, "a")  # 7
    s.result(call, "a, again")  # 8
    return s.events, {
        "type": "sdk_summarizing", "keep_first": 0, "max_event_length": 1, "max_size": 4, "max_tokens": None,
        "max_input_tokens": None,
    }  # fmt: skip


def _unanswered_call_of_a_forgotten_batch() -> tuple[list[Event], dict[str, Any]]:
    """Two parallel calls of one response at the end of a stream over `sdk_summarizing`'s `max_size`, one answered.

    Found by hypothesis (in a run of the README's test command): the SDK's view leaves the unanswered
    call out, so the condensation forgot the answered call and its result and kept the other,
    splitting the response's calls. Now it goes with its batch.
    """
    s = Session()
    s.user()  # 0
    for number in range(5):
        s.agent(f"step {number}")  # 1-5
    answered, _unanswered = s.calls("cat a.txt", "cat b.txt")  # 6, 7: one response
    s.result(answered, "a")  # 8
    return s.events, {
        "type": "sdk_summarizing", "keep_first": 0, "max_event_length": 1, "max_size": 4, "max_tokens": None,
        "max_input_tokens": None,
    }  # fmt: skip


STREAM_COUNTEREXAMPLES: dict[str, list[tuple[list[Event], dict[str, Any]]]] = {
    "sdk_summarizing": [_second_result_of_a_forgotten_call(), _unanswered_call_of_a_forgotten_batch()],
}
"""(stream, config) pairs hypothesis found for a strategy, condensed first by the any-view property."""


def _with_counterexamples(
    type_name: str, examples: Mapping[str, list[tuple[list[Event], dict[str, Any]]]] = COUNTEREXAMPLES
) -> Callable[[_F], _F]:
    """Decorates a `@given(events, config)` test with `examples[type_name]` as explicit examples."""

    def add(test: _F) -> _F:
        for events, config in examples.get(type_name, []):
            test = example(events, config)(test)
        return test

    return add


@pytest.mark.parametrize("type_name", BUILTIN_TYPES)
def test_any_view_of_any_stream_gets_a_valid_answer(type_name: str) -> None:
    @_with_counterexamples(type_name, STREAM_COUNTEREXAMPLES)
    @PER_STRATEGY
    @given(event_streams(max_size=30), any_config(type_name))
    def check(stream: list[Any], config: dict[str, Any]) -> None:
        view = View.from_events(stream)
        condenser = Condenser.from_config(config)
        outcome = condenser.condense(view)
        if isinstance(outcome, Condensation):
            check_condensation(view, outcome.action, keep_first=promised_head(config), persisting=writes_persisting_summaries(config))
            if view.unhandled_condensation_request:
                assert outcome.metadata is not None and outcome.metadata.reason == "request"
        else:
            check_derived_view(view, outcome)
            assert not (view.unhandled_condensation_request and condenser.handles_requests), "a request it handles was left"

    check()


@pytest.mark.parametrize("type_name", BUILTIN_TYPES)
def test_replaying_a_session_keeps_every_promise_at_every_step(type_name: str) -> None:
    @_with_counterexamples(type_name)
    @PER_STRATEGY
    @given(agent_sessions(), any_config(type_name, REPLAYABLE_SIZES))
    def check(history: list[Any], config: dict[str, Any]) -> None:
        replay = _replay(history, Condenser.from_config(config), config)
        if replay is None:
            return  # stopped by the loop guard: this session cannot fit the budget drawn
        for record in replay.condensations:
            assert record.events_after <= record.events_before

    check()


@pytest.mark.parametrize("type_name", BUILTIN_TYPES)
def test_what_the_model_is_shown_is_always_a_valid_chat(type_name: str) -> None:
    @_with_counterexamples(type_name)
    @PER_STRATEGY
    @given(agent_sessions(max_turns=12, requests=False), any_config(type_name, REPLAYABLE_SIZES))
    def check(history: list[Any], config: dict[str, Any]) -> None:
        condenser = Condenser.from_config(config)
        memory = ConversationMemory(system_prompt="")
        replay = _replay(history, condenser, config)
        if replay is None:
            return  # stopped by the loop guard: this session cannot fit the budget drawn
        outcome = condenser.condense(View.from_events(replay.history))
        view = outcome if isinstance(outcome, View) else View.from_events([*replay.history, outcome.action])
        pending: list[str] = []
        for message in memory.process_events(view, None):
            if message.role == "tool":
                assert message.tool_call_id in pending
                pending.remove(message.tool_call_id)
            else:
                assert not pending, "a tool call without its result"
            if message.tool_calls:
                pending = [call.id for call in message.tool_calls]

    check()


@given(agent_sessions(max_turns=50, requests=False), st.integers(0, 5), st.integers(1, 12))
def test_recent_on_long_sessions_keeps_pairs_and_its_budget(history: list[Any], keep_first: int, max_events: int) -> None:
    condenser = Condenser.from_config({"type": "recent", "keep_first": keep_first, "max_events": max_events})
    replay = replay_with_condenser(history, condenser, keep_first=keep_first)
    # Over budget only by the head (grown to the end of a unit: up to 5 more events), the system
    # prompt and first user message, and the newest unit (up to 6 events: 3 parallel calls).
    assert replay.largest_view <= max(max_events, keep_first + 5 + 2 + 6)
