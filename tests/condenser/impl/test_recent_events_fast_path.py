"""`recent` on long views: the fast path (head and newest events only) shows exactly what the full plan shows.

The fast path is taken when the view is longer than `max_events + 32` (and `keep_first + 32`) and
there is no token budget; the plain path is `plan_forgetting(..., keep_open=False)` then
`without_events`. The fast path may decline (None), never answer differently.
"""

from __future__ import annotations

from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from openhands_memory.condenser import ObservationMaskingCondenser, RecentEventsCondenser
from openhands_memory.condenser._views import without_events
from openhands_memory.condenser.forgetting import plan_forgetting
from openhands_memory.events import (
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    CondensationRequestAction,
    Event,
    EventSource,
    ToolCallMetadata,
)
from openhands_memory.testing.strategies import agent_sessions, draw_condensation, event_streams
from openhands_memory.view import View, ViewBuilder

from .._helpers import ids


def _plain(condenser: RecentEventsCondenser, view: View) -> View:
    """What `recent` shows by the full plan."""
    plan = plan_forgetting(view, keep_first=condenser.keep_first, max_events=condenser.max_events, keep_open=False)
    return without_events(view, plan.forgotten)


def _assert_fast_path_agrees(condenser: RecentEventsCondenser, view: View) -> None:
    fast = condenser._trim_long_view(view)
    event("fast path decided" if fast is not None else "fast path declined")
    if fast is not None:
        plain = _plain(condenser, view)
        assert ids(fast) == ids(plain)
        assert fast == plain and fast.standing_summary == plain.standing_summary


def _retagged(events: list[Event], first_id: int, tag: str) -> list[Event]:
    """`events` with ids (and causes) moved to start at `first_id`, and `tag` before call and response ids."""
    shift = first_id - events[0].id if events and events[0].id is not None else 0
    for e in events:
        assert e.id is not None
        e.id += shift
        if e.cause is not None:
            e.cause += shift
        metadata = e.tool_call_metadata
        if metadata is not None and tag:
            e.tool_call_metadata = metadata.model_copy(
                update={"tool_call_id": tag + metadata.tool_call_id, "model_response": {"id": f"{tag}{metadata.response_id}"}}
            )
    return events


@st.composite
def long_histories(draw: st.DrawFn, *, length: int) -> list[Event]:
    """Agent sessions (tool calls, parallel calls, interrupted and open calls) and random event streams
    run together, at least `length` events, with condensations between them (lists, ranges that
    split a call from its result, standing and persisting summaries), calls answered much later, and
    now and then call and response ids that repeat across parts.
    """
    history: list[Event] = []
    pending: list[CmdRunAction] = []  # calls to answer later

    def add(e: Event, source: EventSource) -> Event:
        e.id = history[-1].id + 1 if history and history[-1].id is not None else 0
        e.source = source
        history.append(e)
        return e

    def filler(count: int, tag: str) -> None:
        """`count` calls with their results, and maybe the late result of a pending call among them."""
        late_at = draw(st.integers(0, 3 * count)) if pending else -1
        for i in range(count):
            meta = ToolCallMetadata(function_name="execute_bash", tool_call_id=f"{tag}f{i}", model_response={"id": f"{tag}r{i}"})
            action = add(CmdRunAction(command="ls", tool_call_metadata=meta), EventSource.AGENT)
            add(CmdOutputObservation(content="x", command="ls", cause=action.id, tool_call_metadata=meta), EventSource.ENVIRONMENT)
            if i == late_at:
                late = pending.pop(0)
                result = CmdOutputObservation(content="late", command="x", cause=late.id, tool_call_metadata=late.tool_call_metadata)
                add(result, EventSource.ENVIRONMENT)

    shared_ids = draw(st.integers(0, 4)) == 0
    chunks = draw(st.integers(1, 4))
    for k in range(chunks):
        tag = "" if shared_ids else f"s{k}_"
        if draw(st.integers(0, 3)) == 0:  # random events: any kind, any source, tool call metadata that may collide
            part = [e for e in draw(event_streams(max_size=20)) if not isinstance(e, CondensationRequestAction)]
        else:
            part = draw(agent_sessions(max_turns=15, requests=False, system_prompt=None if k == 0 else False))
            if k and draw(st.booleans()):
                part = part[1:]  # no new task message
        first = history[-1].id + 1 if history and history[-1].id is not None else 0
        history += _retagged(part, first, tag)
        if draw(st.integers(0, 3)) == 0:
            meta = ToolCallMetadata(function_name="execute_bash", tool_call_id=f"{tag}late{k}", model_response={"id": f"{tag}late{k}"})
            pending.append(add(CmdRunAction(command="sleep", tool_call_metadata=meta), EventSource.AGENT))  # type: ignore[arg-type]
        filler(draw(st.integers(0, 3)) if k else 2, tag)
        if k == 0:
            filler(length // 2, "pad_")
        if draw(st.integers(0, 2)) == 0:
            next_id = history[-1].id + 1  # type: ignore[operator]
            if draw(st.booleans()):
                condensation = draw_condensation(draw, next_id)
                if condensation.summary is not None and draw(st.integers(0, 3)) == 0:
                    condensation.summary_persists = True
            else:  # OpenHands' own cut: a range ending just before the newest events, pairs split or not
                end = max(0, next_id - draw(st.integers(1, 12)))
                start = draw(st.integers(max(0, end - 40), end))
                condensation = CondensationAction(forgotten_events_start_id=start, forgotten_events_end_id=end)
            add(condensation, EventSource.AGENT)
    filler(max(0, length - len(View.from_events(history))) // 2 + 1, "tail_")
    return history


def _with_ties_moved(view: View, source: int, target: int) -> View:
    """`view` with a copy of event `target` that carries the tool call metadata of event `source` (other ties)."""
    summary = view.standing_summary
    events = view.events
    moved = events[target].model_copy(update={"tool_call_metadata": events[source].tool_call_metadata})
    kept = [moved if i == target else e for i, e in enumerate(events) if summary is None or i != summary[0]]
    return view.with_events(kept, summary)


@given(st.data(), st.integers(0, 6), st.integers(1, 16))
def test_the_fast_path_shows_what_the_full_plan_shows(data: Any, keep_first: int, max_events: int) -> None:
    history = data.draw(long_histories(length=keep_first + max_events + 80))
    condenser = RecentEventsCondenser(keep_first=keep_first, max_events=max_events)
    # One condenser, step after step on one builder's views (its scans are incremental) and on the
    # masked copies an earlier pipeline member would hand it, then on other lists.
    masking = ObservationMaskingCondenser(attention_window=data.draw(st.integers(1, 60)))
    builder = ViewBuilder(history[: len(history) - 6])
    for e in history[len(history) - 6 :]:
        builder.append(e)
        view = builder.view
        if not view.unhandled_condensation_request:
            _assert_fast_path_agrees(condenser, view)
            _assert_fast_path_agrees(condenser, masking.condense(view))
    view = View.from_events(history)
    if not view.unhandled_condensation_request:
        _assert_fast_path_agrees(RecentEventsCondenser(keep_first=keep_first, max_events=max_events), view)
        _assert_fast_path_agrees(condenser, view)
        # An event replaced by one with other ties: what the condenser learned of the old list no longer holds.
        source, target = data.draw(st.integers(0, len(view) - 1)), data.draw(st.integers(0, len(view) - 1))
        if view[target].id is not None:
            _assert_fast_path_agrees(condenser, _with_ties_moved(view, source, target))
