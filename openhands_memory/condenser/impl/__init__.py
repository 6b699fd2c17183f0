"""The condensation strategies, one module each (OpenHands' names), found here rather than listed.

A strategy is one module in this package: its config model (`type: Literal["name"] = "name"`,
`model_config = CONFIG`) and its condenser, which names that model in `config_cls` and builds from
it (`Condenser.build`). Nothing else is edited to add one. Every public module here is imported
once, in name order, and each `Condenser` subclass a module defines with a `config_cls` of its own
is a built-in strategy (`BUILTIN_CONDENSERS`, in that order). From them the registry
(`condenser.config`) derives the types, the config union, the builders and the error messages;
`openhands_memory.condenser` holds each class, its config and its `exports` (by name, not in `__all__`); the docs' list of
strategies, their table of sizes and the shared property suite are made from the registry.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from openhands_memory.condenser.base import Condenser

def strategies_in(module: ModuleType) -> list[type[Condenser]]:
    """The strategies `module` defines: its `Condenser` subclasses that declare a `config_cls`, in definition order."""
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Condenser)
        and value.__module__ == module.__name__
        and value.__dict__.get("config_cls") is not None
    ]


def _discover() -> tuple[type[Condenser], ...]:
    # `iter_modules` lists the folder (one `listdir`, no import of its own); sorting makes the
    # order, and so the union's, the same on every machine.
    found: list[type[Condenser]] = []
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        if not module.name.startswith("_"):
            found.extend(strategies_in(importlib.import_module(f"{__name__}.{module.name}")))
    return tuple(found)


BUILTIN_CONDENSERS: tuple[type[Condenser], ...] = _discover()
"""The built-in strategies, in the order of their modules' names (the order of the config union)."""

globals().update({strategy.__name__: strategy for strategy in BUILTIN_CONDENSERS})  # each one importable here
__all__ = ["BUILTIN_CONDENSERS"]
