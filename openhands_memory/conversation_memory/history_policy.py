"""`HistoryPolicy`: a final trim of the chat `ConversationMemory` renders, as QitOS' history policy selects history.

QitOS (qitos 0.3.0, `qitos.core.history.HistoryPolicy`) keeps what the model sees next separate
from what is stored, and selects it with four settings: `roles`, `max_messages` (24), `step_window`
and `max_tokens`. Here the same settings trim the messages of one prompt, after the condenser and
the rendering, so they bound what any pipeline sends. The trim:

- always keeps the pinned head: the system message (first) and the first user message (the task);
  the limits count only the other messages. With `pin_first_user = False` only the system message
  is pinned and the task is a message like the others (Inkeep's and QitOS' windows pin nothing);
- treats an assistant message that makes tool calls and the `tool` messages answering them as one
  unit, kept or dropped whole: a trim never leaves a call without its result nor a result without
  its call (DESIGN invariant 4);
- keeps the newest units: it drops from the oldest, and it always keeps the newest unit (what the
  model answers next: its last step's results, or the user's new message), even when that unit
  alone is over `max_messages` or `max_tokens`; `HistoryTrim.kept_over_limit` says so;
- changes no message: every message kept is the same object, in the same order.

The settings, applied in this order:

- `roles`: the roles of the messages kept besides the pinned head (None: every role). A tool
  exchange is kept only when both `assistant` and `tool` are listed; so `["user", "assistant"]`
  (QitOS' default) keeps the conversation's words and no tool activity. QitOS' own default is not
  ours: its history holds no tool messages, ours must keep them with their calls.
- `step_window`: the last N agent steps. A step is what the model answers at once: the user
  messages it reads, then its response (an assistant message, with its tool calls' results). The
  messages after the last response (a new user message, not answered yet) are the current step
  and count as one, as QitOS counts the step being decided (`step_min = step - step_window + 1`).
  So `step_window = 1` keeps only the current input: the new user message, or, when the model
  answers its own last results, its last response with them (and the user messages it answered).
- `max_messages`: at most this many messages besides the pinned head (QitOS' `max_items`).
- `max_tokens`: at most this many tokens in those messages, each counted by `count_tokens`.

Presets (`preset = "..."` in a config; a field given beside it wins):

- `inkeep_fixed_limit` (`HistoryPolicy.fixed_limit()`): Inkeep's fallback for agents without a
  summarizer, at most the 50 most recent conversation messages and 8,000 tokens of them;
- `inkeep_compression`: Inkeep's retrieval with a summarizer, at most the 10,000 most recent messages
  and no token limit (the model-aware compression bounds the tokens);
- `qitos_default`: QitOS' default when no history is given, a 24-message window (its engine's
  `WindowHistory(window_size=24)` read with `HistoryPolicy()`'s `max_items = 24`).

`build_query(step_id)` writes the policy as QitOS' query dict, for QitOS-style memory (`retrieve`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from openhands_memory.llm.estimate import estimate_tokens
from openhands_memory.llm.message import ImageContent, Message, Role

__all__ = [
    "HISTORY_POLICY_PRESETS",
    "NO_TRIM",
    "HistoryPolicy",
    "HistoryPolicyPreset",
    "HistoryTrim",
    "MessageTokenCounter",
    "approximate_message_tokens",
]

logger = logging.getLogger(__name__)

MessageTokenCounter = Callable[[Message], int]
"""Counts the prompt tokens of one message (`lambda m: llm.count_tokens([m])`, say)."""

HistoryPolicyPreset = Literal["inkeep_fixed_limit", "inkeep_compression", "qitos_default"]
"""A named set of policy settings (see `HISTORY_POLICY_PRESETS`)."""

HISTORY_POLICY_PRESETS: Final[dict[str, dict[str, Any]]] = {
    "inkeep_fixed_limit": {"max_messages": 50, "max_tokens": 8000, "pin_first_user": False},
    "inkeep_compression": {"max_messages": 10_000, "max_tokens": None, "pin_first_user": False},
    "qitos_default": {"max_messages": 24, "max_tokens": None, "pin_first_user": False},
}
"""The settings each preset gives the fields a config leaves out. `inkeep_fixed_limit`: Inkeep's fixed
limits for agents without a summarizer model, up to the 50 most recent conversation messages and 8,000
tokens of them. `inkeep_compression`: Inkeep's retrieval when a summarizer is configured, up to 10,000
messages, no token limit. `qitos_default`: QitOS' 24-message window. None pins the first user message:
each counts the conversation's messages, the task among them (the system message stays)."""

QITOS_DEFAULT_ROLES: Final = ("user", "assistant")
"""The roles QitOS' `HistoryPolicy()` asks for; `build_query` writes them when `roles` is None."""

_OVERHEAD_PER_MESSAGE: Final = 4
_IMAGE_TOKENS: Final = 85  # what OpenAI charges a low-detail image: an image is never downloaded to count it


def approximate_message_tokens(message: Message) -> int:
    """About how many prompt tokens `message` takes: its text and tool calls at four characters a token, plus framing.

    Offline, no litellm (the library's usual estimate, see `openhands_memory.condenser.tokens`).
    """
    chars = 0
    images = 0
    for part in message.content:
        if isinstance(part, ImageContent):
            images += len(part.image_urls)
        else:
            chars += len(part.text)
    for call in message.tool_calls or ():
        chars += len(call.function.name) + len(call.function.arguments)
    return estimate_tokens(chars) + images * _IMAGE_TOKENS + _OVERHEAD_PER_MESSAGE


class HistoryPolicy(BaseModel):
    """Which messages of a rendered chat the model is sent: QitOS' history policy, as a final trim (see the module docstring).

    Every limit is optional; `HistoryPolicy()` keeps at most 24 messages besides the system message
    and the first user message (QitOS' 24, with our pinned task); `HistoryPolicy(preset="qitos_default")`
    is QitOS' own window, the task not pinned.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    preset: HistoryPolicyPreset | None = None
    """A named set of settings for the fields not given (`inkeep_fixed_limit`: 50 messages, 8,000 tokens;
    `inkeep_compression`: 10,000 messages; `qitos_default`: 24 messages)."""
    roles: tuple[Role, ...] | None = None
    """The roles kept besides the pinned head (None: all); a tool exchange needs both `assistant` and `tool`."""
    max_messages: int | None = Field(default=24, ge=1)
    """At most this many messages besides the system message and the first user message (None: no limit)."""
    step_window: int | None = Field(default=None, ge=1)
    """Only the last this many agent steps, the current one included (None: no limit)."""
    max_tokens: int | None = Field(default=None, ge=1)
    """At most this many tokens in the messages besides the pinned head (None: no limit)."""
    pin_first_user: bool = True
    """Always keep the first user message (the task), outside the limits; False: it counts and goes like the others."""

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        # A preset fills only what the config leaves out: `preset = "..."` plus `max_tokens = 4000` keeps 4000.
        if isinstance(data, dict):
            preset = data.get("preset")
            if isinstance(preset, str) and preset in HISTORY_POLICY_PRESETS:
                return {**HISTORY_POLICY_PRESETS[preset], **data}
        return data

    @classmethod
    def fixed_limit(cls) -> HistoryPolicy:
        """Inkeep's fallback for agents without a summarizer: the 50 most recent messages, 8,000 tokens of them."""
        return cls(preset="inkeep_fixed_limit")

    def build_query(self, step_id: int, **kwargs: Any) -> dict[str, Any]:
        """This policy as QitOS' query dict for step `step_id` (QitOS' `HistoryPolicy.build_query`).

        `roles` (QitOS' `["user", "assistant"]` when None), `max_items` (`max_messages`), `step_min`
        (`step_id - step_window + 1`, at least 0) and `max_tokens` when set; `kwargs` are added as they
        are. Memory adapters take the dict as it is (`Memory.retrieve`).
        """
        query: dict[str, Any] = {"roles": list(self.roles if self.roles is not None else QITOS_DEFAULT_ROLES)}
        if self.max_messages is not None:
            query["max_items"] = self.max_messages
        if self.step_window is not None:
            query["step_min"] = max(0, step_id - self.step_window + 1)
        if self.max_tokens is not None:
            query["max_tokens"] = self.max_tokens
        query.update({str(key): value for key, value in kwargs.items()})
        return query

    @property
    def is_limited(self) -> bool:
        """Some setting can drop a message (a policy with none is a no-op)."""
        return any(v is not None for v in (self.roles, self.max_messages, self.step_window, self.max_tokens))

    def describe(self) -> str:
        """The settings in one line, for reports: `max_messages=50, max_tokens=8000 (inkeep_fixed_limit)`."""
        parts = [
            f"{name}={list(value) if isinstance(value, tuple) else value}"
            for name in ("roles", "max_messages", "step_window", "max_tokens")
            if (value := getattr(self, name)) is not None
        ]
        if not self.pin_first_user:
            parts.append("pin_first_user=False")
        text = ", ".join(parts) or "no limit"
        return f"{text} ({self.preset})" if self.preset else text

    def apply(self, messages: Sequence[Message], *, count_tokens: MessageTokenCounter | None = None) -> HistoryTrim:
        """Trim `messages` (a valid chat) by this policy; the messages kept and what was dropped.

        Args:
            messages: the chat, system message first (as `ConversationMemory.process_events` returns it).
            count_tokens: counts one message's tokens for `max_tokens`; by default
                `approximate_message_tokens`. Each message is counted at most once per call.

        Returns:
            A `HistoryTrim`: `messages` is a new list of the same message objects, in order.
        """
        return _Trimmer(self, messages, count_tokens or approximate_message_tokens).trim()


@dataclass(frozen=True, slots=True)
class HistoryTrim:
    """What a `HistoryPolicy` kept of a chat, and how many messages each of its settings dropped."""

    messages: list[Message]
    """The messages kept, in order (the chat to send)."""
    dropped_by_roles: int = 0
    """Messages dropped because of their role."""
    dropped_by_step_window: int = 0
    """Messages dropped as older than `step_window` steps."""
    dropped_by_max_messages: int = 0
    """Messages dropped to stay within `max_messages`."""
    dropped_by_max_tokens: int = 0
    """Messages dropped to stay within `max_tokens`."""
    kept_over_limit: bool = False
    """The newest unit alone is over `max_messages` or `max_tokens` and was kept all the same."""
    tokens: int | None = None
    """The tokens of the messages kept besides the pinned head, when `max_tokens` was checked."""

    @property
    def dropped(self) -> int:
        """Messages dropped in all."""
        return self.dropped_by_roles + self.dropped_by_step_window + self.dropped_by_max_messages + self.dropped_by_max_tokens

    def to_dict(self) -> dict[str, Any]:
        """The counts, JSON-ready (the messages left out)."""
        return {
            "dropped": self.dropped,
            "dropped_by_roles": self.dropped_by_roles,
            "dropped_by_step_window": self.dropped_by_step_window,
            "dropped_by_max_messages": self.dropped_by_max_messages,
            "dropped_by_max_tokens": self.dropped_by_max_tokens,
            "kept_over_limit": self.kept_over_limit,
            "tokens": self.tokens,
        }


NO_TRIM: Final = HistoryTrim(messages=[])
"""The record when no policy applied (its `messages` is empty: read the chat itself)."""


@dataclass(slots=True)
class _Unit:
    """Messages kept or dropped together: one message, or an assistant message with its tool results."""

    indices: list[int]
    step: int
    is_tool_exchange: bool
    role: str


class _Trimmer:
    """One application of a policy to one chat."""

    def __init__(self, policy: HistoryPolicy, messages: Sequence[Message], count_tokens: MessageTokenCounter) -> None:
        self.policy = policy
        self.messages = messages
        self.count_tokens = count_tokens

    def _pinned(self) -> set[int]:
        messages = self.messages
        pinned = set()
        if messages and messages[0].role == "system":
            pinned.add(0)
        if not self.policy.pin_first_user:
            return pinned
        first_user = next((i for i, m in enumerate(messages) if m.role == "user"), None)
        if first_user is not None:
            pinned.add(first_user)
        return pinned

    def _units(self, pinned: set[int]) -> list[_Unit]:
        """The messages outside the pinned head grouped into units, each with its agent step (see the module docstring)."""
        units: list[_Unit] = []
        step = 0
        open_calls: set[str] = set()
        for index, message in enumerate(self.messages):
            if index in pinned:
                continue
            if message.role == "tool" and units and units[-1].is_tool_exchange and message.tool_call_id in open_calls:
                open_calls.discard(message.tool_call_id)  # type: ignore[arg-type]
                units[-1].indices.append(index)
                continue
            open_calls = set()
            if message.role == "assistant":
                # A response closes its step; the user messages before it (its input) join it below.
                calls = message.tool_calls or ()
                open_calls = {call.id for call in calls}
                units.append(_Unit([index], step, bool(calls), "assistant"))
                step += 1
            else:
                units.append(_Unit([index], step, False, message.role))
        return units

    def trim(self) -> HistoryTrim:
        policy = self.policy
        pinned = self._pinned()
        units = self._units(pinned)
        dropped = {"roles": 0, "step_window": 0, "max_messages": 0, "max_tokens": 0}

        roles = policy.roles
        if roles is not None:
            allowed = set(roles)
            kept_units = []
            for unit in units:
                ok = {"assistant", "tool"} <= allowed if unit.is_tool_exchange else unit.role in allowed
                if ok:
                    kept_units.append(unit)
                else:
                    dropped["roles"] += len(unit.indices)
            units = kept_units

        if policy.step_window is not None and units:
            # Steps are numbered from 0; the current step is the newest unit's.
            newest = units[-1].step
            first = newest - policy.step_window + 1
            old = [unit for unit in units if unit.step < first]
            dropped["step_window"] += sum(len(unit.indices) for unit in old)
            units = [unit for unit in units if unit.step >= first]

        over_limit = False
        tokens: int | None = None
        if policy.max_messages is not None or policy.max_tokens is not None:
            limit_messages = policy.max_messages
            limit_tokens = policy.max_tokens
            kept_count = 0
            kept_tokens = 0
            start = len(units)
            reason = ""
            for position in range(len(units) - 1, -1, -1):
                unit = units[position]
                size = len(unit.indices)
                cost = sum(self.count_tokens(self.messages[i]) for i in unit.indices) if limit_tokens is not None else 0
                too_many = limit_messages is not None and kept_count + size > limit_messages
                too_long = limit_tokens is not None and kept_tokens + cost > limit_tokens
                if too_many or too_long:
                    if position == len(units) - 1:
                        over_limit = True  # the newest unit stays: the model must see what it answers
                    else:
                        reason = "max_messages" if too_many else "max_tokens"
                        break
                kept_count += size
                kept_tokens += cost
                start = position
            if reason:
                dropped[reason] += sum(len(unit.indices) for unit in units[:start])
                units = units[start:]
            if limit_tokens is not None:
                tokens = kept_tokens

        keep = set(pinned)
        for unit in units:
            keep.update(unit.indices)
        kept = [message for index, message in enumerate(self.messages) if index in keep]
        trim = HistoryTrim(
            messages=kept,
            dropped_by_roles=dropped["roles"],
            dropped_by_step_window=dropped["step_window"],
            dropped_by_max_messages=dropped["max_messages"],
            dropped_by_max_tokens=dropped["max_tokens"],
            kept_over_limit=over_limit,
            tokens=tokens,
        )
        if trim.dropped or over_limit:
            logger.debug("history policy (%s) dropped %d of %d messages: %s", policy.describe(), trim.dropped, len(self.messages), trim.to_dict())
        return trim
