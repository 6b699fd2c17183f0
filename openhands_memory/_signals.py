"""SIGTERM as an exception, so that a command stopped by `kill` cleans up as it does on Ctrl-C.

Python ends at once on SIGTERM: no `finally` runs, so the worker processes of a benchmark kept
running after it. While `sigterm_raises()` is in force the signal raises `Terminated` instead, which
unwinds like `KeyboardInterrupt`: the benchmark stops its workers on either.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(BaseException):
    """The process was sent SIGTERM (a BaseException, as KeyboardInterrupt is: no `except Exception` catches it)."""

    exit_code = 128 + signal.SIGTERM
    """What a shell reports for a process ended by SIGTERM: 143."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` in the main thread (elsewhere: unchanged, Python allows no handler)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def ignore_interrupts() -> None:
    """For a worker process: Ctrl-C (sent to the whole process group) is its parent's to handle, which stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
