"""`auto_context`: AgentScope's AutoContextMemory as a condenser: six compressions, the lightest first, one unit per call.

When the view has `msg_threshold` events or more, or `max_token * token_ratio` tokens or more (by
the pipeline's token counter), the condenser finds the lightest strategy that has something to do
and returns one condensation for one unit of the view:

1. `TOOL_INVOCATION_COMPRESS`: a run of at least `min_consecutive_tool_messages` tool messages in
   a past round, outside the newest `last_keep` events, becomes one model summary that keeps tool
   names, arguments and key results (task-tracking calls are shown to the model in one line);
2. `LARGE_MESSAGE_OFFLOAD`: a tool call whose output is over `large_payload_threshold` characters,
   outside the newest `last_keep` events, becomes a preview of `offload_single_preview` characters
   and the line of `large_output_offload` telling the agent to `context_reload` it by event id;
3. `LARGE_MESSAGE_OFFLOAD_UNPROTECTED`: the same, without the `last_keep` protection;
4. `PREVIOUS_ROUND_CONVERSATION_SUMMARY`: a past round (a user message and what followed it up to
   the next one) becomes one model summary;
5. `CURRENT_ROUND_LARGE_MESSAGE_SUMMARY`: a large event of the current round that offloading does
   not cover (a message, an action with large arguments) becomes a model summary with its handle;
6. `CURRENT_ROUND_MESSAGE_COMPRESS`: the current round (after the latest user message) becomes one
   model summary of about `current_round_compression_ratio` of its size, a target the prompt states
   in characters.

Each condensation forgets its unit (whole tool calls with their results; a parallel batch is one
unit) and puts its summary where the unit was, as a persisting summary (`summary_persists`: it
stays until a later condensation lists its id, so several stand at once). The controller appends it
and asks again, so the strategies escalate call by call and stop as soon as the view is under both
thresholds. A strategy that compresses an earlier summary lists that summary's condensation id.

Never compressed: the latest model response and everything after it, the latest user message (it
starts the current round), the kept head (`keep_first`, the system prompt, the first user message),
the latest task-tracking event (the plan), and a tool call still waiting for its result.

Every compression prompt shows the current plan (task ids, titles, statuses) before its final
instruction. Each condensation records `compression` in its metadata (`condenser_metadata.extra`):
the event type, how many events it compressed, the ids of the kept events around them, whether the
view is still over a threshold, and `exhausted` when no strategy is left to run after it. When the
view is over a threshold and no strategy can act, the view is returned as it is: a warning is
logged once until a compression acts again, and `exhausted_count` counts those calls.

With no model (`llm=None`; no `llm_config` in the config) it works offline: strategies 2 and 3 never
need one, and 1, 4, 5 and 6 write the offline structured summary of their unit (`offline_summary`,
through `ModelCaller.write_offline_summary`, recorded as `summarizer: "offline structured
summarizer"`), an earlier summary in the unit folded in, within the strategy's size rule (strategy
6: `current_round_compression_ratio` of the unit's characters). Under `on_model_error = "fallback"`
a failed model call writes the same.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from openhands_memory.condenser.kit import (
    FROM_CONFIG,
    CITE_EVENT_IDS,
    CONFIG,
    ModelCaller,
    ModelConfig,
    OnModelError,
    ViewStructure,
    analyze,
    condensation_action,
    current_plan,
    event_block,
    focus_instructions,
    forget_id,
    is_summary,
    is_task_tracking,
    one_line,
    plan_hint,
    render_event,
    sized,
    truncate,
)
from openhands_memory.condenser.base import (
    Condensation,
    CondensationReason,
    RollingCondenser,
)
from openhands_memory.condenser.compression import (
    COMPRESSION_METADATA_KEY,
    CompressionEventType,
    CompressionRecord,
)
from openhands_memory.condenser.impl.large_output_offload_condenser import (
    LargeOutputOffloadCondenser,
)
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.errors import (
    CondenserConfigError,
    LLMError,
    NoCondensationAvailable,
)
from openhands_memory.events import (
    Action,
    AgentCondensationObservation,
    CondensationAction,
    Event,
    EventSource,
    MessageAction,
    Observation,
    RecallAction,
    SystemMessageAction,
)
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import LLM
from openhands_memory.view import View

if TYPE_CHECKING:
    from openhands_memory.condenser.config import CondenserContext

__all__ = [
    "COMPRESSION_EVENT_TYPES",
    "AutoContextCondenser",
    "AutoContextCondenserConfig",
    "AutoContextPrompts",
]

logger = logging.getLogger(__name__)

_TYPE = "auto_context"

COMPRESSION_EVENT_TYPES: tuple[CompressionEventType, ...] = tuple(CompressionEventType)
"""The event type of strategy `n` is `COMPRESSION_EVENT_TYPES[n - 1]` (AgentScope's order, lightest first)."""

# Each summary starts with its strategy's tag, so that a later call can tell from the view alone
# what a summary stands for: tool calls (strategies 1-3) may join a run of tool messages, a past
# round's summary starts a round as a user message does.
_TAGS = {
    1: "[compressed tool calls",
    2: "[offloaded tool call",
    3: "[offloaded tool call",
    4: "[summary of a past round",
    5: "[summary of a large message",
    6: "[summary of the current round",
}
_TOOL_TAGS = (_TAGS[1], _TAGS[2])

_MIN_SUMMARY_CHARS = 400
"""A model summary may always take this many characters, even of a small unit (the token check still applies)."""

_TRUNCATION_MARK = len("\n... [truncated] ...\n")
"""The characters `truncate` adds where it cuts."""

_MIN_CUT_CHARS = 40
"""A summary is never cut shorter than this: the unit is then left alone."""


# -- prompts (this project's own) -----------------------------------------------------------------

TOOL_COMPRESS_PROMPT = """\
You are shortening the history of an AI agent so that it can keep working. Below is a run of tool \
calls the agent made earlier, each with its result. Replace the run with a compact record of it.
Keep: each tool that was called, with its essential arguments (commands, file paths, queries); \
the results that matter later (what was found, what failed and why, values, file names, versions); \
what the agent learnt or changed. Drop: repeated output, listings and logs beyond what matters. \
Calls that only manage the task list need one short line each."""

ROUND_SUMMARY_PROMPT = """\
You are shortening the history of an AI agent so that it can keep working. Below is one earlier \
round of the conversation: a request from the user and everything the agent did about it (its \
messages, tool calls and their results). Replace the round with a summary that lets the agent go on \
without it: what the user asked, what the agent did and found, what it changed, what it decided, \
what was left open. Keep names, paths, values and errors exactly."""

LARGE_MESSAGE_PROMPT = """\
You are shortening the history of an AI agent so that it can keep working. One event of the \
current task below is very large. Replace it with a summary that keeps what the agent needs to go \
on: its purpose, the key facts, names, paths, values and errors, and any instruction in it. The \
original stays available: the agent can reload it by its event id."""

CURRENT_ROUND_PROMPT = """\
You are shortening the history of an AI agent so that it can keep working on its current task. \
Below is what the agent has done since the user's latest request: its messages, tool calls and \
their results. Rewrite it as a compact account in order: what was tried, what was found, what was \
changed, what failed and why, and where the work stands now. Keep names, paths, values and errors \
exactly; drop repetition and raw output."""

_CLOSINGS = {
    1: "Now write the compact record of these tool calls.",
    4: "Now write the summary of this round.",
    5: "Now write the summary of this event.",
}


class AutoContextPrompts(BaseModel):
    """Instructions that replace the default prompt of a model-backed compression (unset: the default).

    Whatever the instructions, the prompt still shows the events, asks to cite their ids, shows the
    current plan and ends with the strategy's final instruction (with the target size for strategy 6).
    """

    model_config = CONFIG
    previous_round_tool_compress_prompt: str | None = None
    """Strategy 1: compressing a run of past tool calls."""
    previous_round_summary_prompt: str | None = None
    """Strategy 4: summarizing a past round."""
    current_round_large_message_prompt: str | None = None
    """Strategy 5: summarizing a large event of the current round."""
    current_round_compress_prompt: str | None = None
    """Strategy 6: compressing the current round."""


class AutoContextCondenserConfig(ModelConfig):
    """`auto_context`: AgentScope's AutoContextMemory: six compressions, lightest first, on record.

    Its model (`llm_config`) writes the summaries of strategies 1, 4, 5 and 6; with none, those
    strategies write the offline structured summary (built from the events)."""

    type: Literal["auto_context"] = "auto_context"
    """The condenser type."""
    msg_threshold: int = sized("events", default=100, ge=2)
    """Compress when the view has this many events or more."""
    max_token: int = sized("tokens", default=131072, ge=1)
    """The context window, in tokens: compress from `max_token * token_ratio` tokens."""
    token_ratio: float = Field(default=0.75, gt=0, le=1)
    """Compress when the view has `max_token * token_ratio` tokens or more."""
    last_keep: int = sized("newest", default=50, ge=0)
    """The newest events protected from strategies 1 and 2."""
    large_payload_threshold: int = sized("chars", default=5120, ge=1)
    """An event whose text has more characters than this is large."""
    offload_single_preview: int = sized("chars", default=200, ge=0)
    """The characters of an offloaded output still shown; less than `large_payload_threshold`."""
    min_consecutive_tool_messages: int = Field(default=6, ge=2)
    """The shortest run of tool messages (calls and results) strategy 1 compresses."""
    current_round_compression_ratio: float = Field(default=0.3, gt=0, lt=1)
    """Strategy 6's target size, as a share of the characters of what it compresses."""
    custom_prompt: AutoContextPrompts | None = None
    """Instructions that replace the default prompts, per strategy (unset ones keep the defaults)."""

    @model_validator(mode="after")
    def _check_preview(self) -> Any:
        if self.offload_single_preview >= self.large_payload_threshold:
            raise ValueError(
                f"offload_single_preview ({self.offload_single_preview}) must be less than "
                f"large_payload_threshold ({self.large_payload_threshold})"
            )
        return self


@dataclass(frozen=True, slots=True)
class _Candidate:
    """One unit a strategy would compress."""

    strategy: int
    """1 to 6."""
    indexes: tuple[int, ...]
    """The view indexes of the events compressed (whole units), in order."""
    large: tuple[int, ...] = ()
    """Strategies 2, 3, 5: the indexes of the large events among them."""


@dataclass(slots=True)
class _Scan:
    """What the strategies need to know about one view."""

    events: list[Event]
    structure: ViewStructure
    forgettable: list[bool]
    members: dict[int, list[int]]
    """The view indexes of each unit."""
    protected_start: int
    """The latest model response starts here: nothing from here on is compressed."""
    round_start: int | None
    """The index of the latest user message (None: no user message, the whole view is the current round)."""
    plan_text: str

    def units_within(self, indexes: Sequence[int], low: int, high: int) -> list[int]:
        """The events of the forgettable units among `indexes` that lie wholly in [low, high), in order."""
        chosen: set[int] = set()
        seen: set[int] = set()
        unit_of, ok = self.structure.unit_of, self.forgettable
        for index in indexes:
            unit = unit_of[index]
            if unit in seen:
                continue
            seen.add(unit)
            members = self.members[unit]
            if ok[index] and all(low <= i < high for i in members):
                chosen.update(members)
        return sorted(chosen)


class AutoContextCondenser(ModelCaller, RollingCondenser):
    """AgentScope's AutoContextMemory: the lightest of six compressions that can act, one unit per call
    (see the module docstring)."""

    config_cls = AutoContextCondenserConfig
    exports = ("AutoContextPrompts",)
    summaries_persist = True

    def __init__(
        self,
        llm: LLM | LLMConfig | None = None,
        *,
        msg_threshold: int = FROM_CONFIG,
        max_token: int = FROM_CONFIG,
        token_ratio: float = FROM_CONFIG,
        last_keep: int = FROM_CONFIG,
        large_payload_threshold: int = FROM_CONFIG,
        offload_single_preview: int = FROM_CONFIG,
        min_consecutive_tool_messages: int = FROM_CONFIG,
        current_round_compression_ratio: float = FROM_CONFIG,
        custom_prompt: AutoContextPrompts | None = FROM_CONFIG,
        keep_first: int = FROM_CONFIG,
        max_event_length: int = FROM_CONFIG,
        on_model_error: OnModelError = FROM_CONFIG,
        token_counter: TokenCounter | None = None,
    ) -> None:
        """Set the thresholds, the model and the prompts (defaults: AgentScope's; `llm` None: no model, offline).

        Raises:
            CondenserConfigError: a value out of range (the message names the field), as the config
                model would reject it.
        """
        super().__init__(token_counter=token_counter)
        # The config model holds the rules (ranges, the preview below the threshold): check the
        # arguments with it, so a condenser built in code fails as its config would.
        try:
            AutoContextCondenserConfig(
                llm_config="checked",
                msg_threshold=msg_threshold,
                max_token=max_token,
                token_ratio=token_ratio,
                last_keep=last_keep,
                large_payload_threshold=large_payload_threshold,
                offload_single_preview=offload_single_preview,
                min_consecutive_tool_messages=min_consecutive_tool_messages,
                current_round_compression_ratio=current_round_compression_ratio,
                custom_prompt=custom_prompt,
                keep_first=keep_first,
                max_event_length=max_event_length,
                on_model_error=on_model_error,
            )
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            field = ".".join(str(part) for part in error["loc"]) or None
            message = str(error["msg"]).removeprefix("Value error, ")
            raise CondenserConfigError(message, condenser_type=_TYPE, field=field) from None
        self.msg_threshold = msg_threshold
        self._focus: str | None = None  # the focus of the request being answered (set by `get_condensation`)
        self.max_token = max_token
        self.token_ratio = token_ratio
        self.last_keep = last_keep
        self.large_payload_threshold = large_payload_threshold
        self.offload_single_preview = offload_single_preview
        self.min_consecutive_tool_messages = min_consecutive_tool_messages
        self.current_round_compression_ratio = current_round_compression_ratio
        self.prompts = custom_prompt if custom_prompt is not None else AutoContextPrompts()
        self.keep_first = keep_first
        self.max_event_length = max_event_length
        self.exhausted_count = 0
        """Calls that found the view over a threshold and no strategy able to act."""
        self._warned = False
        self._offloader = LargeOutputOffloadCondenser(
            large_payload_threshold, offload_single_preview, protect_last_keep=False, last_keep=0
        )
        self.init_model(llm, on_model_error)

    @classmethod
    def build(cls, config: AutoContextCondenserConfig, context: CondenserContext) -> AutoContextCondenser:  # type: ignore[override]
        """Build from a config: the model its `llm_config` names (resolved in `context`; none when it
        names none), every other field by name.

        Raises:
            CondenserConfigError: `llm_config` names an LLM config the context does not hold.
        """
        llm = cls.model_from(config, context)
        arguments = cls.config_arguments(config, exclude=("llm_config",))
        return cls(llm, **arguments, token_counter=context.token_counter)

    @property
    def token_threshold(self) -> int:
        """Compress at this many tokens or more: `max_token * token_ratio`."""
        return int(self.max_token * self.token_ratio)

    def over_threshold(self, events: Sequence[Event]) -> CondensationReason | None:
        """Which threshold `events` reach (`size` first, then `tokens`), or None."""
        if len(events) >= self.msg_threshold:
            return "size"
        if self.token_counter(events) >= self.token_threshold:
            return "tokens"
        return None

    def condensation_reason(self, view: View) -> CondensationReason | None:
        if view.unhandled_condensation_request:
            return "request"
        return self.over_threshold(view)

    def get_condensation(self, view: View) -> Condensation:
        self._focus = view.condensation_focus  # a request's focus: first in the prompt, kept by the offline summary
        scan = self._scan(view)
        candidate = self._find(scan, fewer_events=self._over_count_only(view))
        if candidate is None:
            return self._exhausted(view)
        action = self._compress(scan, candidate)
        after = view.apply(action)
        over_after = self.over_threshold(after) is not None
        exhausted = over_after and self._find(self._scan(after), fewer_events=self._over_count_only(after)) is None
        events = scan.events
        chosen = set(candidate.indexes)
        record = CompressionRecord(
            event_type=COMPRESSION_EVENT_TYPES[candidate.strategy - 1],
            compressed_message_count=len(candidate.indexes),
            previous_message_id=_neighbour_id(events, chosen, candidate.indexes[0], -1),
            next_message_id=_neighbour_id(events, chosen, candidate.indexes[-1], 1),
            over_threshold_after=over_after,
            exhausted=exhausted,
        )
        self.add_metadata(COMPRESSION_METADATA_KEY, record.to_metadata())
        self._warned = False
        return Condensation(action)

    # -- finding the unit --------------------------------------------------------------------------

    def _scan(self, view: View) -> _Scan:
        structure = analyze(view)
        events = structure.events
        extra = []
        tracking = next((i for i in range(len(events) - 1, -1, -1) if is_task_tracking(events[i])), None)
        if tracking is not None:
            extra.append(tracking)
        users = [i for i, e in enumerate(events) if _is_user_message(e)]
        if users:
            extra.append(users[-1])  # the latest user message starts the current round: it stays
        forgettable = structure.forgettable(structure.pinned_units(self.keep_first, extra))
        members: dict[int, list[int]] = {}
        for index, unit in enumerate(structure.unit_of):
            members.setdefault(unit, []).append(index)
        return _Scan(
            events=events,
            structure=structure,
            forgettable=forgettable,
            members=members,
            protected_start=_latest_response_start(events),
            round_start=users[-1] if users else None,
            plan_text=plan_hint(current_plan(events)),
        )

    def _over_count_only(self, events: Sequence[Event]) -> bool:
        """Over the event threshold and under the token one: only compressions of two events or more help."""
        return len(events) >= self.msg_threshold and self.token_counter(events) < self.token_threshold

    def _find(self, scan: _Scan, *, fewer_events: bool = False) -> _Candidate | None:
        """The first unit of the lightest strategy that has one a summary can shrink (None: none has).

        With `fewer_events`, a unit of one event (a large message shrunk in place) does not count:
        it would leave the view over the event threshold, and the next call would look again.
        """
        finders: tuple[Callable[[_Scan], Iterator[_Candidate]], ...] = (
            self._tool_run,
            lambda s: self._large_output(s, protect_last_keep=True),
            lambda s: self._large_output(s, protect_last_keep=False),
            self._past_round,
            self._current_large,
            self._current_round,
        )
        for finder in finders:
            for candidate in finder(scan):
                if fewer_events and len(candidate.indexes) < 2:
                    continue
                if self._can_shrink(scan, candidate):
                    return candidate
        return None

    def _can_shrink(self, scan: _Scan, candidate: _Candidate) -> bool:
        """Whether the shortest summary allowed (its tag and a few words) takes fewer tokens than the unit."""
        compressed = [scan.events[i] for i in candidate.indexes]
        shortest = f"{_TAGS[candidate.strategy]}: {_id_span(compressed)}]\n" + "x" * _MIN_CUT_CHARS
        counter = self.token_counter
        return counter([AgentCondensationObservation(content=shortest)]) < counter(compressed)

    def _past_end(self, scan: _Scan) -> int:
        """Where past rounds end: the latest user message (or the latest response, if earlier)."""
        start = scan.round_start if scan.round_start is not None else 0
        return min(start, scan.protected_start)

    def _tail_start(self, scan: _Scan) -> int:
        return max(0, len(scan.events) - self.last_keep)

    def _tool_run(self, scan: _Scan) -> Iterator[_Candidate]:
        """Strategy 1: the oldest run of enough tool messages in past rounds, outside `last_keep`."""
        end = min(self._past_end(scan), self._tail_start(scan))
        run: list[int] = []
        for index in range(end + 1):
            if index < end and _is_tool_message(scan.events[index]):
                run.append(index)
                continue
            if len(run) >= self.min_consecutive_tool_messages:
                chosen = scan.units_within(run, run[0], run[-1] + 1)
                if len(chosen) >= self.min_consecutive_tool_messages:
                    yield _Candidate(1, tuple(chosen))
            run = []

    def _large_output(self, scan: _Scan, *, protect_last_keep: bool) -> Iterator[_Candidate]:
        """Strategies 2 and 3: the oldest tool call with a large output, before the latest response."""
        end = scan.protected_start
        if protect_last_keep:
            end = min(end, self._tail_start(scan))
        offload = self._offloader.offload_if_large
        for index in range(end):
            event = scan.events[index]
            if not scan.forgettable[index] or offload(event) is event:
                continue
            chosen = scan.units_within([index], 0, end)
            if chosen:
                large = tuple(i for i in chosen if offload(scan.events[i]) is not scan.events[i])
                yield _Candidate(2 if protect_last_keep else 3, tuple(chosen), large)

    def _past_round(self, scan: _Scan) -> Iterator[_Candidate]:
        """Strategy 4: the oldest past round with at least two events to summarize, not all summaries of rounds."""
        end = self._past_end(scan)
        events = scan.events
        starts = [i for i in range(end) if _is_user_message(events[i]) or _is_tagged(events[i], (_TAGS[4],))]
        for position, start in enumerate(starts):
            stop = starts[position + 1] if position + 1 < len(starts) else end
            chosen = scan.units_within(range(start, stop), start, stop)
            fresh = [i for i in chosen if not _is_tagged(events[i], (_TAGS[4],))]
            if len(chosen) >= 2 and fresh:
                yield _Candidate(4, tuple(chosen))

    def _current_range(self, scan: _Scan) -> tuple[int, int]:
        start = scan.round_start + 1 if scan.round_start is not None else 0
        return start, scan.protected_start

    def _current_large(self, scan: _Scan) -> Iterator[_Candidate]:
        """Strategy 5: the oldest large event of the current round (no summary, no user message)."""
        low, high = self._current_range(scan)
        for index in range(low, high):
            event = scan.events[index]
            if not scan.forgettable[index] or is_summary(event) or len(_event_text(event)) <= self.large_payload_threshold:
                continue
            chosen = scan.units_within([index], low, high)
            if chosen:
                yield _Candidate(5, tuple(chosen), (index,))

    def _current_round(self, scan: _Scan) -> Iterator[_Candidate]:
        """Strategy 6: every forgettable unit of the current round before the latest response, if two events or more."""
        low, high = self._current_range(scan)
        chosen = scan.units_within(range(low, high), low, high)
        if len(chosen) >= 2:
            yield _Candidate(6, tuple(chosen))

    # -- compressing it ----------------------------------------------------------------------------

    def _compress(self, scan: _Scan, candidate: _Candidate) -> CondensationAction:
        events = scan.events
        compressed = [events[i] for i in candidate.indexes]
        header = f"{_TAGS[candidate.strategy]}: {_id_span(compressed)}]"
        if candidate.strategy in (2, 3):
            summary = self._offload_summary(scan, candidate)
        else:
            summary = self._model_summary(scan, candidate, compressed, header)
        text = self._fit(f"{header}\n{summary}", compressed)
        ids = [i for i in map(forget_id, compressed) if i is not None]
        first = candidate.indexes[0]
        standing = scan.structure.summary_index
        offset = first - (1 if standing is not None and standing < first else 0)
        action = condensation_action(events, ids, summary=text, summary_offset=offset)
        action.summary_persists = True
        return action

    def _offload_summary(self, scan: _Scan, candidate: _Candidate) -> str:
        """The preview of a tool call with a large output: each event in brief, each large output as its preview and handle."""
        lines = []
        for index in candidate.indexes:
            event = scan.events[index]
            if index in candidate.large:
                shown = self._offloader.offload_if_large(event)
                lines.append(f"{type(event).__name__} (event {event.id}):\n{shown.content}")  # type: ignore[attr-defined]
            else:
                lines.append(truncate(render_event(event), max(self.offload_single_preview, 100)))
        return "\n".join(lines)

    def _model_summary(self, scan: _Scan, candidate: _Candidate, compressed: list[Event], header: str) -> str:
        """Strategies 1, 4, 5, 6: the model's summary of the unit; with no model, or as the fallback,
        the offline structured summary (`_offline_summary`). Strategy 5 adds each large event's handle,
        strategy 6 is cut to its target."""
        strategy = candidate.strategy
        target = None
        if strategy == 6:
            target = max(_MIN_CUT_CHARS, int(self.current_round_compression_ratio * _chars(compressed)))
        handles = ""
        if strategy == 5:
            handles = "\n" + "\n".join(
                f"[event {scan.events[i].id}: {len(_event_text(scan.events[i]))} characters offloaded; "
                f"call context_reload with event_id={scan.events[i].id} to see all of it]"
                for i in candidate.large
            )
        self.last_error = None
        if self.llm is None:
            self.add_metadata("outcome", "offline summary")
            summary = self._offline_summary(compressed, header=header, handles=handles, target=target)
        else:
            before = self.llm.metrics.snapshot()
            try:
                summary = self.ask(lambda limit: self._request(self._prompt(scan, candidate, compressed, limit, target)))
            except LLMError as error:
                self.record_usage_since(before)
                self.handle_model_error(error)  # raises unless falling back
                summary = self._offline_summary(compressed, header=header, handles=handles, target=target)
            else:
                self.record_usage_since(before)
        summary += handles
        if target is not None and len(summary) > target:
            self.add_metadata("summary_cut", {"characters": len(summary), "target": target})
            summary = truncate(summary, max(0, target - _TRUNCATION_MARK))  # at most `target` with the mark
        return summary

    def _offline_summary(self, compressed: list[Event], *, header: str, handles: str, target: int | None) -> str:
        """The offline structured summary of the unit, earlier summaries in it folded in, aimed at the
        size `_fit` (and strategy 6's `target`) allows, so that rounds drop whole lines before a cut.

        The offline summarizer reads earlier summaries back by section (`_foldable`).
        """
        events = [e for e in compressed if not is_summary(e)]
        previous = [_foldable(e.content) for e in compressed if is_summary(e)]  # type: ignore[attr-defined]
        if target is not None:
            max_chars = target
        else:
            max_chars = max(_MIN_SUMMARY_CHARS, _chars(compressed) // 2) - len(header) - 1 - len(handles)
        counter = self.token_counter
        # `_fit` wants fewer tokens than the unit for the whole text: leave room for the header and handles.
        around = counter([AgentCondensationObservation(content=header + handles)])
        max_tokens = counter(compressed) - 1 - around
        return self.write_offline_summary(
            events,
            previous,
            max_tokens=max(1, max_tokens),
            max_chars=max(_MIN_CUT_CHARS, max_chars),
            focus=self._focus,
        )

    def _request(self, prompt: str) -> str:
        assert self.llm is not None, "only asked with a model"
        response = self.llm.completion([{"role": "user", "content": prompt}], require_text=True)
        return response.text.strip()

    def _prompt(self, scan: _Scan, candidate: _Candidate, compressed: list[Event], limit: int, target: int | None) -> str:
        """The compression prompt: instructions, the events, the citation rule, the plan, the final instruction."""
        strategy = candidate.strategy
        prompts = self.prompts
        instructions = {
            1: prompts.previous_round_tool_compress_prompt or TOOL_COMPRESS_PROMPT,
            4: prompts.previous_round_summary_prompt or ROUND_SUMMARY_PROMPT,
            5: prompts.current_round_large_message_prompt or LARGE_MESSAGE_PROMPT,
            6: prompts.current_round_compress_prompt or CURRENT_ROUND_PROMPT,
        }[strategy]
        blocks = []
        for event in compressed:
            if strategy == 1 and is_task_tracking(event):
                # Plan calls in a run of tools: one line; the plan itself is shown below.
                count = len(getattr(event, "task_list", []))
                blocks.append(f"<EVENT id={event.id}>\n{type(event).__name__}: task list with {count} tasks\n</EVENT>")
            else:
                blocks.append(event_block(event, limit))
        if target is not None:
            closing = (
                f"Now write the compact account. It must be at most {target} characters long "
                f"(about {self.current_round_compression_ratio:.0%} of the {_chars(compressed)} characters above)."
            )
        else:
            closing = _CLOSINGS[strategy]
        focus = focus_instructions(self._focus)
        parts = [focus, instructions.rstrip(), "\n".join(blocks), CITE_EVENT_IDS, scan.plan_text, closing]
        return "\n\n".join(part for part in parts if part)

    def _fit(self, text: str, compressed: list[Event]) -> str:
        """`text`, cut so that it takes fewer tokens than what it replaces (and at most half its characters, or 400).

        Raises:
            NoCondensationAvailable: not even a cut summary would be smaller (never for a unit over the thresholds).
        """
        counter = self.token_counter
        replaced = counter(compressed)
        limit = min(len(text), max(_MIN_SUMMARY_CHARS, _chars(compressed) // 2))
        while limit >= _MIN_CUT_CHARS:
            cut = text if limit >= len(text) else truncate(text, limit)
            if counter([AgentCondensationObservation(content=cut)]) < replaced:
                if cut is not text:
                    self.add_metadata("summary_cut", {"characters": len(text), "kept": len(cut)})
                return cut
            limit = limit * 2 // 3
        raise NoCondensationAvailable(self.name, "a summary of this unit would not be smaller than the unit")

    def _exhausted(self, view: View) -> Condensation:
        """Nothing to compress: mark a pending request handled, else count it, warn once, and leave the view."""
        if view.unhandled_condensation_request and self.over_threshold(view) is None:
            return Condensation(CondensationAction(forgotten_event_ids=[]))
        self.exhausted_count += 1
        if not self._warned:
            self._warned = True
            logger.warning(
                "auto_context: the view is over its threshold (%d events, %d tokens; thresholds %d events, %d tokens) "
                "and no strategy has anything left to compress",
                len(view), self.token_counter(view), self.msg_threshold, self.token_threshold,
            )  # fmt: skip
        if view.unhandled_condensation_request:
            return Condensation(CondensationAction(forgotten_event_ids=[]))
        raise NoCondensationAvailable(self.name, "over the threshold, and no strategy has anything left to compress")


# -- what the strategies look at ------------------------------------------------------------------


def _is_user_message(event: Event) -> bool:
    return isinstance(event, MessageAction) and event.source == EventSource.USER


def _is_tagged(event: Event, tags: tuple[str, ...]) -> bool:
    return is_summary(event) and event.content.startswith(tags)  # type: ignore[attr-defined]


_OFFLOADED_CALL = re.compile(r"^(?:command|path|url|query):[ \t]*\n?(.+)$", re.MULTILINE)
"""The line of an offloaded tool call's preview that says what it did (a command, a path, ...)."""


def _foldable(summary: str) -> str:
    """An earlier summary as the offline summarizer reads it back: without its strategy's tag, and an
    offloaded tool call (its preview is raw output) as one line citing its events."""
    first, _, rest = summary.partition("\n")
    if not first.startswith(tuple(_TAGS.values())):
        return summary
    if not first.startswith(_TAGS[2]):
        return rest
    span = first.removeprefix(_TAGS[2]).strip(" :]")
    called = _OFFLOADED_CALL.search(rest)
    what = f" `{one_line(called.group(1), 200)}`" if called else ""
    citation = f" ({span})" if span.startswith("event") else ""
    return f"- offloaded tool call{what}, its output reloadable by id{citation}"


def _is_tool_message(event: Event) -> bool:
    """A tool call, its result, or a summary that stands for tool calls (strategies 1-3)."""
    if isinstance(event, AgentCondensationObservation):
        return _is_tagged(event, _TOOL_TAGS)
    if isinstance(event, Observation):
        return True
    return (
        isinstance(event, Action)
        and event.source == EventSource.AGENT
        and not isinstance(event, MessageAction | SystemMessageAction | RecallAction)
    )


def _latest_response_start(events: Sequence[Event]) -> int:
    """Where the latest model response starts: its first action (parallel calls share a response id); the end if none."""
    index = len(events) - 1
    while index >= 0 and not (isinstance(events[index], Action) and events[index].source == EventSource.AGENT):
        index -= 1
    if index < 0:
        return len(events)
    response = events[index].response_id
    start = index
    if response is not None:
        for earlier in range(index - 1, -1, -1):
            event = events[earlier]
            if isinstance(event, Action) and event.response_id == response:
                start = earlier
            elif isinstance(event, Action) and event.source == EventSource.AGENT:
                break
    return start


def _event_text(event: Event) -> str:
    """The text that makes an event large: an observation's or a message's content, else the event as a prompt shows it."""
    if isinstance(event, Observation | MessageAction):
        return event.content  # type: ignore[union-attr]
    return render_event(event)


def _chars(events: Sequence[Event]) -> int:
    return sum(len(_event_text(e)) for e in events)


def _id_span(events: Sequence[Event]) -> str:
    ids = sorted(i for i in (e.id for e in events) if i is not None)
    if not ids:
        return "earlier summaries"
    return f"event {ids[0]}" if len(ids) == 1 else f"events {ids[0]}-{ids[-1]}"


def _neighbour_id(events: Sequence[Event], chosen: set[int], start: int, step: int) -> int | None:
    """The id of the nearest kept event with an id before (`step` -1) or after (+1) `start`."""
    index = start + step
    while 0 <= index < len(events):
        if index not in chosen and events[index].id is not None:
            return events[index].id
        index += step
    return None
