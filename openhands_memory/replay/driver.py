"""Drive a recorded log through a condenser as if live, one event at a time.

`Replayer(condenser).replay(events)` copies the events into a replayed history and yields what
happens on the way:

- an `AgentStep` at every point where the agent was asked for its next move: just before the
  first action of each model response (see `is_agent_step`: parallel tool calls of one response
  make one step, as OpenHands asks the model once for them; the system prompt, condensations and
  the controller's own condensation requests are no steps). Before the step is yielded the
  pipeline's turn runs (`Pipeline.turn`, the call `History.next_messages` makes): each
  `Condensation` is appended to the replayed history (a `CondensationMade`) and the condenser asked
  again, until it returns the view the model is shown, which the turn renders, trims and counts
  (`AgentStep.turn`). A loop that makes no progress (the prompt, in the run's tokens, no smaller)
  raises `CondensationStalledError` (the pipeline's one `CondensationGuard`).
- a `RecordedCondensation` for each condensation the log itself holds, when `keep_recorded`.
  Otherwise the log's condensations and condensation requests are left out: the condenser decides
  afresh.

The view is built from the agent's history only (`is_agent_history`), as OpenHands' controller
does; every event goes into the replayed history. Ids: an event keeps its id unless an inserted
condensation took it (or one before it moved); then it gets the next free id. `cause` and the
forgotten ids of recorded condensations are mapped to the new ids, so the replayed history is a
consistent log: `View.from_events(agent_history(replayer.history))` is `replayer.view`. (An id the
log refers to but does not hold stays as it is while no replayed event has taken it; a recorded id
range whose events moved is rebuilt from the events it holds, never id by id.) The events
given are never changed: an event whose id or references change is copied, the others are shared.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from openhands_memory.condenser import Condensation, Condenser
from openhands_memory.events import (
    Action,
    CondensationAction,
    CondensationRequestAction,
    Event,
    EventSource,
    MessageAction,
    SystemMessageAction,
    is_agent_history,
)
from openhands_memory.condenser.guard import MAX_CONDENSATIONS_PER_STEP
from openhands_memory.pipeline import Pipeline, Turn
from openhands_memory.view import View, ViewBuilder

__all__ = ["AgentStep", "CondensationMade", "RecordedCondensation", "ReplayItem", "Replayer", "is_agent_step"]


@dataclass(frozen=True, slots=True)
class AgentStep:
    """The agent is about to be asked for its next move: what the model is shown."""

    number: int
    """1 for the first step."""
    event: Event
    """The action the agent took next, as the log holds it (not yet in the replayed history)."""
    replayed_id: int
    """The id that action gets in the replayed history."""
    history_events: int
    """Events in the replayed history before that action."""
    view: View
    """The view of the replayed history at this point, every condensation applied."""
    shown: View
    """What the condenser returned for it: the view the model is shown."""
    condensations: int
    """Condensations the condenser made at this step."""
    turn: Turn[CondensationMade] | None = None
    """The pipeline's turn at this step: the messages sent (rendered, trimmed) and their tokens (with a meter)."""

    @property
    def where(self) -> str:
        """`step 3 (before event 50)`, with the log's id, for messages."""
        return f"step {self.number} (before event {self.event.id})"


@dataclass(frozen=True, slots=True)
class CondensationMade:
    """The condenser condensed at a step; its action was appended to the replayed history."""

    step: int
    """The step it was made at."""
    before_event: int | None
    """The log's id of the action that step comes before."""
    view: View
    """The view the condenser was given."""
    condensation: Condensation
    """What the condenser returned (its action has no id)."""
    action: CondensationAction
    """The action as appended: with its id, source and time."""
    view_after: View
    """The view of the replayed history once the action was appended."""

    @property
    def where(self) -> str:
        """`step 3 (before event 50)`, with the log's id, for messages."""
        return f"step {self.step} (before event {self.before_event})"


@dataclass(frozen=True, slots=True)
class RecordedCondensation:
    """A condensation from the log, appended (renumbered) to the replayed history."""

    steps_before: int
    """Agent steps replayed before it."""
    source_id: int | None
    """Its id in the log."""
    view: View
    """The view before it was applied."""
    action: CondensationAction
    """The action as appended (renumbered)."""
    view_after: View
    """The view once it was applied."""


ReplayItem = AgentStep | CondensationMade | RecordedCondensation
"""What `Replayer.replay` yields."""


def is_agent_step(event: Event, previous_response: str | None) -> bool:
    """Whether the model was asked for `event`: the first action of a model response.

    That is an agent action other than the system prompt, a condensation, or a condensation request
    the controller made (one without a tool call), and not a further call of the model response
    `previous_response` (the response of the agent's previous action).
    """
    if not isinstance(event, Action) or event.source != EventSource.AGENT or isinstance(event, _NOT_STEPS):
        return False
    if isinstance(event, CondensationRequestAction) and event.tool_call_metadata is None:
        return False
    response = event.response_id
    return response is None or response != previous_response


_NOT_STEPS = (CondensationAction, SystemMessageAction)


class Replayer:
    """Replays events through a condenser into a new, consistent history (see the module docstring)."""

    def __init__(
        self,
        condenser: Condenser | Pipeline,
        *,
        keep_recorded: bool = False,
        max_condensations_per_step: int = MAX_CONDENSATIONS_PER_STEP,
        compact_at: Mapping[int, str | None] | None = None,
    ) -> None:
        """Set up a replay.

        Args:
            condenser: the pipeline whose turn runs at every agent step (`Pipeline.of`: a condenser
                gets a pipeline of its own), the turn `History` runs.
            keep_recorded: keep the log's condensations and condensation requests (renumbered)
                and apply them where they are; by default they are left out.
            max_condensations_per_step: condensations one step may make before it is stuck (the
                pipeline's own when it is given one).
            compact_at: agent step -> focus (or None): just before that step a `CondensationRequestAction`
                with the focus is appended, as `History.request_condensation(focus=...)` does live.
        """
        limit = {} if isinstance(condenser, Pipeline) else {"max_condensations_per_step": max_condensations_per_step}
        self.pipeline: Pipeline = Pipeline.of(condenser, **limit)
        """Runs the turn at every agent step (condense until settled, show, count), as `History` does."""
        self.condenser = self.pipeline.condenser
        """Asked at every agent step."""
        self.keep_recorded = keep_recorded
        """The log's condensations (and requests) are kept."""
        self.compact_at: dict[int, str | None] = dict(compact_at or {})
        """Agent step -> the focus of the condensation requested just before it."""
        self.history: list[Event] = []
        """The replayed history: the log's events (renumbered copies) and the condensations made."""
        self.events_read = 0
        """Events of the log read so far."""
        self.steps = 0
        """Agent steps reached so far."""
        self._builder = ViewBuilder()
        self._ids: dict[int, int] = {}  # the log's id -> the replayed id
        self._taken: set[int] = set()  # every replayed id
        self._next_id = 0
        self._previous_response: str | None = None
        self._initial_user_action: MessageAction | None = None

    @property
    def view(self) -> View:
        """The view of the replayed history so far."""
        return self._builder.view

    def log_ids(self) -> dict[int, int]:
        """The log's id of each replayed event read from the log, by its replayed id (the
        condensations the replay made are not the log's: they have none)."""
        return {new: old for old, new in self._ids.items()}

    @property
    def initial_user_action(self) -> MessageAction | None:
        """The user's first message in the replayed history (renumbered), once it has come."""
        return self._initial_user_action

    def replay(self, events: Iterable[Event]) -> Iterator[ReplayItem]:
        """Replay `events` in order, yielding each step and condensation as it happens.

        Raises:
            CondensationStalledError: the condenser made no progress at a step.
        """
        for event in events:
            self.events_read += 1
            if not self.keep_recorded and isinstance(event, CondensationAction | CondensationRequestAction):
                continue
            in_history = is_agent_history(event)
            if in_history and is_agent_step(event, self._previous_response):
                yield from self._step(event)
            if in_history and isinstance(event, Action) and event.source == EventSource.AGENT:
                self._previous_response = event.response_id
            view = self._builder.view
            copy = self._append(event, in_history)
            if isinstance(copy, CondensationAction) and in_history:
                yield RecordedCondensation(self.steps, event.id, view, copy, self._builder.view)

    def settle(self) -> tuple[View, list[CondensationMade]]:
        """The turn for the view as it is now (after the last event): condense until it settles.

        Returns:
            The view the model would be shown, and the condensations made on the way.

        Raises:
            CondensationStalledError: the condenser made no progress.
        """
        turn = self.final_turn()
        return turn.view, list(turn.condensations)

    def final_turn(self) -> Turn[CondensationMade]:
        """The pipeline's turn after the last event, as for a next step (`settle`, with the messages and tokens).

        Raises:
            CondensationStalledError: the condenser made no progress.
        """
        return self._turn(None, None)

    def _step(self, event: Event) -> Iterator[ReplayItem]:
        self.steps += 1
        if self.steps in self.compact_at:  # asked for at this step (`replay --compact-at STEP --focus TEXT`)
            request = CondensationRequestAction(focus=self.compact_at[self.steps] or None)
            request.id, request.source, request.timestamp = self._take_id(None), EventSource.AGENT, event.timestamp
            self.history.append(request)
            self._builder.append(request)
        turn = self._turn(event, event.timestamp)
        yield from turn.condensations
        yield AgentStep(
            number=self.steps,
            event=event,
            replayed_id=self._id_for(event.id),
            history_events=len(self.history),
            view=self._builder.view,
            shown=turn.view,
            condensations=len(turn.condensations),
            turn=turn,
        )

    def _turn(self, before: Event | None, timestamp: str | None) -> Turn[CondensationMade]:
        """The pipeline's one call: its condensations appended to the replayed history as they are made."""

        def append(outcome: Condensation, view: View) -> CondensationMade:
            action = outcome.action.model_copy(
                update={"id": self._take_id(None), "source": EventSource.AGENT, "timestamp": timestamp}
            )
            self.history.append(action)
            self._builder.append(action)
            return CondensationMade(
                step=self.steps,
                before_event=before.id if before is not None else None,
                view=view,
                condensation=outcome,
                action=action,
                view_after=self._builder.view,
            )

        return self.pipeline.turn(lambda: self._builder.view, append, lambda: self._initial_user_action)

    def _id_for(self, old: int | None) -> int:
        """The id the next appended event with the log's id `old` gets (without taking it)."""
        return self._next_id if old is None else max(old, self._next_id)

    def _take_id(self, old: int | None) -> int:
        new = self._id_for(old)
        self._next_id = new + 1
        self._taken.add(new)
        return new

    def _append(self, event: Event, in_history: bool) -> Event:
        old = event.id
        new = self._take_id(old)
        if old is not None:
            self._ids[old] = new
        copy = self._renumbered(event, new)
        self.history.append(copy)
        if in_history:
            self._builder.append(copy)
            if (
                self._initial_user_action is None
                and isinstance(copy, MessageAction)
                and copy.source == EventSource.USER
            ):
                self._initial_user_action = copy
        return copy

    def _map(self, old: int) -> int | None:
        """The replayed id of the event the log calls `old`; None when `old` now names another event.

        An id the log refers to but does not hold (a gap, a dropped condensation, an event left out
        of a trimmed log) is kept while no replayed event has it: ids only grow, so an id below the
        next one that is free now stays free.
        """
        new = self._ids.get(old)
        if new is not None:
            return new
        return old if old < self._next_id and old not in self._taken else None

    def _renumbered(self, event: Event, new_id: int) -> Event:
        """`event` with its new id and its references mapped (itself when nothing changes)."""
        update: dict[str, object] = {}
        if event.id != new_id:
            update["id"] = new_id
        cause = event.cause
        if cause is not None and self._map(cause) != cause:
            update["cause"] = self._map(cause)
        if isinstance(event, CondensationAction):
            if event.forgotten_event_ids is not None:
                listed = event.forgotten_event_ids
                forgotten = [new for new in map(self._map, listed) if new is not None]
                if forgotten != listed:
                    update.update(forgotten_event_ids=forgotten)
            else:
                update.update(self._mapped_range(event))
        return event.model_copy(update=update) if update else event

    def _mapped_range(self, event: CondensationAction) -> dict[str, object]:
        """The fields that make a recorded range forget the same events under their new ids ({} if none moved).

        Only the events the replay holds are looked at, never each id of the range (it may be far
        wider than the log): its other ids name no event, and never will (new ids only grow). The
        range keeps its form when nothing else took an id between its events' new ids; otherwise
        it becomes the list of those ids.
        """
        start, end = event.forgotten_events_start_id, event.forgotten_events_end_id
        assert start is not None and end is not None
        if end - start < len(self._ids):
            pairs = [(old, new) for old in range(start, end + 1) if (new := self._ids.get(old)) is not None]
        else:
            pairs = [(old, new) for old, new in self._ids.items() if start <= old <= end]
        if all(old == new for old, new in pairs):
            return {}
        ids = sorted(new for _, new in pairs)
        low, high = ids[0], ids[-1]
        if high - low < len(self._taken):
            others = sum(1 for i in range(low, high + 1) if i in self._taken) - len(ids)
        else:
            others = sum(1 for i in self._taken if low <= i <= high) - len(ids)
        if others == 0:
            return {"forgotten_events_start_id": low, "forgotten_events_end_id": high}
        return {"forgotten_event_ids": ids, "forgotten_events_start_id": None, "forgotten_events_end_id": None}
