"""`OpenHandsMemoryCondenser`: any strategy of this library (or a pipeline of them) as an OpenHands SDK condenser.

    import openhands_memory.integrations.openhands_sdk  # first: the SDK finds condensers by class name
    from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser

    condenser = OpenHandsMemoryCondenser.from_file("pipeline.toml")       # our CLI's pipeline file
    condenser = OpenHandsMemoryCondenser(condenser={"type": "observation_masking", "attention_window": 20})
    condenser = OpenHandsMemoryCondenser()     # the default pipeline, cache-aware, priced for the agent's LLM
    agent = Agent(llm=llm, tools=tools, condenser=condenser)

It is a pydantic model whose fields are our config (the `[condenser]` table, `[history_policy]`, the
`[llm.NAME]` tables), so the SDK serializes it with the `Agent` (`kind` =
`OpenHandsMemoryCondenser`) and loads it back equal. The strategy itself is built on first use,
with the agent's model at hand: its token budgets count with the agent's tokenizer
(`tokenizer = "agent"`), and a strategy whose `llm_config` names `agent_llm_name` ("agent")
summarizes with the agent's model, key and base URL. It keeps its state from step to step, as our
condensers do, one strategy per conversation (told by its system prompt's id: the SDK shares an
agent's condenser with its sub-agents); that state is neither serialized nor compared.

At each step the SDK's view becomes ours (`_view_import`), our pipeline asks the strategy once
(`Pipeline.condense`, with the loop guard), and the answer goes back (`_view_export`): an SDK
`Condensation` naming SDK ids, or a new SDK `View` (view transforms). What the SDK's contract asks:

- `condensation_requirement`: HARD when the strategy condenses for tokens or a request, or when
  the view is over the agent's input limit (`effective_max_input_tokens`) or holds a request the strategy did not answer; SOFT
  when it condenses for size (a heuristic, as the SDK's own condenser says); None otherwise.
- `get_condensation` raises the SDK's `NoCondensationAvailableException` when the strategy forgets
  nothing; on a HARD requirement the SDK then calls `hard_context_reset`: every event after the
  system prompt forgotten, with our summarizer's summary of them (the strategy's model, else the
  offline structured summary), within `hard_reset_summary_tokens`.
- The loop guard holds across the SDK's steps: a strategy that asks to condense again without
  making the prompt smaller (or more than `max_condensations_per_step` times before the view
  settles) raises `CondensationStalledError`.
- The SDK's view is never changed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from openhands.sdk.context.condenser.base import (
    CondensationRequirement,
    NoCondensationAvailableException,
    RollingCondenser,
)
from openhands.sdk.context.view import View as SdkView
from openhands.sdk.event import SystemPromptEvent
from openhands.sdk.event.condenser import Condensation as SdkCondensation
from openhands.sdk.llm import LLM as SdkLLM
from pydantic import Field, PrivateAttr, ValidationInfo, field_serializer, field_validator

from openhands_memory.condenser import Condensation, Condenser, CondenserContext, walk_condensers
from openhands_memory.condenser.config import PipelineMember, parse_condenser_config
from openhands_memory.condenser.guard import MAX_CONDENSATIONS_PER_STEP, CondensationGuard
from openhands_memory.conversation_memory.history_policy import HistoryPolicy
from openhands_memory.integrations.openhands_sdk._agent_llm import (
    AGENT_TOKENIZER,
    agent_llm_config,
    tokenizer_name,
)
from openhands_memory.integrations.openhands_sdk._hard_reset import hard_reset_summary
from openhands_memory.integrations.openhands_sdk._history_trim import trimmed_by_policy
from openhands_memory.integrations.openhands_sdk._compact_call import forgetting_too, pending_compact_call
from openhands_memory.integrations.openhands_sdk._secrets import dump_secrets, load_secrets
from openhands_memory.integrations.openhands_sdk._view_export import to_sdk_condensation, to_sdk_view
from openhands_memory.integrations.openhands_sdk._view_import import ImportedView, SdkViewImporter
from openhands_memory.llm import LLM, LLMConfig
from openhands_memory.pipeline import Pipeline, default_condenser_config, load_pipeline_config
from openhands_memory.pipelines import resolve_pipeline
from openhands_memory.recall.steering_tools import focus_problem
from openhands_memory.prompt_tokens import APPROXIMATE
from openhands_memory.view import View

__all__ = ["CondensationRecord", "OpenHandsMemoryCondenser"]

logger = logging.getLogger(__name__)

_MAX_CONVERSATIONS = 32
"""Conversations whose state one condenser keeps (the least recently condensed is dropped first)."""

_KEPT_RECORDS = 1_024
"""How many condensation records and lines of what was not carried over a condenser keeps."""

_HARD_REASONS = frozenset({"tokens", "request"})
"""Our condensation reasons that the SDK calls a HARD requirement (the rest are size heuristics: SOFT)."""


@dataclass(frozen=True, slots=True)
class CondensationRecord:
    """What one condensation handed to the SDK did: the SDK event's id and our record of it."""

    condensation_id: str
    """The id of the SDK `Condensation` event."""
    metadata: dict[str, Any]
    """Our `condenser_metadata` (`CondensationMetadata.to_dict()`): the SDK event has no field for it."""


@dataclass(slots=True)
class _Conversation:
    """The strategy of one conversation and what it keeps between steps."""

    pipeline: Pipeline
    guard: CondensationGuard
    importer: SdkViewImporter = field(default_factory=SdkViewImporter)
    asked: _Asked | None = None

    @property
    def strategy(self) -> Condenser:
        return self.pipeline.condenser


@dataclass(slots=True)
class _Asked:
    """The strategy's answer for one SDK view (asked once, whatever the SDK calls next)."""

    conversation: _Conversation
    sdk_view: SdkView
    key: tuple[bool, tuple[str, ...]]
    """What the view showed when asked: its request flag and event ids."""
    imported: ImportedView
    outcome: View | Condensation
    sdk_condensation: SdkCondensation | None = None
    compact_call: tuple[str, ...] = ()
    """The SDK ids of the agent's `compact_context` call and its answer this view asks to condense for (or ())."""

    @property
    def requested(self) -> bool:
        """Whether a condensation was asked for: the SDK's request, or the agent's `compact_context` call."""
        return self.imported.view.unhandled_condensation_request


class OpenHandsMemoryCondenser(RollingCondenser):
    """Any openhands-memory strategy as an OpenHands SDK condenser (see the module docstring).

    Equal when configured alike: the state a conversation built up is not part of it. One instance
    may serve several conversations (the SDK hands an agent's condenser to its sub-agents): each
    conversation, told by the id of its system prompt, gets a strategy of its own.
    """

    condenser: PipelineMember = Field(
        default_factory=lambda: parse_condenser_config(default_condenser_config()),
        description="Our condenser config: the `[condenser]` table of a pipeline file. Left out: the default "
        "pipeline (`DEFAULT_CONDENSER_CONFIG`: cache-aware, offline), priced for the agent's model.",
    )
    history_policy: HistoryPolicy | None = Field(
        default=None,
        description="The `[history_policy]` table: the oldest events are left out of the view handed back until "
        "its messages fit (whole tool loops; `roles` is not applied in the SDK).",
    )
    llm_configs: dict[str, LLMConfig] = Field(
        default_factory=dict, description="Named model configs (`[llm.NAME]`) for a strategy's `llm_config = \"NAME\"`."
    )
    agent_llm_name: str | None = Field(
        default="agent",
        description="The `llm_config` name that means the agent's own model (its name, key and base URL), "
        "unless `llm_configs` defines it; None: never.",
    )
    tokenizer: str = Field(
        default=AGENT_TOKENIZER,
        description="What our token budgets count with: `agent` (the agent's model), `approximate`, or a model name.",
    )
    max_condensations_per_step: int = Field(
        default=MAX_CONDENSATIONS_PER_STEP, ge=1, description="Condensations in a row before the loop guard stops."
    )
    hard_reset_summary_tokens: int = Field(
        default=2_000, ge=64, description="The most tokens the summary of a hard context reset may take."
    )

    _conversations: OrderedDict[str, _Conversation] = PrivateAttr(default_factory=OrderedDict)
    # Bounded: a long conversation condenses again and again (each line is also logged).
    _records: deque[CondensationRecord] = PrivateAttr(default_factory=lambda: deque(maxlen=_KEPT_RECORDS))
    _not_carried: deque[str] = PrivateAttr(default_factory=lambda: deque(maxlen=_KEPT_RECORDS))
    _handles: bool | None = PrivateAttr(default=None)
    _focus: str | None = PrivateAttr(default=None)

    @field_validator("condenser", mode="before")
    @classmethod
    def _our_config(cls, value: Any, info: ValidationInfo) -> Any:
        # Our own validation first: its errors name the type and the field and suggest a fix.
        return parse_condenser_config(load_secrets(value, info))

    @field_validator("llm_configs", mode="before")
    @classmethod
    def _our_llm_configs(cls, value: Any, info: ValidationInfo) -> Any:
        return load_secrets(value, info)

    @field_serializer("condenser", "llm_configs", when_used="always")
    def _with_sdk_secrets(self, value: Any, info: Any) -> Any:
        # Keys are redacted, exposed or encrypted as the SDK's context says, like the SDK's own LLM's.
        return dump_secrets(value, info)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **settings: Any) -> OpenHandsMemoryCondenser:
        """The condenser a pipeline file describes (TOML `[condenser]`, `[history_policy]`, `[llm.NAME]`; or JSON),
        or a shipped pipeline named as the CLI's `--pipeline` names it (`"cache_aware"`, `"default"`).

        The file is found and read as the CLI finds and reads it (`resolve_pipeline`,
        `load_pipeline_config`); `settings` are the other fields (`tokenizer`, ...).

        Raises:
            CondenserConfigError: no such file nor shipped pipeline (the message names the closest),
                or the file is unreadable or not a valid pipeline (the message names the file and the field).
        """
        config = load_pipeline_config(resolve_pipeline(path))
        return cls(condenser=config.condenser, history_policy=config.history_policy, **settings)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.model_dump() == other.model_dump()  # type: ignore[union-attr]

    __hash__ = None  # type: ignore[assignment]

    # -- what the strategy is ----------------------------------------------------------------------

    def strategy(self, agent_llm: SdkLLM | None = None) -> Condenser:
        """Our condenser of the conversation condensed last; before any, a new one built from the config
        (`agent_llm` for its tokenizer and models)."""
        if self._conversations:
            return next(reversed(self._conversations.values())).strategy
        return self._build(agent_llm).condenser

    @property
    def condensation_records(self) -> list[CondensationRecord]:
        """Our record of each condensation handed to the SDK, oldest first (the last 1,024)."""
        return list(self._records)

    def focus_next_condensation(self, focus: str | None) -> None:
        """What the next condensation on request must keep (issue 36): the SDK's `condense()` carries no focus, so
        set it here, then call `conversation.condense()`. The focus goes first in the summarizer's prompt, the
        offline summary keeps the lines naming it, and the condensation's record holds it (`extra.focus`); it
        is used by the next request the strategy answers, then dropped. None or '': no focus.

        Raises:
            ValueError: `focus` is longer than `MAX_FOCUS_CHARS`.
        """
        if focus and (problem := focus_problem(focus)) is not None:
            raise ValueError(problem)
        self._focus = focus or None

    @property
    def not_carried_over(self) -> list[str]:
        """What the strategy changed in views that the SDK's events could not show (the last 1,024; each also logged)."""
        return list(self._not_carried)

    def _build(self, agent_llm: SdkLLM | None) -> Pipeline:
        """Our pipeline, built from the config with the agent's model for `tokenizer` and `agent_llm_name`.

        Raises:
            LLMAuthenticationError: a strategy's summarizer model has no API key (the SDK's run stops at its
                first step, not at the first summary, many steps in).
        """
        configs: dict[str, Any] = dict(self.llm_configs)
        if self.agent_llm_name is not None and agent_llm is not None:
            configs.setdefault(self.agent_llm_name, agent_llm_config(agent_llm))
        condenser = Condenser.from_config(self.condenser, context=CondenserContext(llm_configs=configs))
        for member in walk_condensers(condenser):  # a summarizer without its key: now, not at its first summary
            llm = getattr(member, "llm", None)
            if isinstance(llm, LLM):
                llm.check_api_key()
        model = getattr(agent_llm, "model", None)
        if isinstance(model, str) and model:
            condenser.use_agent_model(model)  # a `cache_aware` without `pricing` (the default's): priced for it
        pipeline = Pipeline(condenser, None, self.history_policy)
        name = tokenizer_name(self.tokenizer, agent_llm)
        # The one prompt counter, as replay and bench measure (the strategy's budgets count with it too).
        return pipeline if name == APPROXIMATE else pipeline.measured_by(name)

    def _conversation(self, view: SdkView, agent_llm: SdkLLM | None) -> _Conversation:
        """The state of the conversation `view` belongs to (told by its system prompt's id), made on first sight."""
        key = next((event.id for event in view.events if isinstance(event, SystemPromptEvent)), "")
        conversations = self._conversations
        conversation = conversations.get(key)
        if conversation is None:
            pipeline = self._build(agent_llm)
            conversation = conversations[key] = _Conversation(pipeline, pipeline.guard(self.max_condensations_per_step))
            while len(conversations) > _MAX_CONVERSATIONS:
                conversations.popitem(last=False)
        conversations.move_to_end(key)
        return conversation

    def handles_condensation_requests(self) -> bool:
        """Whether our strategy answers a condensation request (the SDK then sends them)."""
        handles = self._handles
        if handles is None:
            # A throwaway build, not the strategy for good: the agent's model is not known yet.
            probe = Condenser.from_config(self.condenser, llm_configs={**self.llm_configs, **self._agent_placeholder()})
            handles = self._handles = probe.handles_requests
        return handles

    def _agent_placeholder(self) -> dict[str, LLMConfig]:
        name = self.agent_llm_name
        if name is None or name in self.llm_configs:
            return {}
        return {name: LLMConfig(model="agent-llm-placeholder")}

    # -- one SDK view, asked once ------------------------------------------------------------------

    def _ask(self, view: SdkView, agent_llm: SdkLLM | None) -> _Asked:
        conversation = self._conversation(view, agent_llm)
        # The SDK hands its cached view back step after step, grown in place: the same object may
        # show new events, so an answer is reused only for the same events (and request flag).
        key = (view.unhandled_condensation_request, self._focus, tuple(event.id for event in view.events))
        asked = conversation.asked
        if asked is not None and asked.sdk_view is view and asked.key == key:
            return asked
        guard = conversation.guard
        imported = conversation.importer.import_view(view.events, unhandled_condensation_request=view.unhandled_condensation_request)
        compact = pending_compact_call(imported)
        focus = self._focus
        if compact is not None:  # the agent's compact_context: a request with its focus, as `History` appends one
            imported.view.unhandled_condensation_request = True
            focus = compact[0] or focus
        if focus is not None and imported.view.unhandled_condensation_request:
            # `focus_next_condensation` or the call's: the view carries it, as a request with a focus does in a log
            imported.view.condensation_focus = focus
        outcome = conversation.pipeline.condense(imported.view, guard)
        if not isinstance(outcome, Condensation):
            guard.reset()  # the view settled: the next condensation starts a new step
        asked = conversation.asked = _Asked(conversation, view, key, imported, outcome, compact_call=compact[1] if compact else ())
        return asked

    def condensation_requirement(self, view: SdkView, agent_llm: SdkLLM | None = None) -> CondensationRequirement | None:
        asked = self._ask(view, agent_llm)
        outcome = asked.outcome
        if isinstance(outcome, Condensation):
            reason = outcome.metadata.reason if outcome.metadata is not None else "custom"
            return CondensationRequirement.HARD if reason in _HARD_REASONS else CondensationRequirement.SOFT
        if asked.requested and self.handles_condensation_requests():
            return CondensationRequirement.HARD  # asked, and our strategy answered with no condensation
        if self._over_input_limit(asked.conversation.strategy, outcome, agent_llm):
            return CondensationRequirement.HARD
        return None

    def _over_input_limit(self, strategy: Condenser, view: View, agent_llm: SdkLLM | None) -> bool:
        # The SDK's own limit: the configured one, else what the model's metadata says.
        limit = getattr(agent_llm, "effective_max_input_tokens", None) if agent_llm is not None else None
        if not isinstance(limit, int) or limit <= 0:
            return False
        return strategy.token_counter(view) > limit

    def get_condensation(self, view: SdkView, agent_llm: SdkLLM | None = None) -> SdkCondensation:
        asked = self._ask(view, agent_llm)
        outcome = asked.outcome
        if not isinstance(outcome, Condensation):
            raise NoCondensationAvailableException(f"{asked.conversation.strategy.name}: nothing in this view can be forgotten")
        if asked.sdk_condensation is None:
            made = to_sdk_condensation(asked.imported, outcome)
            if asked.compact_call and (made.forgotten_event_ids or made.summary is not None):
                made = forgetting_too(made, asked.imported.sdk_events, asked.compact_call)  # answered once, resumed or not
            if not made.forgotten_event_ids and made.summary is None:
                # Our strategies answer a request they cannot meet by marking it handled; the SDK sends
                # a request when the context overflowed, so that would only ask again: say so instead
                # (on a HARD requirement the SDK then resets the context).
                raise NoCondensationAvailableException(f"{asked.conversation.strategy.name}: every event in view is kept for good")
            asked.sdk_condensation = made
            if asked.requested:
                self._focus = None  # answered
            metadata = outcome.metadata.to_dict() if outcome.metadata is not None else {}
            self._records.append(CondensationRecord(made.id, metadata))
            logger.info("openhands-memory condensation %s: %s", made.id, metadata)
        return asked.sdk_condensation

    def condense(self, view: SdkView, agent_llm: SdkLLM | None = None) -> SdkView | SdkCondensation:
        """The view the agent is shown, or a condensation to append first (the SDK's `RollingCondenser.condense`,
        except that a view transform's view is handed back instead of the input).

        Raises:
            NoCondensationAvailableException: a HARD requirement that neither the strategy nor a
                hard context reset could meet.
            CondensationStalledError: condensing makes no progress (the loop guard).
        """
        requirement = self.condensation_requirement(view, agent_llm)
        if requirement is not None:
            try:
                return self.get_condensation(view, agent_llm)
            except NoCondensationAvailableException as exc:
                logger.debug("no condensation available: %s", exc)
                if requirement is CondensationRequirement.HARD:
                    reset = self.hard_context_reset(view, agent_llm)
                    if reset is not None:
                        return reset
                    raise
        return self._shown(view)

    async def acondense(self, view: SdkView, agent_llm: SdkLLM | None = None) -> SdkView | SdkCondensation:
        """`condense` in a worker thread (a strategy may call its model)."""
        return await asyncio.to_thread(self.condense, view, agent_llm)

    def _shown(self, view: SdkView) -> SdkView:
        asked = self._ask(view, None)  # the answer already given for this view
        outcome = asked.outcome
        # A SOFT requirement with nothing to forget after all: the view as it is.
        ours = asked.imported.view if isinstance(outcome, Condensation) else outcome
        conversation = asked.conversation
        exported = to_sdk_view(asked.imported, ours, transformed_by=conversation.strategy.name)
        exported = trimmed_by_policy(conversation.pipeline, exported)
        self._not_carried.extend(exported.lost)
        return exported.view

    def hard_context_reset(self, view: SdkView, agent_llm: SdkLLM | None = None) -> SdkCondensation | None:
        """Forget every event after the system prompt, with our summary of them in their place.

        The summary is our strategy's summarizer's (its model, else the offline structured summary)
        within `hard_reset_summary_tokens` by our token counter (see `_hard_reset`). None when
        nothing follows the system prompt.

        Raises:
            CondensationStalledError: the loop guard (a reset right after a condensation that
                made no progress).
        """
        events = list(view.events)
        keep = next((i + 1 for i, event in enumerate(events) if isinstance(event, SystemPromptEvent)), 0)
        if keep >= len(events):
            return None
        asked = self._ask(view, agent_llm)
        conversation = asked.conversation
        summary = hard_reset_summary(conversation.strategy, asked.imported.view, keep, max_tokens=self.hard_reset_summary_tokens)
        guard = conversation.guard
        if not isinstance(asked.outcome, Condensation):  # else the guard counted this view's condensation already
            guard.condensed(asked.imported.view)
        made = SdkCondensation(
            forgotten_event_ids={event.id for event in events[keep:]},
            summary=summary,
            summary_offset=keep,
            llm_response_id=f"openhands-memory-hard-reset-{uuid.uuid4().hex}",
        )
        self._records.append(CondensationRecord(made.id, {"condenser": "hard_context_reset", "forgotten": len(events) - keep}))
        logger.warning("openhands-memory hard context reset: %d events summarized", len(events) - keep)
        return made
