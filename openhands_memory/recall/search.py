"""Searching a log through its index: hits checked against the log, a stale index rebuilt, answers bounded.

The index is a projection: what it answers is checked against the events of the log before it is
shown. A hit whose event is not in the log (past the end the caller read, or cut from the log) is
left out; a hit whose event no longer holds what was indexed (an event edited in the middle of the
log) means the index is stale: it is rebuilt from the log and the search runs again, once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Final

from openhands_memory.events import Event
from openhands_memory.recall.index import MAX_QUERY_CHARS, SearchHit, SearchIndex
from openhands_memory.recall.memory_tools import describe

__all__ = ["MAX_ANSWER_CHARS", "search_answer", "search_log"]

MAX_ANSWER_CHARS: Final = 16_000
"""A `search_history` answer holds at most this many characters (50 matches of one line each fit)."""
_QUOTED_QUERY_CHARS = 120
_MAX_WIDENING = 64
"""A search asks the index for at most this many times `limit` hits while it leaves some out."""

EventLookup = Callable[[int], Event | None]
"""The event of the log with this id, or None when the log (as the caller read it) has none."""


def search_log(
    index: SearchIndex,
    query: str,
    *,
    limit: int,
    lookup: EventLookup,
    log: Callable[[], Sequence[Event]],
    before: int | None = None,
) -> list[tuple[SearchHit, Event]]:
    """The best `limit` hits of `query` whose events are in the log as indexed, with those events; hidden ones left out.

    `before`: only events whose id is lower (None: all).

    `log()` gives the whole log, read only when the index turns out stale and must be rebuilt
    (`SearchIndex.rebuild`, logged and counted in `rebuilds`).
    """
    found, stale = _checked_hits(index, query, limit, lookup, before)
    if stale is not None:
        index.rebuild(log(), reason=f"event {stale} no longer holds what was indexed")
        found, _ = _checked_hits(index, query, limit, lookup, before)
    return found


def _checked_hits(
    index: SearchIndex, query: str, limit: int, lookup: EventLookup, before: int | None
) -> tuple[list[tuple[SearchHit, Event]], int | None]:
    """(the hits whose events the log holds as indexed, the id of the first stale one or None)."""
    wanted = limit
    while True:
        hits = index.search(query, limit=wanted, before=before)
        found: list[tuple[SearchHit, Event]] = []
        for hit in hits:
            event = lookup(hit.event_id)
            if event is None:
                continue  # indexed by another user of the sidecar from a longer log, or cut from the log
            if not index.is_current(event):
                return found, hit.event_id
            if not event.hidden:
                found.append((hit, event))
                if len(found) == limit:
                    return found, None
        if len(hits) < wanted or wanted >= limit * _MAX_WIDENING:
            return found, None
        wanted *= 4


def search_answer(
    hits: Sequence[tuple[SearchHit, Event]], query: str, *, asked_chars: int, status: Callable[[int], str]
) -> str:
    """The text of a `search_history` result: one line per hit, at most `MAX_ANSWER_CHARS` characters.

    `asked_chars` is the length of the query the model wrote; when it is longer than the query
    searched (cut to `MAX_QUERY_CHARS`), the answer says so. The query is quoted cut short.
    """
    quoted = json.dumps(query if len(query) <= _QUOTED_QUERY_CHARS else query[: _QUOTED_QUERY_CHARS - 1] + "…", ensure_ascii=False)
    note = (
        f" (only the first {MAX_QUERY_CHARS:,} of its {asked_chars:,} characters were searched)"
        if asked_chars > len(query)
        else ""
    )
    if not hits:
        return f"No event matches {quoted}{note}."
    count = f"{len(hits)} event{'s' if len(hits) != 1 else ''} match{'es' if len(hits) == 1 else ''}"
    lines = [f"{count} {quoted}{note}, best first (call context_reload with an event_id to see one in full):"]
    size = len(lines[0])
    for shown, (hit, event) in enumerate(hits):
        line = f"- event {hit.event_id} ({describe(event)}, {status(hit.event_id)}): {hit.snippet}"
        if size + 1 + len(line) > MAX_ANSWER_CHARS - 100:
            lines.append(f"({len(hits) - shown} more left out: an answer holds at most {MAX_ANSWER_CHARS:,} characters)")
            break
        lines.append(line)
        size += 1 + len(line)
    return "\n".join(lines)

