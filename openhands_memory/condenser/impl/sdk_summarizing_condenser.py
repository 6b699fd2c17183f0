"""`sdk_summarizing`: the OpenHands SDK's `LLMSummarizingCondenser`, deciding as it does, on our events.

The SDK (`openhands-sdk` 1.58) ships one condenser that condenses: `LLMSummarizingCondenser`
(`max_size` 240, `keep_first` 2; the SDK's `default_condenser` is 80/4). This strategy makes the
same decisions on our view, so that it can run where the SDK cannot (Python 3.11, the benchmarks),
and `tests/integrations/openhands_sdk/test_sdk_summarizing_matches_sdk.py` checks it against the
SDK itself, step by step, on the same events. Its rules, in the SDK's order:

- **Reasons.** `request`: an unhandled condensation request; `tokens`: the prompt (by the token
  counter: the agent model's) has more tokens than the smaller of `max_tokens` and
  `max_input_tokens` (the agent model's input limit, which the SDK reads from `agent_llm`);
  `events`: the view has more than `max_size` events.
- **Hard or soft.** `tokens` or `request` make it hard, `events` alone soft: when nothing can be
  forgotten, a soft requirement leaves the view as it is, a hard one resets the context.
- **What is forgotten.** The suffix to keep is the smallest of: `len(view) // 2 - keep_first - 1`
  (a request), `max_size // 2 - keep_first - 1` (events), and the newest events that remain once
  enough of the oldest after the head are dropped to bring the prompt to half the token limit
  (tokens; the SDK's binary search over prefixes). The forgotten range runs from the first
  manipulation index at or after the head (`keep_first`, and never the system prompt) to the first
  manipulation index at or after `len(view) - suffix`; an empty range, no such index, or fewer
  than `minimum_progress` of the view's events forgotten means no condensation.
- **Manipulation indices** (the SDK's view properties, as our events express them): no cut between
  the actions of one model response (batch atomicity), while a tool call waits for its result
  (tool-call matching; here also an action and the observation whose `cause` it is), or inside a
  tool loop (an action whose model response has thinking blocks, with the tool calls and results
  that follow it: tool-loop atomicity). Observation uniqueness constrains no cut.
- **The SDK's view.** Counts, cuts and the forgotten range are those of the events the SDK's view
  would hold (`sdk_visible`): a tool call with no result in the view, a result whose call is not
  in it, and a second result of one call are left out (the SDK's property enforcement drops them);
  here they are never forgotten (a result may still come), except a second result, which goes
  with its call when the call is forgotten (kept, it would answer a call no longer in view).
- **The summary** goes where the forgotten range began (`summary_offset` = its start) and persists
  as the SDK's do (`summary_persists`): it stays until a later condensation forgets it. It is the
  model's (`llm_config`, with the `llm` strategy's prompt) or, with no model, the offline
  structured summary.
- **Hard context reset.** A hard requirement that cannot be met forgets everything after the
  kept head and puts the summary there.

Where this library's promises (DESIGN.md invariant 5) are stricter than the SDK, they win, and the
condensation records it (`sdk_deviation`): the first user message is kept even when `keep_first`
does not reach it, and the hard context reset keeps the head (`keep_first`, the first user message)
where the SDK keeps only the system prompt. A request that cannot be met even so is marked handled
by a condensation that forgets nothing (the SDK raises `NoCondensationAvailableException`). On the
SDK's own views (system prompt, then the user's message, `keep_first` >= 2) only the hard context
reset differs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from openhands_memory.condenser.kit import (
    FROM_CONFIG,
    CITE_EVENT_IDS,
    ModelCaller,
    ModelConfig,
    OnModelError,
    condensation_action,
    event_block,
    first_user_message_index,
    forget_id,
    is_summary,
    sized,
    standing_summary_index,
)
from openhands_memory.condenser.base import Condensation, CondensationReason, RollingCondenser
from openhands_memory.condenser.impl.llm_summarizing_condenser import SUMMARY_PROMPT
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.errors import LLMError, NoCondensationAvailable
from openhands_memory.events import Action, CondensationAction, Event, Observation, SystemMessageAction
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import LLM
from openhands_memory.view import View

if TYPE_CHECKING:
    from openhands_memory.condenser.config import CondenserContext

__all__ = ["SdkReason", "SdkRequirement", "SdkSummarizingCondenser", "SdkSummarizingCondenserConfig", "manipulation_indices"]

SdkReason = Literal["request", "tokens", "events"]
"""Why the SDK's `LLMSummarizingCondenser` condenses (its `Reason`)."""

SdkRequirement = Literal["hard", "soft"]
"""How much a condensation is needed (the SDK's `CondensationRequirement`)."""


class SdkSummarizingCondenserConfig(ModelConfig):
    """`sdk_summarizing`: decides as the OpenHands SDK's `LLMSummarizingCondenser`: past `max_size` events, the token limit, or on a request, forget from the head to a suffix; a persisting summary there."""

    type: Literal["sdk_summarizing"] = "sdk_summarizing"
    """The condenser type."""
    keep_first: int = sized("first", default=2, ge=0)
    """The first events of the view, never forgotten (the SDK's default: 2)."""
    max_size: int = sized("events", default=240, ge=1)
    """Condense when the view has more events than this (the SDK's default: 240)."""
    max_tokens: int | None = sized("tokens", default=None, ge=1)
    """Condense (a hard requirement) when the prompt has more tokens than this (None: no limit of its own)."""
    max_input_tokens: int | None = sized("tokens", default=None, ge=1)
    """The agent model's input limit, which the SDK reads from `agent_llm`: the token limit is the
    smaller of this and `max_tokens` (None: not known)."""
    minimum_progress: float = Field(default=0.1, gt=0, lt=1)
    """Forgetting fewer than this share of the view's events is no condensation (the SDK's default: 0.1)."""

    @model_validator(mode="after")
    def _check_room(self) -> SdkSummarizingCondenserConfig:
        check_room(self.keep_first, self.max_size)
        return self


def check_room(keep_first: int, max_size: int) -> None:
    """The SDK's rule: `max_size // 2 - keep_first - 1` events are kept from the tail, at least one.

    Raises:
        ValueError: `keep_first` leaves no room (the message names both).
    """
    if max_size // 2 - keep_first - 1 <= 0:
        raise ValueError(
            f"keep_first ({keep_first}) must be less than max_size // 2 - 1 ({max_size // 2 - 1}) to leave room for condensation"
        )


def _is_tool_action(event: Event) -> bool:
    return isinstance(event, Action) and event.tool_call_metadata is not None


def _is_tool_result(event: Event) -> bool:
    return isinstance(event, Observation) and not is_summary(event) and (event.tool_call_metadata is not None or event.cause is not None)


def _starts_tool_loop(event: Event) -> bool:
    """An action whose model response carries thinking blocks, and the response's first call (the
    SDK gives the thinking blocks to that action only)."""
    metadata = event.tool_call_metadata
    if metadata is None or not isinstance(metadata.model_response, dict):
        return False
    choices = metadata.model_response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return False
    message = choices[0].get("message")
    if not isinstance(message, dict) or not message.get("thinking_blocks"):
        return False
    calls = message.get("tool_calls")
    first = calls[0] if isinstance(calls, list) and calls else None
    return isinstance(first, dict) and first.get("id") == metadata.tool_call_id


def manipulation_indices(events: Sequence[Event]) -> list[bool]:
    """`allowed[i]` (0 <= i <= len(events)): the view may be cut before index `i` (see the module docstring)."""
    n = len(events)
    allowed = [True] * (n + 1)
    answered_actions = {e.cause for e in events if isinstance(e, Observation) and not is_summary(e) and e.cause is not None}
    last_of_response: dict[str, int] = {}
    for index, event in enumerate(events):
        response = event.response_id if _is_tool_action(event) else None
        if response is not None:
            last_of_response[response] = index

    # Tool-call matching and batch atomicity: no cut while a call, a caused action or a batch is open.
    pending: set[tuple[str, object]] = set()
    for index, event in enumerate(events):
        if isinstance(event, Action):
            metadata = event.tool_call_metadata
            if metadata is not None:
                pending.add(("call", metadata.tool_call_id))
                response = metadata.response_id
                if response is not None:
                    if last_of_response[response] > index:
                        pending.add(("response", response))
                    else:
                        pending.discard(("response", response))
            if event.id is not None and event.id in answered_actions:
                pending.add(("action", event.id))
        elif isinstance(event, Observation) and not is_summary(event):
            if event.tool_call_metadata is not None:
                pending.discard(("call", event.tool_call_metadata.tool_call_id))
            if event.cause is not None:
                pending.discard(("action", event.cause))
        if pending:
            allowed[index + 1] = False

    # Tool-loop atomicity: from a thinking action through the calls and results that follow it.
    in_loop = False
    for index, event in enumerate(events):
        if _is_tool_action(event) and _starts_tool_loop(event):
            in_loop = True
        elif _is_tool_action(event) or _is_tool_result(event):
            if in_loop:
                allowed[index] = False
        else:
            in_loop = False
    return allowed


def sdk_visible(events: Sequence[Event]) -> list[int]:
    """The indexes of the events the SDK's view would hold (its property enforcement): all but a
    tool call with no result in the view, a result whose call is not in the view, and a second
    result of one call (the first stays). The others are never counted or cut at here, nor forgotten
    but a second result with its call (`_later_results`)."""
    calls: set[str] = set()
    results: set[str] = set()
    for event in events:
        metadata = event.tool_call_metadata
        if metadata is None:
            continue
        if _is_tool_action(event):
            calls.add(metadata.tool_call_id)
        elif _is_tool_result(event):
            results.add(metadata.tool_call_id)
    visible: list[int] = []
    seen: set[str] = set()
    for index, event in enumerate(events):
        metadata = event.tool_call_metadata
        if metadata is not None and _is_tool_action(event):
            if metadata.tool_call_id not in results:
                continue
        elif metadata is not None and _is_tool_result(event):
            if metadata.tool_call_id not in calls or metadata.tool_call_id in seen:
                continue
            seen.add(metadata.tool_call_id)
        visible.append(index)
    return visible


def _later_results(events: Sequence[Event], visible: Sequence[int], forgotten: Sequence[Event]) -> list[Event]:
    """The results the SDK's view leaves out (a second result of one call) of the calls in `forgotten`.

    They go with their call, as every strategy forgets a call with all its results: kept, they would
    answer a call no longer in view. The SDK never sees them, so its decisions stay the same.
    """
    calls = {e.tool_call_metadata.tool_call_id for e in forgotten if _is_tool_action(e)}  # type: ignore[union-attr]
    if not calls:
        return []
    shown = set(visible)
    return [
        event
        for index, event in enumerate(events)
        if index not in shown and _is_tool_result(event) and event.tool_call_metadata is not None
        and event.tool_call_metadata.tool_call_id in calls
    ]  # fmt: skip


def _unanswered_batch_mates(events: Sequence[Event], visible: Sequence[int], positions: Sequence[int]) -> list[Event]:
    """The calls the SDK's view leaves out (no result yet) of a model response whose other calls the
    forgotten `positions` hold, up to the last of them.

    They go with their batch, as every strategy keeps or forgets a response's parallel calls
    together: kept, they would split it. The SDK never sees them, so its decisions stay the same.
    """
    if not positions:
        return []
    responses = {events[i].response_id for i in positions if _is_tool_action(events[i])} - {None}
    if not responses:
        return []
    shown, last = set(visible), max(positions)
    return [
        event
        for index, event in enumerate(events[: last + 1])
        if index not in shown and _is_tool_action(event) and event.response_id in responses
    ]


def _next_allowed(allowed: list[bool], threshold: int) -> int | None:
    """The smallest allowed index >= `threshold` (the SDK's `find_next`), or None."""
    for index in range(max(threshold, 0), len(allowed)):
        if allowed[index]:
            return index
    return None


class SdkSummarizingCondenser(ModelCaller, RollingCondenser):
    """The OpenHands SDK's `LLMSummarizingCondenser`: condenses on a request, over the token limit
    (hard) or over `max_size` events (soft), forgets from the head to a suffix it computes, snapped
    to the SDK's manipulation indices, and leaves a persisting summary there (see the module docstring)."""

    config_cls = SdkSummarizingCondenserConfig
    summaries_persist = True

    def __init__(
        self,
        llm: LLM | LLMConfig | None = None,
        *,
        max_size: int = FROM_CONFIG,
        keep_first: int = FROM_CONFIG,
        max_tokens: int | None = FROM_CONFIG,
        max_input_tokens: int | None = FROM_CONFIG,
        minimum_progress: float = FROM_CONFIG,
        max_event_length: int = FROM_CONFIG,
        on_model_error: OnModelError = FROM_CONFIG,
        token_counter: TokenCounter | None = None,
    ) -> None:
        """Set the model and the limits (defaults: the SDK's; `llm` None: no model, offline summaries).

        Raises:
            ValueError: a value out of range (`keep_first` must leave room: see `check_room`;
                `minimum_progress` between 0 and 1; limits and `max_event_length` at least 1).
        """
        super().__init__(token_counter=token_counter)
        check_room(keep_first, max_size)
        if keep_first < 0:
            raise ValueError(f"keep_first ({keep_first}) cannot be negative")
        for name, limit in (("max_tokens", max_tokens), ("max_input_tokens", max_input_tokens), ("max_event_length", max_event_length)):
            if limit is not None and limit < 1:
                raise ValueError(f"{name} ({limit}) must be at least 1")
        if not 0 < minimum_progress < 1:
            raise ValueError(f"minimum_progress ({minimum_progress}) must be between 0 and 1 (both excluded)")
        self.max_size = max_size
        self.keep_first = keep_first
        self.max_tokens = max_tokens
        self.max_input_tokens = max_input_tokens
        self.minimum_progress = minimum_progress
        self.max_event_length = max_event_length
        self.init_model(llm, on_model_error)

    @classmethod
    def build(cls, config: SdkSummarizingCondenserConfig, context: CondenserContext) -> SdkSummarizingCondenser:  # type: ignore[override]
        """Build from a config: the model its `llm_config` names (none when it names none), every other field by name.

        Raises:
            CondenserConfigError: `llm_config` names an LLM config the context does not hold.
        """
        llm = cls.model_from(config, context)
        return cls(llm, **cls.config_arguments(config, exclude=("llm_config",)), token_counter=context.token_counter)

    # -- deciding ------------------------------------------------------------------------------------

    @property
    def token_limit(self) -> int | None:
        """The smaller of `max_tokens` and `max_input_tokens` (None: neither is set)."""
        limits = [limit for limit in (self.max_tokens, self.max_input_tokens) if limit is not None]
        return min(limits) if limits else None

    def sdk_view(self, view: View) -> list[Event]:
        """The events of `view` the SDK's view would hold (see `sdk_visible`): what is counted and cut."""
        events = view.events
        return [events[i] for i in sdk_visible(events)]

    def condensation_reasons(self, view: View) -> set[SdkReason]:
        """Why `view` should be condensed now (empty: it should not)."""
        events = self.sdk_view(view)
        reasons: set[SdkReason] = set()
        if view.unhandled_condensation_request:
            reasons.add("request")
        limit = self.token_limit
        if limit is not None and self.token_counter(events) > limit:
            reasons.add("tokens")
        if len(events) > self.max_size:
            reasons.add("events")
        return reasons

    @staticmethod
    def requirement_of(reasons: set[SdkReason]) -> SdkRequirement | None:
        """Hard for tokens or a request, soft for events alone, None for no reason."""
        if not reasons:
            return None
        return "soft" if reasons == {"events"} else "hard"

    @staticmethod
    def recorded_reason(reasons: set[SdkReason]) -> CondensationReason | None:
        """The reason a condensation record gives for `reasons`: a request first, then tokens, then size."""
        if "request" in reasons:
            return "request"
        if "tokens" in reasons:
            return "tokens"
        return "size" if reasons else None

    def condensation_reason(self, view: View) -> CondensationReason | None:
        return self.recorded_reason(self.condensation_reasons(view))

    def condense(self, view: View) -> View | Condensation:
        reasons = self.condensation_reasons(view)
        requirement = self.requirement_of(reasons)
        reason = self.recorded_reason(reasons)
        if requirement is None or reason is None:
            return view
        started = time.perf_counter()
        try:
            return self.record_condensation(view, lambda: self._condensation(view, reasons, requirement), reason=reason, started=started)
        except NoCondensationAvailable:
            if requirement == "soft":
                return view
        try:
            return self.record_condensation(view, lambda: self._hard_context_reset(view, reasons), reason=reason, started=started)
        except NoCondensationAvailable:
            return view

    def get_condensation(self, view: View) -> Condensation:
        reasons = self.condensation_reasons(view)
        if not reasons:
            raise NoCondensationAvailable(self.name, "no reason to condense")
        requirement = self.requirement_of(reasons)
        assert requirement is not None
        return self._condensation(view, reasons, requirement)

    def forgotten_range(self, view: View, reasons: set[SdkReason]) -> tuple[int, int]:
        """The indexes `[start, end)` of the SDK's view (`sdk_view(view)`) that a condensation for `reasons` forgets.

        Raises:
            NoCondensationAvailable: no manipulation index past the suffix, an empty range, or one
                below `minimum_progress` (the SDK's three refusals).
        """
        events = self.sdk_view(view)
        n = len(events)
        keep_first = self.keep_first
        suffixes: list[int] = []
        if "request" in reasons:
            suffixes.append(n // 2 - keep_first - 1)
        if "events" in reasons:
            suffixes.append(self.max_size // 2 - keep_first - 1)
        if "tokens" in reasons:
            limit = self.token_limit
            assert limit is not None
            excess = self.token_counter(events) - limit // 2
            suffixes.append(self._suffix_after_reduction(events[keep_first:], excess, events[:keep_first]))
        naive_end = n - min(suffixes)
        allowed = manipulation_indices(events)
        protected = self.protected_prefix(events)
        if protected > self._sdk_prefix(events):
            self.add_metadata("sdk_deviation", f"kept the first user message (#{protected - 1}) that keep_first does not reach")
        start = _next_allowed(allowed, protected)
        end = _next_allowed(allowed, naive_end)
        if start is None or end is None:
            raise NoCondensationAvailable(self.name, f"no manipulation index at or after {naive_end if end is None else start}")
        if start >= end:
            raise NoCondensationAvailable(self.name, "nothing between the head and the suffix to keep can be forgotten")
        if end - start < n * self.minimum_progress:
            raise NoCondensationAvailable(
                self.name, f"{end - start} of {n} events forgotten is below minimum_progress ({self.minimum_progress:g})"
            )
        return start, end

    def protected_prefix(self, events: Sequence[Event]) -> int:
        """Where forgetting may start at the earliest: past `keep_first`, the system prompt and the first user message."""
        return max(self._sdk_prefix(events), self._past_first_user(events))

    def _sdk_prefix(self, events: Sequence[Event]) -> int:
        system = next((i for i, e in enumerate(events) if isinstance(e, SystemMessageAction)), None)
        return max(self.keep_first, system + 1 if system is not None else 0)

    @staticmethod
    def _past_first_user(events: Sequence[Event]) -> int:
        first_user = first_user_message_index(events)
        return first_user + 1 if first_user is not None else 0

    def kept_head(self, view: View) -> int:
        """How many first events of the SDK's view the hard context reset keeps: up to the first
        manipulation index at or after `protected_prefix` (all of them when there is none)."""
        events = self.sdk_view(view)
        start = _next_allowed(manipulation_indices(events), self.protected_prefix(events))
        return len(events) if start is None else start

    def _suffix_after_reduction(self, events: Sequence[Event], reduction: int, base: Sequence[Event]) -> int:
        """How many of the newest `events` stay once the shortest prefix worth more than `reduction`
        tokens (counted after `base`) is dropped: the SDK's `get_suffix_length_for_token_reduction`."""
        if not events:
            return 0
        if reduction <= 0:
            return len(events)
        counter = self.token_counter
        base_tokens = counter(list(base)) if base else 0

        def prefix_tokens(length: int) -> int:
            return counter([*base, *events[:length]]) - base_tokens

        if prefix_tokens(len(events)) <= reduction:
            return 0
        low, high = 1, len(events)
        while low < high:
            mid = (low + high) // 2
            if prefix_tokens(mid) > reduction:
                high = mid
            else:
                low = mid + 1
        return len(events) - low

    # -- condensing ----------------------------------------------------------------------------------

    def _condensation(self, view: View, reasons: set[SdkReason], requirement: SdkRequirement) -> Condensation:
        self.add_metadata("sdk_reasons", sorted(reasons))
        self.add_metadata("requirement", requirement)
        start, end = self.forgotten_range(view, reasons)
        return Condensation(self._summarized(view, start, end))

    def _hard_context_reset(self, view: View, reasons: set[SdkReason]) -> Condensation:
        """Forget everything after the kept head (the SDK keeps only the system prompt: see the module docstring).

        Raises:
            NoCondensationAvailable: nothing after the head may be forgotten and no request waits.
        """
        self.add_metadata("sdk_reasons", sorted(reasons))
        self.add_metadata("requirement", "hard")
        events = self.sdk_view(view)
        system = next((i for i, e in enumerate(events) if isinstance(e, SystemMessageAction)), None)
        start = self.kept_head(view)
        self.add_metadata("hard_context_reset", {"kept_head": start})
        if start > (system + 1 if system is not None else 0):
            self.add_metadata("sdk_deviation", f"the hard context reset kept the first {start} events")
        if start >= len(events):
            if view.unhandled_condensation_request:
                return Condensation(condensation_action(view.events, []))  # nothing to forget: only mark the request handled
            raise NoCondensationAvailable(self.name, "nothing after the head can be forgotten")
        return Condensation(self._summarized(view, start, len(events)))

    def _summarized(self, view: View, start: int, end: int) -> CondensationAction:
        """The condensation forgetting the SDK view's `[start:end)` with a persisting summary where it began."""
        events = view.events
        visible = sdk_visible(events)
        positions = visible[start:end]
        standing = standing_summary_index(view)
        forgotten = [events[i] for i in positions if i != standing]  # a V0 summary: only a newer one replaces it
        also = [*_later_results(events, visible, forgotten), *_unanswered_batch_mates(events, visible, positions)]
        ids = list(dict.fromkeys(i for i in map(forget_id, [*forgotten, *also]) if i is not None))
        summary = self._summary(forgotten)
        first = positions[0]
        offset = first - (1 if standing is not None and standing < first else 0)
        action = condensation_action(events, ids, summary=summary, summary_offset=offset)
        action.summary_persists = True
        return action

    def _summary(self, forgotten: list[Event]) -> str:
        """The model's summary of `forgotten` (summaries among them folded in), or the offline structured one.

        Raises:
            LLMError: the model failed and `on_model_error` does not fall back.
            NoCondensationAvailable: the model failed and `on_model_error` is `skip`.
        """
        previous = [e.content for e in forgotten if is_summary(e)]  # type: ignore[attr-defined]
        events = [e for e in forgotten if not is_summary(e)]
        if self.llm is None:
            self.add_metadata("outcome", "offline summary")
            return self.write_offline_summary(events, previous, max_tokens=None)
        before = self.llm.metrics.snapshot()
        try:
            summary = self.ask(lambda limit: self._ask_model(events, previous, limit))
            self.add_metadata("outcome", "summary")
        except LLMError as error:
            self.record_usage_since(before)
            self.handle_model_error(error)  # raises unless falling back
            return self.write_offline_summary(events, previous, max_tokens=None)
        self.record_usage_since(before)
        return summary

    def _ask_model(self, events: list[Event], previous: list[str], limit: int) -> str:
        assert self.llm is not None
        parts: list[Any] = [
            SUMMARY_PROMPT,
            "<PREVIOUS SUMMARY>\n" + ("\n\n".join(previous) or "No previous summary.") + "\n</PREVIOUS SUMMARY>",
            "\n".join(event_block(e, limit) for e in events),
            CITE_EVENT_IDS,
            "Now summarize the events using the rules above.",
        ]
        prompt = "\n\n".join(part for part in parts if part)
        return self.llm.completion([{"role": "user", "content": prompt}], require_text=True).text.strip()
