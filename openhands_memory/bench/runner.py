"""Run every log through every pipeline and measure each run: in this process, in worker processes, or on Ray.

`run_benchmark(logs, pipelines)` makes one task per (log, pipeline) and returns a `BenchResults`
with one result dict per task, in log-major order whatever order they finished in. A task
(`run_task`) loads its log, replays it through a fresh condenser built from the pipeline's config
(`Replayer`: the log's own condensations are dropped, the pipeline decides afresh, as
`openhands-memory replay` does), and at every agent step renders the messages the model would be
sent (`ConversationMemory`), trimmed by the pipeline's history policy if it has one (its
`[history_policy]` table, counted with the benchmark's tokenizer), and measures them
with the pipeline's one prompt counter (`Pipeline.prompt_tokens`, the `PromptMeter` replay's report
counts with too; see `openhands_memory.prompt_tokens`), counting the tool calls the
message layer had to leave out (`tool_call_repairs`: a pipeline whose views need any splits actions
from their observations) and the messages the policy dropped (`history_policy_dropped`).
After the last event the pipeline is asked once more, and the view it returns is the final view
whose text the retention check reads (`openhands_memory.bench.retention`); the events of that view
whose messages the policy left out (`history_policy_hidden_events`) count as forgotten. The whole replayed log
(the log's events and the pipeline's condensations) is then indexed once, in memory
(`openhands_memory.recall.SearchIndex`), and each forgotten fact searched for, to tell which are
recoverable; `recall_index_seconds` and `recall_search_seconds` are what that cost.

Executors: `jobs=1` runs the tasks here, one after the other; `jobs=N` in N worker processes
(`ProcessPoolExecutor`, spawned: tasks and results are plain, picklable data); `executor="ray"`
submits the same tasks as Ray remote functions, to the cluster `RAY_ADDRESS` names or else to a
local Ray started with `num_cpus=jobs` (the `ray` extra). Workers import the library afresh:
a condenser type registered at run time (`register_condenser`) is known to them only if the
module that registers it is imported when the config is unpickled (its config class's module).

With pricings (`pricing=["claude-sonnet-4-5", "gpt-5"]`), every run also prices each step's prompt
as that model's provider bills it, prompt cache included (`openhands_memory.replay.costs.RunCosts`;
the time of each request from the log's timestamps, `step_seconds` apart where a log has none), and
the summarizer's calls at the same prices: a run's `costs`, per pricing name.

Model-backed condensers run without a model unless `summarizer_model` (a real model) or
`completion_fn` (a stand-in for one) is given: the summarizers then write the offline structured
summary (see `openhands_memory.bench.stand_in` and `openhands_memory.condenser.offline_summary`).
`model` is the agent's model, never called: its tokenizer counts (unless `tokenizer`) and its
context window sizes the token limits given as a share of one (`Condenser.from_config(model=...)`).
The condensers' token budgets count with the run's prompt counter (`Pipeline.measured_by`).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from openhands_memory._install import install_hint
from openhands_memory._log_warnings import captured_warnings
from openhands_memory._signals import ignore_interrupts
from openhands_memory.bench.metrics import RunMetrics, summarize_runs
from openhands_memory.bench.retention import RECALL_LIMIT, measure_retention
from openhands_memory.bench.stand_in import choose_models, model_backed_members, summarizer_name
from openhands_memory.bench.tokenizer import APPROXIMATE, Tokenizer, tokenizer_for
from openhands_memory._tokenizer_names import tokenizer_name
from openhands_memory.bench.work import available_cpus, find_logs, workers_for
from openhands_memory.condenser import Condensation, Condenser, parse_condenser_config
from openhands_memory.conversation_memory import ConversationMemory, HistoryPolicy, HistoryTrim
from openhands_memory.errors import CondenserConfigError, OpenHandsMemoryError
from openhands_memory.events import (
    CondensationAction,
    CondensationRequestAction,
    Event,
    log_format,
)
from openhands_memory.llm import CompletionFn
from openhands_memory.llm.llm import DEFAULT_CONTEXT_WINDOW
from openhands_memory.llm.prompt_cache import PromptPricing, resolve_pricing
from openhands_memory.llm.message import Message
from openhands_memory.pipeline import Pipeline, describe_config, load_pipeline_config, strategy_history_policy
from openhands_memory.recall import SearchIndex
from openhands_memory.replay import AgentStep, Replayer
from openhands_memory.replay.costs import DEFAULT_STEP_SECONDS, RequestClock, RunCosts, priced_recorded_model, summarize_costs
from openhands_memory.replay.driver import CondensationMade
from openhands_memory.stream import Redactor
from openhands_memory.stream.locations import load_log, shown_location
from openhands_memory.view import View

__all__ = [
    "BenchOptions",
    "BenchResults",
    "BenchTask",
    "Executor",
    "PipelineSpec",
    "ProgressCallback",
    "run_benchmark",
    "run_events",
    "run_task",
    "without_timings",
]

Executor = Literal["process", "ray"]
"""Where tasks run when `jobs` > 1 (or always, for `ray`): worker processes, or Ray remote functions."""

ProgressCallback = Callable[[int, int], None]
"""Called with (tasks done, tasks in all) after each task."""

_TIMING_KEYS = frozenset({"seconds", "condenser_seconds", "recall_index_seconds", "recall_search_seconds"})


@dataclass(frozen=True, slots=True)
class PipelineSpec:
    """A pipeline to benchmark: a name for the reports, its validated condenser config and its history policy (picklable)."""

    name: str
    """What the reports call it (the config file's name without `.toml` / `.json`)."""
    config: BaseModel
    """The validated condenser config (see `openhands_memory.condenser.parse_condenser_config`)."""
    description: str
    """The condenser types it chains: `conversation_window, browser_output_masking, llm`."""
    source: str | None = None
    """The file it was read from, if any."""
    history_policy: HistoryPolicy | None = None
    """The final trim of the messages at every step (a pipeline file's `[history_policy]`); None: none."""

    @classmethod
    def from_config(
        cls,
        name: str,
        config: BaseModel | Mapping[str, Any],
        *,
        source: str | None = None,
        history_policy: HistoryPolicy | None = None,
    ) -> PipelineSpec:
        """A pipeline from a config (a config model, or a dict with a `type` key) and an optional history policy.

        Raises:
            CondenserConfigError: the config is not valid, or names an LLM config it does not hold.
        """
        model = parse_condenser_config(config)
        condenser = Condenser.from_config(model)  # fail here, not in every run (no model is called)
        shown_policy = history_policy if history_policy is not None else strategy_history_policy(condenser)
        return cls(name, model, _describe(model, shown_policy), source, history_policy)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, name: str | None = None) -> PipelineSpec:
        """A pipeline from a pipeline file (TOML `[condenser]` and `[history_policy]` tables, or JSON); named after the file unless `name`.

        Raises:
            CondenserConfigError: the file is missing or unreadable, or its config or its history
                policy is not valid (or names an LLM config the file does not hold).
        """
        pipeline = load_pipeline_config(path)
        config = pipeline.condenser
        try:
            condenser = Condenser.from_config(config)  # fail here, not in every run (no model is called)
        except CondenserConfigError as exc:
            raise CondenserConfigError(exc.reason, condenser_type=exc.condenser_type, field=exc.field, path=path) from None
        policy = pipeline.history_policy
        shown_policy = policy if policy is not None else strategy_history_policy(condenser)
        return cls(name or Path(path).stem, config, _describe(config, shown_policy), str(path), policy)

    def build(self, *, model: str | None = None) -> Condenser:
        """A fresh condenser from the config (model-backed members call their configured model), sized for the agent's `model`."""
        return Condenser.from_config(self.config, model=model)

    @property
    def is_model_backed(self) -> bool:
        """Some member calls a model (`llm`, `structured`, `llm_attention`, `auto_context`, ..., or a registered type that does)."""
        return any(True for _ in model_backed_members(self.build()))


@dataclass(frozen=True, slots=True)
class BenchOptions:
    """How every run of a benchmark is measured."""

    tokenizer: str = APPROXIMATE
    """`approximate`, or a model whose litellm tokenizer tokenizes the prompts."""
    model: str | None = None
    """The agent's model, never called: its context window sizes the token limits given as a share of one (None: none)."""
    summarizer_model: str | None = None
    """The model that model-backed condensers call, for real; None: `completion_fn` stands in for it, or no model at all."""
    context_limit: int = DEFAULT_CONTEXT_WINDOW
    """Steps with more prompt tokens than this are counted as over the limit."""
    completion_fn: CompletionFn | None = None
    """What model-backed condensers call when `summarizer_model` is None (a module-level function, so it pickles,
    e.g. `stand_in_completion`); None: no model, the summarizers write the offline structured summary."""
    pricings: tuple[PromptPricing, ...] = ()
    """Price every run's prompts (prompt cache included) and summarizer calls as each of these bills them."""
    step_seconds: float = DEFAULT_STEP_SECONDS
    """Seconds between two requests where a log has no timestamps (for the prompt cache's expiry)."""
    redactor: Redactor = field(default_factory=Redactor)
    """The secrets in force: hidden in every event as it is read, so in what a model is sent and in the results
    (lost facts quote commands and instructions). Never written to the results."""

    @property
    def summarizer(self) -> str:
        """What the reports call the model of the model-backed condensers."""
        return summarizer_name(self.summarizer_model, self.completion_fn)


@dataclass(frozen=True, slots=True)
class BenchTask:
    """One run: a log through a pipeline (plain data, so it can go to another process or a Ray worker)."""

    log: str
    """The log's path."""
    pipeline: PipelineSpec
    """The pipeline."""
    options: BenchOptions
    """How to measure."""


def _describe(config: BaseModel, policy: HistoryPolicy | None) -> str:
    """`noop`, or with a policy `noop + history_policy(max_messages=50, max_tokens=8000, pin_first_user=False (inkeep_fixed_limit))`."""
    description = describe_config(config.model_dump())
    return f"{description} + history_policy({policy.describe()})" if policy is not None else description


class _TimedCondenser(Condenser):
    """Runs a condenser and adds up the wall time spent in it."""

    def __init__(self, inner: Condenser) -> None:
        super().__init__()
        self.inner = inner
        self.seconds = 0.0

    @property
    def name(self) -> str:
        return self.inner.name

    def members(self) -> tuple[Condenser, ...]:
        return (self.inner,)

    def condense(self, view: View) -> View | Condensation:
        started = time.perf_counter()
        try:
            return self.inner.condense(view)
        finally:
            self.seconds += time.perf_counter() - started


_tokenizers: dict[str, Tokenizer] = {}


def _tokenizer(name: str) -> Tokenizer:
    # One per process: litellm's tokenizer takes seconds to load.
    tokenizer = _tokenizers.get(name)
    if tokenizer is None:
        tokenizer = _tokenizers[name] = tokenizer_for(name)
    return tokenizer


def run_events(
    events: Sequence[Event],
    pipeline: PipelineSpec,
    options: BenchOptions = BenchOptions(),
    *,
    source: str = "<events>",
    tokenizer: Tokenizer | None = None,
) -> dict[str, Any]:
    """Replay `events` through `pipeline` and measure the run; returns its result dict (JSON-ready).

    `tokenizer` overrides `options.tokenizer` (for tests, or a tokenizer of your own).

    Raises:
        CondensationStalledError: the pipeline made no progress at a step.
        LLMError: a model-backed condenser's model failed (with `on_model_error = "raise"`).
    """
    started = time.perf_counter()
    if options.redactor:
        events = [options.redactor.redact_event(event) for event in events]
    # Without `model`, another agent's log is priced (and sized) for the model it records, as `replay` does.
    recorded = priced_recorded_model(events)[0] if options.model is None else None
    agent_model = options.model or recorded
    condenser = pipeline.build(model=agent_model)
    members = list(model_backed_members(condenser))
    summarizer = choose_models(condenser, summarizer_model=options.summarizer_model, completion_fn=options.completion_fn)
    for member in members:
        llm = getattr(member, "llm", None)
        if llm is not None:
            # Look the model up now (litellm's import takes seconds), so it is not timed as condensing.
            llm.context_window()
    timed = _TimedCondenser(condenser)
    # THE turn History runs, counted by its one prompt counter (replay's report counts with it too);
    # the policy's max_tokens and the condensers' budgets count with the same meter: what the report measures.
    step = Pipeline.of(timed, description=pipeline.name, history_policy=pipeline.history_policy).measured_by(
        tokenizer if tokenizer is not None else _tokenizer(options.tokenizer)
    )
    policy = step.history_policy  # the spec's, else the strategy's own (`strategy_history_policy`)
    meter = step.meter
    assert meter is not None
    replayer = Replayer(step)
    trims = _Trims()
    metrics = RunMetrics(options.context_limit)
    costs = RunCosts(options.pricings)
    clock = RequestClock(options.step_seconds)
    repairs = 0
    for item in replayer.replay(clock.track(events) if costs else events):
        if isinstance(item, AgentStep):
            assert item.turn is not None and item.turn.tokens is not None  # the turn rendered, trimmed and counted
            result = item.turn.shown
            if policy is not None:
                trims.add(result.trim)
            metrics.add_step(item.turn.tokens, meter.last_cached)
            repairs += result.repairs
            if costs:
                costs.add_step(item.number, meter.last_blocks, at=clock.now(item.event), static_blocks=meter.last_static_blocks)
        elif isinstance(item, CondensationMade):
            record = item.condensation.metadata or item.action.condenser_metadata
            metrics.add_condensation(record, event_id=item.action.id)
            costs.add_condensation(_record_dict(record))
    final_turn = replayer.final_turn()
    shown, shown_final = final_turn.view, final_turn.shown
    for item in final_turn.condensations:
        record = item.condensation.metadata or item.action.condenser_metadata
        metrics.add_condensation(record, event_id=item.action.id)
        costs.add_condensation(_record_dict(record))
    history = replayer.history
    log_ids = {e.id for e in history if not isinstance(e, CondensationAction | CondensationRequestAction)}
    recall = _Recall(history)
    final = shown_final.messages
    hidden: list[Event] = []
    if policy is not None:
        hidden = hidden_events(shown, shown_final.rendered, final)
    try:
        # What the final trim left out of the chat is forgotten too: the model cannot read it.
        hidden_ids = {id(event) for event in hidden}
        sent = [event for event in shown if id(event) not in hidden_ids] if hidden else shown
        retention = measure_retention(history, sent, final, search=recall.search)
    finally:
        recall.close()
    return {
        "log": source,
        "pipeline": pipeline.name,
        "format": log_format(events),
        "agent_model": agent_model,
        "agent_model_recorded": recorded is not None,
        "events": replayer.events_read,
        **metrics.to_dict(),
        "events_forgotten": len(replayer.view.forgotten_event_ids & log_ids),
        "tool_call_repairs": repairs,
        "history_policy": policy.describe() if policy is not None else None,
        "history_policy_dropped": trims.dropped,
        "history_policy_trimmed_steps": trims.trimmed_steps,
        "history_policy_over_limit_steps": trims.over_limit_steps,
        "history_policy_hidden_events": len(hidden),
        "final_view_events": len(shown),
        "summarizer": summarizer if members else None,
        "condenser_seconds": timed.seconds,
        **retention.to_dict(),
        "recall_indexed_events": recall.indexed,
        "recall_index_seconds": recall.index_seconds,
        "recall_searches": recall.searches,
        "recall_search_seconds": recall.search_seconds,
        **({"costs": costs.to_dict(), "timed_steps": clock.timed_steps} if costs else {}),
        "seconds": time.perf_counter() - started,
    }


def _record_dict(record: Any) -> dict[str, Any] | None:
    if record is None:
        return None
    return record.to_dict() if hasattr(record, "to_dict") else dict(record)


@dataclass(slots=True)
class _Trims:
    """What a run's history policy dropped, step after step."""

    dropped: int = 0
    trimmed_steps: int = 0
    over_limit_steps: int = 0

    def add(self, trim: HistoryTrim) -> None:
        self.dropped += trim.dropped
        self.trimmed_steps += trim.dropped > 0
        self.over_limit_steps += trim.kept_over_limit


def hidden_events(shown: Sequence[Event], full: Sequence[Message], kept: Sequence[Message]) -> list[Event]:
    """The events of the view `shown` whose messages a history policy left out (`full` trimmed to `kept`).

    A tool action or observation is hidden when its call's messages were dropped (the policy keeps
    or drops a call with its result). Another event is hidden when a message it rendered to was
    dropped and none was kept: each is rendered alone to find its messages, compared by text (a
    user message after a user message is set apart by a blank line, which the comparison ignores).
    """
    kept_ids = {id(message) for message in kept}
    dropped = [message for message in full if id(message) not in kept_ids]
    if not dropped:
        return []

    def calls_of(messages: Iterable[Message]) -> set[str]:
        ids: set[str] = set()
        for message in messages:
            if message.tool_call_id is not None:
                ids.add(message.tool_call_id)
            ids.update(call.id for call in message.tool_calls or ())
        return ids

    dropped_calls = calls_of(dropped) - calls_of(kept)
    dropped_texts = {message.text.lstrip("\n") for message in dropped if message.role != "tool" and not message.tool_calls}
    kept_texts = {message.text.lstrip("\n") for message in kept}
    scratch = ConversationMemory(system_prompt="")
    hidden = []
    for event in shown:
        metadata = getattr(event, "tool_call_metadata", None)
        if metadata is not None:
            if metadata.tool_call_id in dropped_calls:
                hidden.append(event)
            continue
        if not dropped_texts:
            continue
        texts = {message.text.lstrip("\n") for message in scratch.process_events([event])[1:]}
        if texts & dropped_texts and not texts & kept_texts:
            hidden.append(event)
    return hidden


class _Recall:
    """The whole replayed log indexed once, in memory, as `search_history` would search it; timed."""

    def __init__(self, history: Sequence[Event]) -> None:
        started = time.perf_counter()
        self.index = SearchIndex.in_memory()
        self.indexed = self.index.sync(history)
        self.index_seconds = time.perf_counter() - started
        self.searches = 0
        self.search_seconds = 0.0

    def search(self, query: str) -> list[int]:
        started = time.perf_counter()
        try:
            return [hit.event_id for hit in self.index.search(query, limit=RECALL_LIMIT)]
        finally:
            self.searches += 1
            self.search_seconds += time.perf_counter() - started

    def close(self) -> None:
        self.index.close()


_loaded: tuple[str, list[Event]] | None = None


def _load(path: str) -> list[Event]:
    # Tasks come log by log, so the last log loaded is usually the one asked for next.
    global _loaded
    if _loaded is None or _loaded[0] != path:
        _loaded = (path, load_log(path))
    return _loaded[1]


def run_task(task: BenchTask) -> dict[str, Any]:
    """Run one task (in any process); a log or pipeline that fails gives a result with an `error` message.

    The warnings the library logs are returned with it, each once, not printed: `log_warnings` while
    the log loaded (in a process that had not loaded it yet), `warnings` while the pipeline ran; the
    command line says each once per log, with the pipelines that met it.
    """
    said: list[str] = []
    try:
        with captured_warnings() as loading:
            events = _load(task.log)
        with captured_warnings() as said:
            result = run_events(events, task.pipeline, task.options, source=shown_location(task.log))
    except (OpenHandsMemoryError, OSError) as exc:
        message = f"{exc.filename}: {exc.strerror or exc}" if isinstance(exc, OSError) and exc.filename else str(exc)
        result = {"log": shown_location(task.log), "pipeline": task.pipeline.name, "error": f"{type(exc).__name__}: {message}"}
    for key, messages in (("log_warnings", loading), ("warnings", said)):
        if messages:
            result[key] = messages
    return result


@dataclass(slots=True)
class BenchResults:
    """What `run_benchmark` measured: one result dict per (log, pipeline), and the totals per pipeline."""

    logs: list[str]
    """The logs, in order."""
    pipelines: list[PipelineSpec]
    """The pipelines, in order."""
    options: BenchOptions
    """How the runs were measured."""
    runs: list[dict[str, Any]] = field(default_factory=list)
    """One result per (log, pipeline), log-major (see `run_events` for the keys; `error` if it failed;
    `log_warnings` and `warnings`: what the library logged loading the log and running the pipeline, if anything)."""
    seconds: float = 0.0
    """Wall time of the whole benchmark."""
    jobs: int = 1
    """Parallel workers used."""
    executor: str = "process"
    """Where tasks ran: `process` (here, or in worker processes) or `ray`."""

    def runs_of(self, pipeline: str) -> list[dict[str, Any]]:
        """The results of one pipeline, log by log."""
        return [run for run in self.runs if run["pipeline"] == pipeline]

    def totals(self) -> list[dict[str, Any]]:
        """One row per pipeline, in order: its name, description and `summarize_runs` totals."""
        rows = []
        for spec in self.pipelines:
            runs = self.runs_of(spec.name)
            summarizer = next((run["summarizer"] for run in runs if run.get("summarizer")), None)
            row = {"pipeline": spec.name, "description": spec.description, "summarizer": summarizer, **summarize_runs(runs)}
            if self.options.pricings:
                row["costs"] = summarize_costs(run["costs"] for run in runs if not run.get("error") and "costs" in run)
                row["timed_steps"] = sum(run.get("timed_steps") or 0 for run in runs if not run.get("error"))
            rows.append(row)
        return rows

    @property
    def errors(self) -> list[dict[str, Any]]:
        """The runs that failed."""
        return [run for run in self.runs if run.get("error")]

    @property
    def tokenizer_name(self) -> str:
        """What the tokenizer that counted is called in reports."""
        return tokenizer_for(self.options.tokenizer).name

    @property
    def uses_summarizer(self) -> bool:
        """Some run had a model-backed condenser."""
        return any(run.get("summarizer") for run in self.runs)

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready: settings, pipelines with their configs and totals, every run."""
        totals = {row["pipeline"]: row for row in self.totals()}
        return {
            "benchmark": "pipelines",
            "tokenizer": self.tokenizer_name,
            "summarizer": self.options.summarizer if self.uses_summarizer else None,
            "context_limit": self.options.context_limit,
            "pricings": [pricing.model_dump(mode="json") for pricing in self.options.pricings],
            "step_seconds": self.options.step_seconds,
            "jobs": self.jobs,
            "executor": self.executor,
            "seconds": self.seconds,
            "logs": list(self.logs),
            "pipelines": [
                {
                    "name": spec.name,
                    "description": spec.description,
                    "source": spec.source,
                    "config": spec.config.model_dump(mode="json"),
                    "history_policy": (
                        spec.history_policy.model_dump(mode="json") if spec.history_policy is not None else None
                    ),
                    "totals": totals[spec.name],
                }
                for spec in self.pipelines
            ],
            "runs": self.runs,
        }


def without_timings(run: Mapping[str, Any]) -> dict[str, Any]:
    """A result without its wall times (what differs between two runs of the same task)."""
    return {key: value for key, value in run.items() if key not in _TIMING_KEYS}


def _unique_pricings(pricings: Sequence[PromptPricing]) -> tuple[PromptPricing, ...]:
    """The pricings with their names made unique (`model`, `model-2`, ...): reports key their figures by name."""
    seen: dict[str, int] = {}
    unique = []
    for pricing in pricings:
        count = seen[pricing.name] = seen.get(pricing.name, 0) + 1
        unique.append(pricing if count == 1 else pricing.model_copy(update={"model": f"{pricing.model}-{count}"}))
    return tuple(unique)


def _unique_names(pipelines: Sequence[PipelineSpec]) -> list[PipelineSpec]:
    seen: dict[str, int] = {}
    unique = []
    for spec in pipelines:
        count = seen[spec.name] = seen.get(spec.name, 0) + 1
        unique.append(
            spec
            if count == 1
            else PipelineSpec(f"{spec.name}-{count}", spec.config, spec.description, spec.source, spec.history_policy)
        )
    return unique


def run_benchmark(
    logs: Iterable[str | os.PathLike[str]],
    pipelines: Iterable[PipelineSpec | str | os.PathLike[str]],
    *,
    tokenizer: str | None = None,
    model: str | None = None,
    summarizer_model: str | None = None,
    context_limit: int = DEFAULT_CONTEXT_WINDOW,
    jobs: int | None = 1,
    executor: Executor = "process",
    completion_fn: CompletionFn | None = None,
    progress: ProgressCallback | None = None,
    pricing: Iterable[str | Mapping[str, Any] | PromptPricing] = (),
    step_seconds: float = DEFAULT_STEP_SECONDS,
    secrets: Mapping[str, str] | None = None,
) -> BenchResults:
    """Replay every log through every pipeline and measure each run (see the module docstring).

    Args:
        logs: log paths (any layout `load_events` reads); a folder that is no session folder
            stands for the logs in it (`openhands_memory.bench.work.find_logs`); or
            `postgresql://...?conversation=ID` URLs.
        pipelines: `PipelineSpec`s, or config file paths (`PipelineSpec.from_file`); names made
            unique by a `-2`, `-3` suffix.
        tokenizer: `approximate`, or a model whose litellm tokenizer to use; None: `model` if
            given, else `approximate` (the command line's default is gpt-4o: it names one).
        model: the agent's model, never called: its tokenizer counts (unless `tokenizer`) and its
            context window sizes token limits given as a share of one.
        summarizer_model: the model model-backed condensers call, for real; None: `completion_fn`
            stands in, or none.
        context_limit: steps above this many prompt tokens are counted.
        jobs: worker processes (or Ray CPUs); 1 runs everything in this process; None: as many as
            the work is worth (`openhands_memory.bench.work.workers_for`; for Ray, the CPUs here).
        executor: `process` or `ray` (needs the `ray` extra).
        completion_fn: the stand-in for the model, when `summarizer_model` is None (module-level, to pickle,
            e.g. `stand_in_completion`); None: no model, the offline structured summarizer.
        progress: called with (done, total) after each task.
        UnknownPriceError: a pricing names a model litellm has no price for, or a bad override.
        LLMAuthenticationError: `summarizer_model` is given and its API key is not set (before any run).
        ValueError: `jobs` < 1, `context_limit` < 1, `step_seconds` < 0, or an unknown executor.

    Raises:
        InvalidSecretError: a secret value is too short or not a string.
        CondenserConfigError: a pipeline file is missing or not a valid config.
        UnknownPriceError: a pricing names a model litellm has no price for, or a bad override.
        ValueError: `jobs` < 1, `context_limit` < 1, `step_seconds` < 0, or an unknown executor.
        LLMAuthenticationError: `summarizer_model` is given and its API key is not set (before any run).
        MalformedEventError: a folder holds no log (see `find_logs`).
        ValueError: `jobs` < 1, `context_limit` < 1, or an unknown executor.
        ImportError: `executor="ray"` without ray installed (the message says how to install it).
    """
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if context_limit < 1:
        raise ValueError(f"context_limit must be at least 1, got {context_limit}")
    if executor not in ("process", "ray"):
        raise ValueError(f"unknown executor {executor!r}: use 'process' or 'ray'")
    if not step_seconds >= 0:
        raise ValueError(f"step_seconds must be at least 0, got {step_seconds}")
    pricings = _unique_pricings([resolve_pricing(spec) for spec in pricing])
    specs = _unique_names([p if isinstance(p, PipelineSpec) else PipelineSpec.from_file(p) for p in pipelines])
    if summarizer_model is not None:
        for spec in specs:  # a missing API key now, not in every run
            choose_models(spec.build(model=model), summarizer_model=summarizer_model)
    log_paths = [str(log) for log in find_logs(logs)]
    if jobs is None:
        jobs = workers_for(log_paths, len(specs)) if executor == "process" else available_cpus()
    options = BenchOptions(
        tokenizer=tokenizer_name(tokenizer, model=model, default=APPROXIMATE),  # the one rule: the tokenizer, else the agent's model
        model=model,
        summarizer_model=summarizer_model,
        context_limit=context_limit,
        completion_fn=completion_fn,
        pricings=pricings,
        step_seconds=step_seconds,
        redactor=Redactor(secrets),
    )
    tasks = [BenchTask(log, spec, options) for log in log_paths for spec in specs]
    started = time.perf_counter()
    if executor == "ray":
        runs = _run_on_ray(tasks, jobs, progress)
    elif jobs == 1:
        runs = []
        for done, task in enumerate(tasks, 1):
            runs.append(run_task(task))
            if progress is not None:
                progress(done, len(tasks))
    else:
        runs = _run_in_processes(tasks, jobs, progress)
    shown = [shown_location(log) for log in log_paths]  # a URL without its password
    return BenchResults(shown, specs, options, runs, time.perf_counter() - started, jobs, executor)


def _run_in_processes(tasks: list[BenchTask], jobs: int, progress: ProgressCallback | None) -> list[dict[str, Any]]:
    """The tasks in worker processes; on Ctrl-C or SIGTERM (`Terminated`) the workers are stopped at once, not after the queue."""
    results: list[dict[str, Any] | None] = [None] * len(tasks)
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)) or 1, mp_context=context, initializer=ignore_interrupts)
    try:
        futures = {pool.submit(run_task, task): index for index, task in enumerate(tasks)}
        for done, future in enumerate(as_completed(futures), 1):
            results[futures[future]] = future.result()
            if progress is not None:
                progress(done, len(tasks))
    except BaseException:
        _stop_workers(pool)
        raise
    pool.shutdown()
    return [result for result in results if result is not None]


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel what is queued and end the workers now (a run half done is dropped: results are written at the end only)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        terminate()
        return
    # Before 3.14 the pool has no public way to end its workers: its `_processes` are the workers it started.
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(timeout=5)


def _run_on_ray(tasks: list[BenchTask], jobs: int, progress: ProgressCallback | None) -> list[dict[str, Any]]:
    try:
        import ray
    except ImportError as exc:
        raise ImportError(f"--executor ray needs Ray: {install_hint('ray')}") from exc
    started_here = not ray.is_initialized()
    if started_here:
        if os.environ.get("RAY_ADDRESS"):
            ray.init(log_to_driver=False)
        else:
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(run_task)
        refs = [remote.remote(task) for task in tasks]
        index = {ref: position for position, ref in enumerate(refs)}
        results: list[dict[str, Any] | None] = [None] * len(tasks)
        pending = list(refs)
        done = 0
        while pending:
            finished, pending = ray.wait(pending, num_returns=1)
            for ref in finished:
                results[index[ref]] = ray.get(ref)
                done += 1
                if progress is not None:
                    progress(done, len(tasks))
        return [result for result in results if result is not None]
    finally:
        if started_here:
            ray.shutdown()
