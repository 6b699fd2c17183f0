"""The one counter of a prompt's tokens at a step: what is sent, the tool definitions and every message.

What a user pays for is what is sent: a step's prompt tokens are those of the request's tool
definitions (the `tools=` of the view's system message, their JSON, keys sorted) followed by every
message the pipeline shows (`Pipeline.show`, after the history policy's trim), each tokenized as
`prompt_text` writes it. `PromptMeter` counts it; replay's report, the bench, the history
policy's `max_tokens` and the condensers' own token budgets (`PromptTokenCounter`, all through
`Pipeline.measured_by`) count with it, so they agree on a count given the same tokenizer. (A
condenser outside a measured pipeline counts with `ApproximateTokenCounter`, its default.)

Tokenizers turn text into tokens, so a cached prefix can be measured too:

- `ApproximateTokenizer` (`approximate`, the default offline): the text cut into pieces of
  `CHARS_PER_TOKEN` characters (the library's one estimate, `openhands_memory.llm.estimate`),
  deterministic, no litellm; two prompts share exactly as many leading tokens as their texts share
  leading pieces.
- `LiteLLMTokenizer(model)`: litellm's tokenizer for the model (`LLM.encode`), offline: litellm
  ships its tokenizer files and nothing is downloaded (common OpenAI models are read with tiktoken
  directly, the same token ids, without importing litellm).

`tokenizer_for("approximate")` (or None) or `tokenizer_for("gpt-4o")` picks one by name.

How a prompt is tokenized (`prompt_text`): the tool definitions first, then each message in
order, written as `<|role|>` (with the tool call it answers) on one line, then its text parts, one
line for each image, and one line for each tool call it makes. Every part is tokenized on its own
and the sequences are concatenated, as chat templates put special tokens between messages.

`PromptMeter` tokenizes the prompts step after step: a message is tokenized the first time it is
seen (messages are immutable and reused from step to step), and the cached prefix (how many leading
tokens of a step's prompt are identical to the previous step's) is found by comparing messages one
by one and tokens only from the first message that differs. It is a `TokenCounter` when given a
renderer: called with the events of a view, it renders them and measures the prompt.

`PromptTokenCounter(meter, render)` is the condensers' `TokenCounter`: a view is counted as the
prompt it renders to, with the meter's tokenizer and its cache of message tokens, and without
touching the meter's record of the last prompt (condensers count views that are never sent); a
part of a prompt (events without the system message) is counted event by event.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import orjson

from openhands_memory.condenser.tokens import EventsRenderer, event_texts, tools_of
from openhands_memory.events import SystemMessageAction
from openhands_memory.llm.estimate import CHARS_PER_TOKEN
from openhands_memory.llm.prompt_cache import PromptBlock, common_prefix_length

if TYPE_CHECKING:
    from openhands_memory.events import Event
    from openhands_memory.llm.message import Message


__all__ = [
    "APPROXIMATE",
    "DEFAULT_TOKENIZER",
    "ApproximateTokenizer",
    "LiteLLMTokenizer",
    "PromptMeter",
    "PromptTokenCounter",
    "Token",
    "Tokenizer",
    "common_prefix_length",
    "prompt_text",
    "tokenizer_for",
]

# One vocabulary: the names (and the rule for which tokenizer counts) live in one module that imports nothing.
from openhands_memory._tokenizer_names import APPROXIMATE, DEFAULT_TOKENIZER  # noqa: E402

Token = int | str
"""One token: an id (a model's tokenizer) or a piece of text (`ApproximateTokenizer`)."""


@runtime_checkable
class Tokenizer(Protocol):
    """Turns text into tokens; `name` says which tokenizer it is, for reports."""

    @property
    def name(self) -> str:
        """What the report calls this tokenizer."""
        ...

    def encode(self, text: str, /) -> Sequence[Token]:
        """The tokens of `text`, in order; the same text always gives the same tokens."""
        ...


class ApproximateTokenizer:
    """Cuts text into pieces of `chars_per_token` characters; each piece is a token.

    Offline and deterministic. It is no model's tokenizer: counts are within some tens of percent
    of one on English and code, and a shared prefix is measured to within a token.
    """

    __slots__ = ("chars_per_token",)

    def __init__(self, chars_per_token: int = CHARS_PER_TOKEN) -> None:
        if chars_per_token < 1:
            raise ValueError(f"chars_per_token must be at least 1, got {chars_per_token}")
        self.chars_per_token = chars_per_token
        """Characters per token."""

    @property
    def name(self) -> str:
        return f"approximate ({self.chars_per_token} characters a token, no model tokenizer)"

    def encode(self, text: str, /) -> list[Token]:
        step = self.chars_per_token
        return [text[start : start + step] for start in range(0, len(text), step)]


class LiteLLMTokenizer:
    """litellm's tokenizer for `model`, offline (see `openhands_memory.llm.LLM.encode`).

    The tokenizer loads on the first `encode` (importing litellm takes seconds, where it is needed), not when this is built.
    """

    __slots__ = ("_llm", "model")

    def __init__(self, model: str) -> None:
        self.model = model
        """The model whose tokenizer is used."""
        self._llm: Any = None

    @property
    def name(self) -> str:
        return f"{self.model} (litellm's tokenizer)"

    def encode(self, text: str, /) -> list[Token]:
        llm = self._llm
        if llm is None:
            from openhands_memory.llm import LLM, LLMConfig

            llm = self._llm = LLM(LLMConfig(model=self.model))
        return llm.encode(text)  # type: ignore[no-any-return]


def tokenizer_for(name: str | None) -> Tokenizer:
    """`ApproximateTokenizer()` for `approximate` (or None), else `LiteLLMTokenizer(name)`."""
    if name is None or name == APPROXIMATE:
        return ApproximateTokenizer()
    return LiteLLMTokenizer(name)


def prompt_text(message: Mapping[str, Any]) -> str:
    """The text a litellm message dict is tokenized as (see the module docstring)."""
    head = f"<|{message.get('role', '')}|>"
    tool_call_id = message.get("tool_call_id")
    if tool_call_id:
        head += f" {message.get('name') or ''} {tool_call_id}".rstrip()
    lines = [head]
    content = message.get("content")
    if isinstance(content, str):
        if content:
            lines.append(content)
    elif isinstance(content, list):
        for part in content:
            if not isinstance(part, Mapping):
                continue
            if part.get("type") == "text":
                lines.append(str(part.get("text", "")))
            elif part.get("type") == "image_url":
                image = part.get("image_url")
                url = image.get("url", "") if isinstance(image, Mapping) else str(image)
                lines.append(f"<image {len(url)} chars>")
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        lines.append(f"<tool_call {call.get('id', '')}> {function.get('name', '')} {function.get('arguments', '')}")
    return "\n".join(lines)


_CACHE_MAX = 50_000


class PromptMeter:
    """Measures each step's prompt: its tokens, and how many lead it the same way as the previous step's.

    With `render`, it is also a `TokenCounter`: `meter(events)` is the tokens of the prompt the
    events render to (tools included), and `last_cached` that prompt's cached prefix.
    """

    def __init__(self, tokenizer: Tokenizer, *, render: EventsRenderer | None = None) -> None:
        self.tokenizer = tokenizer
        """Tokenizes every part of a prompt."""
        self.last_cached = 0
        """The cached prefix tokens of the prompt measured last."""
        self.last_blocks: list[PromptBlock] = []
        """The prompt measured last, as blocks for a prompt cache: the tool definitions, then each message."""
        self.last_static_blocks = 0
        """How many of `last_blocks` lead it and never change: the tool definitions and the system message."""
        self._render = render
        self._cache: dict[Message, Sequence[Token]] = {}
        self._content_ids: dict[Message, int] = {}
        self._content_count = 0
        self._previous: list[tuple[object, Sequence[Token]]] = []
        self._tools: tuple[object, Sequence[Token]] | None = None
        self._tools_key: str = ""

    def _tools_segment(self, tools: Sequence[Mapping[str, Any]]) -> tuple[object, Sequence[Token]]:
        cached = self._tools
        if cached is not None and cached[0] is tools:
            return cached
        text = orjson.dumps(list(tools), option=orjson.OPT_SORT_KEYS, default=str).decode()
        segment = (tools, self.tokenizer.encode(text))
        self._tools = segment
        self._tools_key = text
        return segment

    def _tokens(self, message: Message) -> Sequence[Token]:
        cache = self._cache
        tokens = cache.get(message)
        if tokens is None:
            if len(cache) >= _CACHE_MAX:
                for old in list(cache)[: _CACHE_MAX // 2]:
                    del cache[old]
                    self._content_ids.pop(old, None)
            tokens = cache[message] = self.tokenizer.encode(prompt_text(message.to_litellm_dict()))
            # Equal messages share an entry, so this id names the content: a prompt cache's block key.
            self._content_count += 1
            self._content_ids[message] = self._content_count
        return tokens

    def message_tokens(self, message: Message) -> int:
        """The tokens of one message as it is measured in a prompt (tokenized once, then remembered)."""
        return len(self._tokens(message))

    def count(self, messages: Sequence[Message], *, tools: Sequence[Mapping[str, Any]] | None = None) -> int:
        """The tokens of the prompt `tools` (if any) then `messages`, as `measure` counts them, without recording it as the last prompt."""
        total = len(self._tools_segment(tools)[1]) if tools else 0
        return total + sum(len(self._tokens(message)) for message in messages)

    def measure(
        self, messages: Sequence[Message], *, tools: Sequence[Mapping[str, Any]] | None = None
    ) -> tuple[int, int]:
        """Tokenize one step's prompt; returns (prompt tokens, cached prefix tokens).

        The prompt is `tools` (if any), then `messages`, in order. The cached prefix is the length
        of the longest common prefix with the previous call's prompt (0 for the first call).
        """
        current: list[tuple[object, Sequence[Token]]] = []
        blocks: list[PromptBlock] = []
        if tools:
            segment = self._tools_segment(tools)
            current.append(segment)
            blocks.append(PromptBlock(("tools", self._tools_key), len(segment[1]), segment[1]))
        for message in messages:
            tokens = self._tokens(message)
            current.append((message, tokens))
            blocks.append(PromptBlock(self._content_ids[message], len(tokens), tokens))
        self.last_blocks = blocks
        self.last_static_blocks = (1 if tools else 0) + (1 if messages and messages[0].role == "system" else 0)
        previous = self._previous
        cached = 0
        for index, (key, tokens) in enumerate(current):
            if index >= len(previous):
                break
            before_key = previous[index][0]
            if before_key is key or (type(before_key) is type(key) and before_key == key):
                cached += len(tokens)
                continue
            # The first part that differs: compare tokens from here, across later parts too.
            cached += common_prefix_length(
                chain.from_iterable(t for _, t in previous[index:]),
                chain.from_iterable(t for _, t in current[index:]),
            )
            break
        self._previous = current
        self.last_cached = cached
        return sum(len(tokens) for _, tokens in current), cached

    def __call__(self, events: Sequence[Event], /) -> int:
        """The tokens of the prompt `events` render to (the tools of their system message first); see `measure`.

        Raises:
            ValueError: the meter was built without `render`.
        """
        if self._render is None:
            raise ValueError("PromptMeter has nothing to render events with: pass render=")
        tokens, _ = self.measure(self._render(events), tools=tools_of(events))
        return tokens


class PromptTokenCounter:
    """The condensers' `TokenCounter` in a measured pipeline: what `meter` counts, for a whole prompt or a part of one.

    - Events that hold a system message are a prompt: they are rendered with `render` (a
      renderer of the counter's own, so the pipeline's rendering cache is not disturbed by views
      that are never sent) and counted with `meter.count`, tool definitions included: exactly the
      tokens `Pipeline.prompt_tokens` reports for that view before the history policy's trim.
    - Other events (a summary, the events a condensation replaces, one event) are a part of a
      prompt, which a renderer cannot show alone (a tool call without its result is left out):
      each event counts the tokens of its prompt text (`event_texts`) by the meter's tokenizer,
      plus `overhead_per_event` for its framing. With the approximate tokenizer that is exactly
      `ApproximateTokenCounter`'s count.
    """

    __slots__ = ("meter", "overhead_per_event", "render", "_cache", "_messages")

    def __init__(self, meter: PromptMeter, render: EventsRenderer, *, overhead_per_event: int = 4) -> None:
        self.meter = meter
        """Tokenizes and counts (its record of the last prompt is left alone)."""
        self.render = render
        """Renders events as the chat messages the pipeline would send, system message first."""
        self.overhead_per_event = overhead_per_event
        """Tokens added per event of a part for its framing (role, separators)."""
        self._cache: dict[int, tuple[Event, int]] = {}
        # By identity first: the renderer hands back the same Message objects step after step, and
        # hashing one (the meter's cache is keyed by equal content) costs more than the lookup.
        self._messages: dict[int, tuple[Message, int]] = {}

    def message_tokens(self, message: Message) -> int:
        """The tokens of one message as the meter counts it (remembered by identity)."""
        entry = self._messages.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        if len(self._messages) >= _CACHE_MAX:
            self._messages.clear()
        tokens = self.meter.message_tokens(message)
        self._messages[id(message)] = (message, tokens)
        return tokens

    def event_tokens(self, event: Event) -> int:
        """The tokens of one event counted alone: its prompt text's, plus the overhead (cached by identity)."""
        entry = self._cache.get(id(event))
        if entry is not None and entry[0] is event:
            return entry[1]
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        tokens = len(self.meter.tokenizer.encode("".join(event_texts(event)))) + self.overhead_per_event
        self._cache[id(event)] = (event, tokens)
        return tokens

    def __call__(self, events: Sequence[Event], /) -> int:
        if not any(isinstance(event, SystemMessageAction) for event in events):
            return sum(self.event_tokens(event) for event in events)
        tools = tools_of(events)
        total = self.meter.count((), tools=tools) if tools else 0
        return total + sum(self.message_tokens(message) for message in self.render(events))
