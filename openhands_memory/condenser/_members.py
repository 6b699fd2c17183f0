"""The members of a condenser that call a model, found through the composites that hold them (pipelines, the scheduler)."""

from __future__ import annotations

from collections.abc import Iterator

from openhands_memory.condenser._model_backed import ModelCaller
from openhands_memory.condenser.base import Condenser
from openhands_memory.condenser.impl.cache_aware_condenser import CacheAwareCondenser
from openhands_memory.condenser.impl.pipeline import PipelineCondenser
from openhands_memory.llm.llm import LLM

__all__ = ["model_backed_members"]


def model_backed_members(condenser: Condenser) -> Iterator[Condenser]:
    """The condensers in `condenser` (itself, or the members of pipelines, nested ones too) that call a model,
    or would: a built-in model-backed strategy configured without one counts too."""
    if isinstance(condenser, PipelineCondenser):
        for member in condenser.condensers:
            yield from model_backed_members(member)
    elif isinstance(condenser, CacheAwareCondenser):
        yield from model_backed_members(condenser.inner)
    elif isinstance(condenser, ModelCaller) or isinstance(getattr(condenser, "llm", None), LLM):
        yield condenser
