"""What OpenHands' controller hands the agent: the stream minus the events no model should see."""

from __future__ import annotations

from collections.abc import Iterable

from openhands_memory.events.actions import ChangeAgentStateAction, NullAction
from openhands_memory.events.base import Event
from openhands_memory.events.observations import AgentStateChangedObservation, NullObservation
from openhands_memory.events.scopes import Scope, events_in_scope

_NOT_FOR_THE_AGENT = (NullAction, NullObservation, ChangeAgentStateAction, AgentStateChangedObservation)


def is_agent_history(event: Event) -> bool:
    """True for an event OpenHands' controller keeps in the agent's history."""
    return not isinstance(event, _NOT_FOR_THE_AGENT) and not event.hidden


def agent_history(events: Iterable[Event], *, scope: Scope | None = None) -> list[Event]:
    """The events OpenHands' controller passes to the agent, in order.

    Null actions and observations, agent-state changes and hidden events are left out; everything
    else, condensation actions included, stays (the view applies those). Condensations recorded by
    OpenHands count their `summary_offset` in this history, so build views from it.

    With `scope`, only what that agent sees of delegations (see `openhands_memory.events.scopes`):
    `TOP_LEVEL` is the history OpenHands gives the top-level agent of a log with delegations,
    `Scope.of_delegation(id)` a delegate's. Without it, delegates' events are not set apart.

    Raises:
        ValueError: `scope` names a delegation that no `AgentDelegateAction` of `events` opened.
    """
    history = [e for e in events if is_agent_history(e)]
    return history if scope is None else events_in_scope(history, scope)
