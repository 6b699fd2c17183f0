"""`browser_output_masking`: only the newest browser outputs keep their page content."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from openhands_memory.condenser.kit import FROM_CONFIG, CONFIG, IndexCollector, MaskingCondenser, PrefixMapper, sized
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.events import BrowserOutputObservation, Event, Observation
from openhands_memory.view import View

__all__ = ["BrowserOutputCondenser", "BrowserOutputCondenserConfig"]


class BrowserOutputCondenserConfig(BaseModel):
    """`browser_output_masking`: mask all but the newest browser outputs."""

    model_config = CONFIG
    type: Literal["browser_output_masking"] = "browser_output_masking"
    """The condenser type."""
    attention_window: int = sized("newest", default=1, ge=1)
    """The number of most recent browser outputs that are not masked."""


class BrowserOutputCondenser(MaskingCondenser):
    """Masks every browser output but the `attention_window` most recent ones.

    Pages (text, screenshots, accessibility trees) are the largest observations and are stale
    once the agent moved on. A masked output says which URL was visited. As in
    `ObservationMaskingCondenser`, it stays a `BrowserOutputObservation` answering its tool call.
    """

    config_cls = BrowserOutputCondenserConfig

    def __init__(self, attention_window: int = FROM_CONFIG, *, token_counter: TokenCounter | None = None) -> None:
        """Keep the newest `attention_window` browser outputs (at least 1) whole."""
        super().__init__(attention_window, token_counter=token_counter)
        self._pages = IndexCollector(lambda event: isinstance(event, BrowserOutputObservation))
        self._prefix = PrefixMapper()

    def condense(self, view: View) -> View:
        pages = self._pages.indexes(view)
        if len(pages) <= self.attention_window:
            return view
        # Every page before the oldest one still shown is masked: a prefix, so it is reused.
        end = pages[-self.attention_window]
        if self.prune(len(pages)):
            self._prefix = PrefixMapper()
        return self._prefix.map_before(view, end, self._mask_if_page)

    def _mask_if_page(self, event: Event) -> Event:
        return self.mask(event) if isinstance(event, BrowserOutputObservation) else event

    def placeholder(self, event: Observation) -> str:
        url = event.url if isinstance(event, BrowserOutputObservation) else ""
        return f"Visited URL {url}\nContent omitted"
