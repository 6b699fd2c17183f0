"""A strategy's defaults are declared once, by its config: `__init__` takes them from there.

A strategy is built two ways, from a config (a pipeline file, `from_config`) and in Python
(`RecentEventsCondenser(max_events=50)`); both must get the same defaults, so the config field is the
one place a default is written. A strategy's own `__init__` marks such a parameter `= FROM_CONFIG`;
one that inherits its `__init__` from a kit base (`ForgettingCondenser`, `ModelSummarizingCondenser`)
takes its config's default for every parameter its config names. `Condenser.__init_subclass__` wraps
the class's `__init__` to fill the omitted ones in, and gives it a signature that shows the values.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

__all__ = ["FROM_CONFIG", "take_defaults_from_config"]


class _FromConfig:
    """The marker's type: one instance, `FROM_CONFIG`."""

    def __repr__(self) -> str:
        return "FROM_CONFIG"


FROM_CONFIG: Any = _FromConfig()
"""The default of an `__init__` parameter whose default the strategy's config declares."""

_ORIGINAL = "_init_before_config_defaults"


def take_defaults_from_config(cls: type, config_cls: type[BaseModel]) -> None:
    """Wrap `cls.__init__` so the parameters its config declares a default for take that default.

    Raises:
        TypeError: a parameter marked `FROM_CONFIG` names no field of `config_cls` with a default.
    """
    init = cls.__init__
    original: Callable[..., None] = getattr(init, _ORIGINAL, init)
    signature = inspect.signature(original)
    own = "__init__" in cls.__dict__
    names: list[str] = []
    for parameter in signature.parameters.values():
        field = config_cls.model_fields.get(parameter.name)
        marked = parameter.default is FROM_CONFIG
        if marked and (field is None or field.is_required()):
            raise TypeError(
                f"{cls.__qualname__}.__init__: {parameter.name} = FROM_CONFIG, but {config_cls.__name__} "
                "declares no default for it"
            )
        # An inherited __init__ (a kit base's) takes the config's default for every field it names.
        if marked or (not own and field is not None and not field.is_required() and parameter.default is not parameter.empty):
            names.append(parameter.name)
    if not names:
        return

    def default(name: str) -> Any:
        return config_cls.model_fields[name].get_default(call_default_factory=True)

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        given = signature.bind_partial(self, *args, **kwargs).arguments
        for name in names:
            if name not in given:
                kwargs[name] = default(name)
        original(self, *args, **kwargs)

    shown = [p.replace(default=default(p.name)) if p.name in names else p for p in signature.parameters.values()]
    __init__.__signature__ = signature.replace(parameters=shown)  # type: ignore[attr-defined]
    setattr(__init__, _ORIGINAL, original)
    cls.__init__ = __init__  # type: ignore[method-assign]
