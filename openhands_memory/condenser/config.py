"""Condenser configurations: one pydantic model per strategy, OpenHands' names, and how to build from them.

A config is a dict (or TOML table) with a `type` tag, as in OpenHands' `[condenser]` section::

    [condenser]
    type = "pipeline"
    condensers = [
        { type = "browser_output_masking", attention_window = 1 },
        { type = "amortized", max_size = 120, keep_first = 4, max_tokens = 60000 },
    ]

The built-in types, with OpenHands' fields and defaults (our additions: `max_tokens` wherever a
size triggers; `max_events` / `max_tokens` for `conversation_window`; `summary_prompt` and
`max_summary_share` for `llm` and `structured`; `on_model_error` for the model-backed types, and
`max_event_length` for `llm_attention`), are validated through one discriminated union
(`CondenserConfigAdapter`). Every model forbids unknown fields. Errors are `CondenserConfigError`s
that name the type and the field, and suggest the closest name for a typo; nothing falls back to
`noop` silently.

`register_condenser(config_cls, factory)` adds a type (or, with `replace=True`, replaces one);
`Condenser.from_config(config)` builds through the registry.
"""

from __future__ import annotations

import difflib
import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)

from openhands_memory.condenser.forgetting import check_sizes
from openhands_memory.errors import CondenserConfigError
from openhands_memory.llm.config import LLMConfig

if TYPE_CHECKING:
    from openhands_memory.condenser.base import Condenser
    from openhands_memory.condenser.tokens import TokenCounter

__all__ = [
    "AmortizedForgettingCondenserConfig",
    "BrowserOutputCondenserConfig",
    "CondenserConfig",
    "CondenserConfigAdapter",
    "CondenserContext",
    "CondenserFactory",
    "ConversationWindowCondenserConfig",
    "LLMAttentionCondenserConfig",
    "LLMSummarizingCondenserConfig",
    "NoOpCondenserConfig",
    "ObservationMaskingCondenserConfig",
    "OnModelError",
    "PipelineCondenserConfig",
    "RecentEventsCondenserConfig",
    "StructuredSummaryCondenserConfig",
    "build_condenser",
    "load_condenser_config",
    "parse_condenser_config",
    "register_condenser",
    "registered_condenser_types",
]

_CONFIG = ConfigDict(extra="forbid", use_attribute_docstrings=True)


def _llm_config_ref(value: Any) -> Any:
    """An LLM config given as a name (kept, resolved when the condenser is built) or as a table."""
    if isinstance(value, str):
        if not value:
            raise ValueError("an LLM config name cannot be empty")
        return value
    if isinstance(value, LLMConfig):
        return value
    if isinstance(value, Mapping):
        try:
            return LLMConfig.model_validate(dict(value))
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in error["loc"])
            if error["type"] == "extra_forbidden":
                message = "unknown field." + _did_you_mean(where, list(LLMConfig.model_fields))
            elif error["type"] == "missing":
                message = "required field is missing"
            else:
                message = str(error["msg"])
            raise ValueError(f"{where}: {message}" if where else message) from None
    raise ValueError(f"expected an LLM config name or table, got {type(value).__name__}")


LLMConfigRef = Annotated[LLMConfig | str, BeforeValidator(_llm_config_ref)]
"""An `LLMConfig`, or the name of one (`llm_config = "condenser"` refers to an `[llm.condenser]` table)."""


OnModelError = Literal["raise", "fallback", "skip"]
"""What a model-backed condenser does when its model fails (after `LLM`'s own retries) or answers
with nothing usable: `raise` the `LLMError` (nothing is condensed; the log stays as it was),
`fallback` to condensing without the model (the summarizers forget the same events under a
placeholder summary that says no summary could be made; `llm_attention` forgets like `amortized`),
or `skip` this time (the view is returned unchanged, a pending request stays pending, and the
next step asks the model again). `fallback` and `skip` apply to transient failures (those `LLM`
retries, and a prompt too long even shrunk); a missing or refused API key and a rejected request
are raised whatever this says."""


class _SizeChecked(BaseModel):
    """Shared check for configs with `keep_first` and `max_size` (OpenHands' rule)."""

    @model_validator(mode="after")
    def _check_sizes(self) -> Any:
        check_sizes(self.keep_first, self.max_size)  # type: ignore[attr-defined]
        return self


class NoOpCondenserConfig(BaseModel):
    """`noop`: show the view as it is."""

    model_config = _CONFIG
    type: Literal["noop"] = "noop"
    """The condenser type."""


class ObservationMaskingCondenserConfig(BaseModel):
    """`observation_masking`: mask observations older than the attention window."""

    model_config = _CONFIG
    type: Literal["observation_masking"] = "observation_masking"
    """The condenser type."""
    attention_window: int = Field(default=100, ge=1)
    """The number of most recent events whose observations are not masked."""


class BrowserOutputCondenserConfig(BaseModel):
    """`browser_output_masking`: mask all but the newest browser outputs."""

    model_config = _CONFIG
    type: Literal["browser_output_masking"] = "browser_output_masking"
    """The condenser type."""
    attention_window: int = Field(default=1, ge=1)
    """The number of most recent browser outputs that are not masked."""


class RecentEventsCondenserConfig(BaseModel):
    """`recent`: show the first events and the most recent ones."""

    model_config = _CONFIG
    type: Literal["recent"] = "recent"
    """The condenser type."""
    keep_first: int = Field(default=1, ge=0)
    """The number of initial events always shown (the best guess is that the first is the task)."""
    max_events: int = Field(default=100, ge=1)
    """The most events shown."""
    max_tokens: int | None = Field(default=None, ge=1)
    """The most prompt tokens shown (None: no token budget)."""


class AmortizedForgettingCondenserConfig(_SizeChecked):
    """`amortized`: forget the older half of the view when it outgrows its budget."""

    model_config = _CONFIG
    type: Literal["amortized"] = "amortized"
    """The condenser type."""
    max_size: int = Field(default=100, ge=2)
    """Condense when the view has more events than this; about half are kept."""
    keep_first: int = Field(default=1, ge=0)
    """The number of initial events always kept; less than half of `max_size`."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Condense when the view has more prompt tokens than this; about half are kept (None: never)."""


class _ModelBackedConfig(_SizeChecked):
    """What every model-backed condenser is configured with."""

    model_config = _CONFIG
    llm_config: LLMConfigRef
    """The model it asks: an LLM config, or the name of one."""
    keep_first: int = Field(default=1, ge=0)
    """The number of initial events always kept; less than half of `max_size`."""
    max_size: int = Field(default=100, ge=2)
    """Condense when the view has more events than this; about half are kept."""
    max_event_length: int = Field(default=10_000, ge=1)
    """Cut each event's text to this many characters in the prompt."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Condense when the view has more prompt tokens than this (None: never)."""
    on_model_error: OnModelError = "raise"
    """When the model fails or answers with nothing usable: `raise`, `fallback` (condense without
    it) or `skip` (leave the view as it is this time); see `OnModelError`."""


class _SummarizingConfig(_ModelBackedConfig):
    summary_prompt: str | None = None
    """Instructions that replace the default summarization prompt (None: OpenHands' prompt)."""
    max_summary_share: float = Field(default=0.5, gt=0, lt=1)
    """The largest share of the tokens a summary replaces (the forgotten events and the previous
    summary) that it may take, so that condensing shrinks the prompt; a longer summary is cut to
    fit (never below 128 tokens), and the condensation records it."""


class LLMSummarizingCondenserConfig(_SummarizingConfig):
    """`llm`: forget the older half and have a model summarize it."""

    type: Literal["llm"] = "llm"
    """The condenser type."""


class LLMAttentionCondenserConfig(_ModelBackedConfig):
    """`llm_attention`: have a model pick the events to keep."""

    type: Literal["llm_attention"] = "llm_attention"
    """The condenser type."""
    max_event_length: int = Field(default=2_000, ge=1)
    """Cut each event's text to this many characters in the ranking prompt."""


class StructuredSummaryCondenserConfig(_SummarizingConfig):
    """`structured`: like `llm`, with the summary as structured fields (a forced tool call)."""

    type: Literal["structured"] = "structured"
    """The condenser type."""


class ConversationWindowCondenserConfig(BaseModel):
    """`conversation_window`: on request, keep the essentials and the newer half."""

    model_config = _CONFIG
    type: Literal["conversation_window"] = "conversation_window"
    """The condenser type."""
    max_events: int | None = Field(default=None, ge=1)
    """Also condense when the view has more events than this (None: only on request, as OpenHands)."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Also condense when the view has more prompt tokens than this (None: only on request)."""


def _pipeline_item(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A pipeline member: a registered type of ours or a user's, with a clear error for an unknown one."""
    if isinstance(value, BaseModel):
        if _registration_for_model(value) is not None:
            return value
        return handler(value)
    if isinstance(value, Mapping):
        type_name = value.get("type")
        registration = _REGISTRY.get(type_name) if isinstance(type_name, str) else None
        if registration is None:
            raise ValueError(_unknown_type_reason(type_name))
        if not registration.builtin:
            return registration.config_cls.model_validate(dict(value))
    return handler(value)


class PipelineCondenserConfig(BaseModel):
    """`pipeline`: several condensers in order; the first condensation ends the pass."""

    model_config = _CONFIG
    type: Literal["pipeline"] = "pipeline"
    """The condenser type."""
    condensers: list[Annotated[CondenserConfig, WrapValidator(_pipeline_item)]] = Field(default_factory=list)
    """The condensers, in the order they run."""


CondenserConfig = Annotated[
    NoOpCondenserConfig
    | ObservationMaskingCondenserConfig
    | BrowserOutputCondenserConfig
    | RecentEventsCondenserConfig
    | LLMSummarizingCondenserConfig
    | AmortizedForgettingCondenserConfig
    | LLMAttentionCondenserConfig
    | StructuredSummaryCondenserConfig
    | PipelineCondenserConfig
    | ConversationWindowCondenserConfig,
    Field(discriminator="type"),
]
"""Any built-in condenser config, told apart by `type`."""

PipelineCondenserConfig.model_rebuild()

CondenserConfigAdapter: TypeAdapter[Any] = TypeAdapter(CondenserConfig)
"""Validates a dict as a built-in condenser config (one `validate_python` call)."""


# -- the registry ---------------------------------------------------------------------------------

CondenserFactory = Callable[[Any, "CondenserContext"], "Condenser"]
"""Builds a condenser from a validated config of its type."""


@dataclass(frozen=True, slots=True)
class CondenserContext:
    """What factories may need besides the config: a shared token counter, named LLM configs."""

    token_counter: TokenCounter | None = None
    """The counter every condenser built shares (None: each makes its own default)."""
    llm_configs: Mapping[str, LLMConfig | Mapping[str, Any]] = field(default_factory=dict)
    """LLM configs (or their tables) by name, for `llm_config = "name"`."""

    def resolve_llm_config(self, ref: LLMConfig | str, *, condenser_type: str) -> LLMConfig:
        """The `LLMConfig` a config's `llm_config` refers to (a name is looked up in `llm_configs`).

        Raises:
            CondenserConfigError: the name is unknown (with the closest known name), or the named
                table is not a valid LLM config.
        """
        if isinstance(ref, LLMConfig):
            return ref
        if ref in self.llm_configs:
            try:
                return _llm_config_ref(self.llm_configs[ref])  # type: ignore[no-any-return]
            except ValueError as exc:
                raise CondenserConfigError(f"LLM config {ref!r}: {exc}", condenser_type=condenser_type, field="llm_config") from None
        known = sorted(self.llm_configs)
        hint = _did_you_mean(ref, known) or (
            f" Known names: {', '.join(known)}." if known else " No named LLM configs were given."
        )
        raise CondenserConfigError(f"unknown LLM config name {ref!r}.{hint}", condenser_type=condenser_type, field="llm_config")


@dataclass(frozen=True, slots=True)
class _Registration:
    config_cls: type[BaseModel]
    factory: CondenserFactory
    builtin: bool


_REGISTRY: dict[str, _Registration] = {}


def _type_of(config_cls: type[BaseModel]) -> str:
    type_field = config_cls.model_fields.get("type")
    default = type_field.default if type_field is not None else None
    if not isinstance(default, str):
        raise TypeError(f"{config_cls.__name__} needs a `type: Literal[...]` field with a string default")
    return default


def _registration_for_model(config: BaseModel) -> _Registration | None:
    registration = _REGISTRY.get(getattr(config, "type", None))  # type: ignore[arg-type]
    if registration is not None and isinstance(config, registration.config_cls):
        return registration
    return None


def register_condenser(config_cls: type[BaseModel], factory: CondenserFactory, *, replace: bool = False) -> None:
    """Make a condenser type buildable by `Condenser.from_config` and usable in pipelines.

    Args:
        config_cls: its pydantic config, with a `type: Literal["name"] = "name"` field (and
            `extra="forbid"`, to catch typos).
        factory: `factory(config, context) -> Condenser`.
        replace: replace a type already registered (a built-in included).

    Raises:
        CondenserConfigError: the type is already registered and `replace` is false.
        TypeError: `config_cls` has no string `type` default.
    """
    type_name = _type_of(config_cls)
    if type_name in _REGISTRY and not replace:
        raise CondenserConfigError(
            f"condenser type {type_name!r} is already registered (pass replace=True to replace it)"
        )
    builtin = type_name in _BUILTIN_TYPES and config_cls is _BUILTIN_TYPES[type_name]
    _REGISTRY[type_name] = _Registration(config_cls, factory, builtin)


def registered_condenser_types() -> list[str]:
    """The condenser types `from_config` can build, sorted."""
    return sorted(_REGISTRY)


def _did_you_mean(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def _unknown_type_reason(type_name: Any) -> str:
    known = registered_condenser_types()
    if type_name is None:
        return f"A condenser config needs a 'type': one of {', '.join(known)}."
    if not isinstance(type_name, str):
        return f"A condenser 'type' must be a string, got {type_name!r}."
    hint = _did_you_mean(type_name, known) or f" Known types: {', '.join(known)}."
    return f"Unknown condenser type {type_name!r}.{hint}"


def _describe(exc: ValidationError, type_name: str, path: str | PathLike[str] | None) -> CondenserConfigError:
    """One `CondenserConfigError` for a pydantic error: the first problem, with its field path."""
    problems: list[tuple[str, str]] = []
    for error in exc.errors(include_url=False):
        parts: list[str] = []
        fields_of: type[BaseModel] | None = _REGISTRY[type_name].config_cls if type_name in _REGISTRY else None
        loc = list(error["loc"])
        for position, part in enumerate(loc):
            # A discriminated union puts the tag in the path (`condensers.1.recent.max_events`): drop it.
            if isinstance(part, str) and part in _REGISTRY and (position == 0 or isinstance(loc[position - 1], int)):
                fields_of = _REGISTRY[part].config_cls
                continue
            parts.append(str(part))
        where = ".".join(parts)
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden" and fields_of is not None:
            name = str(loc[-1])
            message = "unknown field." + _did_you_mean(name, [f for f in fields_of.model_fields if f != "type"])
        elif error["type"] == "missing":
            message = "required field is missing"
        problems.append((where, message))
    where, message = problems[0]
    if len(problems) > 1:
        message += f" (and {len(problems) - 1} more: " + "; ".join(f"{w or 'config'}: {m}" for w, m in problems[1:]) + ")"
    return CondenserConfigError(message, condenser_type=type_name, field=where or None, path=path)


def parse_condenser_config(data: BaseModel | Mapping[str, Any], *, path: str | PathLike[str] | None = None) -> BaseModel:
    """Validate a condenser config: a config model (returned as is) or a dict with a `type` key.

    Raises:
        CondenserConfigError: an unknown or missing type, or a bad field (named, with a suggestion).
    """
    if isinstance(data, BaseModel):
        if _registration_for_model(data) is None:
            raise CondenserConfigError(f"{type(data).__name__} is not a registered condenser config", path=path)
        return data
    if not isinstance(data, Mapping):
        raise CondenserConfigError(f"a condenser config must be a table, got {type(data).__name__}", path=path)
    type_name = data.get("type")
    registration = _REGISTRY.get(type_name) if isinstance(type_name, str) else None
    if registration is None:
        raise CondenserConfigError(_unknown_type_reason(type_name), path=path)
    assert isinstance(type_name, str)
    try:
        if registration.builtin:
            return CondenserConfigAdapter.validate_python(dict(data))  # type: ignore[no-any-return]
        return registration.config_cls.model_validate(dict(data))
    except ValidationError as exc:
        raise _describe(exc, type_name, path) from None


def build_condenser(config: BaseModel | Mapping[str, Any], context: CondenserContext | None = None) -> Condenser:
    """Validate `config` and build its condenser through the registry (what `Condenser.from_config` does).

    Raises:
        CondenserConfigError: see `parse_condenser_config`; or the type cannot be built.
    """
    model = parse_condenser_config(config)
    registration = _registration_for_model(model)
    assert registration is not None
    return registration.factory(model, context if context is not None else CondenserContext())


# -- loading from files ---------------------------------------------------------------------------


def load_condenser_config(path: str | PathLike[str]) -> BaseModel:
    """Read a condenser config from a TOML file (its `[condenser]` table) or a JSON file.

    A JSON file holds the config object itself, or an object with a `condenser` key. In TOML, an
    `llm_config = "name"` is replaced by the `[llm.name]` table (over the plain `[llm]` keys),
    as OpenHands does; a name with no table is kept for `CondenserContext.llm_configs`.

    Raises:
        CondenserConfigError: no file at `path` (or a folder), the file cannot be parsed, has no
            condenser config, or the config is not valid (the message starts with the file name).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CondenserConfigError("no such file", path=path) from None
    except IsADirectoryError:
        raise CondenserConfigError("is a folder, not a config file", path=path) from None
    llm_tables: dict[str, dict[str, Any]] = {}
    if path.suffix.lower() == ".toml":
        try:
            document = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise CondenserConfigError(f"invalid TOML: {exc}", path=path) from None
        if "condenser" not in document:
            raise CondenserConfigError("no [condenser] table", path=path)
        data = document["condenser"]
        llm_section = document.get("llm")
        if isinstance(llm_section, dict):
            base = {k: v for k, v in llm_section.items() if not isinstance(v, dict)}
            llm_tables = {k: {**base, **v} for k, v in llm_section.items() if isinstance(v, dict)}
            if base:
                llm_tables.setdefault("llm", base)
    else:
        try:
            document = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CondenserConfigError(f"invalid JSON: {exc}", path=path) from None
        data = document.get("condenser", document) if isinstance(document, dict) else document
    if llm_tables:
        data = _resolve_llm_names(data, llm_tables)
    return parse_condenser_config(data, path=path)


def _resolve_llm_names(data: Any, tables: dict[str, dict[str, Any]]) -> Any:
    if not isinstance(data, dict):
        return data
    out = dict(data)
    ref = out.get("llm_config")
    if isinstance(ref, str) and ref in tables:
        out["llm_config"] = tables[ref]
    if isinstance(out.get("condensers"), list):
        out["condensers"] = [_resolve_llm_names(item, tables) for item in out["condensers"]]
    return out


# -- built-in factories ---------------------------------------------------------------------------

def _noop(config: NoOpCondenserConfig, context: CondenserContext) -> Condenser:
    from openhands_memory.condenser.impl.no_op_condenser import NoOpCondenser

    return NoOpCondenser()


def _observation_masking(config: ObservationMaskingCondenserConfig, context: CondenserContext) -> Condenser:
    from openhands_memory.condenser.impl.observation_masking_condenser import ObservationMaskingCondenser

    return ObservationMaskingCondenser(config.attention_window, token_counter=context.token_counter)


def _browser_output(config: BrowserOutputCondenserConfig, context: CondenserContext) -> Condenser:
    from openhands_memory.condenser.impl.browser_output_condenser import BrowserOutputCondenser

    return BrowserOutputCondenser(config.attention_window, token_counter=context.token_counter)


def _recent(config: RecentEventsCondenserConfig, context: CondenserContext) -> Condenser:
    from openhands_memory.condenser.impl.recent_events_condenser import RecentEventsCondenser

    return RecentEventsCondenser(
        config.keep_first, config.max_events, max_tokens=config.max_tokens, token_counter=context.token_counter
    )


def _amortized(config: AmortizedForgettingCondenserConfig, context: CondenserContext) -> Condenser:
    from openhands_memory.condenser.impl.amortized_forgetting_condenser import AmortizedForgettingCondenser

    return AmortizedForgettingCondenser(
        config.max_size, config.keep_first, max_tokens=config.max_tokens, token_counter=context.token_counter
    )


def _conversation_window(config: ConversationWindowCondenserConfig, context: CondenserContext) -> Condenser:
    from openhands_memory.condenser.impl.conversation_window_condenser import ConversationWindowCondenser

    return ConversationWindowCondenser(
        max_events=config.max_events, max_tokens=config.max_tokens, token_counter=context.token_counter
    )


def _pipeline(config: PipelineCondenserConfig, context: CondenserContext) -> Condenser:
    from openhands_memory.condenser.impl.pipeline import PipelineCondenser

    return PipelineCondenser(*(build_condenser(member, context) for member in config.condensers))


def _model_backed_arguments(
    config: _ModelBackedConfig,
    context: CondenserContext,
    type_name: str,
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments every model-backed condenser takes: its model, budgets and failure rule."""
    from openhands_memory.condenser._model_backed import condenser_llm

    llm = condenser_llm(context.resolve_llm_config(config.llm_config, condenser_type=type_name))
    options: dict[str, Any] = {
        "max_tokens": config.max_tokens,
        "max_event_length": config.max_event_length,
        "on_model_error": config.on_model_error,
        "token_counter": context.token_counter,
    }
    return (llm, config.max_size, config.keep_first), options


def _llm_summarizing(config: LLMSummarizingCondenserConfig, context: CondenserContext) -> Condenser:
    from openhands_memory.condenser.impl.llm_summarizing_condenser import LLMSummarizingCondenser

    arguments, options = _model_backed_arguments(config, context, "llm")
    return LLMSummarizingCondenser(
        *arguments, summary_prompt=config.summary_prompt, max_summary_share=config.max_summary_share, **options
    )


def _structured(config: StructuredSummaryCondenserConfig, context: CondenserContext) -> Condenser:
    from openhands_memory.condenser.impl.structured_summary_condenser import StructuredSummaryCondenser

    arguments, options = _model_backed_arguments(config, context, "structured")
    return StructuredSummaryCondenser(
        *arguments, summary_prompt=config.summary_prompt, max_summary_share=config.max_summary_share, **options
    )


def _llm_attention(config: LLMAttentionCondenserConfig, context: CondenserContext) -> Condenser:
    from openhands_memory.condenser.impl.llm_attention_condenser import LLMAttentionCondenser

    arguments, options = _model_backed_arguments(config, context, "llm_attention")
    return LLMAttentionCondenser(*arguments, **options)


_BUILTIN_TYPES: dict[str, type[BaseModel]] = {
    "noop": NoOpCondenserConfig,
    "observation_masking": ObservationMaskingCondenserConfig,
    "browser_output_masking": BrowserOutputCondenserConfig,
    "recent": RecentEventsCondenserConfig,
    "amortized": AmortizedForgettingCondenserConfig,
    "llm": LLMSummarizingCondenserConfig,
    "llm_attention": LLMAttentionCondenserConfig,
    "structured": StructuredSummaryCondenserConfig,
    "conversation_window": ConversationWindowCondenserConfig,
    "pipeline": PipelineCondenserConfig,
}

for _config_cls, _factory in (
    (NoOpCondenserConfig, _noop),
    (ObservationMaskingCondenserConfig, _observation_masking),
    (BrowserOutputCondenserConfig, _browser_output),
    (RecentEventsCondenserConfig, _recent),
    (AmortizedForgettingCondenserConfig, _amortized),
    (ConversationWindowCondenserConfig, _conversation_window),
    (PipelineCondenserConfig, _pipeline),
    (LLMSummarizingCondenserConfig, _llm_summarizing),
    (LLMAttentionCondenserConfig, _llm_attention),
    (StructuredSummaryCondenserConfig, _structured),
):
    register_condenser(_config_cls, _factory)  # type: ignore[arg-type]
del _config_cls, _factory
