"""Invariants of every registered strategy, over random sessions and random small configs.

DESIGN.md invariant 5: a condenser never forgets what it promised to keep and never splits a tool
call from its result; and the controller loop always ends (a request is always handled by a
strategy that says it handles requests). Nothing here names a strategy: each test runs once per
built-in strategy the registry holds, with configs drawn from its config model
(`openhands_memory.testing.condenser_configs`); a pipeline's members are random offline strategies.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openhands_memory.condenser import Condensation, Condenser
from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.testing.condenser_configs import (
    BUILTIN_TYPES,
    REPLAYABLE_SIZES,
    any_config,
    promised_head,
    writes_persisting_summaries,
)
from openhands_memory.testing.condenser_replay import check_condensation, check_derived_view, replay_with_condenser
from openhands_memory.testing.strategies import agent_sessions, event_streams
from openhands_memory.view import View

# Each strategy gets a share of the profile's examples: the suite grows with the registry, not by its square.
PER_STRATEGY = settings(max_examples=max(5, settings().max_examples // 4))



@pytest.mark.parametrize("type_name", BUILTIN_TYPES)
def test_any_view_of_any_stream_gets_a_valid_answer(type_name: str) -> None:
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
    @PER_STRATEGY
    @given(agent_sessions(), any_config(type_name, REPLAYABLE_SIZES))
    def check(history: list[Any], config: dict[str, Any]) -> None:
        condenser = Condenser.from_config(config)
        replay = replay_with_condenser(history, condenser, keep_first=promised_head(config), persisting=writes_persisting_summaries(config))
        for record in replay.condensations:
            assert record.events_after <= record.events_before

    check()


@pytest.mark.parametrize("type_name", BUILTIN_TYPES)
def test_what_the_model_is_shown_is_always_a_valid_chat(type_name: str) -> None:
    @PER_STRATEGY
    @given(agent_sessions(max_turns=12, requests=False), any_config(type_name, REPLAYABLE_SIZES))
    def check(history: list[Any], config: dict[str, Any]) -> None:
        condenser = Condenser.from_config(config)
        memory = ConversationMemory(system_prompt="")
        replay = replay_with_condenser(history, condenser, keep_first=promised_head(config), persisting=writes_persisting_summaries(config))
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
