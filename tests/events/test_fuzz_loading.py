"""Fuzzing the loaders: every damaged log loads, or raises the library's typed error naming the place.

The inputs (real and synthetic logs, cut, laid out every way `load_events` reads, then damaged) are
made by `fuzz_report.py`, which also runs alone for a longer count:
`python -m tests.events.fuzz_report --count 3000`.
"""

from __future__ import annotations

import functools
import random
import tempfile
from pathlib import Path

from conftest import require_real_logs_dir
from fuzz_report import BaseLog, make_input, real_base_logs, run_loaders, synthetic_base_logs
from hypothesis import given
from hypothesis import strategies as st


@functools.cache
def _real_logs(folder: Path) -> list[BaseLog]:
    return real_base_logs(folder)


@functools.cache
def _synthetic_logs() -> list[BaseLog]:
    return synthetic_base_logs()


def _check(bases: list[BaseLog], rng: random.Random) -> None:
    with tempfile.TemporaryDirectory(prefix="oh-fuzz-") as tmp:
        fuzz_input = make_input(bases, rng, Path(tmp))
        bad = [o for o in run_loaders(fuzz_input) if not o.ok]
        assert not bad, f"{fuzz_input.describe()}\n" + "\n".join(f"{o.entry}: {o.detail}" for o in bad)


@given(rng=st.randoms(use_true_random=False))
def test_every_damaged_real_log_loads_or_raises_a_typed_error_naming_the_place(rng: random.Random) -> None:
    _check(_real_logs(require_real_logs_dir()), rng)


@given(rng=st.randoms(use_true_random=False))
def test_every_damaged_synthetic_session_loads_or_raises_a_typed_error_naming_the_place(rng: random.Random) -> None:
    _check(_synthetic_logs(), rng)
