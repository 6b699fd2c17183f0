"""Ranges stay ranges: no number read from a log sizes the work (issue 9, item 2).

A 350-byte log whose condensation forgets ids 1..10**12 once made `View.from_events` and
`History.open` grow past 8 GB. Every public way through such a log must cost what the log's
events cost, whatever the width of a range, the `summary_offset` or the size of an id.
"""

from __future__ import annotations

import contextlib
import io
import resource
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openhands_memory.cli import main
from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.events import (
    AgentCondensationObservation,
    CmdRunAction,
    CondensationAction,
    CondensationRequestAction,
    Event,
    EventSource,
    MessageAction,
    dump_events,
    event_to_dict,
    load_events,
)
from openhands_memory.history import History
from openhands_memory.view import View, ViewBuilder

PEAK_BYTES = 50 * 2**20
"""The most memory one call on a tiny log may allocate (it needs well under 1 MB)."""
MAX_STEPS = 1_000_000
"""The most Python trace events (calls and lines) one call on a tiny log may run: each needs under
3,200 (measured on every case), a walk over a 10**8-id range would need 10**8."""


@contextlib.contextmanager
def address_space_cap(extra: int = 2 * 2**30) -> Iterator[None]:
    """Cap this process's address space at its current size plus `extra`, so a regression fails with
    MemoryError instead of taking the machine's memory (a 10**12-id set needs terabytes)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:  # not Linux: no cap
        yield
        return
    size = next(int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + extra
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


class WorkBudgetExceeded(Exception):
    """A call ran more Python lines than `MAX_STEPS`: its work grew with a number read from the log."""


def bounded(call: Callable[[], Any]) -> Any:
    """Run `call` under the memory cap; check its peak allocation and how many Python lines it ran.

    Lines run, not seconds: the count is the same on an idle machine and a loaded one. A regression
    that walks a range id by id passes `MAX_STEPS` within a fraction of the 10**8 ids of the
    smallest wide case, and is stopped there; one that builds the ids meets the memory cap.
    """
    steps = 0

    def count(frame: Any, event: str, arg: Any) -> Any:
        nonlocal steps
        steps += 1
        if steps > MAX_STEPS:
            raise WorkBudgetExceeded(f"more than {MAX_STEPS:,} Python lines run")
        return count

    with address_space_cap():
        tracemalloc.start()
        sys.settrace(count)
        try:
            result = call()
        finally:
            sys.settrace(None)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    assert peak < PEAK_BYTES, f"allocated {peak / 2**20:.1f} MB"
    return result


def write_log(path: Path, *, end: int, offset: int = 1, late_id: int = 3, start: int = 1) -> Path:
    """A JSONL log of about 350 bytes: a task, a command, a condensation forgetting `start..end` with a
    summary at `offset`, then a message with id `late_id` (inside the range unless told otherwise)."""
    records = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "Fix the bug"}},
        {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"}},
        {
            "id": 2,
            "source": "agent",
            "action": "condensation",
            "args": {
                "forgotten_events_start_id": start,
                "forgotten_events_end_id": end,
                "summary": "Ran ls.",
                "summary_offset": offset,
            },
        },
        {"id": late_id, "source": "user", "action": "message", "args": {"content": "And now?"}},
    ]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


# name: (range end, summary offset, id of the last event); the last event is forgotten when its id is in 1..end.
CASES = {
    "range of 10**8 ids": (10**8, 1, 3),
    "range of 10**12 ids": (10**12, 1, 3),
    "range up to the largest JSON integer": (2**64 - 1, 1, 3),
    "summary offset of 10**18": (10**12, 10**18, 3),
    "event id of 10**18 past the range": (10**12, 1, 10**18),
    "event id of 10**18 inside the range": (10**18, 1, 10**18),
}


@pytest.fixture(params=list(CASES), ids=list(CASES))
def huge(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, int, int]:
    end, offset, late_id = CASES[request.param]
    path = write_log(tmp_path / "huge.jsonl", end=end, offset=offset, late_id=late_id)
    assert len(path.read_bytes()) < 450  # about 350 bytes, more with 20-digit numbers
    return path, end, late_id


def expected_contents(end: int, late_id: int) -> list[str]:
    """What the model sees: the task, the summary (an offset past the end appends), and the last
    message unless the range forgets it."""
    return ["Fix the bug", "Ran ls.", *(["And now?"] if late_id > end else [])]


def contents(view: View) -> list[str]:
    return [getattr(e, "content", "") for e in view]


def test_load_and_view_cost_what_the_log_costs(huge: tuple[Path, int, int]) -> None:
    path, end, late_id = huge
    events = bounded(lambda: load_events(path))
    view = bounded(lambda: View.from_events(events))
    forgotten = bounded(lambda: view.forgotten_event_ids)
    assert contents(view) == expected_contents(end, late_id)
    assert isinstance(view[1], AgentCondensationObservation)
    # Of the range, only the ids of events in the log count as forgotten.
    assert forgotten == {1, 2, *([late_id] if late_id <= end else [])}
    built = bounded(lambda: ViewBuilder(events).view)
    assert built == view
    # The same log with the range cut to its last event gives the same view.
    cut = load_events(write_log(path.with_name("cut.jsonl"), end=min(end, late_id), offset=1, late_id=late_id))
    assert contents(View.from_events(cut)) == contents(view)


def test_history_and_messages_cost_what_the_log_costs(huge: tuple[Path, int, int]) -> None:
    path, end, late_id = huge

    def open_and_step() -> tuple[list[str], list[str], list[str]]:
        with History.open(path) as history:
            messages = [str(m.content) for m in history.next_messages()]
            before = contents(history.view)
            # OpenHands' rule: a later event whose id is inside a range is forgotten when it arrives.
            history.add_event(MessageAction(content="One more thing"), EventSource.USER)
            return messages, before, contents(history.view)

    messages, before, after = bounded(open_and_step)
    assert before == expected_contents(end, late_id)
    assert len(messages) == 1 + len(before)
    new_id = max(late_id, 2) + 1
    assert after == before + ([] if new_id <= end else ["One more thing"])

    events = load_events(path)
    view = View.from_events(events)
    rendered = bounded(lambda: ConversationMemory("You are an agent.").process_events(view, events[0]))  # type: ignore[arg-type]
    assert [m.role for m in rendered][:2] == ["system", "user"]


@pytest.mark.parametrize(
    "argv",
    [
        ["view"],
        ["view", "--messages"],
        ["view", "--json"],
        ["inspect"],
        ["inspect", "--json"],
        ["replay", "--recorded"],
        ["replay", "--recorded", "--json"],
    ],
    ids=" ".join,
)
def test_cli_commands_cost_what_the_log_costs(argv: list[str], huge: tuple[Path, int, int], tmp_path: Path) -> None:
    path, _, _ = huge
    warm = write_log(tmp_path / "warm.jsonl", end=2)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        assert main([argv[0], str(warm), *argv[1:]]) == 0  # imports and the tokenizer load here, unmeasured
        out.seek(0)
        out.truncate()
        code = bounded(lambda: main([argv[0], str(path), *argv[1:]]))
    assert code == 0, out.getvalue()
    assert len(out.getvalue()) < 20_000


# -- CondensationAction.forgotten ----------------------------------------------------------------


def test_a_range_is_a_lazy_sequence_equal_to_the_list_openhands_builds() -> None:
    small = CondensationAction(forgotten_events_start_id=2, forgotten_events_end_id=4)
    assert small.forgotten == [2, 3, 4] and [2, 3, 4] == small.forgotten
    assert small.forgotten != [2, 3] and small.forgotten != [2, 3, 5]
    assert list(small.forgotten) == [2, 3, 4] and small.forgotten[-1] == 4 and list(small.forgotten[1:]) == [3, 4]
    assert small.forgotten.index(3) == 1 and small.forgotten.count(9) == 0
    assert small.message == "Condenser is dropping the events: [2, 3, 4]."

    wide = CondensationAction(forgotten_events_start_id=1, forgotten_events_end_id=10**12)

    def look() -> None:
        forgotten = wide.forgotten
        assert len(forgotten) == 10**12 and forgotten[-1] == 10**12
        assert 10**12 in forgotten and 0 not in forgotten and None not in forgotten and "7" not in forgotten
        assert wide.forgets(5) and not wide.forgets(None) and not wide.forgets(10**12 + 1)
        assert 7 in wide.forgotten_lookup() and None not in wide.forgotten_lookup()
        assert forgotten != [1, 2, 3]
        assert wide.message == "Condenser is dropping the events: [1, ..., 1000000000000]."
        assert event_to_dict(wide)["args"]["forgotten_events_end_id"] == 10**12

    bounded(look)


def test_a_list_is_looked_up_as_a_set() -> None:
    action = CondensationAction(forgotten_event_ids=[5, 3])
    assert action.forgotten == [5, 3]
    assert action.forgotten_lookup() == frozenset({3, 5})
    assert action.forgets(3) and not action.forgets(4) and not action.forgets(None)


def test_dumping_a_wide_condensation_writes_a_short_message(tmp_path: Path) -> None:
    action = CondensationAction(forgotten_events_start_id=0, forgotten_events_end_id=10**12, id=7)
    bounded(lambda: dump_events([action], tmp_path / "out.jsonl"))
    assert len((tmp_path / "out.jsonl").read_bytes()) < 400


# -- the view against a brute-force reference (small widths) ---------------------------------------


def brute_force_view(events: list[Event]) -> tuple[list[Event], bool, set[int]]:
    """OpenHands V0's rules written out, every range expanded; of a range only ids in the log count."""
    present = {e.id for e in events}
    forgotten: set[int] = set()
    for event in events:
        if isinstance(event, CondensationAction):
            if event.forgotten_event_ids is not None:
                forgotten.update(event.forgotten_event_ids)
            else:
                assert event.forgotten_events_start_id is not None and event.forgotten_events_end_id is not None
                every = set(range(event.forgotten_events_start_id, event.forgotten_events_end_id + 1))
                forgotten.update(every & present)  # type: ignore[arg-type]
        if isinstance(event, CondensationAction | CondensationRequestAction):
            assert event.id is not None
            forgotten.add(event.id)
    kept = [e for e in events if e.id not in forgotten]
    for event in reversed(events):
        if isinstance(event, CondensationAction) and event.summary is not None and event.summary_offset is not None:
            kept.insert(event.summary_offset, AgentCondensationObservation(content=event.summary, cause=event.id))
            break
    unhandled = False
    for event in reversed(events):
        if isinstance(event, CondensationAction | CondensationRequestAction):
            unhandled = isinstance(event, CondensationRequestAction)
            break
    return kept, unhandled, forgotten


@st.composite
def logs_with_ranges(draw: st.DrawFn) -> list[Event]:
    """Logs of up to 30 events with unique ids, in order or not, with condensations that forget
    narrow ranges (past, future and empty ones) or lists, and requests."""
    size = draw(st.integers(0, 30))
    ordered = draw(st.booleans())
    ids = sorted(draw(st.lists(st.integers(0, 40), min_size=size, max_size=size, unique=True)))
    if not ordered:
        ids = draw(st.permutations(ids))
    events: list[Event] = []
    for event_id in ids:
        kind = draw(st.integers(0, 9))
        if kind >= 8:
            start = draw(st.integers(-2, 42))
            if kind == 9 or draw(st.booleans()):
                end = start + draw(st.integers(0, 12))
                fields: dict[str, Any] = {"forgotten_events_start_id": start, "forgotten_events_end_id": end}
            else:
                fields = {"forgotten_event_ids": draw(st.lists(st.integers(0, 42), max_size=6))}
            if draw(st.booleans()):
                fields.update(summary=f"summary {event_id}", summary_offset=draw(st.integers(0, 50)))
            event: Event = CondensationAction(**fields)
        elif kind == 7:
            event = CondensationRequestAction()
        else:
            event = CmdRunAction(command=f"cmd {event_id}")
        event.id = event_id
        events.append(event)
    return events


@settings(deadline=None)
@given(logs_with_ranges())
def test_views_match_a_brute_force_expansion_of_small_ranges(events: list[Event]) -> None:
    kept, unhandled, forgotten = brute_force_view(events)
    view = View.from_events(events)
    assert view.events == kept
    assert view.unhandled_condensation_request == unhandled
    assert view.forgotten_event_ids == forgotten
    builder = ViewBuilder()
    for n, event in enumerate(events, 1):
        builder.append(event)
        assert builder.view == View.from_events(events[:n])
    assert builder.view == view
    # Applying the last condensation to the view before it gives the same view.
    if events and isinstance(events[-1], CondensationAction):
        assert View.from_events(events[:-1]).apply(events[-1]) == view
