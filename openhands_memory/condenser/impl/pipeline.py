"""`pipeline`: several condensers, one after the other."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from openhands_memory.condenser.kit import CONFIG
from openhands_memory.condenser.base import Condensation, Condenser
from openhands_memory.view import View

if TYPE_CHECKING:
    from openhands_memory.condenser.config import CondenserContext, PipelineMember

__all__ = ["PipelineCondenser", "PipelineCondenserConfig"]


class PipelineCondenserConfig(BaseModel):
    """`pipeline`: several condensers in order; the first condensation ends the pass."""

    model_config = CONFIG
    type: Literal["pipeline"] = "pipeline"
    """The condenser type."""
    # A member is any registered config, this one included: the registry defines `PipelineMember`
    # from the strategies it found (this module among them) and completes this model with it.
    condensers: list[PipelineMember] = Field(default_factory=list)
    """The condensers, in the order they run."""


class PipelineCondenser(Condenser):
    """Runs condensers in order, each on the view the previous one returned; the first that
    returns a `Condensation` ends the pass, and that condensation is the result.

    `last_condensation` is the record of the member that fired (its `condenser` names it); its
    numbers are about the view that member was given.
    """

    config_cls = PipelineCondenserConfig

    def __init__(self, *condensers: Condenser) -> None:
        super().__init__()
        self.condensers: list[Condenser] = list(condensers)

    @classmethod
    def build(cls, config: PipelineCondenserConfig, context: CondenserContext) -> PipelineCondenser:  # type: ignore[override]
        """A pipeline of its members' condensers, each built through the registry with the same context."""
        return cls(*(context.build(member) for member in config.condensers))

    @classmethod
    def of(cls, condensers: Iterable[Condenser]) -> PipelineCondenser:
        """A pipeline of the given condensers, in order."""
        return cls(*condensers)

    def members(self) -> tuple[Condenser, ...]:
        return tuple(self.condensers)

    @property
    def handles_requests(self) -> bool:
        """Whether a member does (the first member that condenses ends the pass)."""
        return any(condenser.handles_requests for condenser in self.condensers)

    def condense(self, view: View) -> View | Condensation:
        result: View | Condensation = view
        for condenser in self.condensers:
            result = condenser.condense(result)
            if isinstance(result, Condensation):
                self._last = result.metadata
                break
        return result
