"""Replay a recorded log as if live: what the model was shown at every step, under any condenser pipeline.

- `replay_log(path, condenser=..., recorded=..., model=...)`: every step measured (view, messages,
  tokens) and every condensation recorded, in a `ReplayReport`; `write_log` saves the replayed
  history.
- `snapshot_at(events, step)`: the view and the messages at one step.
- `inspect_log(path)`: what a log holds (kinds, sizes, unanswered tool calls, condensations).
- `calibrate_log(path)`: each request the log records usage for against our replay of it (prompt
  tokens, prompt cache, dollars), with the causes of the differences (`openhands_memory.replay.calibration`).
- `Replayer`: the step-by-step driver underneath, for tests and tools of your own.
"""

from openhands_memory.replay.calibration import (
    CalibratedRequest,
    LogCalibration,
    RecordedUsage,
    calibrate_events,
    calibrate_log,
    summarize_calibrations,
)
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

# The door: replay, inspect and calibrate a log. `Pipeline` and `load_pipeline` are at the package's root;
# the driver (`Replayer`), snapshots and the calibration's types by their modules' paths.
__all__ = [
    "replay_log",
    "replay_events",
    "ReplayReport",
    "inspect_log",
    "calibrate_log",
]
