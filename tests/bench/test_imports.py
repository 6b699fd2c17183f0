"""Importing the benchmark costs neither litellm nor matplotlib: both load only when used."""

from __future__ import annotations

import subprocess
import sys


def test_importing_bench_loads_neither_litellm_nor_matplotlib() -> None:
    code = "import sys, openhands_memory.bench, openhands_memory.cli.bench; print('litellm' in sys.modules, 'matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]
