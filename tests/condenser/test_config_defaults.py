"""A strategy's defaults are declared once, by its config: built in Python or from a file, the same defaults."""

from __future__ import annotations

import inspect
from typing import Any, Literal

import pytest
from pydantic import BaseModel

import openhands_memory.condenser.impl as impl  # noqa: F401  (registers every built-in strategy)
from openhands_memory.condenser import Condensation, Condenser
from openhands_memory.condenser._config_defaults import _ORIGINAL
from openhands_memory.condenser.config import registered_condenser_types
from openhands_memory.condenser.kit import CONFIG, FROM_CONFIG, sized
from openhands_memory.view import View

# The one parameter whose Python default is not its config's, on purpose: `inkeep`'s config says "a share of
# the model's window" (a ContextWindowShare its builder resolves); in Python, None asks for the same share.
_DIFFERENT_ON_PURPOSE = {("InkeepCondenser", "max_tokens")}


def _strategy_classes() -> list[type[Condenser]]:
    found: dict[str, type[Condenser]] = {}
    stack = list(Condenser.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__dict__.get("config_cls") is not None and cls.config_type in registered_condenser_types():
            found[cls.__name__] = cls
    return [found[name] for name in sorted(found)]


STRATEGIES = _strategy_classes()


def test_every_registered_strategy_is_checked() -> None:
    assert {cls.config_type for cls in STRATEGIES} == set(registered_condenser_types())


@pytest.mark.parametrize("cls", STRATEGIES, ids=lambda cls: cls.__name__)
def test_python_defaults_are_the_configs(cls: type[Condenser]) -> None:
    config = cls.config_cls
    assert config is not None
    for parameter in inspect.signature(cls.__init__).parameters.values():
        field = config.model_fields.get(parameter.name)
        if field is None or field.is_required() or (cls.__name__, parameter.name) in _DIFFERENT_ON_PURPOSE:
            continue
        if parameter.default is parameter.empty:
            continue  # required in Python, where it is an object (a Condenser) the config describes as a table
        assert parameter.default == field.get_default(call_default_factory=True), (cls.__name__, parameter.name)


def _written_init(cls: type[Condenser]) -> Any:
    """The `__init__` as written (before the config's defaults are filled in), wherever it is defined."""
    return getattr(cls.__init__, _ORIGINAL, cls.__init__)


@pytest.mark.parametrize(
    "cls", [cls for cls in STRATEGIES if _written_init(cls).__qualname__ == f"{cls.__name__}.__init__"], ids=lambda cls: cls.__name__
)
def test_a_strategys_own_init_writes_no_default_its_config_declares(cls: type[Condenser]) -> None:
    # The source's defaults (before the config's are filled in): a literal here would be a second declaration.
    config = cls.config_cls
    assert config is not None
    written = inspect.signature(_written_init(cls)).parameters.values()
    twice = [
        p.name
        for p in written
        if p.name in config.model_fields
        and not config.model_fields[p.name].is_required()
        and p.default is not p.empty
        and p.default is not FROM_CONFIG
        and (cls.__name__, p.name) not in _DIFFERENT_ON_PURPOSE
    ]
    assert twice == [], f"{cls.__name__}.__init__ declares again what {config.__name__} declares: {twice}"


def test_a_strategy_built_without_arguments_has_its_configs_settings() -> None:
    from openhands_memory.condenser import AmortizedForgettingCondenser, RecentEventsCondenser

    # Its own __init__ (FROM_CONFIG) and one inherited from a kit base (ForgettingCondenser's).
    assert RecentEventsCondenser().max_events == RecentEventsCondenser.config_cls().max_events  # type: ignore[misc]
    built = Condenser.from_config({"type": "amortized"})
    assert isinstance(built, AmortizedForgettingCondenser)
    assert (AmortizedForgettingCondenser().max_size, AmortizedForgettingCondenser().keep_first) == (built.max_size, built.keep_first)


class _ShortConfig(BaseModel):
    model_config = CONFIG
    type: Literal["test_short_window"] = "test_short_window"
    keep: int = sized("newest", default=7, ge=1)


def test_a_kit_strategy_takes_its_configs_default_and_an_unknown_marker_is_refused() -> None:
    class ShortWindow(Condenser):
        config_cls = _ShortConfig

        def __init__(self, keep: int = FROM_CONFIG, *, note: Any = None) -> None:
            super().__init__()
            self.keep, self.note = keep, note

        def condense(self, view: View) -> View | Condensation:
            return view

    assert ShortWindow().keep == 7 and ShortWindow(3).keep == 3 and ShortWindow(keep=4, note=1).keep == 4
    assert str(inspect.signature(ShortWindow)) == "(keep: 'int' = 7, *, note: 'Any' = None) -> 'None'"
    with pytest.raises(TypeError, match=r"size = FROM_CONFIG, but _ShortConfig declares no default for it"):

        class Broken(Condenser):
            config_cls = _ShortConfig

            def __init__(self, size: int = FROM_CONFIG) -> None:
                super().__init__()

            def condense(self, view: View) -> View | Condensation:
                return view
