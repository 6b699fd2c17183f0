"""Hypothesis strategies for condenser configs, made from the registry (needs the `test` extra).

`small_configs(strategy)` draws configs of any built-in strategy (or any `Condenser` with a
`config_cls`) with budgets small enough that it acts on a short session (`SMALL_SIZES`, or
`REPLAYABLE_SIZES` for a replay step after step): nothing is written per strategy. Each field declared with `sized` is drawn in its role's range (within the field's own
bounds, and None where None is its default), a field that nests configs (`PipelineMember`: a
pipeline's members, a wrapper's strategy) is drawn from `members`, every other field keeps its
default, and a combination the config model refuses is filtered out. With no `llm_config` the
model-backed strategies run offline.

`promised_head(config)` and `writes_persisting_summaries(config)` say what the config promises, for
`openhands_memory.testing.condenser_replay`'s checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

import annotated_types
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from openhands_memory.condenser.base import Condenser
from openhands_memory.condenser.config import PipelineMember, SizeRole, size_role
from openhands_memory.condenser.impl import BUILTIN_CONDENSERS

__all__ = [
    "BUILTIN_TYPES",
    "REPLAYABLE_SIZES",
    "SMALL_SIZES",
    "any_config",
    "nested_config_fields",
    "promised_head",
    "small_configs",
    "strategy_of",
    "writes_persisting_summaries",
]

SMALL_SIZES: dict[SizeRole, tuple[int, int]] = {
    "events": (1, 30),
    "tokens": (1, 3000),
    "first": (0, 5),
    "newest": (0, 8),
    "chars": (0, 60),
}
"""The range each size role is drawn in by default: small, so that a strategy acts on a view of a few dozen events."""

REPLAYABLE_SIZES: dict[SizeRole, tuple[int, int]] = {
    **SMALL_SIZES,
    "events": (8, 30),
    "tokens": (4000, 20000),
}
"""Budgets a replay of most `agent_sessions` can meet step after step. The kept head and the newest
unit always stay, and a summary may take 128 tokens however little it replaces, so a summarizer
under a smaller budget condenses again without shrinking the prompt, and the replay stops with
`CondensationStalledError`, as a controller would. Texts there run to 6,000 characters, so a head
or a batch of parallel calls (up to about 9,000 tokens) can fill even these budgets: a replay
property accepts that stop on such a session only (`tests/condenser/test_properties.py`)."""

_MEMBER_MARKS = get_args(PipelineMember)[1:]
"""What marks a field as holding configs (the validator of `PipelineMember`)."""


def strategy_of(type_name: str) -> type[Condenser]:
    """The built-in strategy whose config `type` is `type_name`."""
    return next(strategy for strategy in BUILTIN_CONDENSERS if strategy.config_type == type_name)


def nested_config_fields(config_cls: type[BaseModel]) -> dict[str, bool]:
    """The fields of `config_cls` that hold condenser configs: name -> whether it holds a list of them."""
    nested: dict[str, bool] = {}
    for name, field in config_cls.model_fields.items():
        if any(mark in _MEMBER_MARKS for mark in field.metadata):
            nested[name] = False
        elif any(mark in _MEMBER_MARKS for arg in get_args(field.annotation) for mark in getattr(arg, "__metadata__", ())):
            nested[name] = True
    return nested


def _bounds(field: FieldInfo, low: int, high: int) -> tuple[int, int]:
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            low = max(low, int(rule.ge))  # type: ignore[call-overload]
        elif isinstance(rule, annotated_types.Gt):
            low = max(low, int(rule.gt) + 1)  # type: ignore[call-overload]
        elif isinstance(rule, annotated_types.Le):
            high = min(high, int(rule.le))  # type: ignore[call-overload]
        elif isinstance(rule, annotated_types.Lt):
            high = min(high, int(rule.lt) - 1)  # type: ignore[call-overload]
    return low, max(low, high)


def _valid(config_cls: type[BaseModel], data: dict[str, Any]) -> bool:
    try:
        config_cls.model_validate(data)
    except ValidationError:
        return False
    return True


def small_configs(
    strategy: type[Condenser],
    *,
    sizes: Mapping[SizeRole, tuple[int, int]] = SMALL_SIZES,
    members: st.SearchStrategy[dict[str, Any]] | None = None,
    max_members: int = 3,
) -> st.SearchStrategy[dict[str, Any]]:
    """Configs of `strategy` (as dicts) with each size drawn in its role's range in `sizes`; nested
    configs drawn from `members` (1 to `max_members` in a list).

    Raises:
        ValueError: the strategy declares no config, or nests configs and no `members` were given.
    """
    config_cls = strategy.config_cls
    if config_cls is None:
        raise ValueError(f"{strategy.__name__} declares no config_cls")
    fields: dict[str, st.SearchStrategy[Any]] = {"type": st.just(strategy.config_type)}
    for name, field in config_cls.model_fields.items():
        role = size_role(field)
        if role is None:
            continue
        low, high = _bounds(field, *sizes[role])
        drawn: st.SearchStrategy[Any] = st.integers(low, high)
        fields[name] = st.none() | drawn if field.default is None else drawn
    for name, is_list in nested_config_fields(config_cls).items():
        if members is None:
            raise ValueError(f"{strategy.config_type}.{name} holds condenser configs: give `members`")
        fields[name] = st.lists(members, min_size=1, max_size=max_members) if is_list else members
    return st.fixed_dictionaries(fields).filter(lambda data: _valid(config_cls, data))


def _nested(config: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    strategy = strategy_of(config["type"])
    assert strategy.config_cls is not None
    found: list[Mapping[str, Any]] = []
    for name, is_list in nested_config_fields(strategy.config_cls).items():
        value = config.get(name)
        if value is not None:
            found.extend(value if is_list else [value])
    return found


def promised_head(config: Mapping[str, Any]) -> int:
    """How many first events a condenser built from `config` promises to keep: its field with the
    `first` role (0 without one); for one that nests configs, the least of its own (if it has one)
    and its members' (a member counts its head in the view the members before it returned)."""
    strategy = strategy_of(config["type"])
    assert strategy.config_cls is not None
    own = [config.get(name, field.default) for name, field in strategy.config_cls.model_fields.items() if size_role(field) == "first"]
    heads = [*own, *(promised_head(member) for member in _nested(config))]
    return min(heads, default=0)


def writes_persisting_summaries(config: Mapping[str, Any]) -> bool:
    """Whether a condenser built from `config` (or a config it nests) leaves persisting summaries."""
    return strategy_of(config["type"]).summaries_persist or any(writes_persisting_summaries(m) for m in _nested(config))


BUILTIN_TYPES = sorted(strategy.config_type for strategy in BUILTIN_CONDENSERS if strategy.config_type is not None)
"""Every built-in strategy's config type: the shared property suites run for each."""


def _nestable() -> list[type[Condenser]]:
    # A pipeline's members: every strategy that nests none and writes V0 summaries.
    return [
        strategy
        for strategy in BUILTIN_CONDENSERS
        if strategy.config_cls is not None and not nested_config_fields(strategy.config_cls) and not strategy.summaries_persist
    ]


def any_config(type_name: str, sizes: Mapping[SizeRole, tuple[int, int]] = SMALL_SIZES) -> st.SearchStrategy[dict[str, Any]]:
    """Small configs of strategy `type_name` (`sizes`: `SMALL_SIZES` by default; `REPLAYABLE_SIZES` for a replay,
    whose every step must shrink a prompt over budget), a pipeline's members drawn from every nestable strategy."""
    members = st.one_of([small_configs(strategy, sizes=sizes) for strategy in _nestable()])
    return small_configs(strategy_of(type_name), sizes=sizes, members=members)
