"""The controller facade: stream, view of the agent's history, condenser and messages in one step."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_SECONDS, REPO_ROOT
from hypothesis import given
from hypothesis import strategies as st

from openhands_memory.condenser import (
    ApproximateTokenCounter,
    Condensation,
    Condenser,
    LLMSummarizingCondenser,
    NoOpCondenser,
    RollingCondenser,
)
from openhands_memory.condenser._boundaries import condensation_action
from openhands_memory.condenser._model_backed import SHRINK_TRIES
from openhands_memory.errors import CondensationStalledError, EventSize, LLMContextWindowExceededError, MalformedEventError
from openhands_memory.events import (
    AgentStateChangedObservation,
    CmdOutputObservation,
    CmdRunAction,
    CondensationAction,
    CondensationRequestAction,
    Event,
    EventSource,
    MessageAction,
    NullObservation,
    SystemMessageAction,
    ToolCallMetadata,
    agent_history,
    load_events,
)
from openhands_memory.history import CondensationGuard, History, default_condenser
from openhands_memory.llm import LLMConfig
from openhands_memory.stream import EventStream
from openhands_memory.testing.fake_llm import FakeLLM, litellm_error
from openhands_memory.testing.strategies import event_streams
from openhands_memory.view import View

BUNDLED = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"


def _turn(history: History, number: int) -> None:
    metadata = ToolCallMetadata(function_name="execute_bash", tool_call_id=f"call-{number}", model_response={"id": f"r{number}"})
    run = CmdRunAction(command=f"cmd {number}", tool_call_metadata=metadata)
    history.add_event(run, EventSource.AGENT)
    output = CmdOutputObservation(content=f"output {number} " * 20, command=run.command, tool_call_metadata=metadata, cause=run.id)
    history.add_event(output, EventSource.ENVIRONMENT)


def _start(condenser: Condenser | None = None, **options: object) -> History:
    history = History(condenser=condenser if condenser is not None else NoOpCondenser(), **options)  # type: ignore[arg-type]
    history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    history.add_event(MessageAction(content="Fix the bug"), EventSource.USER)
    return history


class ForgetOldestPair(RollingCondenser):
    """Condenses when the view has more than `size` events (or on request): forgets the oldest pair after the head."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        if view.unhandled_condensation_request:
            return "request"
        return "size" if len(view) > self.size else None

    def get_condensation(self, view: View) -> Condensation:
        return Condensation(condensation_action(view, [e.id for e in view.events[2:4] if e.id is not None]))


def test_step_returns_the_messages_with_the_system_prompt_and_the_task_first() -> None:
    history = _start()
    _turn(history, 1)
    messages = history.step()
    assert isinstance(messages, list)
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool"]
    assert history.last_view is not None and len(history.last_view) == 4
    assert history.initial_user_action is not None and history.initial_user_action.content == "Fix the bug"


def test_the_view_is_built_from_the_agent_s_history_only() -> None:
    history = _start()
    history.add_event(AgentStateChangedObservation(agent_state="running"), EventSource.ENVIRONMENT)
    _turn(history, 1)
    history.add_event(NullObservation(content=""), EventSource.ENVIRONMENT)
    assert len(history.stream) == 6
    assert history.view == View.from_events(agent_history(history.stream.get_events()))
    assert len(history.view) == 4


def test_a_history_picks_up_the_events_its_stream_already_holds() -> None:
    events = load_events(BUNDLED)
    history = History(EventStream.from_events(events), condenser=NoOpCondenser())
    assert history.view == View.from_events(agent_history(events))
    assert history.initial_user_action is not None and history.initial_user_action.id == 1
    assert history.condenser.name == "noop"


def test_a_condensation_is_returned_for_the_controller_to_append() -> None:
    history = _start(ForgetOldestPair(size=5))
    for number in range(2):
        _turn(history, number)
    result = history.step()
    assert isinstance(result, Condensation)
    assert len(history.stream) == 6  # not appended by step
    history.add_event(result.action, EventSource.AGENT)
    messages = history.step()
    assert isinstance(messages, list) and [m.role for m in messages] == ["system", "user", "assistant", "tool"]


def test_next_messages_appends_the_condensations_itself() -> None:
    history = _start(ForgetOldestPair(size=5))
    for number in range(4):
        _turn(history, number)
    messages = history.next_messages()
    condensations = [e for e in history.stream.get_events() if isinstance(e, CondensationAction)]
    assert len(condensations) == 3 and all(c.source == EventSource.AGENT for c in condensations)
    assert len(history.view) == 4 and len(messages) == 4


class Idle(RollingCondenser):
    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        return "size"

    def get_condensation(self, view: View) -> Condensation:
        return Condensation(CondensationAction(forgotten_event_ids=[]))


def test_a_condenser_that_changes_nothing_stops_with_a_clear_error_instead_of_looping() -> None:
    history = _start(Idle())
    _turn(history, 1)
    message = "condenser 'Idle' made no progress: it asked to condense again after a condensation that left the view unchanged (4 events in view)"
    with pytest.raises(CondensationStalledError, match=re.escape(message)):
        history.next_messages()
    assert sum(isinstance(e, CondensationAction) for e in history.stream.get_events()) == 1


def test_a_condenser_that_never_stops_is_stopped_at_the_limit() -> None:
    history = _start(ForgetOldestPair(size=2), max_condensations_per_step=2)
    for number in range(5):
        _turn(history, number)
    with pytest.raises(CondensationStalledError, match=re.escape("still condensing after 2 condensations at one step")):
        history.next_messages()


def test_the_guard_is_reset_by_each_new_event() -> None:
    guard = CondensationGuard("x", limit=1)
    view = View([MessageAction(content="a", id=0)])
    guard.condensed(view)
    guard.reset()
    guard.condensed(View([]))
    assert guard.count == 1
    with pytest.raises(ValueError, match="limit must be at least 1"):
        CondensationGuard("x", limit=0)


def test_a_context_window_overflow_is_recovered_by_condensing_on_request() -> None:
    history = _start(ForgetOldestPair(size=100))
    for number in range(3):
        _turn(history, number)
    fake = FakeLLM([litellm_error("ContextWindowExceededError", "prompt is too long"), "done"])
    reply = history.completion(fake.llm(), tools=[])
    assert reply.text == "done"
    kinds = [type(e).__name__ for e in history.stream.get_events()][-2:]
    assert kinds == ["CondensationRequestAction", "CondensationAction"]
    first, second = fake.calls
    assert len(second.messages) == len(first.messages) - 2


def test_our_own_context_window_error_is_recovered_too() -> None:
    history = _start(ForgetOldestPair(size=100))
    for number in range(3):
        _turn(history, number)
    fake = FakeLLM([LLMContextWindowExceededError("too long", model="fake-model"), "done"])
    assert history.completion(fake.llm()).text == "done"


def test_a_context_window_overflow_that_condensing_cannot_fix_is_a_clear_error() -> None:
    history = _start(NoOpCondenser())
    _turn(history, 1)
    fake = FakeLLM([litellm_error("ContextWindowExceededError", "prompt is too long")], default="never reached")
    message = "condenser 'noop' made no progress: the prompt exceeds the context window of 'fake-model' and condensing forgot nothing (4 events in view)"
    with pytest.raises(CondensationStalledError, match=re.escape(message)) as raised:
        history.completion(fake.llm())
    assert isinstance(raised.value.__cause__, LLMContextWindowExceededError)
    assert len(fake.calls) == 1
    assert isinstance(list(history.stream.get_events())[-1], CondensationRequestAction)


def test_a_history_on_file_resumes_where_it_stopped(tmp_path: Path) -> None:
    path = tmp_path / "conversation.jsonl"
    with History.open(path, condenser=ForgetOldestPair(size=5)) as history:
        history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
        history.add_event(MessageAction(content="Fix the bug"), EventSource.USER)
        for number in range(3):
            _turn(history, number)
        before = history.next_messages()
    with History.open(path, condenser=ForgetOldestPair(size=5)) as resumed:
        assert resumed.view == View.from_events(agent_history(load_events(path)))
        assert resumed.next_messages() == before
        assert resumed.initial_user_action is not None and resumed.initial_user_action.id == 1


def test_the_default_condenser_is_cache_aware_offline_and_priced_by_the_fallback_without_a_model() -> None:
    from openhands_memory.condenser import CacheAwareCondenser

    condenser = default_condenser()
    assert isinstance(condenser, CacheAwareCondenser) and condenser.name == "cache_aware(pipeline)"
    assert [c.name for c in condenser.inner.condensers] == ["browser_output_masking", "llm"]  # type: ignore[attr-defined]
    assert condenser.inner.condensers[1].llm is None  # type: ignore[attr-defined]  # offline: the offline structured summary
    assert condenser.pricing.name == "claude-sonnet-4-5"
    assert condenser.pricing_note == "priced as claude-sonnet-4-5 (no agent model given: the fallback)"
    assert History().condenser.name == "cache_aware(pipeline)"


def test_the_default_condenser_is_priced_for_the_agents_model_given_or_called() -> None:
    assert History(model="gpt-5").condenser.pricing.name == "gpt-5"  # type: ignore[attr-defined]
    history = History()
    history.add_event(MessageAction(content="Fix the bug"), EventSource.USER)
    assert history.condenser.pricing.name == "claude-sonnet-4-5"  # type: ignore[attr-defined]
    history.completion(FakeLLM(default="done").llm(LLMConfig(model="gpt-5")))
    condenser = history.condenser
    assert condenser.pricing.name == "gpt-5" and condenser.pricing_note == "priced as gpt-5 (the agent's model)"  # type: ignore[attr-defined]
    assert condenser._cache.pricing is condenser.pricing  # type: ignore[attr-defined]  # its cache prices and rules too


def test_a_model_without_known_prices_falls_back_to_claude_sonnet_4_5_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    condenser = default_condenser("no-such-model-i39")
    assert condenser.pricing.name == "claude-sonnet-4-5"  # type: ignore[attr-defined]
    note = "no known prices for 'no-such-model-i39': priced as claude-sonnet-4-5 (the fallback)"
    assert condenser.pricing_note == note  # type: ignore[attr-defined]
    assert [r.getMessage() for r in caplog.records if "no-such-model-i39" in r.getMessage()] == [f"cache_aware: {note}"]


def test_a_condenser_given_is_never_repriced() -> None:
    condenser = Condenser.from_config({"type": "cache_aware", "pricing": "gpt-5", "condenser": {"type": "noop"}})
    history = History(condenser=condenser)
    history.add_event(MessageAction(content="Fix the bug"), EventSource.USER)
    history.completion(FakeLLM(default="done").llm(LLMConfig(model="claude-sonnet-4-5")))
    assert condenser.pricing.name == "gpt-5"  # type: ignore[attr-defined]


def test_stepping_a_history_loads_no_litellm() -> None:
    code = (
        "import sys\n"
        "from openhands_memory.history import History\n"
        "from openhands_memory.events import EventSource, MessageAction\n"
        "h = History()\n"
        "h.add_event(MessageAction(content='hi'), EventSource.USER)\n"
        "assert h.next_messages()\n"
        "assert 'litellm' not in sys.modules, 'litellm was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert result.returncode == 0, result.stderr


# -- progress is measured on the prompt (issue 9: condensation loops, summaries that grow) ------------

TASK = "Fix the bug. " * 400
"""A long task: the largest event in view, and one every condenser keeps for good."""

STALL_PIPELINES = {
    "default": lambda: default_condenser(),
    "amortized": lambda: Condenser.from_config({"type": "amortized", "max_size": 120, "keep_first": 2}),
    "conversation_window": lambda: Condenser.from_config({"type": "conversation_window"}),
    "noop": lambda: Condenser.from_config({"type": "noop"}),
    "llm": lambda: LLMSummarizingCondenser(FakeLLM(default="USER_CONTEXT: fix the bug").llm(), max_size=120, keep_first=2),
}


def _long_session(condenser: Condenser, turns: int = 10) -> History:
    history = History(condenser=condenser)
    history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    history.add_event(MessageAction(content=TASK), EventSource.USER)
    for number in range(turns):
        _turn(history, number)
    return history


@pytest.mark.parametrize("pipeline", sorted(STALL_PIPELINES))
def test_a_model_that_always_overflows_stops_within_three_more_calls_naming_the_largest_events(pipeline: str) -> None:
    history = _long_session(STALL_PIPELINES[pipeline]())
    before = len(history.stream)
    model = FakeLLM(default=litellm_error("ContextWindowExceededError", "prompt is too long"))
    with pytest.raises(CondensationStalledError) as raised:
        history.completion(model.llm())
    error = raised.value
    assert len(model.calls) <= 1 + 3
    assert len(history.stream) - before <= 6
    assert isinstance(error.__cause__, LLMContextWindowExceededError)
    task_tokens = history.condenser.token_counter([history.stream.get_event(1)])
    assert error.largest_events[0] == EventSize(1, "message action", task_tokens)
    assert len(error.largest_events) == 3
    assert [size.tokens for size in error.largest_events] == sorted((size.tokens for size in error.largest_events), reverse=True)
    assert error.tokens is not None and error.tokens > task_tokens
    assert f"; largest: id 1 (message action, {task_tokens} tokens), id " in str(error)


def test_a_shrinking_condensation_is_retried_at_most_max_overflow_retries_times() -> None:
    history = _long_session(ForgetOldestPair(size=100))
    history.max_overflow_retries = 1
    model = FakeLLM(default=LLMContextWindowExceededError("too long", model="fake-model"))
    message = "the prompt still exceeds the context window of 'fake-model' after 1 condensation on request (20 events in view)"
    with pytest.raises(CondensationStalledError, match=re.escape(message)):
        history.completion(model.llm())
    assert len(model.calls) == 2
    kinds = [type(e).__name__ for e in history.stream.get_events()][-2:]
    assert kinds == ["CondensationRequestAction", "CondensationAction"]


def test_an_overflow_that_condensing_makes_no_smaller_stops_at_once() -> None:
    # conversation_window keeps the essentials whatever is asked: once only they are left, a
    # request is handled by a condensation that forgets nothing (its own id is not progress).
    history = History(condenser=Condenser.from_config({"type": "conversation_window"}))
    history.add_event(SystemMessageAction(content="You are an agent."), EventSource.AGENT)
    history.add_event(MessageAction(content=TASK), EventSource.USER)
    model = FakeLLM(default=LLMContextWindowExceededError("too long", model="fake-model"))
    message = "the prompt exceeds the context window of 'fake-model' and condensing forgot nothing (2 events in view); largest: id 1"
    with pytest.raises(CondensationStalledError, match=re.escape(message)):
        history.completion(model.llm())
    assert len(model.calls) == 1
    kinds = [type(e).__name__ for e in history.stream.get_events()][2:]
    assert kinds == ["CondensationRequestAction", "CondensationAction"]


def test_an_overflow_of_the_condenser_s_own_model_is_a_stall_not_the_agent_s_overflow() -> None:
    model = FakeLLM(default=LLMContextWindowExceededError("too long", model="fake-model"))
    history = _long_session(LLMSummarizingCondenser(model.llm(), max_size=120, keep_first=2))
    message = "the prompt exceeds the context window of 'fake-model' and the condenser's model failed: fake-model: too long"
    with pytest.raises(CondensationStalledError, match=re.escape(message)) as raised:
        history.completion(model.llm())
    assert isinstance(raised.value.__cause__, LLMContextWindowExceededError)
    assert len(model.calls) == 1 + 1 + SHRINK_TRIES  # the agent's call, then the summarizer's shrinking tries
    assert isinstance(list(history.stream.get_events())[-1], CondensationRequestAction)


class GrowingSummary(RollingCondenser):
    """Always condenses: forgets the oldest pair after the head under a summary longer than the one before."""

    def condensation_reason(self, view: View):  # type: ignore[no-untyped-def]
        return "size"

    def get_condensation(self, view: View) -> Condensation:
        forgotten = [e.id for e in view.events[2:] if e.id is not None][:2]
        summary = "so far: " + "x" * 100 * len(view.events)
        return Condensation(condensation_action(view, forgotten, summary=summary + summary, summary_offset=2))


def test_a_condensation_that_does_not_shrink_the_prompt_stops_the_step_when_the_condenser_asks_again() -> None:
    history = _start(GrowingSummary())
    for number in range(3):
        _turn(history, number)
    with pytest.raises(CondensationStalledError, match=r"after a condensation that did not make the prompt smaller \((\d+) -> (\d+) tokens\)") as raised:
        history.next_messages()
    assert sum(isinstance(e, CondensationAction) for e in history.stream.get_events()) == 1
    assert raised.value.largest_events[0].event_id is None  # the summary it wrote
    assert str(raised.value.largest_events[0]).startswith("the summary (condense observation, ")


def test_without_a_token_counter_progress_is_counted_in_events() -> None:
    guard = CondensationGuard("x")
    first = [MessageAction(content="a", id=0), MessageAction(content="b", id=1)]
    guard.condensed(View(first))
    with pytest.raises(CondensationStalledError, match=re.escape("did not make the prompt smaller (2 -> 2 events) (2 events in view)")):
        guard.condensed(View([first[0], MessageAction(content="c" * 50, id=2)]))


def test_handling_a_request_counts_as_progress_once() -> None:
    guard = CondensationGuard("x", token_counter=ApproximateTokenCounter())
    events = [MessageAction(content="a", id=0)]
    guard.condensed(View(events, unhandled_condensation_request=True))
    guard.condensed(View(list(events)))
    with pytest.raises(CondensationStalledError, match="left the view unchanged"):
        guard.condensed(View(list(events)))


def test_a_huge_summary_is_cut_so_the_context_shrinks_and_the_summarizer_is_not_called_at_every_step() -> None:
    summarizer = FakeLLM(default="S" * 200_000)
    condenser = LLMSummarizingCondenser(summarizer.llm(), max_size=1000, keep_first=2, max_tokens=3000)
    history = _start(condenser)
    for number in range(60):
        _turn(history, number)
    before = condenser.token_counter(history.view)
    assert before > 3000
    history.next_messages()
    after = condenser.token_counter(history.view)
    assert after < before and after <= 3000
    record = condenser.last_condensation
    assert record is not None and record.extra["summary_cut"]["tokens"] > 50_000
    for number in range(60, 65):
        _turn(history, number)
        history.next_messages()
    assert len(summarizer.calls) == 1
    assert condenser.token_counter(history.view) <= 3000


# --- the view follows the log, and says so when it cannot ----------------------------------------


def _malformed_condensation() -> CondensationAction:
    """A condensation whose forgotten ids are not a list: built past validation, as a buggy tool could."""
    return CondensationAction.model_construct(forgotten_event_ids=5)


def _agent_view_of(stream: EventStream) -> View:
    return View.from_events(agent_history(stream.get_events()))


def test_an_event_the_view_cannot_take_is_raised_by_add_event_not_swallowed() -> None:
    history = _start()
    _turn(history, 1)
    bad = _malformed_condensation()
    message = "id 4: the view cannot take this condensation action (TypeError: 'int' object is not iterable)"
    with pytest.raises(MalformedEventError, match=re.escape(message)) as raised:
        history.add_event(bad, EventSource.AGENT)
    assert raised.value.event_id == 4 and isinstance(raised.value.__cause__, TypeError)
    assert bad.id == 4 and len(history.stream) == 5  # stored all the same: the log is the truth
    # From then on every read of the view raises it again, and nothing more is appended.
    reads = [
        lambda: history.view,
        history.step,
        lambda: history.initial_user_action,
        lambda: history.add_event(MessageAction(content="more"), EventSource.USER),
    ]
    for read in reads:
        with pytest.raises(MalformedEventError, match=re.escape(message)):
            read()
    assert len(history.stream) == 5
    assert "view broken" in repr(history)
    history.close()  # reported already: closing does not raise it again


def test_an_event_someone_else_appends_that_the_view_cannot_take_is_raised_at_the_next_step() -> None:
    history = _start()
    history.stream.add_event(_malformed_condensation(), EventSource.AGENT)  # the stream itself accepts it
    with pytest.raises(MalformedEventError, match=re.escape("id 2: the view cannot take this condensation action")):
        history.step()


def test_a_log_holding_an_event_the_view_cannot_take_is_refused_naming_it() -> None:
    events = [MessageAction(content="task"), CmdRunAction(command="ls"), _malformed_condensation()]
    for number, event in enumerate(events):
        event.id = number
    with pytest.raises(MalformedEventError, match=re.escape("id 2: the view cannot take this condensation action")):
        History(EventStream.from_events(events), condenser=NoOpCondenser())


def test_events_others_append_reach_the_view_even_after_close() -> None:
    history = _start()
    history.stream.add_event(CmdRunAction(command="ls"), EventSource.AGENT)
    history.close()
    assert [e.id for e in history.view] == [0, 1, 2]


def test_events_added_through_the_history_are_shown_as_stored_when_secrets_are_hidden() -> None:
    history = History(EventStream(secrets={"TOKEN": "s3cret-value"}), condenser=NoOpCondenser())
    message = MessageAction(content="use s3cret-value")
    history.add_event(message, EventSource.USER)
    assert history.view[-1] is history.stream.get_event(0)  # as a subscriber gets it: the stored copy
    assert history.view[-1].content == "use <secret_hidden>"  # type: ignore[attr-defined]
    plain = MessageAction(content="nothing to hide")
    history.add_event(plain, EventSource.USER)
    assert history.view[-1] is plain  # stored as given: no copy made


@st.composite
def _appends(draw: st.DrawFn) -> list[tuple[Event, str]]:
    """Events to append, each with who appends it: the history, someone else on the stream, or the
    history with a subscriber that answers by appending one more event while it is delivered."""
    events = draw(event_streams(max_size=25, id_gaps=False))
    ways = draw(st.lists(st.sampled_from(["history", "stream", "echoed"]), min_size=len(events), max_size=len(events)))
    for event in events:
        event.id = None
    return list(zip(events, ways, strict=True))


@given(_appends())
def test_the_view_always_equals_the_view_of_the_stream_s_agent_history(appends: list[tuple[Event, str]]) -> None:
    history = History(condenser=NoOpCondenser())
    echo_for: set[int] = set()

    def echo(event: Event) -> None:
        if id(event) in echo_for:
            echo_for.discard(id(event))
            history.add_event(MessageAction(content=f"echo of {event.id}"), EventSource.USER)

    history.stream.subscribe(echo, "echo")
    for event, way in appends:
        source = event.source or EventSource.AGENT
        if way == "stream":
            history.stream.add_event(event, source)
        else:
            if way == "echoed":
                echo_for.add(id(event))
            history.add_event(event, source)
        assert history.view == _agent_view_of(history.stream)
    assert len(history.stream) == len(appends) + sum(way == "echoed" for _, way in appends)
