"""`noop`: the view as it is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from openhands_memory.condenser.kit import CONFIG
from openhands_memory.condenser.base import Condenser
from openhands_memory.view import View

if TYPE_CHECKING:
    from openhands_memory.condenser.config import CondenserContext

__all__ = ["NoOpCondenser", "NoOpCondenserConfig"]


class NoOpCondenserConfig(BaseModel):
    """`noop`: show the view as it is."""

    model_config = CONFIG
    type: Literal["noop"] = "noop"
    """The condenser type."""


class NoOpCondenser(Condenser):
    """Returns the view unchanged, and never condenses (an unhandled request stays unhandled)."""

    config_cls = NoOpCondenserConfig

    @classmethod
    def build(cls, config: BaseModel, context: CondenserContext) -> NoOpCondenser:
        # It never counts tokens, so it keeps a counter of its own rather than the shared one.
        return cls()

    def condense(self, view: View) -> View:
        return view
