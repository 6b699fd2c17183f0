"""`compact_history`: QitOS' compact history, staged: a warning, micro-compaction, then a continuation summary.

QitOS' `CompactHistory` (with its `CompactConfig` defaults) works in stages, each recording the
tokens it saved:

1. **Warning.** When the prompt crosses `warning_ratio` of `max_tokens`, before any compaction.
2. **Micro-compaction.** Past `max_tokens`, each message older than the last `keep_last_rounds`
   rounds (rounds: one agent step and what answers it) and longer than `compact_over_chars` is
   shown as its head and tail with its original size (`micro_preview`).
3. **Continuation summary.** Still past `max_tokens`: the older rounds are forgotten and a model's
   continuation summary goes after the kept head; when even the kept rounds are over budget (or
   would be with a summary longer than what it forgets), only the newest `keep_last_messages`
   events (or fewer, to fit) stay.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from openhands_memory.condenser.kit import (
    FROM_CONFIG,
    ModelSummarizingCondenser,
    TokenTriggeredConfig,
    ViewStructure,
    analyze,
    condensed_events,
    condenser_llm,
    masked_fields,
    plan_before,
    recency_cut,
    replace_at,
    round_starts,
    sized,
)
from openhands_memory.condenser.base import Condensation, CondensationReason
from openhands_memory.condenser.forgetting import ForgettingPlan
from openhands_memory.condenser.thresholds import ContextWindowShare, resolve_token_limit
from openhands_memory.errors import CondenserConfigError, NoCondensationAvailable
from openhands_memory.events import (
    AgentCondensationObservation,
    AgentDelegateObservation,
    AgentStateChangedObservation,
    Event,
    FileEditObservation,
    LoopDetectionObservation,
    MessageAction,
    NullObservation,
    Observation,
    RecallObservation,
)
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import LLM
from openhands_memory.view import View

__all__ = ["CONTINUATION_PROMPT", "CompactHistoryCondenser", "CompactHistoryCondenserConfig", "micro_preview"]

logger = logging.getLogger(__name__)

_TYPE = "compact_history"
_NO_SIZE_TRIGGER = sys.maxsize
"""The event count the rolling base is given: this strategy triggers on tokens (or a request) only."""

# Observations whose content is not a tool's output: summaries and recalls are what the agent knows
# of forgotten history and its workspace, the others are never shown; a delegate's result is its outputs.
_NEVER_COMPACTED: tuple[type[Observation], ...] = (
    AgentCondensationObservation,
    RecallObservation,
    NullObservation,
    AgentStateChangedObservation,
    LoopDetectionObservation,
    AgentDelegateObservation,
)

CONTINUATION_PROMPT = """\
You write the continuation summary of an agent's earlier work: the older rounds of its history are being \
removed, and the agent will carry on from your summary and its most recent rounds. You are given the \
previous summary, if there is one, and the events removed now. Write one summary that replaces the \
previous one; keep in it whatever still matters.

Sections, each short:
GOAL AND CONSTRAINTS: (what the user asked for, and every constraint given)
DISCOVERIES AND TOOL RESULTS: (what the agent found out: files, values, outputs that matter)
FAILED ATTEMPTS: (what did not work, and why)
CURRENT STATE: (what is done and what is pending, with file paths and task ids)
NEXT STEP: (what the agent was about to do)"""
"""The default instructions: QitOS' continuation summary sections, in our own words."""


def micro_preview(text: str, *, event_id: int | None, label: str, preview_chars: int) -> str:
    """A long text as micro-compaction shows it: a line with its original size, its first
    `preview_chars` characters, `...`, its last `preview_chars // 2` characters.

    The first line names the event, so that the agent can reload the whole of it.
    """
    head = text[:preview_chars].rstrip()
    tail = text[len(text) - preview_chars // 2 :].lstrip() if preview_chars >= 2 else ""
    where = f" of event {event_id}" if event_id is not None else ""
    reload = f"; call context_reload with event_id={event_id} to see all of it" if event_id is not None else ""
    lines = text.count("\n") + 1
    notice = f"[compacted {label}{where}: original {len(text)} characters, {lines} lines; head and tail shown{reload}]"
    return f"{notice}\n{head}\n...\n{tail}" if tail else f"{notice}\n{head}"


class CompactHistoryCondenserConfig(TokenTriggeredConfig):
    """`compact_history`: QitOS' staged compaction (warning, micro-compaction, continuation summary)."""

    type: Literal["compact_history"] = "compact_history"
    """The condenser type."""
    keep_last_rounds: int = sized("newest", default=2, ge=1)
    """The newest rounds (agent steps) never compacted nor summarized (QitOS' default: 2)."""
    keep_last_messages: int = sized("newest", default=8, ge=1)
    """When the kept rounds alone are over budget, at most this many newest events stay (QitOS' default: 8)."""
    warning_ratio: float = Field(default=0.8, gt=0, le=1)
    """Warn when the prompt reaches this share of `max_tokens` (QitOS' default: 0.8)."""
    auto_compact: bool = True
    """Compact past `max_tokens`; false: only warn (a condensation request is still handled)."""
    compact_over_chars: int = sized("chars", default=900, ge=1)
    """Micro-compaction shows older messages longer than this many characters as head and tail (QitOS: 900)."""
    preview_chars: int = sized("chars", default=220, ge=1)
    """The characters of a micro-compacted message's head (its tail is half as long; QitOS: 220)."""

    @model_validator(mode="after")
    def _check_preview(self) -> Any:
        _check_preview(self.preview_chars, self.compact_over_chars)
        return self


def _check_preview(preview_chars: int, compact_over_chars: int) -> None:
    if preview_chars + preview_chars // 2 >= compact_over_chars:
        # Head and tail as long as the threshold would show a compacted message longer than before.
        raise ValueError(
            f"preview_chars ({preview_chars}) plus its tail ({preview_chars // 2}) must be less than "
            f"compact_over_chars ({compact_over_chars})"
        )


class CompactHistoryCondenser(ModelSummarizingCondenser):
    """QitOS' compact history on the event log: warn, micro-compact old outputs, then summarize old rounds.

    Each call measures the prompt (system prompt and tools included, by the token counter):

    - At `warning_ratio` of `max_tokens` or more, a warning is logged once per crossing and
      counted (`warnings`); the log gets it with the next compaction, whose metadata carries it
      (`warning`: the tokens, the threshold, the event it was crossed at). A warning alone appends
      nothing: a condensation that forgets nothing would not shrink the prompt.
    - Past `max_tokens` (with `auto_compact`), events before the last `keep_last_rounds` rounds that
      are longer than `compact_over_chars` are shown as `micro_preview`s: a view transform, like
      `large_output_offload` (the original stays in the log, the copy keeps its type, id and tool
      call, so it still answers its call; the same event always gets the same preview). If that
      fits the budget, that view is returned and nothing is appended.
    - Still over budget: a condensation forgets the older rounds (whole units; the head, the system
      prompt and the first user message stay) under the model's continuation summary; if the kept
      rounds alone exceed the budget, or would with a summary as long as what it forgets (the prompt
      would be over budget and no smaller, and the loop guard would stop the next condensation),
      only the newest `keep_last_messages` events (fewer, to fit, the newest unit always) stay. Its
      metadata records each stage's tokens before, after and saved (`micro_compaction`,
      `continuation_summary`, and `trim` when the rounds were cut).

    Also what the stages saved the last time they ran is in `last_stages` (the micro view
    appends nothing to the log, so this is where it shows between condensations).
    """

    config_cls = CompactHistoryCondenserConfig
    default_prompt: ClassVar[str] = CONTINUATION_PROMPT
    closing: ClassVar[str] = "Now write the continuation summary."

    warnings: int
    """How many times the prompt crossed `warning_ratio` of `max_tokens`."""
    last_stages: dict[str, Any]
    """The stages of the latest compaction (micro view or condensation), with the tokens each saved."""

    def __init__(
        self,
        llm: LLM | LLMConfig | None = None,
        keep_last_rounds: int = FROM_CONFIG,
        keep_last_messages: int = FROM_CONFIG,
        *,
        max_tokens: int | ContextWindowShare = FROM_CONFIG,
        warning_ratio: float = FROM_CONFIG,
        auto_compact: bool = FROM_CONFIG,
        compact_over_chars: int = FROM_CONFIG,
        preview_chars: int = FROM_CONFIG,
        keep_first: int = FROM_CONFIG,
        summary_prompt: str | None = FROM_CONFIG,
        max_summary_share: float = FROM_CONFIG,
        **options: Any,
    ) -> None:
        """Set the model, the budget and the stages (QitOS' `CompactConfig` defaults).

        Raises:
            CondenserConfigError: a count below 1, a ratio outside (0, 1], a preview not shorter
                than the threshold, or a share of a context window nobody knows.
            ValueError: see `ModelSummarizingCondenser`.
        """
        for field, value in (
            ("keep_last_rounds", keep_last_rounds),
            ("keep_last_messages", keep_last_messages),
            ("compact_over_chars", compact_over_chars),
            ("preview_chars", preview_chars),
        ):
            if value < 1:
                raise CondenserConfigError(f"must be at least 1, got {value}", condenser_type=_TYPE, field=field)
        if not 0 < warning_ratio <= 1:
            raise CondenserConfigError(f"must be in (0, 1], got {warning_ratio}", condenser_type=_TYPE, field="warning_ratio")
        try:
            _check_preview(preview_chars, compact_over_chars)
        except ValueError as exc:
            raise CondenserConfigError(str(exc), condenser_type=_TYPE) from None
        llm = condenser_llm(llm) if isinstance(llm, LLMConfig) else llm
        limit, self.threshold = resolve_token_limit(max_tokens, llm=llm, condenser_type=_TYPE)
        self.keep_last_rounds = keep_last_rounds
        self.keep_last_messages = keep_last_messages
        self.warning_ratio = warning_ratio
        self.auto_compact = auto_compact
        self.compact_over_chars = compact_over_chars
        self.preview_chars = preview_chars
        self.warnings = 0
        self.last_stages = {}
        self._warned = False
        self._pending_warning: dict[str, Any] | None = None
        self._previews: dict[int, tuple[Event, Event]] = {}
        super().__init__(
            llm,
            _NO_SIZE_TRIGGER,
            keep_first,
            max_tokens=limit,
            summary_prompt=summary_prompt,
            max_summary_share=max_summary_share,
            **options,
        )


    @property
    def budget(self) -> int:
        """The prompt's token budget (`max_tokens`, resolved)."""
        assert self.max_tokens is not None
        return self.max_tokens

    @property
    def warning_threshold(self) -> int:
        """The prompt tokens at which the warning is given: `warning_ratio` of the budget (at least 1)."""
        return max(1, int(self.budget * self.warning_ratio))

    # -- the stages -------------------------------------------------------------------------------

    def condense(self, view: View) -> View | Condensation:
        tokens = self.token_counter(view)
        self._watch(view, tokens)
        requested = view.unhandled_condensation_request
        if not requested and (tokens <= self.budget or not self.auto_compact):
            return view
        structure = analyze(view)
        preserved = self._preserved_start(structure)
        shown, micro = self._micro_compact(view, structure, preserved, tokens)
        self.last_stages = {"micro_compaction": micro}
        if not requested and micro["tokens_after"] <= self.budget:
            return shown
        try:
            return self.record_condensation(
                view, lambda: self._summary_condensation(view, structure, preserved, micro), reason="request" if requested else "tokens"
            )
        except NoCondensationAvailable:
            return shown

    def condensation_reason(self, view: View) -> CondensationReason | None:
        """Why `view` would be summarized now (`condense` decides through its stages; this says the same)."""
        if view.unhandled_condensation_request:
            return "request"
        return "tokens" if self.auto_compact and self.token_counter(view) > self.budget else None

    def _watch(self, view: View, tokens: int) -> None:
        """Warn once each time the prompt crosses the warning threshold (re-armed when it falls below)."""
        threshold = self.warning_threshold
        if tokens < threshold:
            self._warned = False
            return
        if self._warned:
            return
        self._warned = True
        self.warnings += 1
        at = next((e.id for e in reversed(view) if e.id is not None), None)
        warning = {
            "tokens": tokens,
            "threshold": threshold,
            "warning_ratio": self.warning_ratio,
            "max_tokens": self.budget,
            "at_event_id": at,
        }
        if self._pending_warning is None:
            self._pending_warning = warning
        logger.warning(
            "compact_history: the prompt has %d tokens, at least %g of its budget of %d tokens (at event %s)",
            tokens,
            self.warning_ratio,
            self.budget,
            at,
        )

    def _preserved_start(self, structure: ViewStructure) -> int:
        """Where the last `keep_last_rounds` rounds start (0 when the view has no more rounds than that)."""
        starts = round_starts(structure)
        return starts[-self.keep_last_rounds] if len(starts) > self.keep_last_rounds else 0

    def _micro_compact(
        self, view: View, structure: ViewStructure, end: int, tokens: int
    ) -> tuple[View, dict[str, Any]]:
        """The view with the long compactable events before `end` shown as previews (the events kept
        for good left whole), and the stage's record."""
        pinned = structure.pinned_units(self.keep_first) if end else set()
        unit_of = structure.unit_of
        indexes = [i for i in range(end) if unit_of[i] not in pinned and self._compacted(view[i]) is not view[i]]
        shown = replace_at(view, indexes, self._compacted) if indexes else view
        after = self.token_counter(shown) if indexes else tokens
        return shown, {"messages": len(indexes), "tokens_before": tokens, "tokens_after": after, "tokens_saved": tokens - after}

    def _compacted(self, event: Event) -> Event:
        """The micro-compacted copy of `event` when it is compactable and long, else the event itself (memoized)."""
        entry = self._previews.get(id(event))
        if entry is not None and entry[0] is event:
            return entry[1]
        text = self._compactable_text(event)
        if text is None or len(text) <= self.compact_over_chars:
            return event
        if len(self._previews) > 4096:
            self._previews = {}  # the memo holds the originals alive: forget it now and then
        label = "tool output" if isinstance(event, Observation) else "message"
        preview = micro_preview(text, event_id=event.id, label=label, preview_chars=self.preview_chars)
        if len(preview) >= len(text):
            return event  # a short message over a low threshold: its preview would be no shorter
        update = masked_fields(event, preview) if isinstance(event, Observation) else {"content": preview}
        compacted = event.model_copy(update=update)
        self._previews[id(event)] = (event, compacted)
        return compacted

    @staticmethod
    def _compactable_text(event: Event) -> str | None:
        """The text micro-compaction may shorten: a tool's output or a message (None: never compacted)."""
        if event.hidden:
            return None
        if isinstance(event, MessageAction):
            return event.content
        if not isinstance(event, Observation) or isinstance(event, _NEVER_COMPACTED):
            return None
        if isinstance(event, FileEditObservation) and event.impl_source != "oh_aci":
            return None  # shown as a diff of the file contents, not by its content
        return event.content  # type: ignore[attr-defined, no-any-return]

    def _summary_condensation(
        self, view: View, structure: ViewStructure, preserved: int, micro: dict[str, Any]
    ) -> Condensation:
        """Forget the older rounds (and, if still over budget, all but the newest events) under a continuation summary."""
        plan = plan_before(view, preserved, keep_first=self.keep_first, structure=structure)
        counter = self.token_counter
        trimmed: dict[str, Any] | None = None
        if self._over_budget(plan):
            trimmed_plan = self._trim(view, structure, preserved)
            if len(trimmed_plan.forgotten) > len(plan.forgotten):
                trimmed = {"events": len(trimmed_plan.forgotten) - len(plan.forgotten)}
                plan = trimmed_plan
        if not plan.forgotten:
            if view.unhandled_condensation_request:
                return Condensation(plan.action())  # nothing to summarize: only mark the request handled
            raise NoCondensationAvailable(self.name, "every event in view is kept for good")
        warning = self._pending_warning
        if warning is not None:
            self.add_metadata("warning", warning)
        if self.threshold is not None:
            self.add_metadata("threshold", self.threshold)
        self.add_metadata("max_tokens", self.budget)
        self.add_metadata("micro_compaction", micro)
        action = self.summary_action(plan)
        self._pending_warning = None  # in the log now (a failed or skipped summary leaves it pending)
        after = counter(condensed_events(view, action))
        before = micro["tokens_after"]
        stage = {
            "rounds_kept": self.keep_last_rounds,
            "events": len(plan.forgotten),
            "tokens_before": before,
            "tokens_after": after,
            "tokens_saved": before - after,
        }
        if trimmed is not None:
            stage["trimmed_events"] = trimmed["events"]
        self.add_metadata("continuation_summary", stage)
        self.last_stages = {"micro_compaction": micro, "continuation_summary": stage}
        return Condensation(action)

    def _kept_tokens(self, plan: ForgettingPlan) -> int:
        """The tokens of the events `plan` keeps (the summary it will add not counted)."""
        forgotten = set(plan.forgotten)
        return self.token_counter([e for i, e in enumerate(plan.structure.events) if i not in forgotten])

    def _over_budget(self, plan: ForgettingPlan) -> bool:
        """Whether a condensation by `plan` may leave the prompt over budget and no smaller.

        It may when the events it keeps alone exceed the budget, or when its summary may take as many
        tokens as it replaces (one of up to `MIN_SUMMARY_TOKENS` is never cut) and, that long, would
        put the prompt over budget: asked again at once, the loop guard would stop the next
        condensation (`CondensationStalledError`). Otherwise the summary fits the budget, or is
        shorter than what it replaces and the prompt shrinks.
        """
        kept = self._kept_tokens(plan)
        if kept > self.budget:
            return True
        summary = self.summary_budget(plan)
        return summary >= self.replaced_tokens(plan) and kept + summary > self.budget

    def _trim(self, view: View, structure: ViewStructure, preserved: int) -> ForgettingPlan:
        """QitOS' trim: keep at most the newest `keep_last_messages` events, fewer while over budget
        (`_over_budget`; never cutting into the newest unit)."""
        n = len(structure)
        cut = max(preserved, recency_cut(structure, self.keep_last_messages))
        newest = structure.safe_cut_at_or_before(n - 1) if n else 0
        plan = plan_before(view, cut, keep_first=self.keep_first, structure=structure)
        candidate = cut
        while self._over_budget(plan) and candidate < newest:
            candidate = structure.safe_cut_at_or_after(candidate + 1)
            if candidate > newest:
                break
            plan = plan_before(view, candidate, keep_first=self.keep_first, structure=structure)
        return plan
