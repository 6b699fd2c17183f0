"""`llm_attention`: have a model pick the events to keep."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from openhands_memory.condenser.kit import (
    FROM_CONFIG,
    ModelBacked,
    ModelBackedConfig,
    ViewStructure,
    analyze,
    called_tool_arguments,
    event_block,
    is_summary,
    sized,
)
from openhands_memory.condenser.base import Condensation
from openhands_memory.condenser.forgetting import ForgettingPlan, plan_keeping
from openhands_memory.errors import LLMError, LLMResponseError, NoCondensationAvailable
from openhands_memory.events import Event
from openhands_memory.llm.config import LLMConfig
from openhands_memory.llm.llm import LLM, LLMResponse
from openhands_memory.view import View

logger = logging.getLogger(__name__)

__all__ = [
    "ATTENTION_PROMPT",
    "SELECT_EVENTS_TOOL_NAME",
    "ImportantEventSelection",
    "LLMAttentionCondenser",
    "LLMAttentionCondenserConfig",
]

SELECT_EVENTS_TOOL_NAME = "select_important_events"
"""The function the model is made to call with the ids it keeps."""

ATTENTION_PROMPT = """\
Below is the history of a coding agent: its actions, what it observed and its thoughts, each item \
with an id. The history has grown too long and only part of it can stay. Rank the items by how much \
the agent will need them for the next steps of its task, most important first, and give their ids \
in that order. At most {room} of them can stay: list no more than that. The items under ALWAYS KEPT \
stay in any case; do not list them."""
"""The instructions (`{room}` is how many events can stay besides those always kept)."""


class ImportantEventSelection(BaseModel):
    """What the model answers: the ids of the events to keep, most important first."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)

    ids: list[int]
    """Event ids, most important first."""

    @classmethod
    def tool(cls) -> dict[str, Any]:
        """The tool (OpenAI function format) the model is made to call."""
        return {
            "type": "function",
            "function": {
                "name": SELECT_EVENTS_TOOL_NAME,
                "description": "Keep these events of the agent's history, most important first; the others are forgotten.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "ids": {
                            "type": "array",
                            "items": {"type": "integer"},
                            "description": "The ids of the events to keep, most important first.",
                        }
                    },
                    "required": ["ids"],
                },
            },
        }


class LLMAttentionCondenserConfig(ModelBackedConfig):
    """`llm_attention`: have a model pick the events to keep."""

    type: Literal["llm_attention"] = "llm_attention"
    """The condenser type."""
    max_event_length: int = sized("chars", default=2_000, ge=1)
    """Cut each event's text to this many characters in the ranking prompt."""
    strict_response: bool = False
    """A selection that names no event of the view is an error (`LLMResponseError`, handled by
    `on_model_error`); by default it is read as an empty selection and the newest events fill the
    room, as OpenHands does."""


class LLMAttentionCondenser(ModelBacked):
    """When the view has more than `max_size` events (or `max_tokens` tokens), or the agent asks,
    a model ranks the events and those it ranks highest are kept, with the head; no summary.

    What is kept, within half of each budget: everything kept for good (the head, the system
    prompt, the first user message, calls still waiting for their result, summaries); the newest
    unit; then the model's picks in its order, each with its whole unit (a tool call with its
    result, a batch of parallel calls together), skipping any that would go over budget; then, as
    OpenHands does, the newest remaining events while there is room. Ids the model repeats, or
    that are not in view, are ignored. A selection with no id of the view (empty, or only invented
    ids) is read as an empty selection, as OpenHands does: the newest events fill the room, and
    the condensation records `unusable_model_answer` and logs a warning; with `strict_response` it
    is an `LLMResponseError` instead. A reply that is no selection at all (prose, another tool,
    the wrong fields) is an `LLMResponseError` either way (OpenHands fails on it too), handled by
    `on_model_error` (`fallback` forgets like `amortized`).

    The model is made to call `select_important_events` (a forced tool call); with a config that
    turns native tool calling off it is asked for a JSON object instead. A reply with no tool call
    but JSON text is read either way. When everything fits the budget, or nothing more does, the
    model is not asked. With no model (`llm=None`, no `llm_config`) it forgets like `amortized`: a
    ranking is not something the events themselves can give.
    """

    config_cls = LLMAttentionCondenserConfig
    default_max_event_length: ClassVar[int] = 2_000

    strict_response: bool
    """A selection with no id of the view raises `LLMResponseError` instead of being read as empty."""

    def __init__(
        self, llm: LLM | LLMConfig | None = None, max_size: int = FROM_CONFIG, keep_first: int = FROM_CONFIG, *, strict_response: bool = FROM_CONFIG, **options: Any
    ) -> None:
        """Set the model, the budgets and how an empty selection is taken.

        Args:
            llm, max_size, keep_first: as for `ModelBacked`.
            strict_response: raise `LLMResponseError` on a selection with no id of the view
                (default: read it as empty and keep the newest events, as OpenHands does).
            options: what every model-backed condenser takes (see `ModelBacked`).
        """
        self.strict_response = strict_response
        super().__init__(llm, max_size, keep_first, **options)

    # -- the condensation

    def get_condensation(self, view: View) -> Condensation:
        structure = analyze(view)
        keepable = self._forgettable(structure)
        budget = _Budget(self, structure, keepable)
        keep_units: set[int] = set()
        for unit in budget.newest_units():
            budget.take(unit, keep_units, force=True)
        candidates = [i for i, ok in enumerate(keepable) if ok and structure.unit_of[i] not in keep_units]
        if budget.fits_all(candidates):
            keep_units.update(structure.unit_of[i] for i in candidates)  # nothing to choose: no model call
        # With no room left the model's picks could not be kept: no call either.
        elif not budget.full and not self._pick(structure, candidates, budget, keep_units):
            return self._fallback(view)
        events = structure.events
        keep_ids = [e.id for i, e in enumerate(events) if e.id is not None and structure.unit_of[i] in keep_units]
        plan = self._keep(view, keep_ids, structure)
        if not plan.forgotten:
            if view.unhandled_condensation_request:
                return Condensation(plan.action())  # nothing to forget: only mark the request handled
            raise NoCondensationAvailable(self.name, "every event in view is kept for good")
        return Condensation(plan.action())

    def _pick(self, structure: ViewStructure, candidates: list[int], budget: _Budget, keep_units: set[int]) -> bool:
        """Add to `keep_units` the model's picks that fit, then the newest that fit; False to fall back.

        Raises:
            LLMError: the model failed and `on_model_error` is `raise`.
            NoCondensationAvailable: the model failed and `on_model_error` is `skip`.
        """
        if self.llm is None:
            self.add_metadata("outcome", "no model: forgot like amortized")
            return False
        rankable = [False] * len(structure.events)
        for index in candidates:
            rankable[index] = True
        self.last_error = None
        before = self.llm.metrics.snapshot()
        try:
            ranked = self.ask(lambda limit: self.rank(structure, rankable, budget.room, max_event_length=limit))
        except LLMError as error:
            self.record_usage_since(before)
            self.handle_model_error(error)  # raises unless falling back
            return False
        self.record_usage_since(before)
        self.add_metadata("outcome", "ranked")
        index_of = {e.id: i for i, e in enumerate(structure.events) if e.id is not None}
        picked = 0
        for event_id in ranked:
            index = index_of[event_id]
            if rankable[index] and budget.take(structure.unit_of[index], keep_units):
                picked += 1
        self.add_metadata("units_picked", picked)
        for index in reversed(candidates):  # what room is left goes to the newest events, as in OpenHands
            if budget.full:
                break
            budget.take(structure.unit_of[index], keep_units)
        return True

    def _forgettable(self, structure: ViewStructure) -> list[bool]:
        """Which events may go: the framework's rule, and summaries stay (this strategy writes none to replace them)."""
        ok = structure.forgettable(structure.pinned_units(self.keep_first))
        return [forgettable and not is_summary(e) for forgettable, e in zip(ok, structure.events, strict=True)]

    def _keep(self, view: View, keep_ids: list[int], structure: ViewStructure) -> ForgettingPlan:
        plan = plan_keeping(view, keep_ids, keep_first=self.keep_first, structure=structure)
        events = structure.events
        if any(is_summary(events[i]) for i in plan.forgotten):
            plan = replace(plan, forgotten=tuple(i for i in plan.forgotten if not is_summary(events[i])))
        return plan

    def _fallback(self, view: View) -> Condensation:
        """Forget as `amortized` would (the model failed and `on_model_error` is `fallback`)."""
        plan = self.plan(view)
        if not plan.forgotten and not view.unhandled_condensation_request:
            raise NoCondensationAvailable(self.name, "every event in view is kept for good")
        return Condensation(plan.action())

    # -- asking the model

    def build_prompt(
        self, structure: ViewStructure, rankable: list[bool], room: int, *, max_event_length: int | None = None
    ) -> str:
        """The ranking prompt: the instructions, the events kept anyway, then the events to rank (`rankable`, by index)."""
        limit = self.max_event_length if max_event_length is None else max_event_length
        events = structure.events
        kept = "\n".join(event_block(e, limit) for e, ok in zip(events, rankable, strict=True) if not ok)
        ranked = "\n".join(event_block(e, limit) for e, ok in zip(events, rankable, strict=True) if ok)
        parts = [ATTENTION_PROMPT.format(room=room)]
        if kept:
            parts.append(f"<ALWAYS KEPT>\n{kept}\n</ALWAYS KEPT>")
        parts.append(ranked)
        if self._uses_tools:
            parts.append(f"Now call {SELECT_EVENTS_TOOL_NAME} with the ids, most important first.")
        else:
            parts.append('Answer with a JSON object and nothing else: {"ids": [the ids, most important first]}.')
        return "\n\n".join(parts)

    @property
    def _uses_tools(self) -> bool:
        return self.llm is not None and self.llm.config.native_tool_calling is not False

    def rank(
        self, structure: ViewStructure, rankable: list[bool], room: int, *, max_event_length: int | None = None
    ) -> list[int]:
        """Ask the model once: the ids of the view it keeps, most important first (repeats and unknown ids dropped).

        Raises:
            LLMError: the call failed, or the reply names no event of the view (`LLMResponseError`).
        """
        assert self.llm is not None, "asked only when there is a model"
        prompt = self.build_prompt(structure, rankable, room, max_event_length=max_event_length)
        messages = [{"role": "user", "content": prompt}]
        if self._uses_tools:
            response = self.llm.completion(
                messages,
                tools=[ImportantEventSelection.tool()],
                tool_choice={"type": "function", "function": {"name": SELECT_EVENTS_TOOL_NAME}},
            )
        else:
            response = self.llm.completion(messages, require_text=True)
        return self.read_ids(response, structure.events)

    def read_ids(self, response: LLMResponse, events: list[Event]) -> list[int]:
        """The ids a reply keeps that are in `events`, in its order, each once.

        A selection with no id of `events` gives an empty list (recorded as `unusable_model_answer`,
        with a warning), unless `strict_response` is set.

        Raises:
            LLMResponseError: no `select_important_events` call (nor JSON text), arguments that do
                not fit `ImportantEventSelection`, or, with `strict_response`, no id of `events` at all.
        """
        model = self.llm.config.model if self.llm is not None else None
        arguments = called_tool_arguments(response, SELECT_EVENTS_TOOL_NAME)
        if isinstance(arguments, list):
            arguments = {"ids": arguments}
        try:
            selection = ImportantEventSelection.model_validate(arguments)
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in error["loc"]) or "arguments"
            raise LLMResponseError(f"{SELECT_EVENTS_TOOL_NAME}: {where}: {error['msg']}", model=model) from None
        in_view = {e.id for e in events if e.id is not None}
        seen: set[int] = set()
        ids: list[int] = []
        for event_id in selection.ids:
            if event_id in seen:
                continue
            seen.add(event_id)
            if event_id in in_view:
                ids.append(event_id)
        ignored = len(selection.ids) - len(ids)
        if ignored:
            self.add_metadata("ids_ignored", ignored)
        if not ids:
            reason = f"{SELECT_EVENTS_TOOL_NAME}: none of the {len(selection.ids)} ids chosen is an event in view"
            if self.strict_response:
                raise LLMResponseError(reason, model=model)
            # OpenHands keeps the newest events when the selection is empty; say that it happened.
            self.add_metadata("unusable_model_answer", "empty selection" if not selection.ids else reason)
            logger.warning("%s: %s; keeping the newest events instead (strict_response is off)", self.name, reason)
        return ids


class _Budget:
    """What is kept so far against half of each budget, counted by whole units."""

    def __init__(self, condenser: LLMAttentionCondenser, structure: ViewStructure, keepable: list[bool]) -> None:
        self.structure = structure
        self.keepable = keepable
        self.max_events = condenser.max_size // 2
        self.max_tokens = condenser.max_tokens // 2 if condenser.max_tokens is not None else None
        self.counter = condenser.token_counter
        self.members: dict[int, list[Event]] = {}
        for index, event in enumerate(structure.events):
            if keepable[index]:
                self.members.setdefault(structure.unit_of[index], []).append(event)
        fixed = [e for e, ok in zip(structure.events, keepable, strict=True) if not ok]
        self.events = len(fixed)
        self.tokens = self.counter(fixed) if self.max_tokens is not None else 0

    @property
    def room(self) -> int:
        """How many more events fit."""
        return max(0, self.max_events - self.events)

    @property
    def full(self) -> bool:
        """No more events fit."""
        return self.events >= self.max_events or (self.max_tokens is not None and self.tokens >= self.max_tokens)

    def newest_units(self) -> set[int]:
        """The forgettable units from the last safe cut on: the newest step, always kept."""
        st = self.structure
        n = len(st.events)
        if not n:
            return set()
        last = st.safe_cut_at_or_before(n - 1)
        return {st.unit_of[i] for i in range(last, n) if self.keepable[i]}

    def fits_all(self, indexes: list[int]) -> bool:
        """Keeping all these events too stays within the budget."""
        if self.events + len(indexes) > self.max_events:
            return False
        if self.max_tokens is None:
            return True
        return self.tokens + self.counter([self.structure.events[i] for i in indexes]) <= self.max_tokens

    def take(self, unit: int, kept: set[int], *, force: bool = False) -> bool:
        """Keep `unit` if it fits (or `force`); whether it is kept now."""
        if unit in kept:
            return False
        members = self.members.get(unit, [])
        tokens = self.counter(members) if self.max_tokens is not None else 0
        if not force and (
            self.events + len(members) > self.max_events
            or (self.max_tokens is not None and self.tokens + tokens > self.max_tokens)
        ):
            return False
        kept.add(unit)
        self.events += len(members)
        self.tokens += tokens
        return True
