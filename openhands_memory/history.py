"""`History`: what a controller plugs in, one call per step from the event stream to the model's messages.

A `History` holds the conversation's `EventStream` (everything, in order, ids assigned by the
stream), a `ViewBuilder` fed with the agent's history (`is_agent_history`, as OpenHands'
controller does: condensation summary offsets count only those events), a condenser, and a
`ConversationMemory`. The history feeds its builder itself, from the events it adds and from the
stream by id (see `History`), so the view never silently falls behind the log. Each step:

    result = history.step()
    if isinstance(result, Condensation):          # append it, then ask again
        history.add_event(result.action, EventSource.AGENT)
    else:
        reply = llm.completion(result, tools=tools)   # result: the messages

`next_messages()` runs that loop itself, and `completion(llm, tools=...)` also calls the model and
recovers from a context-window-exceeded error by appending a `CondensationRequestAction` and
condensing, as OpenHands' controller does.

What a condensation forgets stays in the log, and the model can get it back: `memory_tools()` are
the schemas of `search_history` and `context_reload`, and `run_memory_tool(call)` runs one call
against the whole log, with a full-text index (`openhands_memory.recall.SearchIndex`) the history
keeps beside a JSONL log (in memory otherwise), current on every append.

Progress is measured on the prompt: its tokens by the token counter (the condenser's unless one is
given), or its events when there is no counter. Condensing that makes no progress raises
`CondensationStalledError`, naming the largest events still in view, instead of looping: a
condenser that asks again after a condensation that left the prompt no smaller, more than
`max_condensations_per_step` condensations in one step, and, in `completion`, a condensation on
request that leaves the overflowing prompt no smaller or a prompt that still overflows after
`max_overflow_retries` condensations.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeGuard

from openhands_memory.condenser import Condensation, Condenser, LLMTokenCounter, TokenCounter, walk_condensers
from openhands_memory.condenser.impl.agent_reset_condenser import AgentResetCondenser
from openhands_memory.condenser.guard import MAX_CONDENSATIONS_PER_STEP, CondensationGuard
from openhands_memory.conversation_memory import ConversationMemory, HistoryPolicy, HistoryTrim, apply_prompt_caching
from openhands_memory.conversation_memory.history_policy import NO_TRIM, MessageTokenCounter
from openhands_memory.errors import (
    ConcurrentAppendError,
    LLMContextWindowExceededError,
    LLMResponseError,
    MalformedEventError,
    StoreClosedError,
)
from openhands_memory.events import (
    Action,
    CondensationAction,
    CondensationRequestAction,
    ContextReloadAction,
    ErrorObservation,
    Event,
    EventSource,
    MessageAction,
    Observation,
    SearchHistoryAction,
    agent_history,
    is_agent_history,
)
from openhands_memory.pipeline import DEFAULT_CONDENSER_CONFIG, Pipeline, default_condenser
from openhands_memory.prompt_tokens import Tokenizer
from openhands_memory.recall.runtime import MemoryToolRuntime
from openhands_memory.recall.index import MAX_QUERY_CHARS
from openhands_memory.recall.memory_tools import (
    MEMORY_TOOL_NAMES,
    echo,
    memory_tool_schemas,
    parse_memory_call,
    read_tool_call,
    tool_call_metadata,
)
from openhands_memory.recall.steering_tools import STEERING_TOOL_NAMES, focus_problem, steering_tool_schemas
from openhands_memory.stream import EventStream
from openhands_memory.view import View, ViewBuilder

if TYPE_CHECKING:
    from openhands_memory.llm import LLM, LLMResponse, Message, ToolCall

logger = logging.getLogger(__name__)


__all__ = [
    "DEFAULT_CONDENSER_CONFIG",
    "MAX_CONDENSATIONS_PER_STEP",
    "CondensationGuard",
    "History",
    "default_condenser",
]

APPEND_ATTEMPTS = 8
"""Times `History.add_event` tries to store an event that other writers of its conversation keep storing before."""

TURN_AFTER = 2
"""Lost races in a row after which `History.add_event` waits for the conversation's turn (a lock: two more round
trips, so not for the first lost race, which is rare)."""

APPEND_BACKOFF = 0.005
"""Seconds: the pause after the first lost race is at most twice this; it doubles with every one after."""

APPEND_BACKOFF_CAP = 0.5
"""Seconds: the longest pause between two tries."""


class History:
    """A conversation's stream, the view of the agent's history, a condenser and the messages: one object per controller.

    The stream keeps every event; the view is built only from the agent's history
    (`is_agent_history`), incrementally, by the history itself (no stream subscriber, whose errors
    the stream would only log): `add_event` feeds the event it appends (the instance given, or,
    when the stream hides secrets, the stored copy, as subscribers get it: so a live session and
    one resumed from its log send models the same redacted prompts), and every read of the view
    (`view`, `step`, `initial_user_action`, ...) first catches up on the events others appended
    with `stream.add_event`, read back from the stream by id (as stored: with secrets set, hidden
    in them). So the view always equals `View.from_events(agent_history(stream events))`, and an
    event the view cannot take raises `MalformedEventError` (naming its id) from the call that met
    it and from every later call that needs the view: the history is then unusable, never
    silently stale. Not thread-safe: one controller drives one `History`.
    """

    def __init__(
        self,
        stream: EventStream | None = None,
        *,
        condenser: Condenser | None = None,
        memory: ConversationMemory | None = None,
        system_prompt: str = "",
        max_condensations_per_step: int = MAX_CONDENSATIONS_PER_STEP,
        max_overflow_retries: int = 3,
        max_invalid_replies: int = 3,
        token_counter: TokenCounter | None = None,
        max_message_chars: int | None = None,
        vision_is_active: bool = False,
        secrets: Mapping[str, str] | None = None,
        history_policy: HistoryPolicy | None = None,
        tokenizer: Tokenizer | str | None = None,
        model: str | None = None,
    ) -> None:
        """Follow `stream` (a new in-memory one by default), picking up the events it already holds.

        Args:
            stream: the conversation's events; the history follows it.
            condenser: what the model sees of a long history; by default `default_condenser(model)`,
                the cache-aware default priced for the agent's model: `model`, else the model of the
                first LLM `completion` is given (until then, and for a model without known prices,
                priced as claude-sonnet-4-5: see `DEFAULT_CONDENSER_CONFIG`).
            memory: renders views as messages; by default `ConversationMemory(system_prompt)`.
            system_prompt: the system message used when the history has none (ignored with `memory`).
            max_condensations_per_step: condensations one step may append before it is stuck.
            max_overflow_retries: how many times `completion` condenses and asks the model again
                after its context window was exceeded, before it gives up.
            max_invalid_replies: how many replies with tool calls that cannot be run `completion`
                answers with an `ErrorObservation` and asks again about, before it gives up.
            token_counter: measures the prompt to check that condensing makes progress; by default
                the condenser's (`Condenser.token_counter`), or events are counted when it has none.
            max_message_chars: cut longer observation text in the middle (None: never).
            vision_is_active: the model sees images (see `ConversationMemory.process_events`).
            secrets: name: value; the values are hidden in every event stored from now on, and so
                in all the model is sent (`EventStream.set_secrets`). None keeps the stream's.
            history_policy: a final trim of the messages of every step (QitOS' history policy; see
                `HistoryPolicy`); what it dropped is `last_trim`. None: the condenser's own
                `history_policy_preset`, if it names one (`inkeep` does), else no trim. Its `max_tokens` counts with the
                model's tokenizer when `token_counter` is an `LLMTokenCounter`, else at four
                characters a token (with `tokenizer`: with that).
            tokenizer: the agent model's tokenizer (a model name, `approximate`, or a `Tokenizer`):
                the condenser's token budgets, the loop guard (unless `token_counter`) and the
                history policy count the prompt with it, as `openhands-memory replay --model`
                counts (`Pipeline.measured_by`; the condenser is told so). None: the condenser
                keeps its own counter (`ApproximateTokenCounter` by default).
            model: the agent's model (never called here): the default condenser is priced and sized
                for it (ignored with `condenser`).

        Raises:
            InvalidSecretError: a secret value is too short (under 6 characters) or not a string.
        """
        if stream is None:
            stream = EventStream(secrets=secrets)
        elif secrets is not None:
            stream.set_secrets(secrets)
        self.stream: EventStream = stream
        """Every event of the conversation."""
        self._priced_by_llm = condenser is None and model is None
        """The default condenser takes its prices from the first LLM `completion` is given."""
        condenser = condenser if condenser is not None else default_condenser(model)
        if max_overflow_retries < 0:
            raise ValueError(f"max_overflow_retries must be at least 0, got {max_overflow_retries}")
        self.max_overflow_retries = max_overflow_retries
        """How many times `completion` condenses and asks again after a context-window overflow."""
        if max_invalid_replies < 0:
            raise ValueError(f"max_invalid_replies must be at least 0, got {max_invalid_replies}")
        self.max_invalid_replies = max_invalid_replies
        """How many replies with tool calls that cannot be run `completion` answers and asks again about."""
        policy_tokens: MessageTokenCounter | None = None
        if isinstance(token_counter, LLMTokenCounter):
            llm = token_counter.llm
            policy_tokens = lambda message: int(llm.count_tokens([message]))  # noqa: E731
        pipeline = Pipeline(
            condenser,
            None,
            history_policy,
            memory=memory if memory is not None else ConversationMemory(system_prompt),
            max_message_chars=max_message_chars,
            vision_is_active=vision_is_active,
            message_tokens=policy_tokens,
        )
        self.pipeline: Pipeline = pipeline.measured_by(tokenizer) if tokenizer is not None else pipeline
        """THE step: condenses the view and shows it as messages (the same object replay and bench run)."""
        if token_counter is None:  # after `measured_by`, which gives the condenser its counter
            token_counter = getattr(condenser, "token_counter", None)
        self._guard = CondensationGuard(condenser.name, limit=max_condensations_per_step, token_counter=token_counter)
        self.last_trim: HistoryTrim = NO_TRIM
        """What `history_policy` dropped from the messages of the last step (`dropped` 0: nothing)."""
        self._initial_user_action: MessageAction | None = None
        self._last_view: View | None = None
        # Where the view broke (the event and what it raised), if it did: raised again at every read.
        self._failure: tuple[Event, Exception] | None = None
        stored = self.stream.snapshot()
        latest = stored[-1].id if stored else -1  # (not get_latest_event_id: an event may be added meanwhile)
        history = agent_history(stored)
        try:
            self._builder = ViewBuilder(history)
        except Exception:
            # Replay it one event at a time: the same failure, now with the event that caused it.
            self._builder = ViewBuilder()
            self._take(history)
        else:
            self._initial_user_action = next((e for e in history if _is_user_message(e)), None)
        self._seen = latest
        """The id of the last stream event the view has taken or passed over (-1: none)."""
        self._recall = MemoryToolRuntime(self.stream)
        """Runs the memory tools and keeps the search index, opened when the memory tools are first
        offered or run: a history whose model never searches (a replay, a controller without memory
        tools) never pays for indexing a long log."""

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, fsync: bool = False, secrets: Mapping[str, str] | None = None, **options: Any
    ) -> History:
        """A history over the JSONL stream at `path`, or the conversation a `postgresql://...?conversation=ID` URL names.

        The log is created if missing, resumed if not.

        `secrets` are hidden in every event stored (see `History`); `options` are `History`'s
        other keyword arguments. `close()` closes the file.

        Raises:
            InvalidSecretError: a secret value is too short (the file is not opened).
            StoreLockedError: another stream has the file open.
            CorruptRecordError: a line is not an event.
            StoreDatabaseError: the database cannot be reached, or the URL names no conversation.
        """
        return cls(EventStream.open(path, fsync=fsync, secrets=secrets), **options)

    # -- the stream -------------------------------------------------------------------------------

    def add_event(self, event: Event, source: EventSource | str, *, key: str | None = None) -> int:
        """Append `event` to the stream (see `EventStream.add_event`, and its `key`) and to the view; returns its id.

        Events others appended to the stream before it reach the view first, in id order. When
        another writer of the conversation (a PostgreSQL one) stored an event first, the history
        catches up with it and tries again, up to `APPEND_ATTEMPTS` times: at once, and after
        `TURN_AFTER` lost races in a row in the conversation's turn (`PostgresEventStore.turn`: the
        writer that keeps winning waits for it, so no writer loses for long). With a store that has
        no turns, after a random, growing pause.
        A tool call and its result go in with `add_tool_call` and `add_tool_result`, which pair
        them; an observation with no `cause` right after a tool call is logged at WARNING (the
        model would read it as a message of the user's, and the call as answered by nothing).

        Raises:
            MalformedEventError: the view cannot take `event` (it is stored all the same), or
                could not take an earlier event (then nothing is appended).
            ConcurrentAppendError: other writers stored first `APPEND_ATTEMPTS` times in a row;
                nothing was stored and the history is current: calling `add_event` again is safe.
        """
        self._warn_if_unpaired(event)
        self._catch_up()
        event_id = self._append(event, source, key)
        if event.id is None:  # stored before under `key`: the stream caught up to it
            self._catch_up()
            return event_id
        if event_id > self._seen:  # else a subscriber's read of the view already took it from the stream
            if self.stream.hides_secrets:  # the view takes the stored copy, secrets hidden
                self._take(self.stream.get_events(self._seen + 1, event_id))
            else:
                if event_id - 1 > self._seen:
                    self._take(self.stream.get_events(self._seen + 1, event_id - 1))
                self._take((event,))
        self._recall.catch_up()
        return event_id

    def _append(self, event: Event, source: EventSource | str, key: str | None) -> int:
        """`stream.add_event`, caught up and tried again after another writer stored first (see `add_event`)."""
        turn = getattr(self.stream.store, "turn", None)  # PostgreSQL: lost races are settled by taking turns
        for attempt in range(1, APPEND_ATTEMPTS + 1):
            try:
                if attempt <= TURN_AFTER or turn is None:
                    return self.stream.add_event(event, source, key=key)
                with turn():  # the writer that keeps winning waits for this append: the loser goes next
                    self.stream.catch_up()
                    return self.stream.add_event(event, source, key=key)
            except ConcurrentAppendError as exc:
                if attempt == APPEND_ATTEMPTS:
                    raise ConcurrentAppendError(exc.event_id, exc.index, exc.conversation, attempts=attempt) from exc
                if turn is None:
                    # Full jitter: writers that met pick different pauses, so one of them goes first next time.
                    time.sleep(random.uniform(0, min(APPEND_BACKOFF_CAP, APPEND_BACKOFF * 2**attempt)))
                    self.stream.catch_up()
                elif attempt < TURN_AFTER:
                    self.stream.catch_up()  # races are rare: once more at once, then in turns
        raise AssertionError("unreachable")  # pragma: no cover

    def add_tool_call(self, action: Action, tool_call: ToolCall | Mapping[str, Any], *, response: Any = None) -> Action:
        """Append `action` (source agent) as the model's `tool_call`; returns it, its id set.

        Its `tool_call_metadata` is set from the call (id, function name) and `response` (the
        `LLMResponse` or litellm's response dict it came from: how many calls it made), so the
        action renders as that tool call. Append its result with `add_tool_result`.

        Raises:
            ValueError: `tool_call` is not a tool call (it says why).
            MalformedEventError: as `add_event`.
        """
        call = read_tool_call(tool_call)
        if isinstance(call, str):
            raise ValueError(call)
        action.tool_call_metadata = tool_call_metadata(call, response)
        self.add_event(action, EventSource.AGENT)
        return action

    def add_tool_result(self, observation: Observation, action: Action) -> Observation:
        """Append `observation` (source environment) as the result of `action`, a tool call appended before; returns it.

        Its `cause` is the action's id and its `tool_call_metadata` the action's, so the model
        reads it as that call's result.

        Raises:
            ValueError: `action` is not in the log yet (no id).
            MalformedEventError: as `add_event`.
        """
        if action.id is None:
            raise ValueError(f"the {action.kind} action is not in the log: append it first (add_tool_call)")
        observation.cause = action.id
        observation.tool_call_metadata = action.tool_call_metadata
        self.add_event(observation, EventSource.ENVIRONMENT)
        return observation

    def _warn_if_unpaired(self, event: Event) -> None:
        """Log a result that answers no call, appended right after a tool call (`add_tool_result` pairs them)."""
        if not isinstance(event, Observation) or event.cause is not None or not is_agent_history(event):
            return
        latest = self.stream.get_latest_event_id()
        previous = self.stream.get_event(latest) if latest >= 0 else None
        if isinstance(previous, Action) and previous.tool_call_metadata is not None:
            logger.warning(
                "a %s observation with no cause follows the tool call %s (event %d): the model reads it as a "
                "message, and the call as unanswered; append it with History.add_tool_result(observation, action)",
                event.kind, previous.tool_call_metadata.tool_call_id, latest,
            )  # fmt: skip

    def request_condensation(self, *, focus: str | None = None) -> CondensationRequestAction:
        """Append a `CondensationRequestAction` (source agent): the next step condenses.

        `focus`: what the summary must keep (like Claude Code's `/compact <focus>`): recorded on the request,
        carried by the view (`View.condensation_focus`), put first in every summarizer's prompt, and recorded in
        the condensation's metadata. At most `MAX_FOCUS_CHARS` characters.

        Raises:
            ValueError: `focus` is longer than `MAX_FOCUS_CHARS`.
        """
        if focus is not None and (problem := focus_problem(focus)) is not None:
            raise ValueError(problem)
        request = CondensationRequestAction(focus=focus or None)
        self.add_event(request, EventSource.AGENT)
        return request

    def _catch_up(self) -> None:
        """Feed the view the events others appended to the stream since it last looked.

        Raises:
            MalformedEventError: the view cannot take one of them, or broke earlier.
        """
        if self._failure is not None:
            raise _view_failure(*self._failure) from self._failure[1]
        latest = self.stream.get_latest_event_id()
        if latest > self._seen:
            self._take(self.stream.get_events(self._seen + 1, latest))
        if latest > self._recall.indexed:
            self._recall.catch_up()

    def _take(self, events: Iterable[Event]) -> None:
        """Feed the view `events`, the stream's next ones in id order (those outside the agent's history are passed over)."""
        builder = self._builder
        for event in events:
            if is_agent_history(event):
                try:
                    builder.append(event)
                except Exception as exc:
                    # The builder may be half-updated: it is never used again.
                    self._failure = (event, exc)
                    raise _view_failure(event, exc) from exc
                self._track(event)
                if not isinstance(event, CondensationAction):
                    self._guard.reset()
            assert event.id is not None  # the stream gave it one
            self._seen = event.id

    def _track(self, event: Event) -> None:
        if self._initial_user_action is None and _is_user_message(event):
            self._initial_user_action = event

    # -- views and messages -----------------------------------------------------------------------

    @property
    def condenser(self) -> Condenser:
        """Decides what the model sees of the history (the pipeline's)."""
        return self.pipeline.condenser

    @property
    def memory(self) -> ConversationMemory:
        """Renders the view the model is shown as chat messages (the pipeline's)."""
        return self.pipeline.memory

    @property
    def history_policy(self) -> HistoryPolicy | None:
        """Trims the messages of every step (None: they are sent as rendered)."""
        return self.pipeline.history_policy

    @property
    def max_message_chars(self) -> int | None:
        """Observation text longer than this is cut in the middle (None: never)."""
        return self.pipeline.max_message_chars

    @property
    def vision_is_active(self) -> bool:
        """The model sees images."""
        return self.pipeline.vision_is_active

    @property
    def view(self) -> View:
        """The view of the agent's history, the log's condensations applied (before the condenser looks at it).

        Raises:
            MalformedEventError: an event in the stream cannot be applied to the view.
        """
        self._catch_up()
        return self._builder.view

    @property
    def last_view(self) -> View | None:
        """The view the model was last shown (what the condenser returned at the last step), if any."""
        return self._last_view

    @property
    def initial_user_action(self) -> MessageAction | None:
        """The user's first message, which the messages always include unless it was forgotten on purpose."""
        self._catch_up()
        return self._initial_user_action

    def step(self) -> list[Message] | Condensation:
        """Ask the condenser once: the messages to send to the model, or a condensation to append first.

        The messages are trimmed by `history_policy`, if any (`last_trim` says what it dropped).

        Append a returned condensation's `action` (source agent) and call `step` again.

        Raises:
            CondensationStalledError: the condenser asked to condense again after a condensation
                that left the prompt no smaller, or past `max_condensations_per_step` in one step.
            MalformedEventError: an event in the stream cannot be applied to the view.
        """
        outcome = self.pipeline.condense(self.view, self._guard)
        if isinstance(outcome, Condensation):
            return outcome
        self._guard.reset()
        self._last_view = outcome
        shown = self.pipeline.show(outcome, self._initial_user_action)
        if self.history_policy is not None:
            self.last_trim = shown.trim
        return shown.messages

    def next_messages(self) -> list[Message]:
        """`step` until it returns messages, appending each condensation to the stream (source agent).

        Raises:
            CondensationStalledError: condensing made no progress (see `step`).
        """
        while True:
            result = self.step()
            if not isinstance(result, Condensation):
                return result
            self.add_event(result.action, EventSource.AGENT)

    def completion(
        self, llm: LLM, *, tools: Sequence[Mapping[str, Any]] | None = None, **kwargs: Any
    ) -> LLMResponse:
        """The model's next reply to the current history, condensing first if the condenser says so.

        When the prompt does not fit the model's context window (`LLMContextWindowExceededError`,
        litellm's `ContextWindowExceededError` mapped by `LLM`), a `CondensationRequestAction` is
        appended, the history condensed, and the model asked again: at most `max_overflow_retries`
        times, and only while each condensation makes the prompt smaller. So a model that always
        overflows is called at most `1 + max_overflow_retries` times, and at most two events (the
        request and its condensation) are appended per retry. Prompt-caching marks are added when
        the model uses them.

        The reply is untrusted input, and what it says comes back ready to store (see
        `LLM.completion`: text and arguments an event can hold). A reply with a tool call that
        cannot be run (no id or name, arguments that are not one JSON object an event can store,
        an id used twice, a tool not in `tools` when tools are offered) is not returned, as
        OpenHands' controller does with a bad tool call: an `ErrorObservation` (source agent)
        saying what is wrong with each such call is appended, and the model asked again, which
        reads it. At most `max_invalid_replies` times: a model whose every reply is like that is
        called at most `1 + max_invalid_replies` times, one error appended per call.

        Args:
            llm: the model.
            tools: the tool definitions to offer.
            **kwargs: passed to `LLM.completion`.

        Raises:
            CondensationStalledError: the window was exceeded and condensing did not make the
                prompt smaller, the prompt still overflowed after `max_overflow_retries`
                condensations, the condenser's own model overflowed too, or condensing made no
                progress (see `step`). It names the largest events in view.
            LLMResponseError: the reply still had tool calls that cannot be run after
                `max_invalid_replies` errors appended (or the reply was unusable, see `LLM.completion`).
            LLMError: the model failed otherwise.
        """
        if self._priced_by_llm:  # the default condenser, priced for the agent's model from its first call on
            self._priced_by_llm = False
            self.pipeline.condenser.use_agent_model(llm.config.model)
        offered = _tool_names(tools)
        messages = self.next_messages()
        retries = 0
        invalid_replies = 0
        while True:
            if llm.is_caching_prompt_active():
                apply_prompt_caching(messages)
            try:
                response = llm.completion(messages, tools=tools, **{"keep_invalid_tool_calls": True, **kwargs})
            except LLMContextWindowExceededError as exc:
                shown = self._shown()
                if retries >= self.max_overflow_retries:
                    raise self._guard.stalled(
                        f"the prompt still exceeds the context window of {llm.config.model!r} after "
                        f"{retries} condensation{'s' if retries != 1 else ''} on request",
                        shown,
                    ) from exc
                retries += 1
                messages = self._condense_after_overflow(llm, shown, exc)
                continue
            problems = _tool_call_problems(response, offered)
            if not problems:
                return response
            self.add_event(ErrorObservation(content=_invalid_reply_text(problems)), EventSource.AGENT)
            invalid_replies += 1
            if invalid_replies > self.max_invalid_replies:
                raise LLMResponseError(
                    f"{len(problems)} tool call{'s' if len(problems) != 1 else ''} that cannot be run, after "
                    f"{self.max_invalid_replies} error{'s' if self.max_invalid_replies != 1 else ''} told the "
                    f"model so; the first: {problems[0]}",
                    model=llm.config.model,
                    attempts=invalid_replies,
                )
            messages = self.next_messages()

    def _shown(self) -> list[Event]:
        """The events of the view the model was last shown (the current view if none yet)."""
        view = self._last_view if self._last_view is not None else self.view
        return view.events

    def _condense_after_overflow(self, llm: LLM, shown: list[Event], overflow: LLMContextWindowExceededError) -> list[Message]:
        """Request a condensation and condense; the new messages, if the prompt they make is smaller than `shown`'s.

        Raises:
            CondensationStalledError: the prompt is no smaller, or the condenser's model overflowed too.
        """
        guard = self._guard
        model = llm.config.model
        before = guard.size(shown)
        self.request_condensation()
        try:
            messages = self.next_messages()
        except LLMContextWindowExceededError as exc:
            # The condenser's own model overflowed: the caller would take it for the agent's model
            # and ask again, so it is a stall here (the condenser's error is the cause).
            raise guard.stalled(
                f"the prompt exceeds the context window of {model!r} and the condenser's model failed: {exc}",
                shown,
                size=before,
            ) from exc
        after_events = self._shown()
        after = guard.size(after_events)
        if after >= before:
            if after_events == shown:
                reason = "condensing forgot nothing"
            else:
                reason = f"condensing did not make the prompt smaller ({before} -> {after} {guard.unit})"
            raise guard.stalled(
                f"the prompt exceeds the context window of {model!r} and {reason}", after_events, size=after
            ) from overflow
        return messages

    # -- memory tools -----------------------------------------------------------------------------

    def memory_tools(self) -> list[dict[str, Any]]:
        """The litellm tool schemas of the memory tools, `context_reload` and `search_history`, to offer the model.

        Route the calls of these tools (`is_memory_tool`) to `run_memory_tool`. Offering them opens
        the search index (beside a JSONL log: built once, then kept current at every append).
        """
        self._recall.use_index()
        offers_reset = any(isinstance(member, AgentResetCondenser) for member in walk_condensers(self.condenser))
        return memory_tool_schemas() + (self.steering_tools() if offers_reset else [])

    @staticmethod
    def steering_tools() -> list[dict[str, Any]]:
        """The litellm schemas of the steering tools, `new_context`, `compact_context` and `context_notes` (`memory_tools()`
        includes them when the pipeline holds an `agent_reset` strategy); route their calls to `run_memory_tool` too
        (see `openhands_memory._history_steering`)."""
        return steering_tool_schemas()

    @staticmethod
    def is_memory_tool(name: str) -> bool:
        """Whether `name` is the name of a memory tool (`context_reload`, `search_history`) or a steering tool."""
        return name in MEMORY_TOOL_NAMES or name in STEERING_TOOL_NAMES

    def run_memory_tool(self, tool_call: ToolCall | Mapping[str, Any], *, response: Any = None) -> Observation:
        """Run one memory tool call of the model: append its action and its result to the stream; return the result.

        `tool_call` is a litellm tool-call dict (`{"id", "type", "function": {"name", "arguments"}}`)
        or a `ToolCall`; `response` is the `LLMResponse` (or litellm's response dict) it came from,
        recorded in the action's `tool_call_metadata` as for any tool. The action (source agent)
        and its observation (source environment, `cause` the action's id, the same metadata) are
        rendered as an ordinary tool call and its result.

        `context_reload` answers with a `ContextReloadObservation`: a first line naming the event,
        its kind, and whether it is still in view, then its original content exactly as logged (see
        `openhands_memory.recall.memory_tools.reload_text` for what that is for an action); a long one in pages
        (`offset`, `limit` characters: the first line says which characters follow, how many remain and the
        next page's offset).
        `search_history` answers with a `SearchHistoryObservation`: the best matches of the whole
        log, forgotten events included (the memory tools' own events left out), one line each:
        id, kind, `in view` / `in view, shortened` / `forgotten`, and a snippet; only the events older than
        `before_event_id` when the call gives one.

        Wrong values (an unknown id, an empty query, a limit out of range, a negative offset or
        one past the event's end, a `before_event_id` the log does not hold) get a result of the
        tool that says what is wrong; a query longer than `MAX_QUERY_CHARS` is cut (the action
        records what was searched, the answer says so). A call that cannot make an action (an
        unknown tool, arguments that are not JSON, nested too deeply, of the wrong type, an integer
        beyond 64 bits, a query that is not text) or whose action cannot be written to the log is
        not recorded, as OpenHands does: an `ErrorObservation` saying what is wrong is appended
        instead (no tool call, so the model reads it as a message), quoting at most a few hundred
        characters of what the model wrote. The model's output never raises; the result returned is
        the event as stored (secrets hidden).

        Raises:
            MalformedEventError: the view broke on an event of the stream (see `view`).
            StoreClosedError: the history was closed.
            OSError: the log could not be written (a full disk).
        """
        call = read_tool_call(tool_call)
        if isinstance(call, str):
            return self._invalid_call(f"Invalid tool call: {echo(call)}.")
        if call.name in STEERING_TOOL_NAMES:  # new_context, compact_context, context_notes: see _history_steering
            from openhands_memory._history_steering import run_steering_call

            return run_steering_call(self, call, response)
        action = parse_memory_call(call)
        if isinstance(action, str):
            return self._invalid_call(f"{echo(call.name, 60)}({echo(call.arguments)}) is not a valid tool call: {action}.")
        asked_chars = 0
        if isinstance(action, SearchHistoryAction):
            asked_chars = len(action.query)
            action.query = action.query[:MAX_QUERY_CHARS]  # what is searched, and all the log keeps of it
        try:
            metadata = tool_call_metadata(call, response)
        except ValueError as exc:  # a response whose facts do not fit the metadata (pydantic's error is one)
            return self._invalid_call(f"{echo(call.name, 60)}: the model's response cannot be recorded: {echo(str(exc))}.")
        action.tool_call_metadata = metadata
        written = self._add_model_event(action, EventSource.AGENT)
        if written is not None:
            return self._invalid_call(f"{echo(call.name, 60)}({echo(call.arguments)}) cannot be recorded: {written}.")
        if isinstance(action, ContextReloadAction):
            observation: Observation = self._recall.reload(action, self._visibility)
        else:
            assert isinstance(action, SearchHistoryAction)
            observation = self._recall.search(action, asked_chars, self._visibility)
        observation.cause = action.id
        observation.tool_call_metadata = metadata
        written = self._add_model_event(observation, EventSource.ENVIRONMENT)
        if written is not None:
            # The call is in the log: it gets a result all the same, or the chat would hold a call without one.
            observation = ErrorObservation(
                content=f"The result of {call.name} cannot be recorded: {written}.", cause=action.id, tool_call_metadata=metadata
            )
            self.add_event(observation, EventSource.ENVIRONMENT)
        return self._stored(observation)

    def _add_model_event(self, event: Event, source: EventSource) -> str | None:
        """Append an event made from the model's output; why the log cannot hold it (nothing appended), or None.

        Raises:
            MalformedEventError: the view broke (on this event, stored all the same, or an earlier one).
        """
        before = len(self.stream)
        try:
            self.add_event(event, source)
        except MalformedEventError as exc:
            if self._failure is not None or len(self.stream) != before:
                raise  # the view broke: that is not the model's doing
            return echo(exc.reason)
        return None

    def _invalid_call(self, text: str) -> ErrorObservation:
        # Built from what the model wrote: whatever got into it, it is text any log can hold. Source agent,
        # as OpenHands' controller records an invalid call's error (and as `completion` does).
        error = ErrorObservation(content=echo(text, 2_000))
        self.add_event(error, EventSource.AGENT)
        return self._stored(error)

    def _stored(self, event: Event) -> Any:
        """The event as the stream stores it (a copy with secrets hidden, when it held one)."""
        assert event.id is not None
        return self.stream.get_event(event.id) if self.stream.hides_secrets else event

    def _visibility(self) -> Callable[[int], str]:
        """A function telling, for an event id, whether the model sees it: `in view`, `in view, shortened` or `forgotten`.

        The model sees the view it was last shown (a condenser may have shortened events in it:
        masked or offloaded copies), and every event of the log's view that came after it.
        """
        current = {event.id: event for event in self.view if event.id is not None}
        shown = self._last_view
        if shown is None:
            return lambda event_id: "in view" if event_id in current else "forgotten"
        shown_events = {event.id: event for event in shown if event.id is not None}
        newest = max(shown_events, default=-1)

        def status(event_id: int) -> str:
            if event_id not in current:
                return "forgotten"  # by the log's condensations, the last shown view's included
            event = shown_events.get(event_id)
            if event is not None:
                return "in view" if event is current[event_id] else "in view, shortened"
            return "in view" if event_id > newest else "forgotten"

        return status

    # -- lifetime ---------------------------------------------------------------------------------

    def close(self) -> None:
        """Bring the view up to date with the stream, then close the stream and the search index (the view stays readable).

        A view that broke earlier was reported then, so closing does not raise it again.

        Raises:
            MalformedEventError: the view cannot take an event of the stream not read yet (the
                stream is closed all the same).
        """
        try:
            if self._failure is None:
                self._catch_up()
        except StoreClosedError:
            pass  # closed by someone else: nothing more can be read (reading the view will say so)
        finally:
            try:
                self.stream.close()
            finally:
                self._recall.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        # No catch-up here: a repr never raises, so it shows the view as last brought up to date.
        shown = "view broken" if self._failure is not None else f"{len(self._builder.view)} in view"
        return f"History({len(self.stream)} events, {shown}, condenser={self.condenser.name!r})"


def _is_user_message(event: Event) -> TypeGuard[MessageAction]:
    return isinstance(event, MessageAction) and event.source == EventSource.USER


_MAX_PROBLEMS_LISTED = 10
"""An error for a reply lists at most this many of its bad tool calls (a reply may hold thousands)."""


def _tool_names(tools: Sequence[Mapping[str, Any]] | None) -> frozenset[str] | None:
    """The names of the tools offered, or None when none are (then any name is taken as is)."""
    if not tools:
        return None
    names = set()
    for tool in tools:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            names.add(function["name"])
    return frozenset(names)


def _tool_call_problems(response: LLMResponse, offered: frozenset[str] | None) -> list[str]:
    """What is wrong with each tool call of `response` that cannot be run: the unreadable ones, then those of unknown tools."""
    problems = [call.problem for call in response.invalid_tool_calls]
    if offered is not None:
        known = ", ".join(sorted(offered)) or "none"
        for call in response.tool_calls:
            name = call.function.name
            if name not in offered:
                shown = _excerpt(name)
                problems.append(f"tool call {_excerpt(call.id)!r} ({shown}): there is no tool {shown!r} (the tools: {known})")
    return problems


def _excerpt(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _invalid_reply_text(problems: list[str]) -> str:
    """The error the model reads about a reply whose tool calls could not all be run (none of them was)."""
    listed = problems[:_MAX_PROBLEMS_LISTED]
    count = f"{len(problems)} tool call{'s' if len(problems) != 1 else ''}"
    lines = [f"Your last reply was not carried out, none of its tool calls ran: {count} cannot be run.", *(f"- {p}" for p in listed)]
    if len(problems) > len(listed):
        lines.append(f"- and {len(problems) - len(listed)} more")
    lines.append("Call only the tools offered, by name, each with its arguments as one JSON object.")
    return "\n".join(lines)


def _view_failure(event: Event, exc: Exception) -> MalformedEventError:
    """The error for an event of the stream the view could not take."""
    return MalformedEventError(
        f"the view cannot take this {event.kind} {event.kind_key} ({type(exc).__name__}: {exc}); "
        "the history cannot go on: fix the log and reopen it",
        event_id=event.id,
    )
