"""`observation_masking`: observations older than the attention window are shown as `<MASKED>`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from openhands_memory.condenser.kit import FROM_CONFIG, CONFIG, MaskingCondenser, PrefixMapper, sized
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.events import Observation
from openhands_memory.view import View

__all__ = ["MASKED", "ObservationMaskingCondenser", "ObservationMaskingCondenserConfig"]

MASKED = "<MASKED>"
"""The text a masked observation shows (OpenHands' placeholder)."""


class ObservationMaskingCondenserConfig(BaseModel):
    """`observation_masking`: mask observations older than the attention window."""

    model_config = CONFIG
    type: Literal["observation_masking"] = "observation_masking"
    """The condenser type."""
    attention_window: int = sized("newest", default=100, ge=1)
    """The number of most recent events whose observations are not masked."""


class ObservationMaskingCondenser(MaskingCondenser):
    """Masks the content of observations outside the `attention_window` most recent events.

    Unlike OpenHands, which swaps each old observation for an `AgentCondensationObservation` (so
    the tool call it answered loses its result, and summaries get masked too), the masked
    observation is a copy of the original with its content replaced: it still answers its tool
    call. Summaries and recall observations are left as they are.
    """

    config_cls = ObservationMaskingCondenserConfig

    def __init__(self, attention_window: int = FROM_CONFIG, *, token_counter: TokenCounter | None = None) -> None:
        """Mask observations before the last `attention_window` events (at least 1)."""
        super().__init__(attention_window, token_counter=token_counter)
        self._prefix = PrefixMapper()

    def condense(self, view: View) -> View:
        end = len(view) - self.attention_window
        if end <= 0:
            return view
        if self.prune(end):
            self._prefix = PrefixMapper()  # its prefix holds copies the memo no longer knows
        return self._prefix.map_before(view, end, self.mask_if_maskable)

    def placeholder(self, event: Observation) -> str:
        return MASKED
