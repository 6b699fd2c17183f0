"""`agent_reset`: the agent resets its own context with a handoff (`new_context`), reminded when the prompt grows.

Codex CLI and the OpenHands SDK's `AgentResetCondenser` (issue #4916) let the model end its context
window itself: it calls `new_context(handoff)`, and everything but the system prompt, the task, the
user's later messages and the handoff is forgotten. The handoff is kept verbatim (no model call) as
the summary of a `CondensationAction` at the end of what is kept, which forgets everything else by
id; so `View.from_events` shows the new window from the log alone, and `replay --recorded` does too.
`History.run_memory_tool` appends that condensation right after the call's result (`reset_action`);
a replay that decides afresh (the log's condensations dropped) gets it from this strategy, which
makes it for a `new_context` call in the view whose result was not an error.

The strategy **wraps** another one (`condenser`, by default `noop`): its own condensations come
first, then the wrapped strategy's (the pipeline's own condensation past its hard limit still
applies), and when neither condenses and the prompt passes `remind_at` of the input window
(`input_window` tokens, by the token counter; 80% by default), a reminder is added to (a copy of) the
newest message or result the model sees (a view transform: nothing is written, the same view gives
the same reminder, and the prompt before that event is unchanged, so its cache holds),
asking the agent to write its handoff and call `new_context`.

**Notes** (`context_notes`): the agent's notes are events of the log (`ContextNotesAction` and its
`ContextNotesObservation`); the notes are the newest accepted `write` and the `append`s after it
(`current_notes`). No condensation through this strategy forgets those events (`notes_event_ids`): a
reset keeps them before the handoff, and a wrapped strategy's condensation is changed to spare them
(its summary moved so it stays before the same event). So the notes stay in view after every
condensation and reset, and the log alone says what they are (after a resume, in `replay` and `view`).
Put `agent_reset` outermost in a pipeline: a strategy before it could forget the notes.

```toml
[condenser]
type = "agent_reset"
input_window = 200000
remind_at = 0.8
condenser = { type = "cache_aware", condenser = { type = "structured_summary" } }
```
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from openhands_memory.condenser import Condensation, Condenser
from openhands_memory.condenser.kit import FROM_CONFIG, CONFIG, forget_id, replace_at, sized
from openhands_memory.events import (
    CondensationAction,
    ContextNotesAction,
    ContextNotesObservation,
    ErrorObservation,
    Event,
    EventSource,
    MessageAction,
    NewContextAction,
    Observation,
    SystemMessageAction,
)
from openhands_memory.view import View

if TYPE_CHECKING:
    from openhands_memory.condenser.config import CondenserContext, PipelineMember

__all__ = [
    "AgentResetCondenser",
    "AgentResetCondenserConfig",
    "current_notes",
    "is_kept_by_reset",
    "notes_event_ids",
    "reset_action",
    "reset_reminder",
]

_TYPE = "agent_reset"
RESET_REASON = "new_context"
"""The `reason` in a reset condensation's `condenser_metadata`."""


class AgentResetCondenserConfig(BaseModel):
    """`agent_reset`: the agent's `new_context(handoff)` resets its context; reminded past `remind_at` of the window."""

    model_config = CONFIG
    type: Literal["agent_reset"] = "agent_reset"
    """The condenser type."""
    # Any registered config, a pipeline included (completed by the registry, as `pipeline`'s members).
    condenser: PipelineMember = Field(default_factory=lambda: {"type": "noop"}, validate_default=True)  # type: ignore[assignment]
    """The strategy wrapped: it still condenses past its own limits."""
    input_window: int = sized("tokens", default=200_000, ge=1)
    """The model's input window, in tokens (claude-sonnet-4-5's by default)."""
    remind_at: float = Field(default=0.8, gt=0, le=1)
    """The share of `input_window` past which the agent is reminded to reset."""


def is_kept_by_reset(event: Event) -> bool:
    """Whether a reset keeps `event`: the system prompt, and the user's messages (the task, and later ones)."""
    return isinstance(event, SystemMessageAction) or (isinstance(event, MessageAction) and event.source == EventSource.USER)


def current_notes(events: Iterable[Event]) -> str:
    """The agent's notes after `events`: each `context_notes` call applied in order, those over the bound left out."""
    notes = ""
    for event in events:
        if isinstance(event, ContextNotesAction):
            after = event.applied_to(notes)
            if after is not None:
                notes = after
    return notes


def notes_event_ids(events: Iterable[Event]) -> set[int]:
    """The ids of the events that make the current notes: the newest accepted write, the appends after it, their results."""
    notes, calls = "", []
    results: dict[int, list[int]] = {}
    for event in events:
        if isinstance(event, ContextNotesAction) and event.operation != "read" and event.id is not None:
            after = event.applied_to(notes)
            if after is not None:
                notes = after
                calls = [event.id] if event.operation == "write" else [*calls, event.id]
        elif isinstance(event, ContextNotesObservation) and event.cause is not None and event.id is not None:
            results.setdefault(event.cause, []).append(event.id)
    return {*calls, *(result for call in calls for result in results.get(call, ()))}


def reset_action(view: View, handoff: str, *, metadata: dict[str, Any] | None = None) -> CondensationAction:
    """The condensation a `new_context(handoff)` call makes of `view`: the handoff, verbatim, after all that is kept.

    The standing summary (if any) is replaced by the handoff; every other event not kept (the system
    prompt, the user's messages, the notes' events) is forgotten by id.
    """
    kept_events = view.kept_events()
    notes = notes_event_ids(kept_events)
    kept = [event for event in kept_events if is_kept_by_reset(event) or event.id in notes]
    # `forget_id`: a summary that persists as an event of its own (an SDK conversation's) is forgotten by its `cause`.
    forgotten = [
        i for event in kept_events if (i := forget_id(event)) is not None and not (is_kept_by_reset(event) or event.id in notes)
    ]
    # The list form, never a range: a range would also forget events appended later with ids inside it.
    action = CondensationAction(forgotten_event_ids=forgotten, summary=handoff, summary_offset=len(kept))
    action.condenser_metadata = {"condenser": _TYPE, "reason": RESET_REASON, **(metadata or {})}
    return action


def reset_reminder(tokens: int, input_window: int) -> str:
    """The reminder the agent reads when its prompt passes the share of the window."""
    share = tokens / input_window
    return (
        f"[Context reminder] Your prompt is {tokens} tokens, {share:.0%} of your {input_window}-token input window. "
        "Before it fills, write a handoff (the goal, what is done, what is left, the facts you will need) and call "
        "new_context with it: you continue in a fresh context window from your handoff. Forgotten events stay "
        "searchable with search_history."
    )


def _carries_text(event: Event) -> bool:
    return isinstance(event, Observation | MessageAction) and isinstance(getattr(event, "content", None), str)


def _pending_handoff(view: View) -> tuple[NewContextAction, str] | None:
    """The newest `new_context` call in `view` whose result says it was done (not an error), with its handoff."""
    events = view.events
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if isinstance(event, NewContextAction):
            results = [later for later in events[index + 1 :] if later.cause == event.id and event.id is not None]
            if results and not isinstance(results[0], ErrorObservation):
                return event, event.handoff
            return None
    return None


def _sparing_notes(view: View, condensation: Condensation) -> Condensation:
    """`condensation` changed to forget none of the notes' events (its summary stays before the same event)."""
    notes = notes_event_ids(view.kept_events())
    action = condensation.action
    listed = action.forgotten_lookup()
    if not any(event_id in listed for event_id in notes):
        return condensation
    forgotten = sorted({i for e in view.events if (i := forget_id(e)) is not None and i in listed and i not in notes})
    update: dict[str, Any] = {"forgotten_event_ids": forgotten, "forgotten_events_start_id": None, "forgotten_events_end_id": None}
    if action.summary is not None and action.summary_offset is not None:
        shown = view.apply(action).kept_events()
        anchor = shown[action.summary_offset] if action.summary_offset < len(shown) else None
        kept = [e for e in view.kept_events() if forget_id(e) not in set(forgotten)]
        update["summary_offset"] = next((i for i, e in enumerate(kept) if e is anchor), len(kept))
    spared = action.model_copy(update=update)
    if spared.condenser_metadata is not None:
        spared.condenser_metadata = {**spared.condenser_metadata, "notes_spared": len(notes & set(_ids(listed, view)))}
    return Condensation(spared, condensation.metadata)


def _ids(listed: Any, view: View) -> list[int]:
    return [i for e in view.events if (i := forget_id(e)) is not None and i in listed]


class AgentResetCondenser(Condenser):
    """Resets the context on the agent's `new_context` call, reminds it past a share of the window, wraps a strategy."""

    config_cls = AgentResetCondenserConfig
    exports = ("is_kept_by_reset", "reset_action", "reset_reminder")

    def __init__(self, condenser: Condenser, *, input_window: int = FROM_CONFIG, remind_at: float = FROM_CONFIG, **kwargs: Any) -> None:
        """Wrap `condenser`; remind past `remind_at` of `input_window` tokens.

        Raises:
            ValueError: `input_window` < 1 or `remind_at` not in (0, 1].
        """
        super().__init__(**kwargs)
        if input_window < 1 or not 0 < remind_at <= 1:
            raise ValueError(f"input_window must be at least 1 and remind_at in (0, 1], got {input_window} and {remind_at}")
        self.inner = condenser
        """The strategy wrapped."""
        self.input_window = input_window
        self.remind_at = remind_at

    @classmethod
    def build(cls, config: AgentResetCondenserConfig, context: CondenserContext) -> AgentResetCondenser:  # type: ignore[override]
        """The reset strategy around the condenser its config describes (built with the same context)."""
        inner = context.build(config.condenser)
        return cls(inner, input_window=config.input_window, remind_at=config.remind_at, token_counter=context.token_counter)

    @property
    def name(self) -> str:
        return f"{_TYPE}({self.inner.name})"

    @property
    def handles_requests(self) -> bool:
        return self.inner.handles_requests

    def members(self) -> tuple[Condenser, ...]:
        return (self.inner,)

    def condense(self, view: View) -> View | Condensation:
        pending = _pending_handoff(view)
        if pending is not None:
            call, handoff = pending
            return self.record_condensation(view, lambda: reset_action(view, handoff, metadata={"call_id": call.id}), reason="request")
        result = self.inner.condense(view)
        if isinstance(result, Condensation):
            return _sparing_notes(view, result)
        tokens = self.token_counter(result.events)
        if tokens < self.remind_at * self.input_window:
            return result
        # On a copy of the newest event the agent reads (a message or a result): the prompt's prefix stays as it was.
        events = result.events
        summary = result.standing_summary
        newest = next(
            (i for i in range(len(events) - 1, -1, -1) if _carries_text(events[i]) and (summary is None or i != summary[0])), None
        )
        if newest is None:
            return result
        reminder = reset_reminder(tokens, self.input_window)
        return replace_at(result, [newest], lambda event: event.model_copy(update={"content": f"{event.content}\n\n{reminder}"}))
