"""A pipeline's `[history_policy]` in the SDK: the oldest events left out of the view handed back, until its messages fit.

Our policy trims the chat messages a view renders to (`Pipeline.show`); the SDK renders views
itself, so here the same limits are met on events: the view keeps its pinned head (the system
prompt, and the first user message when the policy pins it) and the longest tail, cut at one of
the SDK's manipulation indices (never inside a batch of parallel calls or a tool loop), whose
rendering the policy leaves whole. Fewer events render to fewer messages, steps and tokens, so the
cut is found by bisection (about log2 of the view's length renderings).

`roles` is not applied: dropping every message of a role is no cut of the view (the SDK would show
the calls without their results).
"""

from __future__ import annotations

import logging
from typing import Any

from openhands.sdk.context.view import View as SdkView
from openhands.sdk.event import MessageEvent, SystemPromptEvent

from openhands_memory.events import EventSource, MessageAction
from openhands_memory.integrations.openhands_sdk._view_export import ExportedView
from openhands_memory.pipeline import Pipeline

__all__ = ["trimmed_by_policy"]

logger = logging.getLogger(__name__)


def trimmed_by_policy(pipeline: Pipeline, exported: ExportedView) -> ExportedView:
    """`exported` with its oldest events left out until the pipeline's history policy drops no message (see the module docstring)."""
    policy = pipeline.history_policy
    events = list(exported.view.events)
    if policy is None or len(events) < 2:
        return exported
    ours = exported.ours
    first_user = next((e for e in ours if isinstance(e, MessageAction) and e.source == EventSource.USER), None)

    def fits(indexes: list[int]) -> bool:
        messages = pipeline.memory.process_events([ours[i] for i in indexes], first_user)
        trim = policy.apply(messages, count_tokens=pipeline.message_tokens)
        return trim.dropped - trim.dropped_by_roles == 0

    everything = list(range(len(events)))
    if fits(everything):
        return exported
    head = _pinned_head(events, pin_first_user=policy.pin_first_user)
    indices = exported.view.manipulation_indices
    # Where the view may be cut after its first event: the manipulation indices themselves (each
    # `find_next` over the whole set would make this quadratic in the view's length).
    cuts = sorted(i for i in indices if 1 <= i <= len(events))

    def kept(cut: int) -> list[int]:
        return [i for i in head if i < cut] + list(range(cut, len(events)))

    low, high = 0, len(cuts) - 1  # the last cut keeps only the head: taken if nothing else fits
    while low < high:
        middle = (low + high) // 2
        if fits(kept(cuts[middle])):
            high = middle
        else:
            low = middle + 1
    indexes = kept(cuts[low])
    shown = SdkView(events=[events[i] for i in indexes], unhandled_condensation_request=exported.view.unhandled_condensation_request)
    return ExportedView(shown, [ours[i] for i in indexes], exported.lost)


def _pinned_head(events: list[Any], *, pin_first_user: bool) -> list[int]:
    """The positions the policy always keeps: the system prompt, and the first user message if pinned."""
    head = [next((i for i, e in enumerate(events) if isinstance(e, SystemPromptEvent)), None)]
    if pin_first_user:
        head.append(next((i for i, e in enumerate(events) if isinstance(e, MessageEvent) and e.source == "user"), None))
    return sorted(i for i in head if i is not None)
