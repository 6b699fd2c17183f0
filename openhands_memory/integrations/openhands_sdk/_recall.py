"""One SDK conversation's memory tools: its own event log imported, `MemoryToolRuntime` over it, the secrets in force.

What the tools answer is what `History`'s memory tools answer (the same runtime, the same argument
checks, the same text), with two things an SDK agent needs: an event is named by its number in the
conversation's log (`event 12`, the `n` of the SDK's `event-<n>-<uuid>.json`) or by its SDK id (a
UUID), and the log is read again before each call (the SDK appended to it since).

The search index is a projection of the log: beside the conversation's events folder
(`<persistence_dir>/<conversation id>/events.search.sqlite`, owner-only; never inside the folder,
whose files the SDK reads as events), or in memory for a conversation without a persistence dir.
It hides the secrets of the conversation's secret registry, and so does every answer. Nothing
here imports the SDK: the conversation's state is read by its attributes (`events`,
`persistence_dir`, `secret_registry`).
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from openhands_memory.errors import InvalidSecretError, OpenHandsMemoryError
from openhands_memory.events import ContextReloadAction, SearchHistoryAction, agent_history
from openhands_memory.integrations.openhands_sdk._event_log import SdkEventLogStore
from openhands_memory.recall import MAX_QUERY_CHARS
from openhands_memory.recall.memory_tools import (
    CONTEXT_RELOAD,
    SEARCH_HISTORY,
    MemoryToolCall,
    echo,
    parse_memory_call,
)
from openhands_memory.recall.runtime import MemoryToolRuntime, Visibility
from openhands_memory.stream import EventStream, Redactor
from openhands_memory.view import View

__all__ = ["ConversationRecall", "MemoryToolAnswer"]

logger = logging.getLogger(__name__)

EVENTS_FOLDER: Final = "events"
"""The SDK's folder of a conversation's events, inside its persistence dir (the SDK's `EVENTS_DIR`)."""

_WHICH_IDS: Final = (
    "{} takes an event's number as search_history shows it (`event 12`: pass 12), "
    "or the SDK id (a UUID) of an event of this conversation"
)
_MAX_NUMBER_DIGITS: Final = 18
"""A number written as text is read up to this many digits (64-bit ids); a longer one is no event of a log."""


@dataclass(frozen=True, slots=True)
class MemoryToolAnswer:
    """What a memory tool tells the agent: the text, whether the call was wrong, the event reloaded."""

    text: str
    """The answer, secrets in force hidden."""
    is_error: bool = False
    """The call could not be answered as asked (wrong arguments, a log that cannot be read)."""
    reloaded_event_id: int | None = None
    """The number of the event `context_reload` showed, or None."""


class ConversationRecall:
    """The memory tools over one SDK conversation's log; thread-safe (the SDK may run tool calls in parallel)."""

    def __init__(self, state: Any) -> None:
        """The tools over the conversation whose `ConversationState` is `state`; its log is read at each call."""
        self._state = state
        self._lock = threading.Lock()
        folder = _events_folder(state)
        where = str(folder) if folder is not None else f"conversation {getattr(state, 'id', '?')}"
        self.store = SdkEventLogStore(state.events, where=where)
        """The conversation's log, imported."""
        self.stream = EventStream(self.store)
        """The stream over it (its secrets: the registry's)."""
        self.runtime = MemoryToolRuntime(self.stream, index_beside=folder)
        """The memory tools' runtime, whose search index is kept beside the events folder."""
        self._secret_values: tuple[str, ...] = ()
        self._refused_secrets: set[str] = set()
        self._unhideable: list[str] = []
        """The names of registered secrets too short to hide: while any is, no search index is built."""

    # -- the tools ------------------------------------------------------------------------------------

    def reload(self, event_id: Any, offset: Any = None, limit: Any = None) -> MemoryToolAnswer:
        """What `context_reload` answers for `event_id` and the page (`offset`, `limit`: None when not given) as
        the agent wrote them (any JSON values)."""
        with self._lock:
            problem = self._prepare()
            if problem is not None:
                return problem
            number = self._event_number(event_id, "No event was reloaded", CONTEXT_RELOAD)
            if isinstance(number, MemoryToolAnswer):
                return number
            page = {name: value for name, value in (("offset", offset), ("limit", limit)) if value is not None}
            action = _parsed(CONTEXT_RELOAD, {"event_id": number, **page})
            if isinstance(action, str):
                return self._answer(f"No event was reloaded: {action}; {_WHICH_IDS.format(CONTEXT_RELOAD)}.", is_error=True)
            assert isinstance(action, ContextReloadAction)
            observation = self.runtime.reload(action, self._visibility)
            # No event reloaded (none of that id, or a hidden one): a refused call, as every refusal is.
            refused = observation.reloaded_event_id is None
            return self._answer(observation.content, is_error=refused, reloaded_event_id=observation.reloaded_event_id)

    def search(self, query: Any, limit: Any = None, before_event_id: Any = None) -> MemoryToolAnswer:
        """What `search_history` answers for `query`, `limit` and `before_event_id` as the agent wrote them (any JSON
        values; None: not given). `before_event_id` is an event's number or its SDK id (a UUID)."""
        with self._lock:
            problem = self._prepare()
            if problem is not None:
                return problem
            arguments = {"query": query} if limit is None else {"query": query, "limit": limit}
            if before_event_id is not None:
                before = self._event_number(before_event_id, "No search was made", "before_event_id")
                if isinstance(before, MemoryToolAnswer):
                    return before
                arguments["before_event_id"] = before
            action = _parsed(SEARCH_HISTORY, arguments)
            if isinstance(action, str):
                return self._answer(f"No search was made: {action}.", is_error=True)
            assert isinstance(action, SearchHistoryAction)
            problem = self.runtime.search_problem(action) or self._unhideable_problem()
            if problem is not None:
                return self._answer(f"No search was made: {problem}.", is_error=True)
            asked_chars = len(action.query)
            action.query = action.query[:MAX_QUERY_CHARS]  # what is searched; the answer says when it was cut
            observation = self.runtime.search(action, asked_chars, self._visibility)
            return self._answer(observation.content, is_error=self.runtime.index is None)  # None: the index failed

    def close(self) -> None:
        """Close the search index (its sidecar stays) and the stream; the SDK's log is untouched."""
        with self._lock:
            self.runtime.close()
            self.stream.close()

    # -- plumbing ---------------------------------------------------------------------------------------

    def _prepare(self) -> MemoryToolAnswer | None:
        """Read what the SDK appended to the log and the secrets in force now; an answer when the log cannot be read."""
        try:
            self.stream.catch_up()
        except OpenHandsMemoryError as exc:
            logger.error("the memory tools cannot read the conversation's log: %s", exc)
            return self._answer(f"The conversation's event log cannot be read: {echo(str(exc), 1_000)}", is_error=True)
        self._update_secrets()
        return None

    def _update_secrets(self) -> None:
        """Hide the values of the conversation's secret registry (those long enough to hide) in the index and the answers."""
        registry = getattr(self._state, "secret_registry", None)
        if registry is None:
            return
        secrets: dict[str, str] = {}
        unhideable: list[str] = []
        for name in list(getattr(registry, "secret_sources", {}) or {}):
            try:
                value = registry.get_secret_value(name)
            except Exception as exc:  # a secret source's own failure (a lookup over the network): the SDK's to report
                logger.warning("secret %r of the conversation cannot be read (%s): it is not hidden by the memory tools", name, type(exc).__name__)
                continue
            if not isinstance(value, str) or not value:
                continue
            try:
                Redactor({name: value})
            except InvalidSecretError as exc:
                unhideable.append(name)
                if name not in self._refused_secrets:
                    self._refused_secrets.add(name)
                    # The SDK still masks it in every tool output; our index cannot hide so short a value, so
                    # search_history refuses (no index is built or updated) while it is registered.
                    logger.warning("search_history is refused while %s", exc)
                continue
            secrets[name] = value
        self._unhideable = unhideable
        values = tuple(sorted(secrets.values()))
        if values != self._secret_values:
            self.stream.set_secrets(secrets)  # the runtime's index follows (it is rebuilt to hide them)
            self._secret_values = values

    def _unhideable_problem(self) -> str | None:
        """Why no search is made while a registered secret is too short to hide in the index (it would be stored as is)."""
        if not self._unhideable:
            return None
        names = ", ".join(sorted(self._unhideable))
        return (
            f"the conversation's secret {names} is shorter than 6 characters, too short to hide in the search index "
            "(which would store it as written); register a longer value to search"
        )

    def _event_number(self, event_id: Any, refusal: str, argument: str) -> Any:
        """The event number the agent meant: a UUID of the log, or a number written as text, becomes one; other values
        are left for the argument checks. A text naming no event is an answer beginning with `refusal` (naming `argument`)."""
        if not isinstance(event_id, str):
            return event_id
        text = event_id.strip()
        position = self.store.position_of(text)
        if position is not None:
            return position
        if text.isascii() and text.isdigit() and len(text) <= _MAX_NUMBER_DIGITS:
            return int(text)
        return self._answer(f"{refusal}: this conversation has no event {json.dumps(echo(text))}; {_WHICH_IDS.format(argument)}.", is_error=True)

    def _visibility(self) -> Visibility:
        """Whether the agent sees an event: `in view` when the conversation's view holds it, else `forgotten`."""
        seen = {event.id for event in View.from_events(agent_history(self.stream.snapshot())) if event.id is not None}
        return lambda event_id: "in view" if event_id in seen else "forgotten"

    def _answer(self, text: str, *, is_error: bool = False, reloaded_event_id: int | None = None) -> MemoryToolAnswer:
        # The query or arguments quoted back may hold a secret too: the whole text is redacted.
        return MemoryToolAnswer(self.stream.redactor.redact_text(text), is_error, reloaded_event_id)


def _events_folder(state: Any) -> Path | None:
    """The conversation's events folder on disk, or None (no persistence dir, or a file store elsewhere)."""
    base = getattr(state, "persistence_dir", None)
    if not base:
        return None
    folder = Path(base) / EVENTS_FOLDER
    return folder if folder.is_dir() else None


def _parsed(tool: str, arguments: dict[str, Any]) -> ContextReloadAction | SearchHistoryAction | str:
    """The action `History` would make of these arguments, or what is wrong with them (the same checks and words)."""
    try:
        text = json.dumps(arguments, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # values parsed from JSON always dump, short of a nearly full stack
        return "the arguments cannot be read back as JSON"
    action = parse_memory_call(MemoryToolCall("sdk", tool, text))
    assert isinstance(action, ContextReloadAction | SearchHistoryAction | str)
    return action
