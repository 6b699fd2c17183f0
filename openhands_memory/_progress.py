"""A one-line progress bar for the command line (stderr, on a terminal only)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import IO


class ProgressBar:
    """A one-line progress bar, redrawn in place at most ten times a second.

    Call it with `(done, total)`; a `total` of None (or 0) shows a plain counter. `unit` names
    what is counted ("events", "runs").
    """

    def __init__(
        self,
        stream: IO[str],
        label: str,
        *,
        unit: str = "events",
        width: int = 30,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._label = label
        self._unit = unit
        self._width = width
        self._clock = clock
        self._last_draw = float("-inf")
        self._drawn = 0

    def __call__(self, done: int, total: int | None) -> None:
        now = self._clock()
        if (not total or done < total) and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        if total:
            filled = min(self._width, self._width * done // total)
            line = f"{self._label} [{'#' * filled}{'.' * (self._width - filled)}] {done}/{total} {self._unit}"
        else:
            line = f"{self._label} {done} {self._unit}"
        self._stream.write("\r" + line.ljust(self._drawn))
        self._stream.flush()
        self._drawn = len(line)

    def clear(self) -> None:
        """Erase the bar for a line printed in its place; the next update draws it again at once."""
        self.close()
        self._last_draw = float("-inf")

    def close(self) -> None:
        """Erase the bar."""
        if self._drawn:
            self._stream.write("\r" + " " * self._drawn + "\r")
            self._stream.flush()
            self._drawn = 0
