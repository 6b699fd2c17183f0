"""What OpenHands' controller hands the agent: the stream minus the events no model should see."""

from __future__ import annotations

from collections.abc import Iterable
from operator import gt

from openhands_memory.events._loaded import LoadedEvents
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
    history = _from_record(events) if type(events) is LoadedEvents else None
    if history is None:
        history = [e for e in events if not isinstance(e, _NOT_FOR_THE_AGENT) and not e.hidden]
    return history if scope is None else events_in_scope(history, scope)


def _from_record(events: LoadedEvents) -> LoadedEvents | None:
    """The agent's history from what loading recorded of each event (its class and hidden flag),
    without reading the events (on a long log, a memory miss or more per event); None without a record."""
    record = events.record()
    if record is None or record.hidden is None:
        return None
    shown = {cls: not issubclass(cls, _NOT_FOR_THE_AGENT) for cls in set(record.types)}
    # shown > hidden: a kind the agent sees (True, 1) on an event not hidden (0).
    return record.subset(list(map(gt, map(shown.__getitem__, record.types), record.hidden)))
