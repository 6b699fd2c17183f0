"""What the SDK tools' executors share: one helper per conversation, a call that never raises, no parameters.

The memory tools (`tools.py`) and the steering tools (`steering_tools.py`) each answer calls for the
conversations of one agent, from a helper made on a conversation's first call (its recall, its steering
log), and the SDK's loop must go on whatever a call does: a failure is an answer the agent reads.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from openhands_memory.recall.memory_tools import echo

logger = logging.getLogger(__name__)


class _Closable(Protocol):
    def close(self) -> None: ...


H = TypeVar("H", bound=_Closable)
A = TypeVar("A")


class PerConversation(Generic[H]):
    """One helper per conversation (by its id), made on its first call by `make`; `close` closes them all."""

    def __init__(self, make: Callable[[Any], H]) -> None:
        self._make = make
        self._helpers: dict[Any, H] = {}
        self._lock = threading.Lock()

    def of(self, state: Any) -> H:
        """The conversation's helper (made now if it has none: one that failed to make is tried again next call)."""
        with self._lock:
            helper = self._helpers.get(state.id)
            if helper is None:
                helper = self._helpers[state.id] = self._make(state)
            return helper

    def values(self) -> list[H]:
        """The helpers made so far."""
        with self._lock:
            return list(self._helpers.values())

    def close(self) -> None:
        with self._lock:
            helpers, self._helpers = list(self._helpers.values()), {}
        for helper in helpers:
            helper.close()


def answered(family: str, tool: str, call: Callable[[], A], failed: Callable[[str], A]) -> A:
    """`call()`, or, if it raises, `failed(what failed)`, logged with its traceback as "the <family> <tool> failed":
    a tool call never raises."""
    try:
        return call()
    except Exception as exc:  # the SDK's loop must go on: the agent reads what failed
        logger.exception("the %s %s failed", family, tool)
        return failed(f"{tool} failed: {type(exc).__name__}: {echo(str(exc), 1_000)}")


def no_params(name: str, params: dict[str, Any]) -> None:
    """Refuse parameters for a tool that takes none.

    Raises:
        ValueError: `params` is not empty.
    """
    if params:
        raise ValueError(f"{name} takes no parameters, got {sorted(params)}")
