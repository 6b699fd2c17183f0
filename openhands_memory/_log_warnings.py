"""Warnings the library logs, collected for a report or printed on the command line one line each.

The library says what it repaired or doubts at WARNING on its `openhands_memory.*` loggers. With no
logging configured, Python prints each bare on stderr: no program name, no log named, once per
pipeline that met it, and over a progress bar. `captured_warnings()` collects them instead (a bench
run returns them with its results, from a worker process too); `WarningPrinter` prints them as
`warning: LOG: message`, each once, erasing the progress bar first.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from openhands_memory._progress import ProgressBar

LIBRARY_LOGGER = "openhands_memory"
"""The logger every module of the library logs under."""

_collecting: ContextVar[list[str] | None] = ContextVar("openhands_memory_collected_warnings", default=None)


class _Collector(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        said = _collecting.get()
        if said is not None and (message := record.getMessage()) not in said:
            said.append(message)


@contextmanager
def captured_warnings() -> Iterator[list[str]]:
    """The library's warnings logged inside the block, each once, in order; not printed by `WarningPrinter`.

    They still reach the handlers of a logging configuration of yours (they propagate as ever).
    """
    said: list[str] = []
    logger = logging.getLogger(LIBRARY_LOGGER)
    handler = _Collector(logging.WARNING)
    token = _collecting.set(said)
    logger.addHandler(handler)
    try:
        yield said
    finally:
        logger.removeHandler(handler)
        _collecting.reset(token)


class WarningPrinter(logging.Handler):
    """Prints each warning the library logs once, as `warning: LOG: message`, never into the progress bar."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(logging.WARNING)
        self._stream = stream
        self._said: set[str] = set()
        self.log: str | None = None
        """The log being read: the warnings logged meanwhile name it."""
        self.bar: ProgressBar | None = None
        """The progress bar on the same stream, erased before a warning is printed (it redraws on its next update)."""

    def emit(self, record: logging.LogRecord) -> None:
        if _collecting.get() is not None:
            return  # collected: the command reports them itself
        self.say(record.getMessage(), log=self.log)

    def say(self, message: str, *, log: str | None = None) -> None:
        """Print `warning: LOG: message` (or `warning: message`), unless this very line was printed already."""
        named = log and not message.startswith(log)  # `LOG:3: ...` names it already
        line = f"warning: {log}: {message}" if named else f"warning: {message}"
        if line in self._said:
            return
        self._said.add(line)
        if self.bar is not None:
            self.bar.clear()
        self._stream.write(line + "\n")
        self._stream.flush()


@contextmanager
def printed_warnings(stream: IO[str]) -> Iterator[WarningPrinter]:
    """Print the library's warnings on `stream` for the duration of the block (see `WarningPrinter`)."""
    logger = logging.getLogger(LIBRARY_LOGGER)
    printer = WarningPrinter(stream)
    logger.addHandler(printer)
    try:
        yield printer
    finally:
        logger.removeHandler(printer)
