"""The text side of the search index, shared by its SQLite and PostgreSQL backends.

What an event's searchable text is (`event_text`), which events are indexed, how a plain query is
cut into terms and an excerpt found around them, the digest an index remembers of each event,
and where a sync starts: the same for every backend, so both answer alike.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openhands_memory.events import Event, Observation

__all__ = [
    "COPY_KINDS",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "SKIPPED_FIELDS",
    "SNIPPET_CHARS",
    "WORD",
    "SearchHit",
    "SyncStart",
    "differing_digests",
    "event_text",
    "excerpt_around",
    "is_indexed_kind",
    "query_terms",
    "sqlite_text",
    "sync_start",
    "text_digest",
]

SNIPPET_CHARS = 200
MAX_QUERY_CHARS = 1000
"""A query is cut to this many characters: a query is a few keywords, and a longer one costs time, not precision."""
MAX_QUERY_TERMS = 64
"""Terms of a query beyond this are ignored: a query is a few keywords, and each term costs a pass over its postings."""

# Fields that hold no text worth searching: settings, enums, images, model plumbing, page internals.
SKIPPED_FIELDS = frozenset(
    {
        "agent_class",
        "axtree_object",
        "confirmation_state",
        "custom_secrets_descriptions",
        "dom_object",
        "extra_element_properties",
        "file_urls",
        "goal_image_urls",
        "image_urls",
        "impl_source",
        "kernel_init_code",
        "metadata",
        "openhands_version",
        "runtime_hosts",
        "screenshot",
        "screenshot_path",
        "security_risk",
        "set_of_marks",
        "tools",
        # Another agent's records kept on the event they report or copy (Codex's `token_count` and UI
        # copies): records no model saw, which are not searched, as hidden events are not.
        "usage_record",
        "copy_records",
    }
)

COPY_KINDS = frozenset({"search_history", "context_reload"})
"""The memory tools' kinds: their actions hold the agent's own queries and their observations copy other events
(search results, a reloaded output). Not indexed, so a search finds the original event, never an earlier query or
an answer that quoted it."""

WORD = re.compile(r"[^\W_]+")
_DATA_URL = re.compile(r"data:[\w/+.-]*;base64,", re.ASCII)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One event that matched a search, best first in a result list."""

    event_id: int
    """The id of the event in the log."""
    kind: str
    """The event's `action` or `observation` name, e.g. "run", "read", "message"."""
    snippet: str
    """A short excerpt around the match, on one line, at most 200 characters."""
    score: float
    """How well the event matches (the negated BM25 rank): higher is better."""


def event_text(event: Event) -> str:
    """The searchable text of an event: its content, command, path, thought, message, summary and other text fields.

    Settings, images (base64 data URLs), page internals and model plumbing are left out; strings
    nested in lists and objects (tool arguments, unknown kinds' fields) are included.
    """
    parts: list[str] = []
    if isinstance(event, Observation) and event.content:
        parts.append(event.content)
    values = event.__dict__
    for name in event.payload_fields:
        if name not in SKIPPED_FIELDS:
            parts.extend(_strings(values.get(name)))
    extra = event.__pydantic_extra__
    if extra:
        for name, value in extra.items():
            if name not in SKIPPED_FIELDS:
                parts.extend(_strings(value))
    return "\n".join(parts)


def _strings(value: Any) -> Iterator[str]:
    """The non-empty strings in a JSON-like value, depth first, without recursion (a value may nest deeply)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item and not _DATA_URL.match(item):
                yield item
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))


def query_terms(text: str) -> tuple[list[str], list[str]]:
    """The chunks of a plain-text query (whitespace-separated, each holding a word) and all its terms.

    The terms are the chunks and, for a chunk of several words, each word: a chunk is searched as
    a phrase (`src/x.py`, `a::b` as written), its words let an event with them apart still match.
    """
    chunks: dict[str, None] = {}  # ordered and unique
    terms: dict[str, None] = {}
    for chunk in sqlite_text(text).split():
        words = WORD.findall(chunk)
        if not words:  # only operators or punctuation: the tokenizer would find nothing in it
            continue
        chunks[chunk] = None
        for term in (chunk, *words) if len(words) > 1 else words:
            terms[term] = None
        if len(terms) >= MAX_QUERY_TERMS:
            break
    return list(chunks)[:MAX_QUERY_TERMS], list(terms)[:MAX_QUERY_TERMS]


def excerpt_around(body: str, terms: Sequence[str]) -> str:
    """One line of about 200 characters of `body` around the first place a query term appears (else its start).

    Not FTS5's snippet(): its cost grows with the square of the matches in a document, which makes
    a common word in a megabyte of output take seconds; this costs one scan per term.
    """
    at = 0
    # Whole chunks first, then the longer (usually rarer) words.
    for term in sorted(terms, key=lambda t: (WORD.fullmatch(t) is not None, -len(t))):
        # As the tokenizer sees it: not inside a longer word ("x" is not found in "example").
        found = re.search(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", body, re.IGNORECASE)
        if found is not None:
            at = found.start()
            break
    start = max(0, at - SNIPPET_CHARS // 4)
    line = " ".join(body[start : start + 2 * SNIPPET_CHARS].split())
    head = "…" if start > 0 else ""
    budget = SNIPPET_CHARS - len(head)
    if len(line) > budget or start + 2 * SNIPPET_CHARS < len(body):
        line = line[: budget - 1] + "…"
    return head + line


def sqlite_text(text: str) -> str:
    """Text SQLite can take: NUL ends an FTS5 string early, and a lone surrogate cannot be encoded as UTF-8."""
    if "\x00" in text:
        text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def text_digest(kind: str, text: str) -> bytes:
    """What the index remembers of an event's searchable text: enough to tell it changed, nothing to read it back."""
    return hashlib.blake2b(sqlite_text(f"{kind}\x00{text}").encode("utf-8"), digest_size=16).digest()


def is_indexed_kind(event: Event) -> bool:
    return not event.hidden and event.kind not in COPY_KINDS


@dataclass(frozen=True, slots=True)
class SyncStart:
    """Where a sync of `events` into an index whose last event is `last` starts, before it looks at what is stored."""

    position: int
    """`events[:position]` are the ones up to the index's last; `events[position:]` are new to it."""
    given_last: int | None
    """The last id in `events` (None: no event has one)."""
    refused: str | None = None
    """Why the index must not be written by this caller (it then lives in memory), or None."""
    rebuild: str | None = None
    """Why the whole index is rebuilt before anything is compared (the secrets changed), or None."""


def sync_start(events: Sequence[Event], last: int | None, stored_secrets: str, mine: str, *, where: str) -> SyncStart:
    """The decisions a sync makes from the index's last id and secrets alone, the same for every backend.

    `where` names the index in a refusal ("beside the log", "in the database").
    """
    # Walk back over the events after the index's last one: this check costs O(new), not O(log).
    position = len(events)
    while position > 0:
        ident = events[position - 1].id
        if last is not None and ident is not None and ident <= last:
            break
        position -= 1
    given_last = next((e.id for e in reversed(events) if e.id is not None), None)
    if last is None or stored_secrets == mine:
        return SyncStart(position, given_last)
    if not mine:
        return SyncStart(position, given_last, refused=f"the index {where} hides secrets this caller was not given")
    if given_last is None or given_last < last:
        refused = f"the index {where} was built with other secrets and holds more of the log"
        return SyncStart(position, given_last, refused=refused)
    return SyncStart(position, given_last, rebuild="the secrets to hide changed")


def differing_digests(events: Sequence[Event], stored: Mapping[int, bytes], digest_of: Callable[[Event], bytes]) -> str | None:
    """Why an index whose digests up to `events`' last id are `stored` does not hold `events` as they are, or None.

    Every event with an id must have its digest stored (`digest_of` makes one), and nothing else may be.
    """
    given = 0
    for event in events:
        if event.id is None:
            continue
        given += 1
        if stored.get(event.id) != digest_of(event):
            return f"event {event.id} is not the one indexed"
    if given != len(stored):
        return f"the index holds {len(stored) - given} event(s) the log does not"
    return None
