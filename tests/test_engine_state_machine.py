"""The whole engine (JSONL stream, view, condenser, messages) under random appends, condensations, reopens and torn tails.

One `History` over a JSONL log is driven by random rules: events of every common kind, tool calls
(answered, answered out of order, left open), condensations a condenser returns from `step()`,
condensation requests, arbitrary recorded condensations, closing and reopening the log, and a crash
simulated by cutting the file inside its last line. After every rule DESIGN.md's invariants must
hold: ids 0, 1, 2, ... equal to the acknowledged events (read back equal, from memory and from
disk), the history's view equal to `View.from_events(agent_history(stream events))`, and the
rendered chat valid (invariant 4). Bounded by the hypothesis profile of `tests/conftest.py`.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from openhands_memory.condenser import Condensation, Condenser
from openhands_memory.events import (
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    Event,
    EventSource,
    ToolCallMetadata,
    agent_history,
    event_to_dict,
)
from openhands_memory.history import History
from openhands_memory.stream.file_store import RecoveryWarning
from openhands_memory.testing.chat import assert_valid_chat
from openhands_memory.testing.strategies import draw_condensation, events
from openhands_memory.view import View

_MASKING = {"type": "observation_masking", "attention_window": 3}
_OFFLOAD = {"type": "large_output_offload", "large_payload_threshold": 20, "preview_chars": 5, "last_keep": 2}
_AMORTIZED = {"type": "amortized", "max_size": 6, "keep_first": 1}

CONDENSER_CONFIGS: list[dict[str, Any]] = [
    _AMORTIZED,
    {"type": "recent", "max_events": 5, "keep_first": 1},
    {"type": "conversation_window", "max_events": 8},
    _MASKING,
    _OFFLOAD,
    {"type": "pipeline", "condensers": [_MASKING, _OFFLOAD, _AMORTIZED]},
]
"""Every offline strategy with sizes small enough that a few steps make it condense."""

_output = st.text(st.sampled_from("ab \n"), max_size=8).map(lambda s: s * 5)


def _decision(condensation: CondensationAction) -> dict[str, Any]:
    """What a condensation forgets and says, without what it cost (its metadata holds timings)."""
    return condensation.model_dump(include={"forgotten_event_ids", "forgotten_events_start_id", "forgotten_events_end_id", "summary", "summary_offset"})


class EngineMachine(RuleBasedStateMachine):
    """A `History` over a JSONL log; `acknowledged` holds, as dicts, every event whose append returned and survived."""

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="engine-machine-"))
        self.path = self.folder / "events.jsonl"
        self.config: dict[str, Any] = {}
        self.condenser: Condenser | None = None
        self.history: History | None = None
        self.acknowledged: list[dict[str, Any]] = []
        self.calls = 0

    @initialize(config=st.sampled_from(CONDENSER_CONFIGS))
    def open_history(self, config: dict[str, Any]) -> None:
        self.config = config
        self.history = self._open(fresh_condenser=True)

    def _open(self, *, fresh_condenser: bool) -> History:
        """A history over the log; with the condenser used so far (its caches warm) unless `fresh_condenser`."""
        if fresh_condenser or self.condenser is None:
            self.condenser = Condenser.from_config(dict(self.config))
        return History.open(self.path, condenser=self.condenser, system_prompt="You test.")

    @property
    def _history(self) -> History:
        assert self.history is not None
        return self.history

    def _add(self, event: Event, source: EventSource) -> None:
        event_id = self._history.add_event(event, source)
        assert event_id == len(self.acknowledged)
        self.acknowledged.append(event_to_dict(event))

    # -- appends ----------------------------------------------------------------------------------

    @rule(event=events(), source=st.sampled_from(list(EventSource)))
    def append(self, event: Event, source: EventSource) -> None:
        self._add(event, source)

    @rule(count=st.integers(1, 3), answered=st.integers(0, 3), in_order=st.booleans(), output=_output)
    def tool_calls(self, count: int, answered: int, in_order: bool, output: str) -> None:
        """One model response making `count` calls, then results for `answered` of them (the rest stay open)."""
        self.calls += 1
        actions = []
        for index in range(count):
            meta = ToolCallMetadata(
                function_name="execute_bash",
                tool_call_id=f"call_{self.calls}_{index}",
                model_response={"id": f"resp_{self.calls}"},
                total_calls_in_response=count,
            )
            action = CmdRunAction(command=f"ls {index}", tool_call_metadata=meta)
            self._add(action, EventSource.AGENT)
            actions.append(action)
        answer = actions[: min(answered, count)]
        if not in_order:
            answer.reverse()
        for action in answer:
            result = CmdOutputObservation(
                content=output, command=action.command, metadata={"exit_code": 0},
                cause=action.id, tool_call_metadata=action.tool_call_metadata,
            )  # fmt: skip
            self._add(result, EventSource.ENVIRONMENT)

    @rule(event=events(), source=st.sampled_from(list(EventSource)))
    def append_to_the_stream(self, event: Event, source: EventSource) -> None:
        """Another writer appends to the stream itself: the history's view must catch up on its next read."""
        assert self._history.stream.add_event(event, source) == len(self.acknowledged)
        self.acknowledged.append(event_to_dict(event))

    @rule()
    def request_condensation(self) -> None:
        request = self._history.request_condensation()
        assert request.id == len(self.acknowledged)
        self.acknowledged.append(event_to_dict(request))
        assert self._history.view.unhandled_condensation_request

    @rule(data=st.data())
    def append_recorded_condensation(self, data: st.DataObject) -> None:
        """A condensation as another tool may have recorded it: any ids (later ones too), with or without a summary."""
        condensation = data.draw(st.composite(lambda draw: draw_condensation(draw, len(self.acknowledged)))())
        self._add(condensation, EventSource.AGENT)

    # -- condensing -------------------------------------------------------------------------------

    @rule()
    def step(self) -> None:
        """Ask the condenser once: append the condensation it returns, or check the messages it lets through."""
        history = self._history
        before = history.view
        outcome = history.step()
        # Condensers are deterministic: one that saw every earlier step (and maybe a log cut short
        # under it) answers as a new one does.
        expected = Condenser.from_config(dict(self.config)).condense(before)
        event(f"step on {self.config['type']}: {type(outcome).__name__}")
        if isinstance(outcome, Condensation):
            assert isinstance(expected, Condensation)
            assert _decision(outcome.action) == _decision(expected.action)
            self._add(outcome.action, EventSource.AGENT)
            assert not history.view.unhandled_condensation_request
            assert history.view.forgotten_event_ids >= before.forgotten_event_ids
        else:
            assert_valid_chat(outcome)
            assert isinstance(expected, View)
            assert history.last_view is not None
            assert [event_to_dict(e) for e in history.last_view] == [event_to_dict(e) for e in expected]

    @rule()
    def next_messages(self) -> None:
        """Condense until the condenser lets the view through; only condensations are appended on the way."""
        messages = self._history.next_messages()
        assert_valid_chat(messages)
        appended = list(self._history.stream.get_events(len(self.acknowledged)))
        event(f"next_messages on {self.config['type']}: {len(appended)} condensations")
        for condensation in appended:
            assert isinstance(condensation, CondensationAction)
            assert condensation.source == EventSource.AGENT
            self.acknowledged.append(event_to_dict(condensation))

    # -- files ------------------------------------------------------------------------------------

    @rule(fresh_condenser=st.booleans())
    def reopen(self, fresh_condenser: bool) -> None:
        self._history.close()
        with warnings.catch_warnings():
            warnings.simplefilter("error", RecoveryWarning)
            self.history = self._open(fresh_condenser=fresh_condenser)
        assert self._history.stream.store.recovered is None  # type: ignore[attr-defined]

    @precondition(lambda self: bool(self.acknowledged))
    @rule(data=st.data(), fresh_condenser=st.booleans())
    def tear_tail(self, data: st.DataObject, fresh_condenser: bool) -> None:
        """Crash mid-append: cut the file inside its last line; reopening sets the torn bytes aside, keeps the rest."""
        self._history.close()
        content = self.path.read_bytes()
        assert content.endswith(b"\n")
        start = content.rfind(b"\n", 0, len(content) - 1) + 1
        record = len(content) - 1 - start
        # Keep 1 to `record - 1` bytes of the record (torn), or all of it but its newline (kept). The
        # record's length depends on its timestamp, so the draw does not: hypothesis needs the same
        # draws to replay a run.
        if data.draw(st.booleans(), label="lose only the newline"):
            cut = start + record
        else:
            cut = start + 1 + data.draw(st.integers(0, 2**16), label="bytes kept") % (record - 1)
        with self.path.open("r+b") as file:
            file.truncate(cut)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.history = self._open(fresh_condenser=fresh_condenser)
        report = self._history.stream.store.recovered  # type: ignore[attr-defined]
        event("tear: only the newline" if cut - start == record else "tear: a torn record")
        if cut - start == record:
            assert report is None, "a complete record without its newline is kept"
            assert self.path.read_bytes() == content
            return
        self.acknowledged.pop()
        assert report is not None
        assert report.line == len(self.acknowledged) + 1
        assert report.byte_count == cut - start
        assert report.sidecar.read_bytes() == content[start:cut]
        assert self.path.read_bytes() == content[:start]
        assert [type(w.message) for w in caught if issubclass(w.category, RecoveryWarning)] == [RecoveryWarning]

    # -- invariants -------------------------------------------------------------------------------

    @invariant()
    def ids_and_events_are_the_acknowledged_ones(self) -> None:
        if self.history is None:
            return
        stream = self._history.stream
        stored = list(stream.get_events())
        assert [e.id for e in stored] == list(range(len(self.acknowledged)))
        assert stream.get_latest_event_id() == len(self.acknowledged) - 1
        assert [event_to_dict(e) for e in stored] == self.acknowledged

    @invariant()
    def view_equals_a_rebuild_from_the_log(self) -> None:
        if self.history is None:
            return
        stored = list(self._history.stream.get_events())
        assert self._history.view == View.from_events(agent_history(stored))

    @invariant()
    def the_view_renders_a_valid_chat(self) -> None:
        if self.history is None:
            return
        history = self._history
        assert_valid_chat(history.memory.process_events(history.view, history.initial_user_action))

    def teardown(self) -> None:
        # No check here: an assertion in teardown would hide the failure that ended the run. What is
        # on disk is checked by `reopen` and `tear_tail`, which read it back before the invariants.
        if self.history is not None:
            self.history.close()
        shutil.rmtree(self.folder, ignore_errors=True)


# Runs come from the profile (tests/conftest.py); 30 rules a run took 2-8 s under "ci" (60 runs) and
# 13-26 s under "thorough" (300 runs) on a busy 2-core machine.
EngineMachine.TestCase.settings = settings(stateful_step_count=30, deadline=None)
TestEngine = EngineMachine.TestCase
