"""The one prompt counter: `PromptMeter.count`, and `PromptTokenCounter`, the condensers' counter in a measured pipeline."""

from __future__ import annotations

from conftest import REPO_ROOT

from openhands_memory.condenser import ApproximateTokenCounter
from openhands_memory.events import SystemMessageAction, load_events
from openhands_memory.pipeline import Pipeline
from openhands_memory.prompt_tokens import ApproximateTokenizer, PromptMeter, PromptTokenCounter
from openhands_memory.view import View

BUNDLED = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"


def test_count_leaves_the_meter_s_record_of_the_last_prompt_alone() -> None:
    events = load_events(BUNDLED)[:30]
    pipeline = Pipeline.default().measured_by(None)
    meter = pipeline.meter
    assert meter is not None
    first = pipeline.show(View.from_events(events[:20]), None).messages
    second = pipeline.show(View.from_events(events), None).messages
    tokens, cached = meter.measure(first)
    assert cached == 0 and meter.count(second) > tokens
    assert (meter.last_cached, len(meter.last_blocks)) == (0, len(first))  # counting recorded nothing
    assert meter.measure(second) == (meter.count(second), tokens)


def test_a_part_of_a_prompt_counts_event_by_event_as_the_approximate_counter_does() -> None:
    events = load_events(BUNDLED)[:60]
    meter = PromptMeter(ApproximateTokenizer())
    counter = PromptTokenCounter(meter, lambda _events: [])  # a part is never rendered
    part = [event for event in events if not isinstance(event, SystemMessageAction)]
    assert counter(part) == ApproximateTokenCounter()(part)
    tool_call = next(event for event in part if getattr(event, "tool_call_metadata", None) is not None)
    assert counter([tool_call]) > counter.overhead_per_event  # alone, a call still costs its arguments
