"""Invariants of every offline strategy and of random pipelines of them, over random sessions.

DESIGN.md invariant 5: a condenser never forgets what it promised to keep and never splits a tool
call from its result; and the controller loop always ends (a request is always handled).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from openhands_memory.condenser import Condensation, Condenser
from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.testing.condenser_replay import check_condensation, check_derived_view, replay_with_condenser
from openhands_memory.testing.strategies import agent_sessions, event_streams
from openhands_memory.view import View

_FORGETTING = ("amortized", "recent", "conversation_window")


def offline_configs() -> st.SearchStrategy[dict[str, Any]]:
    """A config of one offline strategy, with small budgets so that it fires."""
    return st.one_of(
        st.just({"type": "noop"}),
        st.builds(lambda w: {"type": "observation_masking", "attention_window": w}, st.integers(1, 8)),
        st.builds(lambda w: {"type": "browser_output_masking", "attention_window": w}, st.integers(1, 3)),
        st.builds(
            lambda t, p, protect, k: {"type": "large_output_offload", "large_payload_threshold": t,
                                      "preview_chars": min(p, t - 1), "protect_last_keep": protect, "last_keep": k},
            st.integers(1, 40), st.integers(0, 10), st.booleans(), st.integers(0, 8),
        ),
        st.builds(
            lambda k, m, t: {"type": "recent", "keep_first": k, "max_events": m, "max_tokens": t},
            st.integers(0, 5), st.integers(1, 20), st.none() | st.integers(1, 3000),
        ),
        st.builds(
            lambda k, m, t: {"type": "amortized", "keep_first": k, "max_size": m, "max_tokens": t},
            st.integers(0, 3), st.integers(8, 30), st.none() | st.integers(50, 3000),
        ),
        st.builds(
            lambda m, t: {"type": "conversation_window", "max_events": m, "max_tokens": t},
            st.none() | st.integers(4, 30), st.none() | st.integers(50, 3000),
        ),
    )  # fmt: skip


def _promised_head(members: list[dict[str, Any]]) -> int:
    """The head every member keeps: a later member's head is counted in an earlier member's output."""
    return min([m.get("keep_first", 0) for m in members if m["type"] in _FORGETTING], default=0)


@given(agent_sessions(), st.lists(offline_configs(), min_size=1, max_size=3))
def test_random_pipelines_keep_every_promise_at_every_step(history: list[Any], members: list[dict[str, Any]]) -> None:
    condenser = Condenser.from_config({"type": "pipeline", "condensers": members})
    replay = replay_with_condenser(history, condenser, keep_first=_promised_head(members))
    for record in replay.condensations:
        assert record.events_after <= record.events_before


@given(event_streams(max_size=30), offline_configs())
def test_any_view_of_any_stream_gets_a_valid_answer(stream: list[Any], config: dict[str, Any]) -> None:
    view = View.from_events(stream)
    outcome = Condenser.from_config(config).condense(view)
    if isinstance(outcome, Condensation):
        check_condensation(view, outcome.action, keep_first=_promised_head([config]))
        if view.unhandled_condensation_request:
            assert outcome.metadata is not None and outcome.metadata.reason == "request"
    else:
        check_derived_view(view, outcome)
        assert not (view.unhandled_condensation_request and config["type"] in _FORGETTING)


@given(agent_sessions(max_turns=12, requests=False), offline_configs())
def test_what_the_model_is_shown_is_always_a_valid_chat(history: list[Any], config: dict[str, Any]) -> None:
    condenser = Condenser.from_config(config)
    memory = ConversationMemory(system_prompt="")
    replay = replay_with_condenser(history, condenser, keep_first=_promised_head([config]))
    outcome = condenser.condense(View.from_events(replay.history))
    view = outcome if isinstance(outcome, View) else View.from_events([*replay.history, outcome.action])
    messages = memory.process_events(view, None)
    pending: list[str] = []
    for message in messages:
        if message.role == "tool":
            assert message.tool_call_id in pending
            pending.remove(message.tool_call_id)
        else:
            assert not pending, "a tool call without its result"
        if message.tool_calls:
            pending = [call.id for call in message.tool_calls]


@given(agent_sessions(max_turns=50, requests=False), st.integers(0, 5), st.integers(1, 12))
def test_recent_on_long_sessions_keeps_pairs_and_its_budget(history: list[Any], keep_first: int, max_events: int) -> None:
    condenser = Condenser.from_config({"type": "recent", "keep_first": keep_first, "max_events": max_events})
    replay = replay_with_condenser(history, condenser, keep_first=keep_first)
    # Over budget only by the head (grown to the end of a unit: up to 5 more events), the system
    # prompt and first user message, and the newest unit (up to 6 events: 3 parallel calls).
    assert replay.largest_view <= max(max_events, keep_first + 5 + 2 + 6)
