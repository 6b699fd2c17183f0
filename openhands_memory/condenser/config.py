"""The condenser registry and the config loader: which types `from_config` builds, and reading them from files.

A config is a dict (or TOML table) with a `type` tag, as in OpenHands' `[condenser]` section::

    [condenser]
    type = "pipeline"
    condensers = [
        { type = "browser_output_masking", attention_window = 1 },
        { type = "amortized", max_size = 120, keep_first = 4, max_tokens = 60000 },
    ]

Each strategy declares its config model next to it (`impl/<strategy>.py`, `Condenser.config_cls`)
and builds from it (`Condenser.build`); `impl.BUILTIN_CONDENSERS` holds the built-in ones, found in
the `impl` package. From them this module derives everything else, once, on import: the registered
types, the discriminated union the built-in configs are validated through (`CondenserConfigAdapter`,
pipeline members included), the builders, and the names errors suggest. Adding a strategy is one
module under `impl/`.

The built-in types, with OpenHands' fields and defaults (our additions: `max_tokens` wherever a
size triggers; `max_events` / `max_tokens` for `conversation_window`; `summary_prompt` and
`max_summary_share` for `llm` and `structured`; `on_model_error` for the model-backed types, and
`max_event_length` for `llm_attention`). Every model forbids unknown fields, and reads a size or
keep field under either spelling of the one vocabulary (`max_token`/`max_tokens`,
`last_keep`/`keep_last`; see `_config_base.SYNONYMS`). Errors are `CondenserConfigError`s that name
the type and the field, and suggest the closest name for a typo; nothing falls back to `noop`
silently.

`register_condenser(config_cls, factory)` adds a type (or, with `replace=True`, replaces one);
`Condenser.from_config(config)` builds through the registry. A config declares each size or keep
field with `sized(role, ...)` (`SizeRole`; read back with `size_role`): the docs' table of sizes and
the shared property suite are made from these.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import BaseModel, Field, TypeAdapter, ValidationError, ValidatorFunctionWrapHandler, WrapValidator

from openhands_memory.condenser._config_base import (
    SIZE_ROLES,
    SYNONYMS,
    OnModelError,
    SizeRole,
    did_you_mean,
    llm_config_ref,
    size_role,
    sized,
)
from openhands_memory.condenser.impl import BUILTIN_CONDENSERS
from openhands_memory.condenser.thresholds import ContextWindowShare
from openhands_memory.errors import CondenserConfigError
from openhands_memory.llm.config import LLMConfig

if TYPE_CHECKING:
    from openhands_memory.condenser.base import Condenser
    from openhands_memory.condenser.tokens import TokenCounter

__all__ = [
    "SIZE_ROLES",
    "SYNONYMS",
    "CondenserConfig",
    "CondenserConfigAdapter",
    "CondenserContext",
    "CondenserFactory",
    "OnModelError",
    "PipelineMember",
    "SizeRole",
    "build_condenser",
    "load_condenser_config",
    "parse_condenser_config",
    "read_config_file",
    "register_condenser",
    "registered_condenser_types",
    "size_role",
    "sized",
]


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
    model: str | None = None
    """The agent's model (never called): a token limit given as a share of the context window
    (`ContextWindowShare`) that names no model or window of its own, in a config that names no
    agent `model` of its own (`inkeep`'s), is a share of this model's window (None: of the
    condenser's summarizer's, as before)."""

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
                return llm_config_ref(self.llm_configs[ref])  # type: ignore[no-any-return]
            except ValueError as exc:
                raise CondenserConfigError(f"LLM config {ref!r}: {exc}", condenser_type=condenser_type, field="llm_config") from None
        known = sorted(self.llm_configs)
        hint = did_you_mean(ref, known) or (
            f" Known names: {', '.join(known)}." if known else " No named LLM configs were given."
        )
        raise CondenserConfigError(f"unknown LLM config name {ref!r}.{hint}", condenser_type=condenser_type, field="llm_config")

    def build(self, config: BaseModel | Mapping[str, Any]) -> Condenser:
        """Build the condenser `config` describes with this context (a pipeline builds each member so).

        Raises:
            CondenserConfigError: see `build_condenser`.
        """
        return build_condenser(config, self)


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
    both = sorted(name for name in config_cls.model_fields if SYNONYMS.get(name) in config_cls.model_fields)
    if both:
        # Each would also be read under the other's name: one vocabulary means one field per meaning.
        raise TypeError(f"{config_cls.__name__} declares both {' and '.join(both)}, two spellings of one field")
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


def _unknown_type_reason(type_name: Any) -> str:
    known = registered_condenser_types()
    if type_name is None:
        return f"A condenser config needs a 'type': one of {', '.join(known)}."
    if not isinstance(type_name, str):
        return f"A condenser 'type' must be a string, got {type_name!r}."
    hint = did_you_mean(type_name, known) or f" Known types: {', '.join(known)}."
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
            if SYNONYMS.get(name) in fields_of.model_fields:
                message = f"the same field as {SYNONYMS[name]!r} (another spelling of it), which is given too: give one of them"
            else:
                known = [f for f in fields_of.model_fields if f != "type"]
                message = "unknown field." + did_you_mean(name, known + [SYNONYMS[f] for f in known if f in SYNONYMS])
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
    context = context if context is not None else CondenserContext()
    if context.model is not None:
        model = _sized_for(model, context.model)
    return registration.factory(model, context)


def _sized_for(config: BaseModel, agent_model: str) -> BaseModel:
    """`config` with its window shares that name no model or window made shares of `agent_model`'s window.

    A config that names its own agent `model` (`inkeep`'s) keeps it: the file's choice wins.
    """
    if getattr(config, "model", None) is not None:
        return config
    updates = {
        name: value.model_copy(update={"model": agent_model})
        for name in type(config).model_fields
        if isinstance(value := getattr(config, name), ContextWindowShare) and value.model is None and value.context_window is None
    }
    return config.model_copy(update=updates) if updates else config


# -- loading from files ---------------------------------------------------------------------------


def read_config_file(path: str | PathLike[str]) -> dict[str, Any]:
    """The tables of a config file: a TOML file's document, or a JSON file's object.

    The one reader of config files: `load_condenser_config` takes its `[condenser]` table, and
    `openhands_memory.pipeline` its `[history_policy]` table too.

    Raises:
        CondenserConfigError: no file at `path` (or a folder), or the file cannot be parsed (the
            message starts with the file name).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CondenserConfigError("no such file", path=path) from None
    except IsADirectoryError:
        raise CondenserConfigError("is a folder, not a config file", path=path) from None
    if path.suffix.lower() == ".toml":
        try:
            return tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise CondenserConfigError(f"invalid TOML: {exc}", path=path) from None
    try:
        document = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CondenserConfigError(f"invalid JSON: {exc}", path=path) from None
    if not isinstance(document, dict):
        return {"condenser": document}  # not a table: `parse_condenser_config` says what is wrong with it
    return document


def load_condenser_config(path: str | PathLike[str]) -> BaseModel:
    """Read a condenser config from a TOML file (its `[condenser]` table) or a JSON file.

    A JSON file holds the config object itself, or an object with a `condenser` key. In TOML, an
    `llm_config = "name"` is replaced by the `[llm.name]` table (over the plain `[llm]` keys),
    as OpenHands does; a name with no table is kept for `CondenserContext.llm_configs`. Other
    tables (a pipeline's `[history_policy]`, say) are left to their own readers.

    Raises:
        CondenserConfigError: no file at `path` (or a folder), the file cannot be parsed, has no
            condenser config, or the config is not valid (the message starts with the file name).
    """
    path = Path(path)
    return condenser_config_from_document(read_config_file(path), path)


def condenser_config_from_document(document: Mapping[str, Any], path: str | PathLike[str]) -> BaseModel:
    """The condenser config of a config file already read (`read_config_file`), as `load_condenser_config` returns it.

    Raises:
        CondenserConfigError: the document has no condenser config, or it is not valid.
    """
    path = Path(path)
    llm_tables: dict[str, dict[str, Any]] = {}
    if path.suffix.lower() == ".toml":
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
        data = document.get("condenser", document)
    if llm_tables:
        data = _resolve_llm_names(data, llm_tables)
    return parse_condenser_config(data, path=path)


def _resolve_llm_names(data: Any, tables: dict[str, dict[str, Any]]) -> Any:
    """`data` with every `llm_config` name that has a table replaced by it, in nested configs too
    (a pipeline's members, a wrapper's strategy: whatever field holds them). The input is not changed."""
    if isinstance(data, list):
        return [_resolve_llm_names(item, tables) for item in data]
    if not isinstance(data, dict):
        return data
    out = {key: _resolve_llm_names(value, tables) for key, value in data.items()}
    ref = out.get("llm_config")
    if isinstance(ref, str) and ref in tables:
        out["llm_config"] = tables[ref]
    return out


# -- the built-in types, from the strategies found -------------------------------------------------

def _builtin_config(condenser: type[Condenser]) -> tuple[str, type[BaseModel]]:
    """A built-in strategy's type name and config model (checked: a strategy found must declare both)."""
    config_cls = condenser.config_cls
    if config_cls is None:
        raise TypeError(f"{condenser.__name__} is a built-in strategy but declares no config_cls")
    return _type_of(config_cls), config_cls


_BUILTIN_TYPES: dict[str, type[BaseModel]] = dict(_builtin_config(condenser) for condenser in BUILTIN_CONDENSERS)
"""The built-in config models by type name, in `BUILTIN_CONDENSERS` order."""

CondenserConfig = Annotated[Union[tuple(_BUILTIN_TYPES.values())], Field(discriminator="type")]  # type: ignore[valid-type]  # noqa: UP007
"""Any built-in condenser config, told apart by `type`."""


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


PipelineMember = Annotated[CondenserConfig, WrapValidator(_pipeline_item)]
"""A config nested in another (a pipeline's member, a wrapper's strategy): a built-in config through
the union, a user's registered type through its own model."""

# A config that nests others (`pipeline`) names `PipelineMember` (or `CondenserConfig`) under
# TYPE_CHECKING, since the union needs every strategy, itself included: each such model is
# completed here, from this module's namespace, before the union's adapter is built.
for _config_cls in _BUILTIN_TYPES.values():
    if not _config_cls.__pydantic_complete__:
        _config_cls.model_rebuild()

CondenserConfigAdapter: TypeAdapter[Any] = TypeAdapter(CondenserConfig)
"""Validates a dict as a built-in condenser config (one `validate_python` call)."""

for _condenser in BUILTIN_CONDENSERS:
    register_condenser(_builtin_config(_condenser)[1], _condenser.build)
del _condenser, _config_cls
