"""The condenser framework: `Condenser`, `RollingCondenser`, `Condensation` and what each condensation records.

A condenser looks at the view the model would see and either returns a view (the same, or one it
derived: masked, trimmed) or a `Condensation`, whose action the controller appends to the stream
like any event before asking again. Every condensation carries a `CondensationMetadata`: which
condenser fired and why, the events and tokens before and after, model usage and wall time.

Where the record goes: into the log itself, as the action's top-level `condenser_metadata`
(OpenHands' loader ignores unknown top-level keys, so the action stays loadable by OpenHands),
with model usage also in OpenHands' own `llm_metrics` (its Metrics JSON shape). The record is
also `Condensation.metadata` and `Condenser.last_condensation`.

While a call decides, what a strategy records (`add_metadata`, `record_llm_usage`) goes into that
call's own `CondensationCall`, never onto the condenser: `acondense` runs `condense` in a worker
thread, and two calls on one instance must not mix their records.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from openhands_memory.condenser._boundaries import forget_id
from openhands_memory.condenser._config_defaults import take_defaults_from_config
from openhands_memory.condenser._views import condensed_events
from openhands_memory.condenser.tokens import ApproximateTokenCounter, TokenCounter
from openhands_memory.errors import CondenserConfigError, NoCondensationAvailable
from openhands_memory.events import CondensationAction
from openhands_memory.view import View

if TYPE_CHECKING:
    from pydantic import BaseModel

    from openhands_memory.condenser.config import CondenserContext

__all__ = [
    "CondensationCall",
    "CondensationMetadata",
    "CondensationReason",
    "Condensation",
    "Condenser",
    "RollingCondenser",
    "walk_condensers",
]

CondensationReason = Literal["size", "tokens", "request", "custom"]
"""Why a condensation happened: the view had too many events, too many tokens, the agent asked
(an unhandled `CondensationRequestAction`), or a custom `should_condense` said so."""


@dataclass(frozen=True, slots=True)
class CondensationMetadata:
    """What one condensation did and cost. The numbers are about the view the condenser was given."""

    condenser: str
    """The condenser that fired: its config `type` (`amortized`, ...) or its class name."""
    reason: CondensationReason
    """Why it fired."""
    events_before: int
    """Events in the view it was given (summaries included)."""
    events_after: int
    """Events in the view the condensation produces."""
    tokens_before: int | None
    """Prompt tokens of the view it was given, by its token counter (None: not counted)."""
    tokens_after: int | None
    """Prompt tokens of the view the condensation produces."""
    forgotten: int
    """Events of the view the condensation forgets."""
    seconds: float
    """Wall time the condenser took to decide (model calls included, counting excluded)."""
    llm_usage: dict[str, Any] | None = None
    """Model usage of the condensation, in OpenHands' Metrics JSON shape (None: no model used)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Anything else the condenser recorded with `Condenser.add_metadata`."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the record."""
        return asdict(self)


@dataclass(slots=True)
class CondensationCall:
    """What one call of a condenser records while it decides (one per call, never shared between calls)."""

    extra: dict[str, Any] = field(default_factory=dict)
    """What the strategy recorded with `Condenser.add_metadata`; becomes `CondensationMetadata.extra`."""
    llm_usage: dict[str, Any] | None = None
    """What it recorded with `Condenser.record_llm_usage`; becomes `CondensationMetadata.llm_usage`."""


# The calls in progress in this thread or task, by condenser (`id`). A context variable rather than
# an attribute: `asyncio.to_thread` runs each `acondense` in a copy of the caller's context, and a
# new thread starts with none, so each call sees only its own records. The dict is replaced, never
# changed in place, because a copied context shares it with the context it was copied from.
_calls: ContextVar[dict[int, CondensationCall]] = ContextVar("openhands_memory_condensation_calls")


@dataclass(slots=True)
class Condensation:
    """Returned by a condenser instead of a view: append `action` to the stream, then ask again."""

    action: CondensationAction
    """The condensation to append (no id yet: the stream assigns one)."""
    metadata: CondensationMetadata | None = None
    """What it did and cost; filled by the framework when the condenser returns."""


class Condenser(ABC):
    """Turns a view into the view the model sees, or into a `Condensation` to append first.

    Implementations must treat the view, and every event in it, as read-only: a derived view holds
    copies (`event.model_copy(update=...)`), never edited events.

    Use one instance per conversation. Strategies keep caches that assume one growing view (token
    counts per event, positions of the first events), and a model-backed one measures its usage
    as the change in its model's metrics, which overlapping calls would share. Calls on one
    instance may still overlap (`acondense` in worker threads): each records into its own
    `CondensationCall`, so their metadata never mix; `last_condensation` is the one that
    finished last.
    """

    config_cls: ClassVar[type[BaseModel] | None] = None
    """The pydantic config model this strategy is built from (`type: Literal["name"] = "name"`,
    `extra="forbid"`); None for a condenser without a config. The registry builds it with `build`."""
    config_type: ClassVar[str | None] = None
    """The config `type` that builds this condenser (`recent`, ...): by default the `type` of
    `config_cls`; None for one without a config."""
    exports: ClassVar[tuple[str, ...]] = ()
    """More names of the strategy's module that `openhands_memory.condenser` exports (its class and
    its `config_cls` always are), such as a model its config nests."""
    summaries_persist: ClassVar[bool] = False
    """Its summaries persist (`summary_persists`, the OpenHands SDK's semantics: several stand at
    once) rather than following OpenHands V0 (only the newest shows)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The type name is declared once, by the config's `type` field; a class may still set it.
        config_cls = cls.__dict__.get("config_cls")
        if config_cls is not None and "config_type" not in cls.__dict__:
            type_field = config_cls.model_fields.get("type")
            default = type_field.default if type_field is not None else None
            if isinstance(default, str):
                cls.config_type = default
        if config_cls is not None:
            take_defaults_from_config(cls, config_cls)  # defaults declared once, by the config

    def __init__(self, *, token_counter: TokenCounter | None = None) -> None:
        self._token_counter = token_counter
        self._last: CondensationMetadata | None = None

    @property
    def name(self) -> str:
        """The name condensation records use: the config type, or the class name."""
        return self.config_type or type(self).__name__

    @property
    def token_counter(self) -> TokenCounter:
        """The counter for token budgets and records (an `ApproximateTokenCounter` unless one was given)."""
        counter = self._token_counter
        if counter is None:
            counter = self._token_counter = ApproximateTokenCounter()
        return counter

    def members(self) -> tuple[Condenser, ...]:
        """The condensers this one runs, in order: a composite's (a pipeline's, a scheduler's, a wrapper's); a leaf's none.

        The one way a composite declares what it holds: everything that walks strategies (offline
        substitution, `--summarizer-model`, token counters, the agent's model, the hard reset) walks
        `members()` (see `walk_condensers`), never a composite's own attributes.
        """
        return ()

    @property
    def history_policy_preset(self) -> str | None:
        """The history policy this strategy comes with, as a `HistoryPolicy` preset's name (`inkeep` has one); None: none.

        A wrapper (one member) comes with its member's. `Pipeline` trims with it when it is given no
        history policy of its own, whichever way the pipeline was made.
        """
        members = self.members()
        return members[0].history_policy_preset if len(members) == 1 else None

    def use_token_counter(self, counter: TokenCounter) -> None:
        """Count token budgets and records with `counter` from now on (`Pipeline.measured_by` gives the prompt counter);
        its `members()` too."""
        self._token_counter = counter
        for member in self.members():
            member.use_token_counter(counter)

    def use_agent_model(self, model: str) -> None:
        """Told the agent's model (never called) once it is known: a strategy priced "for the agent's model" prices for it.

        `History.completion` tells it its LLM's model, the SDK bridge the agent's. Only what was
        left to the agent's model changes (`cache_aware` without a `pricing`). By default it tells
        its `members()`, and nothing else changes.
        """
        for member in self.members():
            member.use_agent_model(model)

    @property
    def last_condensation(self) -> CondensationMetadata | None:
        """The record of the most recent condensation this condenser returned (None: none yet)."""
        return self._last

    @property
    def handles_requests(self) -> bool:
        """Whether it answers an unhandled condensation request with a condensation (the agent's
        `request_condensation` tool works with it); a model-backed one may still skip when its model fails."""
        return False

    @abstractmethod
    def condense(self, view: View) -> View | Condensation:
        """The view the model should see, or a condensation to append before asking again.

        The view passed in must not be changed.
        """

    async def acondense(self, view: View) -> View | Condensation:
        """`condense` without blocking the event loop (in a worker thread unless overridden)."""
        return await asyncio.to_thread(self.condense, view)

    def add_metadata(self, key: str, value: Any) -> None:
        """Record something about the condensation being made; it ends up in `CondensationMetadata.extra`."""
        self._call().extra[key] = value

    def record_llm_usage(self, metrics: Mapping[str, Any] | Any) -> None:
        """Record the model usage of the condensation being made, in OpenHands' Metrics JSON shape.

        The hook for model-backed strategies: pass `llm.metrics.diff(before).to_dict()` (or the
        `LLMMetrics` itself, whose `to_dict()` is taken). It becomes
        `CondensationMetadata.llm_usage` and the action's `llm_metrics`, which OpenHands loads.
        """
        self._call().llm_usage = dict(metrics.to_dict() if hasattr(metrics, "to_dict") else metrics)

    def record_condensation(
        self,
        view: View,
        make: Callable[[], Condensation | CondensationAction],
        *,
        reason: CondensationReason,
        started: float | None = None,
    ) -> Condensation:
        """Make a condensation of `view` with `make()` and record it: the hook for a strategy that
        condenses in its own `condense` (a `RollingCondenser` gets it from the base).

        What `make` records (`add_metadata`, `record_llm_usage`) goes into this call's record; the
        condensation's `metadata` is filled from it (unless `make` gave one), and the action's
        `condenser_metadata` and `llm_metrics` too. `started` is when deciding began (a
        `time.perf_counter()` value; by default, now): the record's `seconds` count from it.

        Raises:
            NoCondensationAvailable: what `make` raised (nothing is recorded; return the view).
        """
        call = self._begin()
        if started is None:
            started = time.perf_counter()
        try:
            made = make()
        finally:
            self._end()
        condensation = made if isinstance(made, Condensation) else Condensation(made)
        return self._finish(view, condensation, reason, time.perf_counter() - started, call)

    @classmethod
    def from_config(
        cls,
        config: BaseModel | Mapping[str, Any],
        *,
        token_counter: TokenCounter | None = None,
        llm_configs: Mapping[str, Any] | None = None,
        model: str | None = None,
        context: CondenserContext | None = None,
    ) -> Condenser:
        """Build the condenser a config describes (a config model, or a dict with a `type` key).

        Args:
            config: what to build; see `openhands_memory.condenser.config`.
            token_counter: shared by every condenser built (a pipeline's members included);
                by default one `ApproximateTokenCounter` for all of them.
            llm_configs: named LLM configs, for a config whose `llm_config` is a name.
            model: the agent's model (never called): a token limit that is a share of "the"
                context window, naming no model, is of this model's (see `CondenserContext.model`).
            context: all of the above at once (overrides them).

        Raises:
            CondenserConfigError: an unknown type, a bad field, an unknown LLM config name; or,
                called on a subclass, a config of another strategy.
        """
        # The one import of the registry from here, and lazy: the registry imports every strategy,
        # and every strategy imports this module, so a module-level import would be a cycle.
        from openhands_memory.condenser.config import CondenserContext, build_condenser

        if context is None:
            context = CondenserContext(
                token_counter=token_counter if token_counter is not None else ApproximateTokenCounter(),
                llm_configs=dict(llm_configs or {}),
                model=model,
            )
        condenser = build_condenser(config, context)
        if not isinstance(condenser, cls):
            raise CondenserConfigError(
                f"this config builds a {type(condenser).__name__}, not a {cls.__name__}",
                condenser_type=condenser.config_type,
            )
        return condenser

    @classmethod
    def build(cls, config: BaseModel, context: CondenserContext) -> Condenser:
        """Build this strategy from a validated config of its `config_cls` (what the registry calls).

        By default each config field but `type` is passed to the constructor as the keyword of the
        same name, with the context's token counter; a strategy whose constructor differs overrides this.
        """
        return cls(**cls.config_arguments(config), token_counter=context.token_counter)  # type: ignore[call-arg]

    @staticmethod
    def config_arguments(config: BaseModel, *, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
        """The fields of `config` but `type` (and `exclude`), by name: the keyword arguments of its constructor."""
        return {name: getattr(config, name) for name in type(config).model_fields if name != "type" and name not in exclude}

    def _begin(self) -> CondensationCall:
        """Start this call's record (dropping anything recorded outside a call, in this thread or task)."""
        call = CondensationCall()
        _calls.set({**_calls.get({}), id(self): call})
        return call

    def _call(self) -> CondensationCall:
        """The record of this condenser's call in progress here (one is started if none is)."""
        call = _calls.get({}).get(id(self))
        return call if call is not None else self._begin()

    def _end(self) -> None:
        """Drop this call's record (the call returned or raised)."""
        calls = _calls.get({})
        if id(self) in calls:
            _calls.set({key: call for key, call in calls.items() if key != id(self)})

    def _finish(
        self,
        view: View,
        condensation: Condensation,
        reason: CondensationReason,
        seconds: float,
        call: CondensationCall | None = None,
    ) -> Condensation:
        """Fill in the condensation's metadata (and the action's `llm_metrics`) from the call's record, and remember it.

        `call` is the record `_begin` returned; by default the one in progress here, which ends.
        """
        if call is None:
            call = self._call()
            self._end()
        action = condensation.action
        usage = call.llm_usage
        if usage is None and action.llm_metrics is not None:
            usage = dict(action.llm_metrics)
        if usage is not None and action.llm_metrics is None:
            action.llm_metrics = usage
        if view.condensation_focus is not None:  # what the request asked the summary to keep, recorded with it
            call.extra.setdefault("focus", view.condensation_focus)
        if condensation.metadata is None:
            after = condensed_events(view, action)
            counter = self.token_counter
            listed = action.forgotten_lookup()  # a range is tested by its bounds, never expanded
            forgotten = sum(1 for e in view if forget_id(e) in listed)
            condensation.metadata = CondensationMetadata(
                condenser=self.name,
                reason=reason,
                events_before=len(view),
                events_after=len(after),
                tokens_before=counter(view),
                tokens_after=counter(after),
                forgotten=forgotten,
                seconds=seconds,
                llm_usage=usage,
                extra=call.extra,
            )
        if action.condenser_metadata is None:
            action.condenser_metadata = condensation.metadata.to_dict()
        self._last = condensation.metadata
        return condensation


class RollingCondenser(Condenser):
    """A condenser that condenses the log itself, now and then: `get_condensation(view)` when
    `should_condense(view)`, else the view unchanged.

    Subclasses implement `get_condensation` and one decision hook: `condensation_reason`
    (preferred: the record then says why), or OpenHands' `should_condense` (the record then says
    `custom`, or `request`). `get_condensation` may raise `NoCondensationAvailable` when
    everything in view must be kept; the view is then returned.
    """

    def condensation_reason(self, view: View) -> CondensationReason | None:
        """Why `view` should be condensed now, or None to leave it. By default: only when asked."""
        return "request" if view.unhandled_condensation_request else None

    def should_condense(self, view: View) -> bool:
        """Whether `view` should be condensed now."""
        return self.condensation_reason(view) is not None

    @abstractmethod
    def get_condensation(self, view: View) -> Condensation:
        """The condensation for `view` (called only when it should be condensed).

        Raises:
            NoCondensationAvailable: nothing in view may be forgotten.
        """

    def _decide(self, view: View) -> CondensationReason | None:
        """Why to condense `view` now (None: leave it), by whichever decision hook the subclass implements."""
        if type(self).should_condense is RollingCondenser.should_condense:
            return self.condensation_reason(view)
        # A subclass that decides with should_condense (OpenHands' API) rather than a reason.
        if not self.should_condense(view):
            return None
        return "request" if view.unhandled_condensation_request else "custom"

    @property
    def handles_requests(self) -> bool:
        return True

    def condense(self, view: View) -> View | Condensation:
        reason = self._decide(view)
        if reason is None:
            return view
        return self.condense_now(view, reason=reason)

    def condense_now(self, view: View, *, reason: CondensationReason = "custom") -> View | Condensation:
        """`get_condensation(view)` whatever the decision hooks say, recorded with `reason`; the view when
        nothing may be forgotten. For a scheduler that decides when this strategy condenses
        (`cache_aware`); the strategy still decides what to forget."""
        try:
            return self.record_condensation(view, lambda: self.get_condensation(view), reason=reason)
        except NoCondensationAvailable:
            return view


def walk_condensers(condenser: Condenser) -> Iterator[Condenser]:
    """`condenser`, then each of its `members()`, depth first, in order: every strategy a composite holds."""
    yield condenser
    for member in condenser.members():
        yield from walk_condensers(member)
