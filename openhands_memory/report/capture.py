"""Replay one log through one pipeline and keep what a report shows at every step.

`capture_run(events, pipeline)` runs `replay_events` with a step callback: beside the `ReplayReport`
it keeps, per step, the exact messages the model was sent (as litellm dicts, what `view --messages
--json` prints) and what the request cost under each pricing (cache read / write / uncached tokens,
dollars, how it met the cache). Nothing is recomputed: the figures are the replay's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openhands_memory._tokenizer_names import APPROXIMATE
from openhands_memory.events import Event
from openhands_memory.llm.message import Message, to_litellm_dicts
from openhands_memory.llm.prompt_cache import PromptPricing, RequestCost
from openhands_memory.pipeline import Pipeline
from openhands_memory.replay.costs import DEFAULT_STEP_SECONDS
from openhands_memory.replay.replayer import ReplayReport, ReplayStep, replay_events

__all__ = ["RunCapture", "capture_run"]


@dataclass(slots=True)
class RunCapture:
    """One pipeline's replay of one log, with every step's messages and request costs."""

    name: str
    """The pipeline's name, as the report labels it."""
    report: ReplayReport
    """The replay (steps, condensations, replayed history, run costs)."""
    messages: list[list[dict[str, Any]]] = field(default_factory=list)
    """Per step, the messages the model was sent (litellm dicts)."""
    requests: list[list[RequestCost]] = field(default_factory=list)
    """Per step, what its request cost under each pricing (empty without pricings)."""


def capture_run(
    events: Sequence[Event],
    pipeline: Pipeline,
    *,
    name: str,
    tokenizer: str | None,
    pricings: Sequence[PromptPricing] = (),
    secrets: Mapping[str, str] | None = None,
    step_seconds: float = DEFAULT_STEP_SECONDS,
    source: str = "<events>",
) -> RunCapture:
    """Replay `events` through `pipeline` (the log's condensations dropped, as `replay` does) and keep every step.

    Raises what `replay_events` raises (a stalled condenser, a bad secret, an unknown price).
    """
    messages: list[list[dict[str, Any]]] = []
    requests: list[list[RequestCost]] = []

    def keep(step: ReplayStep, sent: list[Message], priced: list[RequestCost]) -> None:
        messages.append(to_litellm_dicts(sent))
        requests.append(list(priced))

    report = replay_events(
        events,
        condenser=pipeline,
        tokenizer=tokenizer or APPROXIMATE,  # None: four characters a token, as build_report takes it
        source=source,
        pricing=pricings,
        step_seconds=step_seconds,
        secrets=secrets,
        on_step=keep,
    )
    return RunCapture(name=name, report=report, messages=messages, requests=requests)
