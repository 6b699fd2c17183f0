"""The OpenHands 0.62 event API: `Action.runnable`, `error`, the file edit diff, output truncation and `str()`.

Every expected value was observed on openhands-ai 0.62.0 with the same inputs and written out here.
"""

from __future__ import annotations

import pytest

from openhands_memory.events import (
    BrowserOutputObservation,
    CmdOutputObservation,
    ErrorObservation,
    IPythonRunCellObservation,
    SuccessObservation,
)
from openhands_memory.events.actions import ACTION_CLASSES

# -- runnable, error -------------------------------------------------------------------------------

RUNNABLE = {"run", "run_ipython", "read", "write", "edit", "browse", "browse_interactive", "call_tool_mcp"}
"""The kinds whose class has `runnable = True` in OpenHands 0.62 (every other one: False)."""


@pytest.mark.parametrize("kind", sorted(ACTION_CLASSES))
def test_runnable_is_openhands_class_flag(kind: str) -> None:
    assert ACTION_CLASSES[kind].runnable is (kind in RUNNABLE)


@pytest.mark.parametrize(
    ("metadata", "error"),
    [({}, True), ({"exit_code": 0}, False), ({"exit_code": 2}, True), ({"exit_code": -1}, True)],
)
def test_a_command_output_is_an_error_unless_its_exit_code_is_0(metadata: dict[str, int], error: bool) -> None:
    observation = CmdOutputObservation(content="x", command="ls", metadata=metadata)
    assert observation.error is error and observation.success is not error


def test_error_on_other_observations_is_as_in_openhands() -> None:
    assert IPythonRunCellObservation(content="x", code="1").error is False
    assert BrowserOutputObservation(content="", url="u", error=True).error is True  # a field there
    # OpenHands 0.62 has no `error` on the other kinds, ErrorObservation included.
    assert not hasattr(ErrorObservation(content="boom"), "error")
    assert not hasattr(SuccessObservation(content="ok"), "error")
