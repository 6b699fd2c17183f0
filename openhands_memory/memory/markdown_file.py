"""`MarkdownFileMemory`: an append-only Markdown mirror of the records, with only the last few kept in RAM."""

from __future__ import annotations

import dataclasses
import os
import re
from collections import deque
from datetime import datetime, timezone
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openhands_memory._files import FILE_MODE, make_private_folder
from openhands_memory.errors import OutputRefusedError
from openhands_memory.memory.base import Memory, MemoryQuery, check_size, format_records, select
from openhands_memory.memory.records import MemoryRecord
from openhands_memory.stream import Redactor

__all__ = ["MIRROR_HEADER", "MarkdownFileMemory"]

MIRROR_HEADER = "# openhands-memory: memory records"
"""The first line of every mirror: a file that does not start with it is someone else's, never appended to."""

_PREAMBLE = (
    f"{MIRROR_HEADER}\n\n"
    "Append-only mirror written by `openhands_memory.memory.MarkdownFileMemory`. The event log is the source of\n"
    "truth: this file can be deleted and written again from it.\n"
)
_RECORD_HEADING = re.compile(r"^## Step (\d+) · (\S+) · event (\d+)$")
"""A section heading as mirrors written before QitOS' layout named their event (still read)."""
_EVENT_LINE = re.compile(r"^- event_id: (\d+)$")
_FENCE = re.compile(r"^(`{3,})")
_DEFAULT_LIMIT = 50
"""Records a query returns when it names no limit (QitOS' default)."""


class MarkdownFileMemory(Memory):
    """Appends every record to a Markdown file at `path`, and keeps the last `max_in_memory` in RAM (0: all).

    The file is created owner-only (0600), its missing folders 0700. An existing file is appended to
    only if it is a mirror (its first line is `MIRROR_HEADER`); its records are not read back into
    RAM, but its last event id is, so a memory rebuilt from the log writes only the events the file
    lacks. The file is never truncated or rewritten: `evict` and `reset` act on RAM only.

    `secrets` (name: value) are hidden in every record it keeps and writes, whatever the log held
    (a memory attached to a stream that has secrets gets its events with them hidden already).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = "memory.md",
        max_in_memory: int = 200,
        *,
        secrets: Mapping[str, str] | None = None,
    ) -> None:
        """Open or create the mirror at `path`.

        Raises:
            InvalidSecretError: a secret value is too short or not a string (nothing is opened).
            OutputRefusedError: `path` exists and is not a mirror (or is not a regular file); it is left untouched.
            MemoryAdapterError: `max_in_memory` is not an integer >= 0.
            OSError: the file or its folder cannot be read or created.
        """
        super().__init__()
        self._redactor = Redactor(secrets)
        self.max_in_memory = check_size("max_in_memory", max_in_memory)
        self.path = Path(path)
        self._records: deque[MemoryRecord] = deque(maxlen=max_in_memory or None)
        self._mirrored_up_to = self._open_mirror()

    @property
    def mirrored_up_to(self) -> int | None:
        """The id of the last event written to the file (None while the file holds no record)."""
        return self._mirrored_up_to

    def retrieve(
        self, query: Mapping[str, Any] | MemoryQuery | None = None, state: Any = None, observation: Any = None
    ) -> list[MemoryRecord]:
        """The records in RAM that pass the query, at most `max_items` / `top_k` (default 50)."""
        return select(self._records, MemoryQuery.parse(query), default_limit=_DEFAULT_LIMIT)

    def summarize(self, max_items: int = 5) -> str:
        """The last `max_items` records in RAM, one line each."""
        return format_records(list(self._records)[-max_items:] if max_items else [])

    def evict(self) -> int:
        """Nothing to do: RAM never holds more than `max_in_memory` records (older ones are in the file)."""
        return 0

    def _add(self, record: MemoryRecord) -> None:
        if self._redactor:
            hide = self._redactor.redact_text
            metadata = {key: hide(value) if isinstance(value, str) else value for key, value in record.metadata.items()}
            record = dataclasses.replace(record, content=hide(record.content), metadata=metadata)
        if self._mirrored_up_to is None or record.event_id > self._mirrored_up_to:
            self._write(_block(record))
            self._mirrored_up_to = record.event_id
        super()._add(record)

    def _open_mirror(self) -> int | None:
        """Create the file with its preamble, or check that the existing one is a mirror; its last event id."""
        make_private_folder(self.path.parent)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, FILE_MODE)
        except FileExistsError:
            return self._last_mirrored_id()
        try:
            os.fchmod(fd, FILE_MODE)  # whatever the umask
            os.write(fd, _PREAMBLE.encode("utf-8"))
        finally:
            os.close(fd)
        return None

    def _last_mirrored_id(self) -> int | None:
        if not self.path.is_file():
            raise OutputRefusedError(self.path, "is not a regular file; choose another path for the memory mirror")
        last: int | None = None
        fence: str | None = None
        with self.path.open(encoding="utf-8", errors="replace") as lines:
            if lines.readline().rstrip("\n") != MIRROR_HEADER:
                raise OutputRefusedError(
                    self.path, f"exists and is not a memory mirror (its first line is not {MIRROR_HEADER!r}); "
                    "it is left untouched: choose another path"
                )
            for line in lines:  # one line at a time: memory stays flat however long the file is
                line = line.rstrip("\n")
                opened = _FENCE.match(line)
                if fence is not None:
                    if line == fence:
                        fence = None
                elif opened:
                    fence = opened.group(1)
                elif heading := _RECORD_HEADING.match(line):
                    last = int(heading.group(3))
                elif event := _EVENT_LINE.match(line):
                    last = int(event.group(1))
        return last

    def _write(self, text: str) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)

    def __repr__(self) -> str:
        return f"MarkdownFileMemory(path={str(self.path)!r}, max_in_memory={self.max_in_memory})"


def _block(record: MemoryRecord) -> str:
    """A record as QitOS writes it: `## Step N · role`, `- time_utc:`, then our `- event_id:`, its metadata, its content fenced.

    The fence is longer than any run of backticks inside. `time_utc` is the event's time in UTC (so
    a mirror written again from the log is the same), or the time of writing for an event without one.
    """
    longest = max((len(run) for run in re.findall(r"`+", record.content)), default=0)
    fence = "`" * max(3, longest + 1)
    facts = f"- metadata: {record.metadata}\n" if record.metadata else ""
    body = record.content if record.content.endswith("\n") or not record.content else record.content + "\n"
    role = " ".join(record.role.split())
    return (
        f"\n## Step {record.step_id} · {role}\n- time_utc: {_time_utc(record.timestamp)}\n- event_id: {record.event_id}\n"
        f"{facts}\n{fence}text\n{body}{fence}\n"
    )


def _time_utc(timestamp: str | None) -> str:
    """An event's ISO 8601 timestamp in UTC (`+00:00`); one without a zone is local time, as the stream writes it."""
    if timestamp:
        try:
            return datetime.fromisoformat(timestamp).astimezone(timezone.utc).isoformat()
        except ValueError:
            pass  # an unparsable timestamp from an old log: the time of writing, as for none
    return datetime.now(timezone.utc).isoformat()
