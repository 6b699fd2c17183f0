"""Replay a recorded log as if live: what the model was shown at every step, under any condenser pipeline.

- `replay_log(path, condenser=..., recorded=..., model=...)`: every step measured (view, messages,
  tokens) and every condensation recorded, in a `ReplayReport`; `write_log` saves the replayed
  history.
- `snapshot_at(events, step)`: the view and the messages at one step.
- `inspect_log(path)`: what a log holds (kinds, sizes, unanswered tool calls, condensations).
- `Replayer`: the step-by-step driver underneath, for tests and tools of your own.
"""

from openhands_memory.replay.driver import AgentStep, Replayer
from openhands_memory.replay.inspection import LogInspection, inspect_events, inspect_log
from openhands_memory.replay.output import write_log
from openhands_memory.replay.replayer import (
    Pipeline,
    ReplayCondensation,
    ReplayReport,
    ReplayStep,
    StepSnapshot,
    load_pipeline,
    replay_events,
    replay_log,
    snapshot_at,
)

__all__ = [
    "AgentStep",
    "LogInspection",
    "Pipeline",
    "ReplayCondensation",
    "ReplayReport",
    "ReplayStep",
    "Replayer",
    "StepSnapshot",
    "inspect_events",
    "inspect_log",
    "load_pipeline",
    "replay_events",
    "replay_log",
    "snapshot_at",
    "write_log",
]
