"""Build the report of one log: every pipeline replayed, packed side by side, and rendered as one page.

`build_report(events, pipelines, ...)` replays the log once per pipeline (`capture.capture_run`),
packs the runs (`packing.pack_runs`) and returns the data; `render_page(data, title=...)` makes the page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from openhands_memory.events import Event
from openhands_memory.llm.prompt_cache import PromptPricing
from openhands_memory.pipeline import Pipeline
from openhands_memory.replay.costs import DEFAULT_STEP_SECONDS
from openhands_memory.report.capture import capture_run
from openhands_memory.report.packing import pack_runs

__all__ = ["DEFAULT_CONTEXT_LIMIT", "build_report"]

DEFAULT_CONTEXT_LIMIT = 128_000
"""The context limit drawn unless one is given (the bench's default, `cli.bench.DEFAULT_CONTEXT_LIMIT`)."""


def build_report(
    events: Sequence[Event],
    pipelines: Sequence[tuple[str, Pipeline]],
    *,
    source: str,
    tokenizer: str | None,
    pricings: Sequence[PromptPricing] = (),
    context_limit: int = DEFAULT_CONTEXT_LIMIT,
    secrets: Mapping[str, str] | None = None,
    step_seconds: float = DEFAULT_STEP_SECONDS,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The data of one log's page: each (name, pipeline) replayed over `events`, side by side on one step axis.

    Args:
        tokenizer: the model whose tokenizer counts (None: four characters a token).
        pricings: price every step under each (cache read / write / uncached, dollars, breaks).
        secrets: name: value, hidden in every event as it is read.
        progress: called with each pipeline's name before it is replayed.

    Raises what `replay_events` raises (a stalled condenser, a bad secret).
    """
    captures = []
    for name, pipeline in pipelines:
        if progress is not None:
            progress(name)
        captures.append(
            capture_run(
                events,
                pipeline,
                name=name,
                model=tokenizer,
                pricings=pricings,
                secrets=secrets,
                step_seconds=step_seconds,
                source=source,
            )
        )
    return pack_runs(
        captures, source=source, tokenizer=tokenizer or "approximate", context_limit=context_limit, pricings=pricings
    )
