"""Replay a history through a condenser step by step, checking every view and condensation it makes.

`replay_with_condenser(events, condenser)` replays the events with `openhands_memory.replay.Replayer`
(the same replay the `openhands-memory replay` command runs): before each agent step (the first
action of each model response) the condenser is asked; a `Condensation`'s action is appended to
the history with the next free id, and the condenser is asked again, as a controller would. The
log's own condensations are kept and applied; events after an appended condensation move up to
free ids (`cause` and recorded condensations are renumbered alike).

Every result is checked (`check_condensation`, `check_derived_view`); a broken rule raises
`AssertionError` naming the step. Use it in tests of any condenser, model-backed ones included
(with a fake LLM).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from openhands_memory.condenser import CondensationMetadata, Condenser
from openhands_memory.condenser.guard import MAX_CONDENSATIONS_PER_STEP
from openhands_memory.errors import CondensationStalledError
from openhands_memory.events import (
    Action,
    AgentCondensationObservation,
    CondensationAction,
    Event,
    EventSource,
    MessageAction,
    Observation,
    SystemMessageAction,
    agent_history,
)
from openhands_memory.replay.driver import CondensationMade, RecordedCondensation, Replayer
from openhands_memory.view import View

__all__ = ["CondenserReplay", "check_condensation", "check_derived_view", "replay_with_condenser"]


@dataclass(slots=True)
class CondenserReplay:
    """What a replay did."""

    history: list[Event] = field(default_factory=list)
    """The replayed history: the events (renumbered where needed) with the condensations appended."""
    steps: int = 0
    """Agent steps at which the condenser was asked."""
    condensations: list[CondensationMetadata] = field(default_factory=list)
    """The record of every condensation made, in order."""
    largest_view: int = 0
    """The most events the model was shown at a step."""


def _is_summary(event: Event) -> bool:
    return event.id is None and type(event) is AgentCondensationObservation


def _key(event: Event) -> tuple[str, int | None]:
    return ("summary", event.cause) if _is_summary(event) else ("event", event.id)


def _pairs(events: Sequence[Event]) -> tuple[dict[str, list[int]], dict[str, int], dict[int, int], dict[int, int]]:
    """By index: actions per response id, the observation of each tool call id, cause links."""
    by_response: dict[str, list[int]] = {}
    call_action: dict[str, int] = {}
    call_obs: dict[str, int] = {}
    id_index: dict[int, int] = {}
    obs_of_action: dict[int, int] = {}
    action_of_obs: dict[int, int] = {}
    for index, event in enumerate(events):
        metadata = event.tool_call_metadata
        if isinstance(event, Action):
            if event.id is not None:
                id_index[event.id] = index
            if metadata is not None:
                if metadata.response_id is not None:
                    by_response.setdefault(metadata.response_id, []).append(index)
                call_action[metadata.tool_call_id] = index
        elif isinstance(event, Observation) and not _is_summary(event):
            if metadata is not None:
                call_obs[metadata.tool_call_id] = index
                if metadata.tool_call_id in call_action:
                    obs_of_action[call_action[metadata.tool_call_id]] = index
                    action_of_obs[index] = call_action[metadata.tool_call_id]
            if event.cause is not None and event.cause in id_index:
                obs_of_action[id_index[event.cause]] = index
                action_of_obs[index] = id_index[event.cause]
    return by_response, call_obs, obs_of_action, action_of_obs


def _check_pairs_kept(before: Sequence[Event], kept_indexes: set[int], where: str) -> None:
    """No action kept without its observation (or the reverse), no batch of parallel calls split."""
    by_response, _, obs_of_action, action_of_obs = _pairs(before)
    for action, obs in obs_of_action.items():
        assert (action in kept_indexes) == (obs in kept_indexes), (
            f"{where}: event {before[action].id} and its observation {before[obs].id} were split"
        )
    for obs, action in action_of_obs.items():
        assert (action in kept_indexes) == (obs in kept_indexes), f"{where}: observation {before[obs].id} split"
    for response, indexes in by_response.items():
        kept = {i in kept_indexes for i in indexes}
        assert len(kept) == 1, f"{where}: the parallel tool calls of response {response!r} were split"


def check_condensation(
    view: View,
    action: CondensationAction,
    *,
    keep_first: int = 0,
    where: str = "condensation",
    persisting: bool = False,
) -> View:
    """Check one condensation against the view it was made for; return the view it produces.

    `persisting`: the condenser writes persisting summaries (`summary_persists=True`, OpenHands SDK
    semantics, as `auto_context` does); otherwise the flag must not be set.

    - nothing in the first `keep_first` events, the system prompt or the first user message is forgotten;
    - no tool call is split from its result, no batch of parallel calls is split, no observation
      from the action it answers;
    - a request is handled, and nothing listed stays in view;
    - the summary offset, if any, is within the kept events.

    Both summary semantics are allowed: OpenHands V0's (only the newest summary shows) and, with
    `summary_persists=True`, the SDK's (each summary stays in place until a later condensation
    forgets its condensation's id), which condensers that leave several summaries use.
    """
    if persisting:
        assert action.summary is None or action.summary_persists is True, f"{where}: the summary does not persist"
    else:
        assert action.summary_persists is None, f"{where}: summary_persists must not be set"
    listed = action.forgotten_lookup()
    events = view.events
    protected = list(range(min(keep_first, len(events))))
    protected += [i for i, e in enumerate(events) if isinstance(e, SystemMessageAction)][:1]
    protected += [i for i, e in enumerate(events) if isinstance(e, MessageAction) and e.source == EventSource.USER][:1]
    for index in protected:
        event = events[index]
        assert event.id is None or event.id not in listed, f"{where}: forgot protected event {event.id} (#{index})"

    after = view.apply(action)
    kept_keys = {_key(e) for e in after}
    kept_indexes = {i for i, e in enumerate(events) if _key(e) in kept_keys}
    _check_pairs_kept(events, kept_indexes, where)
    for event in after:
        if event.id is not None:
            assert event.id not in listed, f"{where}: event {event.id} was listed yet is still in view"
    assert not after.unhandled_condensation_request
    if action.summary_offset is not None:
        assert action.summary_offset <= len(after), f"{where}: summary offset past the kept events"
    return after


def check_derived_view(view: View, derived: View, *, where: str = "view") -> None:
    """Check a view a condenser returned instead of condensing.

    Its events are the view's, in order, each either itself or a copy with the same id, kind and
    tool call; nothing appears twice; no tool call is split from its result; the request flag and
    the forgotten ids are the view's.
    """
    assert derived.unhandled_condensation_request == view.unhandled_condensation_request, f"{where}: request flag changed"
    assert derived.forgotten_event_ids == view.forgotten_event_ids, f"{where}: forgotten ids changed"
    events = view.events
    positions = {id(e): i for i, e in enumerate(events)}
    by_key: dict[tuple[str, int | None], int] = {}
    for i, e in enumerate(events):
        by_key.setdefault(_key(e), i)
    kept_indexes: list[int] = []
    for event in derived:
        index = positions.get(id(event))
        if index is None:
            index = by_key.get(_key(event))
            assert index is not None, f"{where}: event {event.id} is not from the view"
            original = events[index]
            assert type(original) is type(event), f"{where}: event {event.id} changed kind"
            assert original.tool_call_metadata == event.tool_call_metadata, f"{where}: event {event.id} lost its tool call"
            assert original.cause == event.cause, f"{where}: event {event.id} changed cause"
        kept_indexes.append(index)
    assert kept_indexes == sorted(set(kept_indexes)), f"{where}: events repeated or reordered"
    _check_pairs_kept(events, set(kept_indexes), where)


def replay_with_condenser(
    events: Iterable[Event],
    condenser: Condenser,
    *,
    keep_first: int = 0,
    check: bool = True,
    persisting: bool = False,
    max_condensations_per_step: int = MAX_CONDENSATIONS_PER_STEP,
) -> CondenserReplay:
    """Replay `events` (an agent history) through `condenser`, checking each step (see the module docstring).

    Args:
        events: the history, e.g. `agent_history(load_events(path))`.
        condenser: asked at every agent step.
        keep_first: the head the condenser promised to keep (checked).
        check: run the checks (turn off to time the condenser alone).
        persisting: the condenser writes persisting summaries (see `check_condensation`).
        max_condensations_per_step: the loop guard's limit, as `History` takes it (a condensation
            that does not make the prompt smaller stops the replay whatever the limit).

    Raises:
        AssertionError: a check failed, or the condenser kept condensing without progress.
    """
    result = CondenserReplay()
    replayer = Replayer(condenser, keep_recorded=True, max_condensations_per_step=max_condensations_per_step)
    head: list[int] | None = None
    listed: set[int] = set()  # ids our condensations forgot (recorded ones may forget the head)
    try:
        for item in replayer.replay(events):
            if isinstance(item, RecordedCondensation):
                continue
            if check and head is None and len(item.view) >= keep_first:
                head = [e.id for e in item.view[:keep_first] if e.id is not None]
            where = item.where
            if isinstance(item, CondensationMade):
                action = item.condensation.action
                if check:
                    check_condensation(item.view, action, keep_first=keep_first, where=where, persisting=persisting)
                assert item.condensation.metadata is not None, f"{where}: the condensation has no metadata"
                result.condensations.append(item.condensation.metadata)
                # Of a range, only the ids of events in view: a range may be far wider than the log.
                listed.update(e.id for e in item.view if action.forgets(e.id))  # type: ignore[misc]
                listed.update(action.forgotten_event_ids or ())
                if check:
                    assert item.view_after == item.view.apply(action.model_copy(update={"id": item.action.id})), (
                        f"{where}: the view after the condensation is not the one predicted"
                    )
                continue
            if check:
                check_derived_view(item.view, item.shown, where=where)
            result.largest_view = max(result.largest_view, len(item.shown))
            if check and head:
                lost = set(head) & listed
                assert not lost, f"{where}: the kept head lost {sorted(lost)}"
    except CondensationStalledError as exc:
        raise AssertionError(f"step {replayer.steps}: {exc}") from exc
    result.history = replayer.history
    result.steps = replayer.steps
    if check:
        assert replayer.view == View.from_events(agent_history(replayer.history)), "the incremental view drifted"
    return result
