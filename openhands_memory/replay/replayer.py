"""Replay a recorded log through a condenser pipeline and measure what the model would have been sent.

`replay_log(path)` (or `replay_events(events)`) runs the log through a `Replayer` (see
`openhands_memory.replay.driver`): at every agent step it renders the view the model is shown as
messages (`Pipeline.show`) and counts the prompt as sent, tool definitions included, with the
pipeline's one counter (`Pipeline.prompt_tokens`, see `openhands_memory.prompt_tokens`): with
the tokenizer `tokenizer` names (offline: litellm ships the tokenizer files), else the agent's
`model`'s, else gpt-4o's (`tokenizer_name`: the rule every entry point follows), or with
`tokenizer="approximate"` at four characters a token without litellm. The bench counts with the same counter, so for the same log,
pipeline and tokenizer both print the same tokens. The result, a `ReplayReport`, has one row per
step, every condensation with its record, and the replayed history, which `write_log` saves as a
log that loads back with the same view. The source is only read.

Which condensations:

- by default the log's own condensations and requests are dropped, and the condenser (the
  offline `DEFAULT_CONDENSER_CONFIG` pipeline unless one is given) decides afresh;
- `recorded=True` keeps the log's condensations and applies them where they were made; with no
  condenser given nothing else condenses (a no-op condenser), with one it runs on top of them.

The condensers' own token budgets (`max_tokens`) count with the same counter and tokenizer
(`Pipeline.measured_by`): a condenser fires at the count the report shows for that view.

With pricings (`pricing=["claude-sonnet-4-5"]`), every step's prompt is also priced as that
model's provider bills it, prompt cache included, and the summarizer's calls at the same prices
(`ReplayReport.costs`, see `openhands_memory.replay.costs`). The prompt is priced as blocks: the
tool definitions, then each message, counted as the report counts them (as the bench prices them).

A step whose view makes the message layer leave tool calls or results out (see
`ConversationMemory.last_repairs`) says how many in `tool_call_repairs`; the report sums them. A
view a condenser made should need none.
"""

from __future__ import annotations

import os
import time

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openhands_memory.condenser import (
    CompressionEvent,
    Condenser,
    NoOpCondenser,
    compression_events,
    compressions_by_type,
)
from openhands_memory.errors import StepNotFoundError
from openhands_memory.events import CondensationAction, Event, MessageAction, load_events
from openhands_memory.stream import Redactor
from openhands_memory.llm.message import Message
from openhands_memory.llm.prompt_cache import PromptBlock, PromptPricing, RequestCost, resolve_pricing
from openhands_memory.replay.costs import DEFAULT_STEP_SECONDS, RequestClock, RunCosts
from openhands_memory.replay.driver import AgentStep, CondensationMade, RecordedCondensation, Replayer
from openhands_memory.view import View
from openhands_memory.pipeline import Pipeline, ShownMessages, describe_config, load_pipeline
from openhands_memory._tokenizer_names import APPROXIMATE, tokenizer_name
from openhands_memory.prompt_tokens import DEFAULT_TOKENIZER, LiteLLMTokenizer

__all__ = [
    "DEFAULT_TOKEN_MODEL",
    "Pipeline",
    "ReplayCondensation",
    "ReplayReport",
    "ReplayStep",
    "StepSnapshot",
    "describe_config",
    "load_pipeline",
    "replay_events",
    "replay_log",
    "snapshot_at",
]

DEFAULT_TOKEN_MODEL = DEFAULT_TOKENIZER
"""The model whose tokenizer counts a replay's tokens unless another is named (`prompt_tokens.DEFAULT_TOKENIZER`)."""

ProgressCallback = Callable[[int, int | None], None]
"""Called now and then with (events replayed, events in the log or None if unknown)."""

StepCallback = Callable[["ReplayStep", list[Message], list[RequestCost]], None]
"""Called at every agent step with its row, the messages the model was sent and (with pricings) what the request
cost under each pricing, in the pricings' order: what a report shows step by step (`openhands_memory.report`)."""

_PROGRESS_EVERY = 25


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """What the model was shown at one agent step."""

    number: int
    """1 for the first step."""
    event_id: int | None
    """The log's id of the action the agent took next."""
    replayed_id: int
    """That action's id in the replayed history."""
    history_events: int
    """Events in the replayed history before that action."""
    view_events: int
    """Events the model was shown (summaries included)."""
    messages: int
    """Messages the model was sent."""
    tokens: int
    """Prompt tokens of those messages (tool definitions included)."""
    condensations: int
    """Condensations made at this step."""
    unhandled_condensation_request: bool
    """A condensation was asked for and not done."""
    tool_call_repairs: int = 0
    """Tool calls or results the message layer left out of this step's chat to keep it valid
    (`ConversationMemory.last_repairs`): a view a condenser made should need none."""
    messages_trimmed: int = 0
    """Messages the pipeline's history policy dropped from this step's chat (0 without a policy)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class ReplayCondensation:
    """One condensation in the replayed history: made by the pipeline, or recorded in the log."""

    id: int
    """Its id in the replayed history."""
    step: int
    """The step it was made at; for a recorded one, the agent steps replayed before it."""
    recorded: bool
    """It comes from the log (else the pipeline made it)."""
    forgotten_ids: tuple[int, ...]
    """The ids it forgets, in the replayed history: those it lists, or of an id range the ids of
    the events replayed so far inside it (a range is never expanded: it may be far wider than the log)."""
    events_before: int
    """Events in view before it."""
    events_after: int
    """Events in view after it."""
    summary: str | None
    """The summary it leaves, if any."""
    metadata: dict[str, Any] | None
    """What the condenser recorded (`CondensationMetadata.to_dict()`, or the log's `condenser_metadata`)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data = {name: getattr(self, name) for name in self.__slots__}
        data["forgotten_ids"] = list(self.forgotten_ids)
        return data


@dataclass(slots=True)
class ReplayReport:
    """The result of replaying one log."""

    source: str
    """Where the log came from."""
    pipeline: str
    """What condensed (see `Pipeline.description`)."""
    model: str | None
    """The model whose tokenizer counted (None: estimated at four characters a token)."""
    recorded: bool
    """The log's own condensations were kept."""
    events: int = 0
    """Events read from the log."""
    steps: list[ReplayStep] = field(default_factory=list)
    """One row per agent step."""
    condensations: list[ReplayCondensation] = field(default_factory=list)
    """Every condensation in the replayed history, in order."""
    history: list[Event] = field(default_factory=list, repr=False)
    """The replayed history (see `openhands_memory.replay.driver`); `write_log` saves it."""
    final_view: View = field(default_factory=View, repr=False)
    """The view of the replayed history after its last event (what loading the saved history gives)."""
    tokens_estimated: bool = False
    """Some tokens were estimated (litellm has no tokenizer for some content or for the model)."""
    seconds: float = 0.0
    """Wall time of the replay (loading the log and the tokenizer excluded)."""
    tokenizer_seconds: float = 0.0
    """Wall time of loading the tokenizer, once per process."""
    summarizer: str | None = None
    """What the pipeline's model-backed condensers called (a model, or the offline structured
    summarizer), when the caller chose it (`bench.stand_in.choose_models`); None: not said."""
    costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """With pricings: per pricing name, what the run cost (see `openhands_memory.replay.costs.RunCosts`)."""
    timed_steps: int = 0
    """With pricings: the steps whose request time came from the log's timestamps."""

    @property
    def peak_step(self) -> ReplayStep | None:
        """The step with the most prompt tokens (the first such), if any."""
        return max(self.steps, key=lambda s: s.tokens, default=None)

    @property
    def peak_tokens(self) -> int:
        """The most prompt tokens at one step."""
        peak = self.peak_step
        return peak.tokens if peak is not None else 0

    @property
    def final_tokens(self) -> int:
        """Prompt tokens at the last step."""
        return self.steps[-1].tokens if self.steps else 0

    @property
    def total_prompt_tokens(self) -> int:
        """Prompt tokens summed over every step: what the whole run sends, before any caching."""
        return sum(s.tokens for s in self.steps)

    @property
    def tool_call_repairs(self) -> int:
        """Tool calls or results left out of the chats, summed over the steps (see `ReplayStep.tool_call_repairs`)."""
        return sum(s.tool_call_repairs for s in self.steps)

    @property
    def messages_trimmed(self) -> int:
        """Messages the pipeline's history policy dropped, summed over the steps (see `ReplayStep.messages_trimmed`)."""
        return sum(s.messages_trimmed for s in self.steps)

    @property
    def peak_view_events(self) -> int:
        """The most events the model was shown at one step."""
        return max((s.view_events for s in self.steps), default=0)

    @property
    def final_view_events(self) -> int:
        """Events in the view after the last event."""
        return len(self.final_view)

    @property
    def compressions(self) -> list[CompressionEvent]:
        """The compression records of the replayed history's condensations (a progressive strategy's steps), in order.

        Raises:
            MalformedEventError: a condensation's compression record is malformed (the message names its id).
        """
        return compression_events(self.history)

    def summary(self) -> dict[str, Any]:
        """The headline numbers, JSON-ready."""
        peak = self.peak_step
        return {
            "source": self.source,
            "pipeline": self.pipeline,
            "model": self.model,
            "recorded": self.recorded,
            "events": self.events,
            "replayed_events": len(self.history),
            "steps": len(self.steps),
            "condensations": len(self.condensations),
            "new_condensations": sum(1 for c in self.condensations if not c.recorded),
            "compressions": compressions_by_type(self.compressions),
            "peak_tokens": self.peak_tokens,
            "peak_step": peak.number if peak is not None else None,
            "final_tokens": self.final_tokens,
            "total_prompt_tokens": self.total_prompt_tokens,
            "tokens_estimated": self.tokens_estimated,
            "tool_call_repairs": self.tool_call_repairs,
            "peak_view_events": self.peak_view_events,
            "final_view_events": self.final_view_events,
            "seconds": round(self.seconds, 6),
            "tokenizer_seconds": round(self.tokenizer_seconds, 6),
            "summarizer": self.summarizer,
            **(
                {
                    "costs": {
                        name: {key: value for key, value in figures.items() if key not in ("breaks", "per_step_cost")}
                        for name, figures in self.costs.items()
                    },
                    "timed_steps": self.timed_steps,
                }
                if self.costs
                else {}
            ),
        }

    def to_dict(self) -> dict[str, Any]:
        """The summary, every step and every condensation, JSON-ready."""
        return {
            **self.summary(),
            "per_step": [s.to_dict() for s in self.steps],
            "condensation_list": [c.to_dict() for c in self.condensations],
            "compression_list": [c.to_dict() for c in self.compressions],
            **({"cost_list": self.costs} if self.costs else {}),
        }


@dataclass(frozen=True, slots=True)
class StepSnapshot:
    """What the model was shown at one step (or after the last event)."""

    step: int | None
    """The step (1 = first); None for the end of the log."""
    steps: int
    """Agent steps replayed up to here."""
    event: Event | None
    """The action the agent took next (as the log holds it); None at the end."""
    view: View
    """The view of the replayed history, condensations applied."""
    shown: View
    """What the condenser made of it: the view the model is shown."""
    messages: list[Message]
    """The messages the model is sent."""
    log_ids: dict[int, int] = field(default_factory=dict)
    """The log's id of each event read from the log, by its id in the replayed history (`view` and
    `shown` hold replayed ids: a condensation the replay made takes an id, and later events move up)."""

    def log_id(self, event: Event) -> int | None:
        """The log's id of `event` (an event of `view` or `shown`); None for one the replay made."""
        return None if event.id is None else self.log_ids.get(event.id)

    @property
    def is_renumbered(self) -> bool:
        """Some event of the log has another id in the replayed history."""
        return any(new != old for new, old in self.log_ids.items())


class _Measure:
    """The pipeline measured by the run's tokenizer, and what a step's turn measured (`Pipeline.turn` renders, trims and counts)."""

    def __init__(self, model: str | None, pipeline: Pipeline) -> None:
        # The policy's max_tokens counts with the same meter, so it trims what the report measures.
        self.pipeline = pipeline.measured_by(model)
        meter = self.pipeline.meter
        assert meter is not None
        self.meter = meter

    def load(self) -> float:
        """Load the tokenizer now (it may take seconds), so it is not timed as replay; returns the seconds."""
        if self.estimated:
            return 0.0
        started = time.perf_counter()
        self.meter.tokenizer.encode("x")
        return time.perf_counter() - started

    @property
    def estimated(self) -> bool:
        """The counts are estimated (no model's tokenizer)."""
        return not isinstance(self.meter.tokenizer, LiteLLMTokenizer)

    def blocks(self) -> tuple[list[PromptBlock], int]:
        """The prompt the last turn counted, as blocks for a prompt cache, and how many lead it unchanged (tools, system)."""
        return self.meter.last_blocks, self.meter.last_static_blocks


def _shown(item: AgentStep) -> ShownMessages:
    """What the pipeline's turn showed at a step (the replayer's pipeline is measured: the tokens are counted)."""
    assert item.turn is not None
    return item.turn.shown


def _counting_tokenizer(tokenizer: str | None, model: str | None) -> str | None:
    """The tokenizer a replay counts with (`tokenizer_name`'s rule), as `_Measure` takes it: None for `approximate`."""
    name = tokenizer_name(tokenizer, model=model)
    return None if name == APPROXIMATE else name


def _condenser_for(condenser: Condenser | Pipeline | None, recorded: bool, *, model: str | None = None) -> Pipeline:
    """The pipeline a replay runs (`Pipeline.of`, the default one priced for the agent's `model`); with `recorded`,
    named for the log's condensations it runs on top of."""
    if condenser is None and recorded:
        return Pipeline(NoOpCondenser(), "recorded condensations")
    pipeline = Pipeline.of(condenser, model=model)
    if recorded:  # every other setting (renderer, observation cut, vision, policy) kept
        return pipeline.replace(description=f"recorded condensations + {pipeline.description}")
    return pipeline


def _forgotten_ids(action: CondensationAction, history: list[Event]) -> tuple[int, ...]:
    """The ids a condensation lists; of a range, the ids of the events in the replayed history so far.

    A range is never expanded (it may be far wider than the log): the replayed ids only grow, so
    two bisections find its events.
    """
    if action.forgotten_event_ids is not None:
        return tuple(action.forgotten_event_ids)
    start, end = action.forgotten_events_start_id, action.forgotten_events_end_id
    low = bisect_left(history, start, key=_event_id)
    high = bisect_right(history, end, key=_event_id)
    return tuple(e.id for e in history[low:high])  # type: ignore[misc]


def _event_id(event: Event) -> int:
    return event.id if event.id is not None else -1


def _condensation_of(item: CondensationMade | RecordedCondensation, history: list[Event]) -> ReplayCondensation:
    if isinstance(item, CondensationMade):
        metadata = item.condensation.metadata
        record = metadata.to_dict() if metadata is not None else item.action.condenser_metadata
        step, recorded = item.step, False
    else:
        record, step, recorded = item.action.condenser_metadata, item.steps_before, True
    action = item.action
    assert action.id is not None
    return ReplayCondensation(
        id=action.id,
        step=step,
        recorded=recorded,
        forgotten_ids=_forgotten_ids(action, history),
        events_before=len(item.view),
        events_after=len(item.view_after),
        summary=action.summary,
        metadata=dict(record) if record is not None else None,
    )


def replay_events(
    events: Iterable[Event],
    *,
    condenser: Condenser | Pipeline | None = None,
    recorded: bool = False,
    model: str | None = None,
    tokenizer: str | None = None,
    source: str = "<events>",
    progress: ProgressCallback | None = None,
    pricing: Iterable[str | Mapping[str, Any] | PromptPricing] = (),
    step_seconds: float = DEFAULT_STEP_SECONDS,
    secrets: Mapping[str, str] | None = None,
    compact_at: Mapping[int, str | None] | None = None,
    on_step: StepCallback | None = None,
) -> ReplayReport:
    """Replay `events` (a whole log, in order) and measure every agent step (see the module docstring).

    Args:
        events: the log's events; they are not changed.
        condenser: what condenses (a `Condenser`, or a `Pipeline` to name it); None: the default
            pipeline priced for `model` (as `History` and `replay` without `--pipeline`), or with
            `recorded` only the log's condensations.
        recorded: keep and apply the log's condensations.
        model: the agent's model (never called), as `--model` and `History(model=...)`: its
            tokenizer counts unless `tokenizer` names one, and the default pipeline is priced for it.
        tokenizer: what counts the tokens: a model's name (its tokenizer, through litellm) or
            `approximate` (four characters a token, offline, as the bench's `approximate`); None:
            the agent's model's, else gpt-4o's (`tokenizer_name`).
        source: names the log in the report.
        progress: called with (events replayed, total or None) every few events and at the end.
        pricing: also price every step as these models bill it, prompt cache included (model
            names, pricing tables or files, or `PromptPricing`s: see `resolve_pricing`).
        step_seconds: with pricings, seconds between requests where the log has no timestamps.
        secrets: name: value; hidden in every event as it is read, so in all the report holds
            (the messages, the replayed history `write_log` saves), whatever the log held.
        compact_at: agent step -> focus (or None): a condensation is requested just before that
            step, with that focus (see `Replayer`).

    Raises:
        InvalidSecretError: a secret value is too short or not a string.
        CondensationStalledError: the condenser made no progress at a step.
        UnknownPriceError: a pricing names a model litellm has no price for, or a bad override.
        ValueError: `step_seconds` < 0.
    """
    costs = RunCosts([resolve_pricing(spec) for spec in pricing])
    clock = RequestClock(step_seconds)
    events = _redacted(events, secrets)
    pipeline = _condenser_for(condenser, recorded, model=model)
    counting = _counting_tokenizer(tokenizer, model)
    measure = _Measure(counting, pipeline)  # before the replayer: its loop guard counts with the measured counter
    total = len(events) if isinstance(events, Sequence) else None
    report = ReplayReport(source=source, pipeline=pipeline.description, model=counting, recorded=recorded)
    replayer = Replayer(measure.pipeline, keep_recorded=recorded, compact_at=compact_at)
    report.tokenizer_seconds = measure.load()
    started = time.perf_counter()
    for item in replayer.replay(clock.track(_counted(events, progress, total))):
        if isinstance(item, AgentStep):
            shown = item.shown
            turn = _shown(item)
            messages = turn.messages
            assert turn.tokens is not None
            row = ReplayStep(
                number=item.number,
                event_id=item.event.id,
                replayed_id=item.replayed_id,
                history_events=item.history_events,
                view_events=len(shown),
                messages=len(messages),
                tokens=turn.tokens,
                condensations=item.condensations,
                unhandled_condensation_request=shown.unhandled_condensation_request,
                tool_call_repairs=turn.repairs,
                messages_trimmed=turn.trim.dropped,
            )
            report.steps.append(row)
            priced: list[RequestCost] = []
            if costs:
                blocks, static = measure.blocks()
                priced = costs.add_step(item.number, blocks, at=clock.now(item.event), static_blocks=static)
            if on_step is not None:
                on_step(row, messages, priced)
        else:
            condensation = _condensation_of(item, replayer.history)
            report.condensations.append(condensation)
            if not condensation.recorded:
                costs.add_condensation(condensation.metadata)
    report.events = replayer.events_read
    report.history = replayer.history
    report.final_view = replayer.view
    report.tokens_estimated = measure.estimated
    if costs:
        report.costs = costs.to_dict()
        report.timed_steps = clock.timed_steps
    report.seconds = time.perf_counter() - started
    if progress is not None:
        progress(replayer.events_read, total)
    return report


def _redacted(events: Iterable[Event], secrets: Mapping[str, str] | None) -> Iterable[Event]:
    """`events` with the secrets hidden (a list stays a list, so its length is known); `events` when there is none."""
    redactor = Redactor(secrets)
    if not redactor:
        return events
    if isinstance(events, Sequence):
        return [redactor.redact_event(event) for event in events]
    return (redactor.redact_event(event) for event in events)


def _counted(events: Iterable[Event], progress: ProgressCallback | None, total: int | None) -> Iterable[Event]:
    if progress is None:
        yield from events
        return
    for done, event in enumerate(events):
        if done % _PROGRESS_EVERY == 0:
            progress(done, total)
        yield event


def replay_log(path: str | os.PathLike[str], **options: Any) -> ReplayReport:
    """Load a log (any layout `load_events` reads) and replay it; `options` are `replay_events`'.

    Raises:
        FileNotFoundError: no log at `path`.
        MalformedEventError: the log cannot be read (the message names the file and line).
        CondensationStalledError: the condenser made no progress at a step.
    """
    return replay_events(load_events(path), source=str(path), **options)


def snapshot_at(
    events: Iterable[Event],
    step: int | None = None,
    *,
    condenser: Condenser | Pipeline | None = None,
    recorded: bool = True,
    secrets: Mapping[str, str] | None = None,
    tokenizer: str | None = None,
    compact_at: Mapping[int, str | None] | None = None,
) -> StepSnapshot:
    """What the model was shown at agent step `step` (1 = first), or after the last event (None).

    By default the log's own condensations are applied and nothing else condenses (`recorded`,
    no condenser); pass a condenser to see what it would have shown instead. After the last event
    the condenser is asked once more, as it would be for a next step. `secrets` (name: value) are
    hidden in every event as it is read, so in what the snapshot shows. A pipeline's history policy
    and its condensers' token budgets count with `tokenizer`'s model (as `replay_events(tokenizer=...)`
    counts them); None: the approximate tokenizer.
    `compact_at` (agent step -> focus) requests a condensation with that focus before the step.

    Raises:
        InvalidSecretError: a secret value is too short or not a string.
        StepNotFoundError: the log has fewer steps than `step` (or `step` is below 1).
        CondensationStalledError: the condenser made no progress.
    """
    events = _redacted(events, secrets)
    pipeline = _condenser_for(condenser, recorded)
    measure = _Measure(tokenizer, pipeline)  # the turn renders, trims by the pipeline's policy; the condensers count with it
    replayer = Replayer(measure.pipeline, keep_recorded=recorded, compact_at=compact_at)
    for item in replayer.replay(events):
        if isinstance(item, AgentStep) and item.number == step:
            return StepSnapshot(step, item.number, item.event, item.view, item.shown, _shown(item).messages, replayer.log_ids())
    if step is not None:
        raise StepNotFoundError(step, replayer.steps)
    final = replayer.final_turn()
    return StepSnapshot(None, replayer.steps, None, replayer.view, final.view, final.messages, replayer.log_ids())
