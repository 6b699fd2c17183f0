"""Every built-in strategy, as an SDK condenser, over generated SDK conversations: what it hands back is what the SDK can use.

Nothing here names a strategy: each test runs once per strategy the registry holds (configs drawn
from its config model by `openhands_memory.testing.condenser_configs`), so a new strategy is covered
when it is added. At every step of a conversation:

- a view handed back (after the `[history_policy]` drawn, if any) satisfies the SDK's own view properties (`ALL_PROPERTIES`: nothing to enforce),
  and `View.from_events` of it changes nothing; it keeps the input's order, and every event it did
  not change is the SDK's own object;
- a condensation names only events of the view, and the SDK's view after it shows exactly the events
  our own view shows after our condensation (the mapping loses nothing), the system prompt first;
- the input view is never changed.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

pytest.importorskip("openhands.sdk", reason="needs openhands-sdk (Python 3.12+): see the README's SDK test command")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from openhands.sdk.context.view import View  # noqa: E402
from openhands.sdk.context.view.properties import ALL_PROPERTIES  # noqa: E402
from openhands.sdk.event import CondensationSummaryEvent, SystemPromptEvent  # noqa: E402
from openhands.sdk.event.condenser import Condensation  # noqa: E402

from openhands_memory.condenser._views import condensed_events  # noqa: E402
from openhands_memory.errors import CondensationStalledError  # noqa: E402
from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser  # noqa: E402
from openhands_memory.testing.condenser_configs import (  # noqa: E402
    BUILTIN_TYPES,
    REPLAYABLE_SIZES,
    any_config,
)

from .sdk_events import conversations  # noqa: E402

PER_STRATEGY = settings(max_examples=max(4, settings().max_examples // 8), deadline=None)

STEPS = 6
"""SDK steps per conversation: condensations are appended and the condenser asked again, as the agent does."""


POLICIES = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "max_messages": st.integers(min_value=1, max_value=12),
            "step_window": st.integers(min_value=1, max_value=5),
            "max_tokens": st.integers(min_value=50, max_value=2_000),
        },
    ),
)
"""No `[history_policy]`, or one with small limits (applied to the views handed back)."""


def configs(type_name: str) -> st.SearchStrategy[dict[str, Any]]:
    return any_config(type_name, sizes=REPLAYABLE_SIZES)


def assert_sdk_view_properties(view: View, all_events: list[Any]) -> None:
    for prop in ALL_PROPERTIES:
        assert prop.enforce(list(view.events), all_events) == set(), type(prop).__name__
    rebuilt = View.from_events(view.events)
    assert [e.id for e in rebuilt.events] == [e.id for e in view.events]


def check_condensation(condenser: OpenHandsMemoryCondenser, view: View, events: list[Any], made: Condensation) -> None:
    in_view = {e.id for e in view.events}
    assert made.forgotten_event_ids <= in_view
    after = View.from_events([*events, made])
    assert_sdk_view_properties(after, [*events, made])
    if view.events and isinstance(view.events[0], SystemPromptEvent):
        assert after.events[0] is view.events[0], "the system prompt stays first"
    # Our side: our condensation applied to our view shows the same events, summary included.
    asked = next(reversed(condenser._conversations.values())).asked  # the conversation condensed last
    assert asked is not None and asked.sdk_view is view
    if asked.sdk_condensation is made:
        ours = condensed_events(asked.imported.view, asked.outcome.action)
        ours_ids = [e.original_id for e in ours if e.original_id is not None]
        sdk_ids = [e.id for e in after.events if not (isinstance(e, CondensationSummaryEvent) and e.id == f"{made.id}-summary")]
        assert ours_ids == sdk_ids
        summaries = [e.summary for e in after.events if isinstance(e, CondensationSummaryEvent) and e.id == f"{made.id}-summary"]
        assert summaries == ([made.summary] if made.summary is not None and made.summary_offset is not None else [])


def check_view(view: View, shown: View) -> None:
    originals = {e.id: e for e in view.events}
    assert [e.id for e in shown.events if e.id in originals] == [e.id for e in view.events if e.id in {s.id for s in shown.events}]
    for event in shown.events:
        original = originals.get(event.id)
        if original is None:
            assert isinstance(event, CondensationSummaryEvent)
        elif event is not original:
            assert type(event) is type(original)
            for key in ("tool_call_id", "action_id", "llm_response_id"):
                assert getattr(event, key, None) == getattr(original, key, None)


@pytest.mark.parametrize("type_name", BUILTIN_TYPES)
def test_every_answer_satisfies_the_sdks_view_properties(type_name: str) -> None:
    logging.getLogger("openhands_memory").setLevel(logging.ERROR)

    @PER_STRATEGY
    @given(conversations, configs(type_name), POLICIES)
    def check(events: list[Any], config: dict[str, Any], policy: dict[str, Any] | None) -> None:
        condenser = OpenHandsMemoryCondenser(condenser=config, history_policy=policy, tokenizer="approximate")
        for _ in range(STEPS):
            view = View.from_events(events)
            before = view.model_dump()
            try:
                outcome = condenser.condense(view)
            except CondensationStalledError:
                return  # a typed stop (the loop guard): the budgets drawn cannot be met on this conversation
            assert view.model_dump() == before, "the input view was changed"
            if isinstance(outcome, Condensation):
                check_condensation(condenser, view, events, outcome)
                events = [*events, outcome]
                continue
            assert_sdk_view_properties(outcome, events)
            check_view(view, outcome)
            return

    check()
