"""`CondensationGuard`: progress is a smaller prompt, or as many tokens in fewer events."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from openhands_memory.condenser.guard import CondensationGuard
from openhands_memory.errors import CondensationStalledError
from openhands_memory.events import Event, MessageAction
from openhands_memory.view import View


def view_of(count: int, *, first: int = 0) -> View:
    return View([MessageAction(content=f"m{i}", id=i) for i in range(first, first + count)])


def flat(_events: Sequence[Event]) -> int:
    """A prompt counter to which every view costs the same: events that render to nothing cost no tokens."""
    return 100


def test_fewer_events_at_the_same_tokens_is_progress_as_many_events_or_more_tokens_is_not() -> None:
    guard = CondensationGuard("x", token_counter=flat)
    guard.condensed(view_of(5))
    guard.condensed(view_of(4))  # forgot an event that costs nothing: the view still shrank
    message = "did not make the prompt smaller (100 -> 100 tokens)"
    with pytest.raises(CondensationStalledError, match=re.escape(message)):
        guard.condensed(view_of(4, first=10))  # another view, as many events, no fewer tokens
    # More tokens in fewer events is no progress: a summary longer than what it replaced.
    guard = CondensationGuard("x", token_counter=lambda events: 100 if len(events) == 5 else 120)
    guard.condensed(view_of(5))
    with pytest.raises(CondensationStalledError, match=re.escape("(100 -> 120 tokens)")):
        guard.condensed(view_of(3))  # a summary longer than what it replaced
