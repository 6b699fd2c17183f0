"""A bound on waiting for a database's reply: a connection whose reply does not come in time is cut.

The server's own bounds (`statement_timeout`, `lock_timeout`) need a server that runs: a frozen
one (a stopped process, a VM paused, a network path that drops everything) never answers, and the
client would wait as long as it lasts. One thread per process watches every guarded call; when a
call's deadline passes, it shuts the connection's socket down, so the waiting call fails at once
with a connection error, and `Guard.fired` tells the caller why.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Guard", "guarded"]


class Guard:
    """One guarded call: `fired` is True when its deadline passed and its connection was cut."""

    __slots__ = ("conn", "deadline", "fired", "seconds")

    def __init__(self, conn: Any, seconds: float) -> None:
        self.conn = conn
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.fired = False

    def progressed(self) -> None:
        """The server answered part of a long call: its deadline starts again (a long read is not a frozen server)."""
        with _lock:
            self.deadline = time.monotonic() + self.seconds


_lock = threading.Condition()
_guards: set[Guard] = set()
_thread: threading.Thread | None = None


@contextmanager
def guarded(conn: Any, seconds: float) -> Iterator[Guard]:
    """Cut `conn` if the block is still running `seconds` from now (see the module)."""
    global _thread
    guard = Guard(conn, seconds)
    with _lock:
        _guards.add(guard)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_watch, name="openhands-memory-reply-watchdog", daemon=True)
            _thread.start()
        elif len(_guards) == 1:
            _lock.notify()
    try:
        yield guard
    finally:
        with _lock:
            _guards.discard(guard)


def _watch() -> None:
    with _lock:
        while True:
            if not _guards:
                _lock.wait()
                continue
            now = time.monotonic()
            due = [guard for guard in _guards if guard.deadline <= now]
            for guard in due:
                _guards.discard(guard)
                guard.fired = True
                _cut(guard.conn)
            if not due:
                _lock.wait(min(guard.deadline for guard in _guards) - now)


def _cut(conn: Any) -> None:
    """Shut the connection's socket down: a call blocked on it sees the connection closed."""
    try:
        fileno = conn.pgconn.socket
        sock = socket.socket(fileno=os.dup(fileno))
    except (OSError, AttributeError, ValueError, Exception):  # already closed: nothing is waiting on it
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.close()
