"""Delegation scopes: which events belong to the top-level agent and which to each delegate.

OpenHands V0 runs a delegate in the same stream as its parent: an `AgentDelegateAction`, then the
delegate's own events (its system prompt, the `TASK: ...` message, its tool calls and results),
then an `AgentDelegateObservation` with the delegate's result. Its controller gives the parent
every event except those in between (the action and the observation stay), and gives the
delegate the events from the one after its action onwards. Delegations nest: a delegate may
delegate in turn.

Inkeep adds parallel delegations, and a rule for what a delegate sees: the top-level
conversation and its own tool results, never those of a sibling. Parallel delegates write into
one stream, interleaved, so position alone cannot say whose an event is. Each event is
attributed, in log order, to one owner (None for the top level, else the id of the
`AgentDelegateAction` that opened its delegation), by the first rule that applies:

1. An `AgentDelegateObservation` closes the delegation it answers (the open one its `cause` names,
   else the open one whose action has the same `tool_call_id`, else the most recently opened, as
   OpenHands pairs them) and belongs, like that delegation's action, to the delegation's parent.
2. An event with a `delegation_id` that names a delegation opened before it belongs to that
   delegation. Writers of parallel delegations set it: in a JSON log, as a top-level key (which
   OpenHands' loader ignores); on an event built in code, as an extra field (`CmdRunAction(...,
   delegation_id=7)`), which `event_to_dict` writes at the top level too. A tag that names no
   such delegation is logged and ignored.
3. An event whose `cause` is an earlier event goes where that event went: a tool result follows
   its call; an event caused by an open delegation's action (its task message) enters it.
4. An action from the same model response as an earlier action goes where that one went
   (parallel tool calls, such as two delegations opened at once, belong to the agent that made them).
5. Otherwise the event belongs to the most recently opened delegation still open (OpenHands V0
   runs one delegate at a time, so this is its rule), or to the top level when none is open.

Attribution looks only backwards, so it can follow a live stream one event at a time
(`DelegationTracker`). A scope then selects what one agent sees (`Scope`, `events_in_scope`,
which reads the whole log first):

- the top level: its own events, each delegation reduced to its action and observation;
- a delegation (OpenHands V0): its own events, nested delegations reduced likewise;
- the top level with `with_conversation=True` (Inkeep's main agent): every event, the tool calls and
  results of every delegation included;
- a delegation with `with_conversation=True` (Inkeep's delegated agent): also every top-level event
  (messages, tool calls and their results) from before the delegation ended, and the messages of the
  delegations that enclose it from before it began; the top level's system prompt stays out (the
  delegate has its own), and so do the tool calls and results of every other delegation (siblings,
  and the enclosing delegations' own tool work).

One difference from OpenHands, on purpose: when OpenHands 0.62 restores a parent's history from a
log with a nested delegation (`StateTracker._init_history`), the nested delegation's action and
observation get in after the outer pair, followed by every event from there on, so some events come
twice; here the parent sees only its own delegations, once each.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from openhands_memory.events.actions import AgentDelegateAction, MessageAction, SystemMessageAction
from openhands_memory.events._wire import TOP_LEVEL_TAGS, wire_of
from openhands_memory.events.base import Event
from openhands_memory.events.observations import AgentDelegateObservation
from openhands_memory.errors import UnknownDelegationError

__all__ = [
    "TOP_LEVEL",
    "Delegation",
    "DelegationTracker",
    "Scope",
    "events_in_scope",
    "find_delegations",
]

logger = logging.getLogger(__name__)

DELEGATION_ID_FIELD = "delegation_id"
assert DELEGATION_ID_FIELD in TOP_LEVEL_TAGS  # written at the top level of the JSON, where OpenHands ignores it
"""The extra top-level field that names the delegation (its action's id) an event belongs to."""


@dataclass(frozen=True, slots=True)
class Scope:
    """What one agent sees: the top level (`delegation=None`) or one delegation, named by its action's id."""

    delegation: int | None = None
    """The id of the `AgentDelegateAction` that opened the delegation; None for the top-level agent."""
    with_conversation: bool = False
    """Inkeep's rule: a delegate also sees the top-level conversation, tool results included, and the
    enclosing delegations' messages; the main agent (`delegation=None`) sees every event."""

    @classmethod
    def of_delegation(cls, action_id: int, *, with_conversation: bool = False) -> Scope:
        """The scope of the delegation opened by the action with id `action_id`."""
        return cls(action_id, with_conversation)


TOP_LEVEL = Scope()
"""The top-level agent's scope."""


@dataclass(slots=True)
class Delegation:
    """One delegation found in a log: who opened it, where, and whether it has ended."""

    action_id: int
    """The id of its `AgentDelegateAction` (the delegation's name in a `Scope`)."""
    agent: str
    """The delegate agent's class name."""
    parent: int | None
    """The delegation it was opened from (its action's id); None for the top level."""
    depth: int
    """1 for a delegation of the top-level agent, 2 for one of its delegates, ..."""
    tool_call_id: str | None = None
    """The tool call of its action, if the model made one: its observation carries it back."""
    observation_id: int | None = None
    """The id of the `AgentDelegateObservation` that ended it; None while it runs."""


class DelegationTracker:
    """Attributes events to their owner (see the module docstring) one at a time, in log order.

    Memory grows with the number of events seen (one owner per id), as the log does.
    """

    def __init__(self) -> None:
        self.delegations: dict[int, Delegation] = {}
        """Every delegation seen so far, by its action's id, in the order they were opened."""
        self.unmatched_observations: list[int] = []
        """Ids of `AgentDelegateObservation`s that closed no delegation (none was open); logged too."""
        self._owner: dict[int, int | None] = {}
        self._open: list[int] = []
        self._response_owner: dict[str, int | None] = {}

    def add(self, event: Event) -> int | None:
        """Attribute `event`; returns its owner: None for the top level, else its delegation's action id."""
        if isinstance(event, AgentDelegateObservation):
            owner = self._close(event)
        else:
            owner = self._owner_by_rules(event)
            if isinstance(event, AgentDelegateAction) and event.id is not None:
                parent = self.delegations.get(owner) if owner is not None else None
                depth = parent.depth + 1 if parent is not None else 1
                call = event.tool_call_metadata.tool_call_id if event.tool_call_metadata is not None else None
                self.delegations[event.id] = Delegation(event.id, event.agent, owner, depth, call)
                self._open.append(event.id)
        if event.id is not None:
            self._owner[event.id] = owner
        response = event.response_id
        if response is not None:
            self._response_owner.setdefault(response, owner)
        return owner

    def owner_of(self, event_id: int) -> int | None:
        """The owner attributed to the event with this id.

        Raises:
            KeyError: no event with this id was added.
        """
        return self._owner[event_id]

    def ancestors(self, delegation: int | None) -> list[int | None]:
        """The scopes enclosing `delegation`, innermost first, ending with None (the top level)."""
        chain: list[int | None] = []
        current = delegation
        while current is not None:
            current = self.delegations[current].parent
            chain.append(current)
        return chain

    def is_in_scope(self, event: Event, owner: int | None, scope: Scope) -> bool:
        """Whether an event attributed to `owner` is seen by `scope` (see the module docstring).

        With `with_conversation`, it reads the delegation's end: give it every event first.
        """
        if owner == scope.delegation:
            return True
        if not scope.with_conversation:
            return False
        if scope.delegation is None:
            return True  # Inkeep's main agent sees everything
        delegation = self.delegations.get(scope.delegation)
        if delegation is None or event.id is None:
            return False
        if owner is None:
            # The top-level conversation, tool results included, up to where the delegate stopped.
            ended = delegation.observation_id
            return not isinstance(event, SystemMessageAction) and (ended is None or event.id < ended)
        return isinstance(event, MessageAction) and event.id < scope.delegation and owner in self.ancestors(scope.delegation)

    def _close(self, observation: AgentDelegateObservation) -> int | None:
        delegation = self._match(observation)
        if delegation is None:
            self.unmatched_observations.append(observation.id if observation.id is not None else -1)
            logger.warning("delegate observation %s closes no delegation (none is open); kept at its position", observation.id)
            return self._open[-1] if self._open else None
        self._open.remove(delegation)
        record = self.delegations[delegation]
        record.observation_id = observation.id
        return record.parent

    def _match(self, observation: AgentDelegateObservation) -> int | None:
        if observation.cause in self._open:
            return observation.cause
        metadata = observation.tool_call_metadata
        if metadata is not None:
            for action_id in reversed(self._open):
                if self.delegations[action_id].tool_call_id == metadata.tool_call_id:
                    return action_id
        return self._open[-1] if self._open else None

    def _owner_by_rules(self, event: Event) -> int | None:
        tag = _delegation_tag(event)
        if tag is not None:
            if isinstance(tag, int) and tag in self.delegations:
                return tag
            logger.warning("event %s names delegation %r, which is not in the log before it; ignored", event.id, tag)
        cause = event.cause
        if cause is not None and cause in self._owner:
            return cause if cause in self._open else self._owner[cause]
        response = event.response_id
        if response is not None and response in self._response_owner:
            return self._response_owner[response]
        return self._open[-1] if self._open else None


def _delegation_tag(event: Event) -> object:
    """The `delegation_id` of an event: a top-level key of the JSON it was loaded from, or an extra field."""
    wire = wire_of(event)
    if wire is not None and DELEGATION_ID_FIELD in wire.data:
        return wire.data[DELEGATION_ID_FIELD]
    extra = event.__pydantic_extra__
    return extra.get(DELEGATION_ID_FIELD) if extra else None


def events_in_scope(events: Iterable[Event], scope: Scope) -> list[Event]:
    """The events `scope` sees, in log order.

    Raises:
        ValueError: `scope` names a delegation that no `AgentDelegateAction` of `events` opened.
    """
    events = list(events)
    tracker = DelegationTracker()
    # Two passes: a delegate's view of the conversation holds messages from before it was opened.
    owners = [tracker.add(event) for event in events]
    if scope.delegation is not None and scope.delegation not in tracker.delegations:
        raise UnknownDelegationError(scope.delegation)
    return [event for event, owner in zip(events, owners, strict=True) if tracker.is_in_scope(event, owner, scope)]


def find_delegations(events: Iterable[Event]) -> list[Delegation]:
    """Every delegation in `events`, in the order they were opened, nested and parallel ones included."""
    tracker = DelegationTracker()
    for event in events:
        tracker.add(event)
    return list(tracker.delegations.values())
