"""A race on one search index sidecar: a live session appending, `openhands-memory search` beside it (issue 29, item 2).

    python benchmarks/race_search_index.py [--seconds 30] [--readers 2]

One process runs a `History` over a JSONL log with its search index live (an `add` per append),
appending notes that each hold a unique marker word for `--seconds`, then searches once (which
makes any write put off while the sidecar was busy) and closes. `--readers` other processes do
what `openhands-memory search LOG` does, again and again until the session ends: read the log,
`SearchIndex.for_log(LOG).sync(events)` with that (by then older) snapshot, search.

Then it counts the notes whose marker finds no event: in the sidecar as the race left it, and in
the next session (a new `History` that syncs the index with the log, as any resumed session
does). Before issue 29 a 30 s race dropped 14 of 2,065 events for good. Wall-clock time is used
here only to bound the run; the result is a count. The exit status is 1 when an event is missing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

from openhands_memory.condenser import Condenser
from openhands_memory.events import AgentThinkAction, EventSource, MessageAction, load_events
from openhands_memory.history import History
from openhands_memory.recall import SearchIndex

_SEARCH = {"id": "c", "type": "function", "function": {"name": "search_history", "arguments": '{"query": "marker0"}'}}


def _session(log: str, seconds: float, started: multiprocessing.synchronize.Event, done: multiprocessing.synchronize.Event) -> None:
    try:
        with History.open(log, condenser=Condenser.from_config({"type": "noop"})) as history:
            history.add_event(MessageAction(content="start"), EventSource.USER)
            history.memory_tools()
            started.set()
            end = time.monotonic() + seconds
            number = 0
            while time.monotonic() < end:
                history.add_event(AgentThinkAction(thought=f"note marker{number} of the race"), EventSource.AGENT)
                number += 1
            history.run_memory_tool(_SEARCH)
    finally:
        started.set()
        done.set()


def _search_beside(log: str, started: multiprocessing.synchronize.Event, done: multiprocessing.synchronize.Event, syncs: multiprocessing.Value) -> None:  # type: ignore[valid-type]
    started.wait()
    while not done.is_set():
        events = load_events(log)
        with SearchIndex.for_log(log) as index:
            index.sync(events)
            index.search("marker1")
        with syncs.get_lock():
            syncs.value += 1


def _missing(index: SearchIndex, markers: dict[int, str]) -> list[int]:
    return [ident for ident, word in markers.items() if ident not in {hit.event_id for hit in index.search(word, limit=3)}]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--readers", type=int, default=2)
    args = parser.parse_args(argv)
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as folder:
        log = str(Path(folder) / "race.jsonl")
        started, done = context.Event(), context.Event()
        syncs = context.Value("i", 0)
        session = context.Process(target=_session, args=(log, args.seconds, started, done))
        readers = [context.Process(target=_search_beside, args=(log, started, done, syncs)) for _ in range(args.readers)]
        for process in (session, *readers):
            process.start()
        for process in (session, *readers):
            process.join()
        events = load_events(log)
        markers = {
            e.id: e.thought.split()[1] for e in events if isinstance(e, AgentThinkAction) and e.id is not None  # type: ignore[attr-defined]
        }
        with SearchIndex.for_log(log) as index:  # as the race left the sidecar: no sync
            left = _missing(index, markers)
        with History.open(log, condenser=Condenser.from_config({"type": "noop"})) as history:
            history.memory_tools()  # the next session syncs the index with the log
        with SearchIndex.for_log(log) as index:
            after = _missing(index, markers)
    print(
        f"race of {args.seconds:.0f} s, {args.readers} searching processes ({syncs.value} snapshot syncs): "
        f"{len(markers)} notes appended; missing from the index as the race left it: {len(left)}; "
        f"missing in the next session: {len(after)}"
    )
    return 1 if left or after else 0


if __name__ == "__main__":
    sys.exit(main())
