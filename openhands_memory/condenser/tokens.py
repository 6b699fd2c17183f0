"""Counting the prompt tokens a view would cost: the `TokenCounter` protocol and two counters.

`TokenCounter` is the library's one token abstraction: condensers' budgets and records, replay
and the benchmark all count through it (the benchmark's `PromptMeter` is one too).

- `ApproximateTokenCounter` (the default): about `CHARS_PER_TOKEN` characters a token over the
  text each event puts in the prompt. Offline, no litellm, no rendering.
- `LLMTokenCounter`: renders the view with the renderer it is given (whoever builds it passes
  `ConversationMemory.process_events`, or the memory itself: this layer does not import it) and
  counts the messages with `LLM.count_tokens` (the model's own tokenizer, through litellm,
  imported when the model first counts).

Both cache per event: events in a log never change, so a step measures only what is new since the
last step. `ApproximateTokenCounter` keys its cache by identity; an entry holds its event, so an id
is never reused while cached, and entries for events that left the view are dropped when the cache
grows to twice the size of the last view. `LLMTokenCounter` relies on the renderer reusing the
`Message` of each event (`ConversationMemory` does) and on `LLM.count_tokens` remembering each
message's count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from openhands_memory.condenser._text import NOT_PROMPT_TEXT
from openhands_memory.llm.estimate import CHARS_PER_TOKEN, estimate_tokens
from openhands_memory.events import (
    Action,
    Event,
    MessageAction,
    Observation,
    RecallObservation,
    SystemMessageAction,
)

if TYPE_CHECKING:
    from openhands_memory.llm.message import Message

__all__ = [
    "CHARS_PER_TOKEN",
    "ApproximateTokenCounter",
    "ChatRenderer",
    "EventsRenderer",
    "LLMTokenCounter",
    "TokenCounter",
    "default_token_counter",
    "event_chars",
    "event_texts",
    "tools_of",
]

EventsRenderer = Callable[[Sequence[Event]], "list[Message]"]
"""Renders events as the chat messages the model is sent (a closure over `ConversationMemory.process_events`, say)."""


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the prompt tokens the messages of a view (or any sequence of events) would take.

    Any callable `(events) -> int` will do (a `View` is a sequence of events). Counters are asked
    about the same events again and again, step after step: cache what you can.
    """

    def __call__(self, events: Sequence[Event], /) -> int: ...


class ChatRenderer(Protocol):
    """What renders a view for `LLMTokenCounter(memory=...)`: `ConversationMemory`, or anything with its `process_events`."""

    def process_events(self, condensed_history: Sequence[Event], initial_user_action: Any = None, /) -> list[Message]: ...


def tools_of(events: Sequence[Event]) -> list[dict[str, Any]] | None:
    """The tool definitions of the first system message in `events` (None: no system message, or no tools).

    They go with the request (`tools=`), so they count as prompt tokens.
    """
    for event in events:
        if isinstance(event, SystemMessageAction):
            return event.tools
    return None


def _payload_texts(event: Event) -> list[str]:
    values = event.__dict__
    return [
        value
        for name in event.payload_fields
        if name not in NOT_PROMPT_TEXT and isinstance(value := values[name], str)
    ]


def event_texts(event: Event) -> list[str]:
    """The text `event` puts in the prompt, in pieces (images not counted): what a per-event count measures."""
    if isinstance(event, SystemMessageAction):
        return [event.content, *(str(tool) for tool in event.tools or [])]
    if isinstance(event, MessageAction):
        return [event.content]
    if isinstance(event, RecallObservation):
        return [*_payload_texts(event), *(str(item.get("content", "")) for item in event.microagent_knowledge)]
    if isinstance(event, Observation):
        return [event.content]
    if isinstance(event, Action):
        metadata = event.tool_call_metadata
        return [*_payload_texts(event), *([metadata.function_name] if metadata is not None else [])]
    return [event.message]


def event_chars(event: Event) -> int:
    """About how many characters of prompt text `event` produces (images not counted)."""
    return sum(len(text) for text in event_texts(event))


class ApproximateTokenCounter:
    """Estimates tokens as characters of prompt text / `chars_per_token`, plus a small overhead per event.

    Offline and cheap; within some tens of percent of a real tokenizer on English and code, which
    is what a condensation threshold needs. Each event is measured once.
    """

    __slots__ = ("chars_per_token", "overhead_per_event", "_cache", "_last_size")

    def __init__(self, *, chars_per_token: float = CHARS_PER_TOKEN, overhead_per_event: int = 4) -> None:
        if chars_per_token <= 0:
            raise ValueError(f"chars_per_token must be > 0, got {chars_per_token}")
        self.chars_per_token = chars_per_token
        """Characters per token (about 4 for English text and code with OpenAI-style tokenizers)."""
        self.overhead_per_event = overhead_per_event
        """Tokens added per event for the message framing (role, separators)."""
        self._cache: dict[int, tuple[Event, int]] = {}
        self._last_size = 0

    def event_tokens(self, event: Event) -> int:
        """The estimated tokens of one event (cached by identity)."""
        entry = self._cache.get(id(event))
        if entry is not None and entry[0] is event:
            return entry[1]
        tokens = estimate_tokens(event_chars(event), self.chars_per_token) + self.overhead_per_event
        self._cache[id(event)] = (event, tokens)
        return tokens

    def __call__(self, events: Sequence[Event], /) -> int:
        cache = self._cache
        if len(cache) > 2 * self._last_size + 1024:
            # Drop what left the view; keep what this call is about to ask for.
            self._cache = cache = {id(e): cache[id(e)] for e in events if id(e) in cache and cache[id(e)][0] is e}
        self._last_size = len(events)
        total = 0
        get = cache.get
        for event in events:
            entry = get(id(event))
            total += entry[1] if entry is not None and entry[0] is event else self.event_tokens(event)
        return total


class LLMTokenCounter:
    """Counts tokens as the model will: the view rendered as chat messages, counted by `LLM.count_tokens`.

    The renderer is given by whoever builds the counter (`ConversationMemory` lives downstream of
    the condensers, so this layer never imports it). The tools of the view's system message are
    counted too. Both steps cache per event and per message (`ConversationMemory` reuses the
    `Message` of an event it rendered before, and `LLM.count_tokens` remembers each message's
    count), so a step costs its new events. litellm is imported only when the model first counts.
    """

    def __init__(
        self,
        llm: Any,
        *,
        memory: ChatRenderer | None = None,
        render: EventsRenderer | None = None,
    ) -> None:
        """Count with `llm.count_tokens(messages, tools=...)` (or `count_tokens_detailed`, when it has one).

        Give one of `render` and `memory`; counting with neither raises `ValueError`.

        Args:
            llm: an `openhands_memory.llm.LLM` (anything with that `count_tokens`).
            memory: renders views with its `process_events(events, first user message)`: a
                `ConversationMemory` of the counter's own, so the agent's rendering cache is not
                disturbed by counting hypothetical views.
            render: renders events to messages (takes precedence over `memory`).
        """
        self.llm = llm
        self._memory = memory
        self._render = render
        self.is_estimate = False
        """Some count so far was partly estimated (the model's `count_tokens_detailed` said so)."""

    def render(self, events: Sequence[Event]) -> list[Message]:
        """The messages the view would be sent as.

        Raises:
            ValueError: the counter was given neither `render` nor `memory`.
        """
        if self._render is not None:
            return self._render(events)
        memory = self._memory
        if memory is None:
            raise ValueError(
                "LLMTokenCounter has nothing to render views with: pass render= or memory= "
                "(a ConversationMemory of its own)"
            )
        initial = next(
            (e for e in events if isinstance(e, MessageAction) and e.source == "user"),
            None,
        )
        return memory.process_events(events, initial)

    def __call__(self, events: Sequence[Event], /) -> int:
        messages = self.render(events)
        tools = tools_of(events)
        detailed = getattr(self.llm, "count_tokens_detailed", None)
        if detailed is None:
            return int(self.llm.count_tokens(messages, tools=tools))
        count = detailed(messages, tools=tools)
        if count.is_estimate:
            self.is_estimate = True
        return int(count.tokens)


def default_token_counter(
    llm: Any | None = None, *, memory: ChatRenderer | None = None, render: EventsRenderer | None = None
) -> TokenCounter:
    """`LLMTokenCounter(llm, memory=..., render=...)` when a model is given, else an `ApproximateTokenCounter`."""
    if llm is not None:
        return LLMTokenCounter(llm, memory=memory, render=render)
    return ApproximateTokenCounter()
