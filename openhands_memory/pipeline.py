"""The pipeline: what the model is shown at a step, built in one place for `History`, replay and bench.

A `Pipeline` holds the condenser, the `ConversationMemory` that renders views as messages (with
its settings: observation cut, vision), the optional `HistoryPolicy` and the one token counter its
trim uses. It offers the two operations a step needs:

- `settle(current_view, append, guard)`: ask the condenser until it returns a view, appending each
  condensation (through the caller's `append`) and stopping a loop that makes no progress
  (`CondensationGuard`); `condense(view, guard)` is one ask of that loop (`History.step`).
- `show(view, initial_user_action)`: the view as messages, trimmed by the policy, with what the
  trim dropped and how many tool calls the renderer had to repair (`ShownMessages`).
- `prompt_tokens(shown, view)`: the tokens of that prompt as sent, tool definitions included,
  counted by the pipeline's one `PromptMeter` (`measured_by(tokenizer)`; see
  `openhands_memory.prompt_tokens`): replay's report, the bench, the history policy's trim and the
  condensers' token budgets all count with it.

`History`, `Replayer` (replay) and the bench call these, so a replay shows the model what `History`
would send for the same events and pipeline.

A pipeline file holds the condenser (`[condenser]`) and the history policy (`[history_policy]`):

    [condenser]
    type = "noop"

    [history_policy]           # optional: a final trim of the messages (see `HistoryPolicy`)
    preset = "inkeep_fixed_limit"
    # roles = ["user", "assistant", "tool"]
    # max_messages = 50
    # step_window = 10
    # max_tokens = 8000

A JSON file holds `{"condenser": {...}, "history_policy": {...}}` (or the condenser config alone).
`load_pipeline_config(path)` reads both (the file is read and validated once); `load_condenser_config`
still reads the condenser alone and ignores the policy. A file without `[history_policy]` gets the
policy its condenser comes with: `type = "inkeep"` brings Inkeep's (`inkeep_compression` with a
summarizer, `inkeep_fixed_limit` without). The condenser decides which events the model sees; the
policy then trims the messages they render to, so it bounds what any pipeline sends.
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from openhands_memory.condenser import Condensation, Condenser
from openhands_memory.condenser.config import condenser_config_from_document, read_config_file
from openhands_memory.condenser.guard import CondensationGuard
from openhands_memory.condenser.tokens import tools_of
from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.conversation_memory.history_policy import (
    HISTORY_POLICY_PRESETS,
    NO_TRIM,
    HistoryPolicy,
    HistoryTrim,
    MessageTokenCounter,
)
from openhands_memory.errors import CondenserConfigError
from openhands_memory.events import Event, MessageAction
from openhands_memory.prompt_tokens import PromptMeter, PromptTokenCounter, Tokenizer, tokenizer_for
from openhands_memory.view import View

if TYPE_CHECKING:
    from openhands_memory.llm import Message

T = TypeVar("T")

DEFAULT_CONDENSER_CONFIG: Final[Mapping[str, Any]] = {
    "type": "cache_aware",
    "hard_limit": 100_000,
    "min_cut": 8_000,
    "condenser": {
        "type": "pipeline",
        "condensers": [
            {"type": "browser_output_masking", "attention_window": 1},
            {"type": "llm", "max_size": 10_000, "max_tokens": 20_000, "keep_first": 4},
        ],
    },
}
"""The pipeline used when none is given: the cache-aware scheduler (`cache_aware`) around browser masking and
a summary, priced for the agent's model, offline (no model is called, no API key: with no `llm_config`
the summary is the offline structured summarizer's).

It condenses when the prompt is over 100,000 tokens (`hard_limit`) or the agent asks, and otherwise only
when it pays with the agent's model's prompt cache, by at least 8,000 tokens: when the cache has expired
anyway, or when the reads it saves outweigh rewriting the prefix. A summary keeps the first 4 events and
the newest 10,000 tokens (half of `max_tokens`); older browser pages are masked in batches; a tool output
too large for anything to make room for is cut to a preview with a `context_reload` handle. `pricing`
is left out: the agent's model decides (`default_condenser(model)`, `History(model=...)` or the LLM it
calls, `--model`, the SDK agent's LLM); no model, or one litellm knows no price for, is priced as
claude-sonnet-4-5 (`FALLBACK_PRICING`). For a model whose input limit is under 125,000 tokens, the
limits are scaled to 80% of it (`default_condenser_config`). `openhands_memory/pipelines/default.toml` is this
pipeline as a file; `DEFAULT_OFFLINE_CONDENSER_CONFIG` is the default before it."""

DEFAULT_OFFLINE_CONDENSER_CONFIG: Final[Mapping[str, Any]] = {
    "type": "pipeline",
    "condensers": [
        {"type": "browser_output_masking", "attention_window": 1},
        {"type": "observation_masking", "attention_window": 50},
        {"type": "amortized", "max_size": 120, "keep_first": 4, "max_tokens": 64_000},
    ],
}
"""`default_offline`, the default pipeline until issue 39 (`openhands_memory/pipelines/default_offline.toml`):
show only the newest browser page, mask tool output older than 50 events, and forget the older half of
the history (after the first 4 events) past 120 events or 64k tokens. It masks at nearly every step, so it
breaks the prompt cache at nearly every step: on the standard comparison it costs 2.4x (claude-sonnet-4-5)
and 1.6x (gpt-5) what no condensation costs."""

DEFAULT_INPUT_SHARE: Final = 0.8
"""The share of a model's input limit the default's `hard_limit` may reach (the rest: the tokenizer's error, the reply)."""


def default_condenser_config(model: str | None = None) -> dict[str, Any]:
    """`DEFAULT_CONDENSER_CONFIG` for the agent's `model` (never called): its limits scaled down to fit the model's input.

    With a model whose input limit (litellm's map, offline) times `DEFAULT_INPUT_SHARE` is under
    100,000 tokens, `hard_limit` is that, and `min_cut` and the summary's `max_tokens` are scaled alike.
    The prices come from the model when the config is built with it (`Condenser.from_config(model=...)`).
    """
    config = copy.deepcopy(dict(DEFAULT_CONDENSER_CONFIG))
    if not model:
        return config
    from openhands_memory.llm import LLM, LLMConfig

    llm = LLM(LLMConfig(model=model))
    if not llm.is_context_window_known():
        return config
    limit = int(llm.context_window() * DEFAULT_INPUT_SHARE)
    if limit >= config["hard_limit"]:
        return config
    scale = limit / config["hard_limit"]
    config["hard_limit"] = limit
    config["min_cut"] = max(int(config["min_cut"] * scale), 1)
    summary = config["condenser"]["condensers"][-1]
    summary["max_tokens"] = max(int(summary["max_tokens"] * scale), 2)
    return config


def default_condenser(model: str | None = None) -> Condenser:
    """A fresh condenser built from `default_condenser_config(model)`, priced for `model` (see `DEFAULT_CONDENSER_CONFIG`)."""
    return Condenser.from_config(default_condenser_config(model), model=model)

__all__ = [
    "DEFAULT_CONDENSER_CONFIG",
    "DEFAULT_OFFLINE_CONDENSER_CONFIG",
    "HISTORY_POLICY_TABLE",
    "Pipeline",
    "PipelineConfig",
    "ShownMessages",
    "default_condenser",
    "default_condenser_config",
    "describe_config",
    "load_pipeline",
    "load_pipeline_config",
    "parse_history_policy",
    "strategy_history_policy",
]

HISTORY_POLICY_TABLE = "history_policy"
"""The table (TOML) or key (JSON) of a pipeline file that holds its history policy."""


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    """What a pipeline file describes: its condenser config and, if it has one, its history policy."""

    condenser: BaseModel
    """The validated condenser config (build it with `Condenser.from_config`)."""
    history_policy: HistoryPolicy | None = None
    """The final trim of the messages; None when the file has no `[history_policy]` table."""
    path: str | None = None
    """The file it was read from."""


def parse_history_policy(data: HistoryPolicy | Mapping[str, Any], *, path: str | os.PathLike[str] | None = None) -> HistoryPolicy:
    """Validate a `[history_policy]` table (a `HistoryPolicy` is returned as is).

    Raises:
        CondenserConfigError: a field is unknown (with the closest name), out of range, or of the
            wrong type, or the preset is unknown; the error names `history_policy.<field>`.
    """
    if isinstance(data, HistoryPolicy):
        return data
    if not isinstance(data, Mapping):
        raise CondenserConfigError(f"must be a table, got {type(data).__name__}", field=HISTORY_POLICY_TABLE, path=path)
    try:
        return HistoryPolicy.model_validate(dict(data))
    except ValidationError as exc:
        raise _describe(exc, path) from None


def _describe(exc: ValidationError, path: str | os.PathLike[str] | None) -> CondenserConfigError:
    """One error for the first problem pydantic found, naming `history_policy.<field>`."""
    errors = exc.errors(include_url=False)
    error = errors[0]
    loc = [str(part) for part in error["loc"]]
    name = loc[0] if loc else ""
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        known = [field for field in HistoryPolicy.model_fields]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        message = "unknown field." + (f" Did you mean {close[0]!r}?" if close else f" Known fields: {', '.join(known)}.")
    elif name == "preset" and error["type"] == "literal_error":
        message = f"unknown preset {error.get('input')!r}. Known presets: {', '.join(HISTORY_POLICY_PRESETS)}."
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more)"
    field = ".".join([HISTORY_POLICY_TABLE, *loc]) if loc else HISTORY_POLICY_TABLE
    return CondenserConfigError(message, field=field, path=path)


def load_pipeline_config(path: str | os.PathLike[str]) -> PipelineConfig:
    """Read a pipeline file: its `[condenser]` table (as `load_condenser_config` does) and its `[history_policy]` table, if any.

    Raises:
        CondenserConfigError: the file is missing or unreadable, has no valid condenser config,
            or its history policy is not valid (the message starts with the file name and names
            the field).
    """
    document = read_config_file(path)  # read once: the condenser and the policy come from the same text
    condenser = condenser_config_from_document(document, path)
    table = document.get(HISTORY_POLICY_TABLE)
    policy = parse_history_policy(table, path=path) if table is not None else None  # else the strategy's own: `Pipeline`
    return PipelineConfig(condenser, policy, str(Path(path)))


@dataclass(frozen=True, slots=True)
class ShownMessages:
    """A view shown as messages: what the model is sent at a step."""

    messages: list[Message]
    """The chat to send (trimmed by the history policy, if any)."""
    trim: HistoryTrim
    """What the policy dropped (`NO_TRIM` without a policy)."""
    repairs: int
    """Tool calls or results the renderer left out because their other half was missing."""
    rendered: list[Message]
    """The chat before the trim (`messages` itself without a policy)."""


class Pipeline:
    """The condenser, the message renderer with its settings, the optional history policy and its token counter: THE step.

    See the module docstring. A pipeline is used by one run at a time (the condenser and the
    renderer keep state between steps).
    """

    __slots__ = (
        "condenser",
        "description",
        "history_policy",
        "max_message_chars",
        "memory",
        "message_tokens",
        "meter",
        "vision_is_active",
    )

    def __init__(
        self,
        condenser: Condenser,
        description: str | None = None,
        history_policy: HistoryPolicy | None = None,
        *,
        memory: ConversationMemory | None = None,
        max_message_chars: int | None = None,
        vision_is_active: bool = False,
        message_tokens: MessageTokenCounter | None = None,
    ) -> None:
        """A pipeline around `condenser`.

        Args:
            condenser: decides what the model sees of the history.
            description: names it for people (reports); by default the condenser's name.
            history_policy: the final trim of every step's messages; None: the one the condenser
                comes with (`Condenser.history_policy_preset`: Inkeep's limits), else none.
            memory: renders views as messages; by default `ConversationMemory("")`.
            max_message_chars: observation text longer than this is cut in the middle (None: never).
            vision_is_active: the model sees images.
            message_tokens: counts one message's tokens for the policy's `max_tokens`; None: the
                policy's estimate (four characters a token).
        """
        self.condenser = condenser
        self.description = description if description is not None else condenser.name
        # The strategy's own when none is given, whichever entry point built this pipeline.
        self.history_policy = history_policy if history_policy is not None else strategy_history_policy(condenser)
        self.memory = memory if memory is not None else ConversationMemory(system_prompt="")
        self.max_message_chars = max_message_chars
        self.vision_is_active = vision_is_active
        self.message_tokens = message_tokens
        self.meter: PromptMeter | None = None
        """The one prompt counter (`measured_by`); None until one is chosen."""

    @classmethod
    def default(cls, model: str | None = None) -> Pipeline:
        """The default pipeline (`DEFAULT_CONDENSER_CONFIG`), offline, priced for the agent's `model` (see `default_condenser`)."""
        condenser = default_condenser(model)
        note = getattr(condenser, "pricing_note", None)
        described = f"default pipeline ({describe_config(DEFAULT_CONDENSER_CONFIG)})"
        return cls(condenser, f"{described}, {note}" if note else described)

    def use_agent_model(self, model: str, *, known_from: str = "the agent's model") -> None:
        """Tell the condenser the agent's model once it is known (`Condenser.use_agent_model`: a `cache_aware`
        left to the agent's model prices for it); the description's pricing note says whose prices now,
        and how the model was known (`known_from`: a replay of another agent's log says "the model the log records")."""
        before = getattr(self.condenser, "pricing_note", None)
        self.condenser.use_agent_model(model)
        after = getattr(self.condenser, "pricing_note", None)
        if isinstance(before, str) and isinstance(after, str) and after != before and before in self.description:
            self.description = self.description.replace(before, after.replace("(the agent's model)", f"({known_from})"))

    def with_settings(self, **settings: Any) -> Pipeline:
        """This pipeline (the same condenser and renderer) with some keyword settings changed (`message_tokens`, ...)."""
        current = {name: getattr(self, name) for name in ("memory", "max_message_chars", "vision_is_active", "message_tokens")}
        return Pipeline(self.condenser, self.description, self.history_policy, **{**current, **settings})

    def measured_by(self, tokenizer: Tokenizer | str | None) -> Pipeline:
        """This pipeline counting its prompts with the one `PromptMeter` over `tokenizer` (a name: `tokenizer_for`; None: approximate).

        Its `meter` counts each step's prompt (`prompt_tokens`); the history policy's `max_tokens`
        counts messages with the same meter, so the trim measures what is reported; and the
        condenser's token budgets, records and loop guard count with it too, from now on
        (`Condenser.use_token_counter` with a `PromptTokenCounter`: a view that holds its system
        message counts exactly as `prompt_tokens` reports its untrimmed prompt). The condenser is
        shared, not copied: this pipeline's condenser counts so as well.
        """
        meter = PromptMeter(tokenizer_for(tokenizer) if tokenizer is None or isinstance(tokenizer, str) else tokenizer)
        measured = self.with_settings(message_tokens=meter.message_tokens)
        measured.meter = meter
        self.condenser.use_token_counter(PromptTokenCounter(meter, measured._counting_renderer()))
        return measured

    def _counting_renderer(self) -> Callable[[Sequence[Event]], list[Message]]:
        """Renders events as `show` does, before the trim, with a memory of its own (counting leaves `memory`'s cache alone)."""
        memory = self.memory.fresh()
        max_message_chars, vision_is_active = self.max_message_chars, self.vision_is_active

        def render(events: Sequence[Event]) -> list[Message]:
            # The first user message of the events stands where `show` is given the history's.
            initial = next((e for e in events if isinstance(e, MessageAction) and e.source == "user"), None)
            return memory.process_events(events, initial, max_message_chars=max_message_chars, vision_is_active=vision_is_active)

        return render

    def prompt_tokens(self, shown: ShownMessages, view: Sequence[Event]) -> int:
        """The tokens of the prompt sent at a step: `view`'s tool definitions, then `shown`'s messages (see `openhands_memory.prompt_tokens`).

        Also leaves the prompt's cached prefix and blocks on `meter` (`last_cached`, `last_blocks`).

        Raises:
            ValueError: no meter was chosen (`measured_by`).
        """
        meter = self.meter
        if meter is None:
            raise ValueError("this pipeline has no prompt meter: use pipeline.measured_by(tokenizer)")
        tokens, _ = meter.measure(shown.messages, tools=tools_of(view))
        return tokens

    @classmethod
    def from_config(cls, config: PipelineConfig, description: str | None = None, **settings: Any) -> Pipeline:
        """The pipeline a `PipelineConfig` describes (its condenser built); `settings` are `Pipeline`'s keyword arguments."""
        return cls(Condenser.from_config(config.condenser), description, config.history_policy, **settings)

    def guard(self, limit: int) -> CondensationGuard:
        """A loop guard for one run, measuring progress with the condenser's token counter (events when it has none)."""
        return CondensationGuard(self.condenser.name, limit=limit, token_counter=getattr(self.condenser, "token_counter", None))

    def condense(self, view: View, guard: CondensationGuard) -> View | Condensation:
        """Ask the condenser once: the view the model is shown, or a condensation to append first.

        Raises:
            CondensationStalledError: a condensation again after one that made no progress, or
                too many in one step (see `CondensationGuard`).
        """
        outcome = self.condenser.condense(view)
        if isinstance(outcome, Condensation):
            guard.condensed(view)
        return outcome

    def settle(
        self, current_view: Callable[[], View], append: Callable[[Condensation, View], T], guard: CondensationGuard
    ) -> Generator[T, None, View]:
        """Condense until the view is settled: ask, `append(condensation, view it was made for)` and ask again.

        Yields what `append` returns for each condensation; returns the view the model is shown.
        The guard keeps its count (the step's condensations) until the caller resets it.

        Raises:
            CondensationStalledError: condensing made no progress (see `condense`).
        """
        while True:
            view = current_view()
            outcome = self.condense(view, guard)
            if not isinstance(outcome, Condensation):
                return outcome
            yield append(outcome, view)

    def show(self, view: View | Sequence[Event], initial_user_action: MessageAction | None) -> ShownMessages:
        """`view` as the messages the model is sent: rendered, then trimmed by the history policy."""
        memory = self.memory
        messages = memory.process_events(
            view, initial_user_action, max_message_chars=self.max_message_chars, vision_is_active=self.vision_is_active
        )
        repairs = memory.last_repairs.count
        if self.history_policy is None:
            return ShownMessages(messages, NO_TRIM, repairs, messages)
        # The policy trims whole tool exchanges only, so the chat stays valid (DESIGN invariant 4).
        trim = self.history_policy.apply(messages, count_tokens=self.message_tokens)
        return ShownMessages(trim.messages, trim, repairs, messages)

    def __repr__(self) -> str:
        return f"Pipeline({self.description!r})"


def load_pipeline(path: str | os.PathLike[str] | None, *, model: str | None = None) -> Pipeline:
    """The pipeline a file describes (TOML `[condenser]` and optional `[history_policy]` tables, or JSON), or the default with no path.

    `model` is the agent's model (never called): its context window sizes the token limits given
    as a share of one that name no model (`Condenser.from_config(model=...)`, inkeep's threshold),
    and its prices price a `cache_aware` that names no `pricing` (the default pipeline's).

    Raises:
        CondenserConfigError: the file is missing, unreadable, or the config is not valid
            (the message names the file and the field).
    """
    if path is None:
        return Pipeline.default(model)
    config = load_pipeline_config(path)
    pipeline = Pipeline(Condenser.from_config(config.condenser, model=model), None, config.history_policy)
    pipeline.description = f"{path} ({describe_config(config.condenser.model_dump())})"
    if pipeline.history_policy is not None:
        pipeline.description += f" + history_policy({pipeline.history_policy.describe()})"
    return pipeline


def strategy_history_policy(condenser: Condenser) -> HistoryPolicy | None:
    """The history policy `condenser` comes with (`Condenser.history_policy_preset`), for a pipeline given none.

    `inkeep`: Inkeep's retrieval with a summarizer (`inkeep_compression`, 10,000 messages), its
    fixed limits without one (`inkeep_fixed_limit`, 50 messages and 8,000 tokens). Others: None.
    """
    preset = condenser.history_policy_preset
    return HistoryPolicy(preset=preset) if preset is not None else None


def describe_config(config: Mapping[str, Any]) -> str:
    """The condenser types a config chains, for people: `conversation_window, browser_output_masking, llm`.

    A pipeline is named by its members in order, a nested pipeline by its own members (flattened);
    a pipeline without members is `empty pipeline`; a scheduler by what it wraps: `cache_aware(llm)`.
    """
    if config.get("type") == "pipeline":
        return ", ".join(describe_config(member) for member in config.get("condensers", ())) or "empty pipeline"
    inner = config.get("condenser")
    if isinstance(inner, Mapping):  # a scheduler around a strategy (`cache_aware`)
        return f"{config.get('type')}({describe_config(inner)})"
    return str(config.get("type"))
