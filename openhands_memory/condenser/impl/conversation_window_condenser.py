"""`conversation_window`: on request, keep the essentials and the newer half of the conversation."""

from __future__ import annotations

import logging
from typing import Literal

from pydantic import BaseModel

from openhands_memory.condenser.kit import (
    FROM_CONFIG,
    CONFIG,
    ViewStructure,
    analyze,
    condensation_action,
    first_user_message_index,
    forget_id,
    sized,
)
from openhands_memory.condenser.base import Condensation, CondensationReason, RollingCondenser
from openhands_memory.condenser.forgetting import plan_forgetting
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.errors import NoCondensationAvailable
from openhands_memory.events import MessageAction, Observation, RecallAction
from openhands_memory.view import View

__all__ = ["ConversationWindowCondenser", "ConversationWindowCondenserConfig"]

logger = logging.getLogger(__name__)


class ConversationWindowCondenserConfig(BaseModel):
    """`conversation_window`: on request, keep the essentials and the newer half."""

    model_config = CONFIG
    type: Literal["conversation_window"] = "conversation_window"
    """The condenser type."""
    max_events: int | None = sized("events", default=None, ge=1)
    """Also condense when the view has more events than this (None: only on request, as OpenHands)."""
    max_tokens: int | None = sized("tokens", default=None, ge=1)
    """Also condense when the view has more prompt tokens than this (None: only on request)."""


class ConversationWindowCondenser(RollingCondenser):
    """When the agent asks (or, if set, past `max_events` / `max_tokens`), forgets the older half
    of the conversation.

    Kept for good: the system prompt, the first user message, and the recall that answered it
    (action and observation). Of the other events, the newer half stays (at least the newest
    unit), starting at a safe cut: never on an observation whose action is forgotten, nor inside a
    batch of parallel tool calls. Observations whose action is not in the view at the start of the
    kept half are forgotten too, as OpenHands does, even when that leaves only the essentials.
    OpenHands' version only skips observations at the start of the kept half and can still split
    a batch.
    """

    config_cls = ConversationWindowCondenserConfig

    def __init__(
        self,
        *,
        max_events: int | None = FROM_CONFIG,
        max_tokens: int | None = FROM_CONFIG,
        token_counter: TokenCounter | None = None,
    ) -> None:
        """Condense on request; also past `max_events` events or `max_tokens` tokens when given.

        Raises:
            ValueError: `max_events` or `max_tokens` is below 1.
        """
        super().__init__(token_counter=token_counter)
        if max_events is not None and max_events < 1:
            raise ValueError(f"max_events ({max_events}) must be at least 1")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens ({max_tokens}) must be at least 1")
        self.max_events = max_events
        self.max_tokens = max_tokens

    def condensation_reason(self, view: View) -> CondensationReason | None:
        if view.unhandled_condensation_request:
            return "request"
        if self.max_events is not None and len(view) > self.max_events:
            return "size"
        if self.max_tokens is not None and self.token_counter(view) > self.max_tokens:
            return "tokens"
        return None

    def get_condensation(self, view: View) -> Condensation:
        structure = analyze(view)
        events = structure.events
        essential: list[int] = []
        first_user = first_user_message_index(events)
        if first_user is not None:
            query = events[first_user].content  # type: ignore[attr-defined]
            assert isinstance(events[first_user], MessageAction)
            recall = next(
                (
                    i
                    for i in range(first_user + 1, len(events))
                    if isinstance(events[i], RecallAction) and events[i].query == query  # type: ignore[attr-defined]
                ),
                None,
            )
            if recall is not None:
                essential.append(recall)
        pinned_units = structure.pinned_units(0, essential)
        essential_count = sum(1 for unit in structure.unit_of if unit in pinned_units)
        keep = essential_count + max(1, (len(events) - essential_count) // 2)
        plan = plan_forgetting(view, keep_first=0, max_events=keep, pinned=essential, structure=structure)
        forgotten = [*plan.forgotten, *_dangling_after(structure, plan.forgotten, pinned_units)]
        if not forgotten and not view.unhandled_condensation_request:
            raise NoCondensationAvailable(self.name, "only essential events are in view")
        if len(forgotten) == len(plan.forgotten):
            return Condensation(plan.action())
        forgotten_ids = (forget_id(events[i]) for i in forgotten)
        return Condensation(condensation_action(events, [i for i in forgotten_ids if i is not None]))


def _dangling_after(structure: ViewStructure, forgotten: tuple[int, ...], pinned_units: set[int]) -> list[int]:
    """Indexes of the observations without their action that start the kept half (OpenHands forgets them).

    The kept half starts after the last forgotten event (the forced unit included); events kept
    for good are stepped over, as OpenHands' slice does with the essentials. A dangling
    observation is one alone in its unit: its action (by cause or tool call) is not in the view.
    """
    events, unit_of, spans = structure.events, structure.unit_of, structure.spans
    if not forgotten:
        return []  # nothing forgotten: the kept half is the whole view, not a slice of it
    dangling: list[int] = []
    index = forgotten[-1] + 1
    while index < len(events):
        event, unit = events[index], unit_of[index]
        if unit in pinned_units or index == structure.summary_index:
            index += 1
            continue
        if not isinstance(event, Observation) or spans[unit] != (index, index) or forget_id(event) is None:
            break
        dangling.append(index)
        index += 1
    if dangling:
        logger.warning(
            "conversation_window: forgetting %d more observation(s) whose action is not in view at the start of the kept "
            "half (as OpenHands does)%s",
            len(dangling),
            "; only the essential events are left" if index == len(events) else "",
        )
    return dangling
