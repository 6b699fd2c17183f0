"""The pipeline: THE turn, what the model is shown at a step, in one call for `History`, replay, bench and the SDK bridge.

A `Pipeline` holds the condenser, the `ConversationMemory` that renders views as messages (with
its settings: observation cut, vision), the optional `HistoryPolicy`, the one loop guard and the
one token counter. A turn is one call:

- `turn(current_view, append, initial_user_action)`: condense until the view settles (each
  condensation appended through the caller's `append`, the loop stopped by the one
  `CondensationGuard` when it makes no progress), then render, trim by the policy and count
  (`Turn`). `History.next_messages`, the replay driver (so replay and bench) make this call.
- `step(view, initial_user_action)`: one ask of that loop: a `Condensation` for the caller to
  append, or the `Turn` of the view (`History.step`, whose controller appends).
- `condense(view)`: the ask alone, for the SDK bridge, whose SDK renders the prompt itself and
  appends the condensation; `fit_to_policy(events, cuts)` then leaves out the oldest events until
  the policy drops no message (the trim, on events).

Counting: `measured_by(tokenizer)` gives the pipeline its `PromptMeter`; the prompt of every turn
is counted with it (tool definitions included, see `openhands_memory.prompt_tokens`), the history
policy's `max_tokens` counts messages with it, and the condenser runs inside the pipeline's counter
(`counting_with`): its token budgets, records and the loop guard count with it too. The counter is
passed to the run, not set on the strategy object, so two pipelines sharing a strategy count apart.

A pipeline is made one way: `Pipeline.of(source, **settings)` from what a caller is given (a
pipeline, a condenser, a pipeline file, or nothing: the default), and `replace(**changes)` for a
pipeline like another; both keep every setting not named.

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
import dataclasses
import difflib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from openhands_memory.condenser import Condensation, Condenser
from openhands_memory.condenser.base import counting_with
from openhands_memory.condenser.config import condenser_config_from_document, read_config_file
from openhands_memory.condenser.guard import MAX_CONDENSATIONS_PER_STEP, CondensationGuard
from openhands_memory.condenser.tokens import TokenCounter, tools_of
from openhands_memory.conversation_memory import ConversationMemory
from openhands_memory.conversation_memory.history_policy import (
    HISTORY_POLICY_PRESETS,
    NO_TRIM,
    HistoryPolicy,
    HistoryTrim,
    MessageTokenCounter,
)
from openhands_memory.errors import CondenserConfigError
from openhands_memory.events import Event, MessageAction, SystemMessageAction
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
    "Turn",
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
    tokens: int | None = None
    """The prompt's tokens as sent, tool definitions included, by the pipeline's meter (None: not counted)."""


@dataclass(frozen=True, slots=True)
class Turn(Generic[T]):
    """One turn: the condensations made on the way, and the view the model is shown as messages, counted."""

    view: View
    """What the condenser returned last: the view the model is shown."""
    shown: ShownMessages
    """That view as the messages sent (rendered, trimmed, counted when the pipeline has a meter)."""
    condensations: tuple[T, ...] = ()
    """What the caller's `append` returned for each condensation made on the way, in order."""

    @property
    def messages(self) -> list[Message]:
        """The chat to send."""
        return self.shown.messages

    @property
    def tokens(self) -> int | None:
        """The prompt's tokens (None: the pipeline has no meter)."""
        return self.shown.tokens


_SETTINGS: Final = (
    "memory",
    "max_message_chars",
    "vision_is_active",
    "message_tokens",
    "max_condensations_per_step",
    "token_counter",
)
"""`Pipeline`'s keyword settings: what `replace` and `of` carry over unless they are named."""


class Pipeline:
    """The condenser, the message renderer with its settings, the optional history policy, the loop guard and one token counter: THE turn.

    See the module docstring. A pipeline is used by one run at a time (the condenser, the renderer
    and the guard keep state between steps).
    """

    __slots__ = (
        "condenser",
        "description",
        "guard",
        "history_policy",
        "max_condensations_per_step",
        "max_message_chars",
        "memory",
        "message_tokens",
        "meter",
        "token_counter",
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
        max_condensations_per_step: int = MAX_CONDENSATIONS_PER_STEP,
        token_counter: TokenCounter | None = None,
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
            max_condensations_per_step: condensations one turn may make before the guard stops it.
            token_counter: the run's counter: the condenser counts with it while it runs
                (`counting_with`), and the loop guard measures progress with it; None: the
                condenser's own (`measured_by` sets the prompt counter).
        """
        self.condenser = condenser
        self.description = description if description is not None else condenser.name
        # The strategy's own when none is given, whichever entry point built this pipeline.
        self.history_policy = history_policy if history_policy is not None else strategy_history_policy(condenser)
        self.memory = memory if memory is not None else ConversationMemory(system_prompt="")
        self.max_message_chars = max_message_chars
        self.vision_is_active = vision_is_active
        self.message_tokens = message_tokens
        self.max_condensations_per_step = max_condensations_per_step
        self.token_counter = token_counter
        self.meter: PromptMeter | None = None
        """The one prompt counter (`measured_by`); None until one is chosen."""
        self.guard = CondensationGuard(condenser.name, limit=max_condensations_per_step, token_counter=self.counter)
        """The one loop guard of this pipeline's run: counts a turn's condensations, stops one that makes no progress."""

    @property
    def counter(self) -> TokenCounter:
        """The token counter of this run: `token_counter`, else the condenser's own."""
        return self.token_counter if self.token_counter is not None else self.condenser.token_counter

    @classmethod
    def default(cls, model: str | None = None, **settings: Any) -> Pipeline:
        """The default pipeline (`DEFAULT_CONDENSER_CONFIG`), offline, priced for the agent's `model` (see `default_condenser`)."""
        condenser = default_condenser(model)
        note = getattr(condenser, "pricing_note", None)
        described = f"default pipeline ({describe_config(DEFAULT_CONDENSER_CONFIG)})"
        return cls(condenser, f"{described}, {note}" if note else described, **settings)

    @classmethod
    def of(
        cls, source: Pipeline | Condenser | str | os.PathLike[str] | None, *, model: str | None = None, **settings: Any
    ) -> Pipeline:
        """THE way to a pipeline from what a caller was given, with `settings` (`Pipeline`'s keyword arguments, and
        `description`, `history_policy`) changed and every other one kept.

        `source`: a `Pipeline` (`replace`), a `Condenser` (in a pipeline of its own), a pipeline file
        or a shipped pipeline's name, as the CLI's `--pipeline` and the SDK bridge's `from_file` find
        them (`resolve_pipeline`; read by `load_pipeline`, sized and priced for the agent's `model`),
        or None (the default pipeline for `model`).

        Raises:
            CondenserConfigError: no such file nor shipped pipeline, or not a valid pipeline file.
        """
        if isinstance(source, Pipeline):
            return source.replace(**settings) if settings else source
        if isinstance(source, Condenser):
            return cls(source, **settings)
        if source is None:
            return cls.default(model, **settings)
        from openhands_memory.pipelines import resolve_pipeline  # the shipped files: found by name as the CLI finds them

        return load_pipeline(resolve_pipeline(source), model=model).replace(**settings)

    def replace(self, **changes: Any) -> Pipeline:
        """This pipeline (the same condenser and renderer, unless named) with some settings changed, every other one kept.

        `changes` are `condenser`, `description`, `history_policy` and `Pipeline`'s keyword settings.
        The meter is kept unless `token_counter` or `message_tokens` change (then `measured_by` again).
        """
        current: dict[str, Any] = {name: getattr(self, name) for name in ("condenser", "description", "history_policy", *_SETTINGS)}
        if "condenser" in changes and "description" not in changes:
            current["description"] = None  # the new condenser's name
        unknown = sorted(set(changes) - set(current))
        if unknown:
            raise TypeError(f"Pipeline has no setting {unknown[0]!r}; the settings: {', '.join(current)}")
        made = Pipeline(**{**current, **changes})
        if not {"token_counter", "message_tokens", "condenser"} & set(changes):
            made.meter = self.meter
        return made

    def use_agent_model(self, model: str, *, known_from: str = "the agent's model") -> None:
        """Tell the condenser the agent's model once it is known (`Condenser.use_agent_model`: a `cache_aware`
        left to the agent's model prices for it); the description's pricing note says whose prices now,
        and how the model was known (`known_from`: a replay of another agent's log says "the model the log records")."""
        before = getattr(self.condenser, "pricing_note", None)
        self.condenser.use_agent_model(model)
        after = getattr(self.condenser, "pricing_note", None)
        if isinstance(before, str) and isinstance(after, str) and after != before and before in self.description:
            self.description = self.description.replace(before, after.replace("(the agent's model)", f"({known_from})"))

    def measured_by(self, tokenizer: Tokenizer | str | None) -> Pipeline:
        """This pipeline counting its prompts with the one `PromptMeter` over `tokenizer` (a name: `tokenizer_for`; None: approximate).

        Its `meter` counts each turn's prompt (`Turn.tokens`, `prompt_tokens`); the history policy's
        `max_tokens` counts messages with the same meter, so the trim measures what is reported; and
        the condenser's token budgets, records and the loop guard count with it too, while this
        pipeline runs it (`token_counter`, a `PromptTokenCounter`: a view that holds its system
        message counts exactly as `prompt_tokens` reports its untrimmed prompt). The condenser object
        is shared, not copied, and not changed: another pipeline around it counts with its own.
        """
        meter = PromptMeter(tokenizer_for(tokenizer) if tokenizer is None or isinstance(tokenizer, str) else tokenizer)
        counter = PromptTokenCounter(meter, self._counting_renderer())
        measured = self.replace(message_tokens=meter.message_tokens, token_counter=counter)
        measured.meter = meter
        return measured

    def counting(self) -> AbstractContextManager[None]:
        """A block in which the condenser (and any strategy) counts with this pipeline's counter (`counting_with`).

        `condense` runs in it; so must any other call into the strategy for this run (the SDK
        bridge's hard reset and input limit, the steering tools' sizes).
        """
        return counting_with(self.token_counter)

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
        A turn counts its prompt itself (`Turn.tokens`): call this only for a prompt no turn made.

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

    def condense(self, view: View) -> View | Condensation:
        """Ask the condenser once, counting with the run's counter: the view the model is shown, or a condensation to append first.

        The guard counts the condensation; a view ends the step (the guard starts again).

        Raises:
            CondensationStalledError: a condensation again after one that made no progress, or
                too many in one step (see `CondensationGuard`).
        """
        with self.counting():
            outcome = self.condenser.condense(view)
            if isinstance(outcome, Condensation):
                self.guard.condensed(view)
                return outcome
        self.guard.reset()
        return outcome

    def step(self, view: View, initial_user_action: MessageAction | None) -> Turn[Any] | Condensation:
        """One ask of the turn: a condensation to append first, or the view shown as messages, trimmed and counted.

        Raises:
            CondensationStalledError: condensing made no progress (see `condense`).
        """
        outcome = self.condense(view)
        if isinstance(outcome, Condensation):
            return outcome
        return Turn(outcome, self._shown(outcome, initial_user_action))

    def turn(
        self,
        current_view: Callable[[], View],
        append: Callable[[Condensation, View], T],
        initial_user_action: MessageAction | None | Callable[[], MessageAction | None],
    ) -> Turn[T]:
        """THE turn: condense until the view settles, then show it (render, trim, count).

        Each condensation is handed to `append(condensation, view it was made for)`, which appends
        its action where `current_view` will see it; what `append` returns is kept in order.
        `initial_user_action` is the user's first message (or a function giving it, asked once the
        view settled).

        Raises:
            CondensationStalledError: condensing made no progress (see `CondensationGuard`).
        """
        made: list[T] = []
        while True:
            view = current_view()
            outcome = self.condense(view)
            if not isinstance(outcome, Condensation):
                initial = initial_user_action() if callable(initial_user_action) else initial_user_action
                return Turn(outcome, self._shown(outcome, initial), tuple(made))
            made.append(append(outcome, view))

    def _shown(self, view: View, initial_user_action: MessageAction | None) -> ShownMessages:
        """`show`, counted by the meter when there is one."""
        shown = self.show(view, initial_user_action)
        if self.meter is None:
            return shown
        return dataclasses.replace(shown, tokens=self.prompt_tokens(shown, view))

    def show(self, view: View | Sequence[Event], initial_user_action: MessageAction | None) -> ShownMessages:
        """`view` as the messages the model is sent: rendered, then trimmed by the history policy (not counted)."""
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

    def fit_to_policy(self, events: Sequence[Event], cuts: Iterable[int]) -> list[int]:
        """The positions of `events` to show so that the history policy drops no message: the trim, made on events.

        For a caller that renders the prompt itself (the SDK bridge): the oldest events are left out
        instead of the messages they render to. What is kept is the pinned head (the system message,
        and the first user message when the policy pins it) and the longest tail that starts at one
        of `cuts` (positions the caller's view may be cut at; the last one keeps only the head when
        nothing else fits). Fewer events render to fewer messages, steps and tokens, so the cut is
        found by bisection (about log2 of the view's length renderings). The policy's `roles` is not
        applied: dropping every message of a role is no cut of a view. All of `events` when the
        policy drops nothing (or there is none).
        """
        policy = self.history_policy
        everything = list(range(len(events)))
        if policy is None or len(events) < 2:
            return everything
        first_user = next((e for e in events if isinstance(e, MessageAction) and e.source == "user"), None)
        memory = self.memory

        def fits(indexes: list[int]) -> bool:
            # As the caller renders them: the events kept, the first user message only if it is one of them.
            messages = memory.process_events(
                [events[i] for i in indexes],
                None,
                max_message_chars=self.max_message_chars,
                vision_is_active=self.vision_is_active,
            )
            trim = policy.apply(messages, count_tokens=self.message_tokens)
            return trim.dropped - trim.dropped_by_roles == 0

        if fits(everything):
            return everything
        head = [next((i for i, e in enumerate(events) if isinstance(e, SystemMessageAction)), None)]
        if policy.pin_first_user and first_user is not None:
            head.append(next(i for i, e in enumerate(events) if e is first_user))
        pinned = sorted(i for i in head if i is not None)
        allowed = sorted(i for i in set(cuts) if 1 <= i <= len(events))
        if not allowed:
            return everything

        def kept(cut: int) -> list[int]:
            return [i for i in pinned if i < cut] + list(range(cut, len(events)))

        low, high = 0, len(allowed) - 1
        while low < high:
            middle = (low + high) // 2
            if fits(kept(allowed[middle])):
                high = middle
            else:
                low = middle + 1
        return kept(allowed[low])

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
