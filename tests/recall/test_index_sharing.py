"""Several users of one sidecar (a live session, `openhands-memory search` beside it, threads) lose no event (issue 29, item 2).

Real processes and threads, bounded by counts (never by time); the subprocess joins have generous
timeouts only as hang guards.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from pathlib import Path

from openhands_memory.condenser import Condenser
from openhands_memory.events import AgentThinkAction, EventSource, MessageAction, load_events
from openhands_memory.history import History
from openhands_memory.recall import SearchIndex, sidecar_path

APPENDS = 120
SNAPSHOT_SYNCS = 40
HANG_GUARD_S = 300


def _live_session(log: str, appends: int, started: multiprocessing.synchronize.Event) -> None:
    """A session appending events with its index live (an `add` per append), then a search."""
    with History.open(log, condenser=Condenser.from_config({"type": "noop"})) as history:
        history.add_event(MessageAction(content="start"), EventSource.USER)
        history.memory_tools()
        started.set()
        for number in range(appends):
            history.add_event(AgentThinkAction(thought=f"note marker{number} of the session"), EventSource.AGENT)
        # A write put off while another process held the sidecar is made at the next use of the index.
        history.run_memory_tool({"id": "c", "type": "function", "function": {"name": "search_history", "arguments": '{"query": "marker0"}'}})


def _search_beside(log: str, syncs: int, started: multiprocessing.synchronize.Event) -> None:
    """What `openhands-memory search LOG` does, again and again: read the log, sync the sidecar with it, search."""
    started.wait(HANG_GUARD_S)
    for _ in range(syncs):
        events = load_events(log)
        with SearchIndex.for_log(log) as index:
            index.sync(events)
            index.search("marker1")


def _indexed_ids(log: Path) -> set[int]:
    with sqlite3.connect(sidecar_path(log)) as conn:
        ids = {row[0] for row in conn.execute("SELECT event_id FROM seen")}
    conn.close()
    return ids


def test_a_live_session_and_searches_in_other_processes_agree_and_lose_no_event(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    context = multiprocessing.get_context("spawn")
    started = context.Event()
    writer = context.Process(target=_live_session, args=(str(log), APPENDS, started))
    readers = [context.Process(target=_search_beside, args=(str(log), SNAPSHOT_SYNCS, started)) for _ in range(2)]
    for process in (writer, *readers):
        process.start()
    for process in (writer, *readers):
        process.join(HANG_GUARD_S)
        assert process.exitcode == 0, process
    events = load_events(log)
    assert len(events) == APPENDS + 3  # the start, the notes, the search and its answer
    # Every event of the log is in the sidecar, without a sync: nothing was dropped along the way.
    assert _indexed_ids(log) == {event.id for event in events}
    with SearchIndex.for_log(log) as index:
        for number in (0, APPENDS // 2, APPENDS - 1):
            assert [hit.event_id for hit in index.search(f"marker{number}")] == [number + 1]


def test_threads_adding_and_syncing_older_snapshots_of_one_sidecar_lose_no_event(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    log.write_text("")
    events = [AgentThinkAction(id=number, thought=f"thread marker{number}") for number in range(APPENDS)]
    live = SearchIndex.for_log(log)
    done = threading.Event()
    failures: list[BaseException] = []

    def add_all() -> None:
        try:
            for event in events:
                live.add(event)  # the same object from two threads: its lock serialises them
        except BaseException as exc:  # reported by the assertion below
            failures.append(exc)
        finally:
            done.set()

    def sync_snapshots(own: bool) -> None:
        try:
            index = SearchIndex.for_log(log) if own else live
            for count in range(SNAPSHOT_SYNCS):
                index.sync(events[: (count * 7) % APPENDS])  # older and older snapshots, out of step
            if own:
                index.close()
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=add_all), threading.Thread(target=sync_snapshots, args=(True,)),
               threading.Thread(target=sync_snapshots, args=(False,))]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_GUARD_S)
    assert not failures and done.is_set()
    if live.needs_sync:  # a write put off while another connection held the sidecar
        live.sync(events)
    live.close()
    assert _indexed_ids(log) == set(range(APPENDS))
