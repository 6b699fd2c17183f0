"""The OpenHands 0.62 interpreter that the compatibility tests load our output in (a venv of its own: benchmarks/README.md).

`OPENHANDS_PYTHON` names it, else `/work/ohenv/bin/python`. A test that needs it is skipped, with
the reason, where it is missing or cannot import OpenHands (a venv still being installed, say).
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

import pytest
from conftest import HANG_GUARD_SECONDS

OPENHANDS_PYTHON = Path(os.environ.get("OPENHANDS_PYTHON", "/work/ohenv/bin/python"))
"""The interpreter of the OpenHands venv."""


@functools.cache
def _openhands_importable() -> bool:
    probe = subprocess.run([str(OPENHANDS_PYTHON), "-c", "import openhands.events.serialization"], capture_output=True, timeout=HANG_GUARD_SECONDS)
    return probe.returncode == 0


def require_openhands() -> Path:
    """The OpenHands interpreter; skips the test unless it is there and imports OpenHands."""
    if not OPENHANDS_PYTHON.exists():
        pytest.skip(f"no OpenHands interpreter at {OPENHANDS_PYTHON} (set OPENHANDS_PYTHON; see benchmarks/README.md)")
    if not _openhands_importable():
        pytest.skip(f"OpenHands is not importable by {OPENHANDS_PYTHON}")
    return OPENHANDS_PYTHON
