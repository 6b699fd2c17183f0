"""The memory tools' runtime over one stream: the search index's lifecycle and what `context_reload` / `search_history` answer.

`History` (the facade) parses the model's call, appends the action and the observation; this
module makes the observation. The search index is a projection of the log: opened the first time
a search needs it (a history whose model never searches never pays for indexing a long log),
beside a JSONL log, in the database of a Postgres log, beside `index_beside` for a stream that
is a copy of a log kept elsewhere (an OpenHands SDK conversation's events folder), in memory
otherwise, fed every event appended from then on. When it cannot be
opened or fed, the error is logged and `search_history` answers that search is unavailable; the
history itself goes on. A database error may pass (a server restarted): the next search opens the
index again (once per search, so a server that stays down costs one attempt per search). The index's storage errors arrive as `SearchIndexError` (never a raw
`sqlite3.Error`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from openhands_memory.errors import EventNotFoundError, OpenHandsMemoryError, StoreDatabaseError
from openhands_memory.events import (
    ContextReloadAction,
    ContextReloadObservation,
    Event,
    SearchHistoryAction,
    SearchHistoryObservation,
)
from openhands_memory.recall.index import SearchIndex
from openhands_memory.recall.memory_tools import (
    describe,
    reload_arguments_problem,
    reload_page,
    reload_text,
    search_arguments_problem,
)
from openhands_memory.recall.search import search_answer, search_log
from openhands_memory.stream import EventStream, JsonlEventStore, PostgresEventStore

if TYPE_CHECKING:
    from openhands_memory.recall.postgres_index import PostgresSearchIndex

__all__ = ["MemoryToolRuntime", "Visibility"]

logger = logging.getLogger(__name__)

Visibility = Callable[[int], str]
"""For an event id, whether the model sees it: `in view`, `in view, shortened` or `forgotten`."""


class MemoryToolRuntime:
    """Runs `context_reload` and `search_history` against `stream`, keeping its search index (see the module docstring)."""

    def __init__(self, stream: EventStream, *, index_beside: str | os.PathLike[str] | None = None) -> None:
        self.stream = stream
        """The log the tools read."""
        self.index_beside = index_beside
        """The log (a file or a folder) whose sidecar `<name>.search.sqlite` keeps the index when the stream's store
        is not a file of its own (a copy of that log in memory); None: such a stream's index is kept in memory."""
        self.index: SearchIndex | PostgresSearchIndex | None = None
        """The open search index (None: not opened yet, or failed)."""
        self.failure: str | None = None
        """Why the index failed (`search_history` says so), or None."""
        self._opened = False
        self._may_reopen = False
        self.reopens = 0
        """How many times the index was opened again after a database error."""
        self.indexed = -1
        """The id of the last stream event the search index has been given (-1: none); events after it are
        `add`ed to it (the index's own last id may be further: another user of its sidecar indexed more)."""

    # -- the index's lifecycle ----------------------------------------------------------------------

    def use_index(self) -> None:
        """Open the search index the first time it is needed; from then on every `catch_up` keeps it current."""
        if not self._opened:
            self._opened = True
            self._open()
        elif self.index is None and self._may_reopen:  # a database error may have passed: try again
            self._may_reopen = False
            self.reopens += 1
            logger.warning("opening the search index of %r again after: %s", self.stream, self.failure)
            self._open()
            if self.index is not None:
                self.failure = None

    def _open(self) -> None:
        store = self.stream.store
        redactor = self.stream.redactor
        try:
            if isinstance(store, PostgresEventStore):  # in the same database, for every worker (see recall.postgres_index)
                from openhands_memory.recall.postgres_index import PostgresSearchIndex

                index = PostgresSearchIndex.for_store(store, redactor=redactor)
            elif isinstance(store, JsonlEventStore):
                index = SearchIndex.for_log(store.path, redactor=redactor)
            elif self.index_beside is not None:
                index = SearchIndex.for_log(self.index_beside, redactor=redactor)
            else:
                index = SearchIndex.in_memory(redactor=redactor)
        except (OSError, OpenHandsMemoryError) as exc:
            self._broke(exc)
            return
        self.index = index
        self._sync(index)

    def _sync(self, index: SearchIndex | PostgresSearchIndex) -> None:
        """Give the index the whole log (as read: secrets in force hidden); it indexes what it lacks."""
        latest = self.stream.get_latest_event_id()
        try:
            index.sync(self.stream.snapshot())
        except (OSError, OpenHandsMemoryError) as exc:
            self._broke(exc)
            return
        self.indexed = latest

    def catch_up(self) -> None:
        """Give the search index the events appended since it last looked (as read: secrets in force hidden)."""
        index = self.index
        if index is None:
            return
        if index.redactor is not self.stream.redactor:  # the secrets changed: an index that hides them
            self.index = None
            index.close()
            self._open()
            return
        latest = self.stream.get_latest_event_id()
        if index.needs_sync:
            # A write was deferred (another process held the sidecar) or the index started again.
            self._sync(index)
            return
        if latest <= self.indexed:
            return
        try:
            for event in self.stream.get_events(self.indexed + 1, latest):
                index.add(event)
        except (OSError, OpenHandsMemoryError) as exc:
            self._broke(exc)
            return
        self.indexed = latest

    def _broke(self, exc: BaseException) -> None:
        """Stop using the search index after `exc`: log it, and keep the reason for `search_history` to tell."""
        self.failure = f"{type(exc).__name__}: {exc}"
        self._may_reopen = isinstance(exc, StoreDatabaseError)
        logger.error("the search index of %r failed, search_history is unavailable: %s", self.stream, self.failure)
        index, self.index = self.index, None
        if index is not None:
            try:
                index.close()
            except (OSError, OpenHandsMemoryError):
                logger.exception("closing the failed search index")

    def close(self) -> None:
        """Close the search index (its sidecar stays)."""
        index, self.index = self.index, None
        if index is not None:
            index.close()

    # -- the tools ------------------------------------------------------------------------------------

    def reload(self, action: ContextReloadAction, visibility: Callable[[], Visibility]) -> ContextReloadObservation:
        """What `context_reload` answers: the event as logged (a page of it), with whether the model still sees it."""
        event_id = action.event_id
        problem = reload_arguments_problem(action)
        if problem is not None:
            return ContextReloadObservation(content=f"No event was reloaded: {problem}.")
        try:
            event = self.stream.get_event(event_id)
        except EventNotFoundError:
            latest = self.stream.get_latest_event_id()
            return ContextReloadObservation(
                content=f"There is no event {event_id} in the history: event ids go from 0 to {latest}. "
                "Use search_history to find the id of what you are looking for."
            )
        if event.hidden:
            return ContextReloadObservation(content=f"Event {event_id} is hidden: it is never shown to the agent.")
        status = visibility()(event_id)
        note = "still in your view" if status == "in view" else status
        text = reload_text(event)
        page = reload_page(action, text, f"event {event_id}: {describe(event)}, {note}")
        if page is None:
            return ContextReloadObservation(
                content=f"No event was reloaded: offset {action.offset} is past the end of event {event_id}, "
                f"whose content as logged holds {len(text):,} characters."
            )
        return ContextReloadObservation(content=page, reloaded_event_id=event_id)

    def search(
        self, action: SearchHistoryAction, asked_chars: int, visibility: Callable[[], Visibility]
    ) -> SearchHistoryObservation:
        """What `search_history` answers: the best matches of the whole log (or of its events before
        `before_event_id`), or why no search was made."""
        problem = self.search_problem(action)
        if problem is not None:
            return SearchHistoryObservation(content=f"No search was made: {problem}.")
        for _ in range(2):  # a failure just now (a connection lost by a restart) gets one more try
            self.use_index()
            self.catch_up()
            index = self.index
            if index is not None and index.needs_sync:  # it failed and started again, or a write was deferred
                self._sync(index)
                index = self.index
            if index is None:
                continue
            try:
                hits = search_log(
                    index,
                    action.query,
                    limit=action.limit,
                    before=action.before_event_id,
                    lookup=self._event_or_none,
                    log=self.stream.snapshot,
                )
            except (OSError, OpenHandsMemoryError) as exc:
                self._broke(exc)
                continue
            content = search_answer(hits, action.query, asked_chars=asked_chars, status=visibility())
            return SearchHistoryObservation(content=content)
        return SearchHistoryObservation(content=f"Search is unavailable: the search index failed ({self.failure}).")

    def search_problem(self, action: SearchHistoryAction) -> str | None:
        """What is wrong with a search's arguments (an empty query, a limit out of range, a `before_event_id` the log does not hold), or None."""
        problem = search_arguments_problem(action)
        if problem is not None or action.before_event_id is None:
            return problem
        latest = self.stream.get_latest_event_id()
        if not 0 <= action.before_event_id <= latest:
            return (
                f"there is no event {action.before_event_id} in the history to search before: "
                f"event ids go from 0 to {latest}"
            )
        return None

    def _event_or_none(self, event_id: int) -> Event | None:
        try:
            return self.stream.get_event(event_id)
        except EventNotFoundError:
            return None
