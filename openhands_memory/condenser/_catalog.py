"""The docs' page of every strategy (`docs/condensers.md`), made from the registry: the list, and the map of sizes.

Nothing here is written per strategy: each row comes from a built-in strategy's class (its name,
its config `type`) and its config model (the first line of its docstring, an `llm_config`
field, and each field declared with `sized`, its role, default and other spelling).

    python -m openhands_memory.condenser._catalog docs/condensers.md           # write the page
    python -m openhands_memory.condenser._catalog --check docs/condensers.md   # exit 1 if out of date
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from openhands_memory.condenser._config_base import SIZE_ROLES, SYNONYMS, SizeRole, size_role
from openhands_memory.condenser.base import Condenser
from openhands_memory.condenser.impl import BUILTIN_CONDENSERS

__all__ = ["catalog_page", "main"]

ROLE_HEADINGS: dict[SizeRole, str] = {
    "events": "acts past (events)",
    "tokens": "acts past (tokens)",
    "first": "always keeps the first",
    "newest": "keeps the newest",
    "chars": "characters of one event",
}
"""The size table's column for each `SizeRole`."""

_INTRO = """\
# Every condenser strategy

<!-- Made from the registry by `python -m openhands_memory.condenser._catalog docs/condensers.md`: do not edit by hand. -->

Each built-in strategy is one module under `openhands_memory/condenser/impl/`, which declares its
config and its condenser; this page is made from them (`tests/condenser/test_catalog.py` fails when
it is out of date). Build one with `Condenser.from_config({"type": ...})`, or a `[condenser]` table.
"""

_SIZES_INTRO = """\
## Sizes: what each strategy counts and keeps

One vocabulary across the strategies: `max_tokens` and `max_token` are one field, and so are
`keep_last` and `last_keep`. Each strategy names the field as its upstream system does (AgentScope's
`max_token` and `last_keep`; OpenHands' and QitOS' `max_tokens` and `keep_last`) and reads the other
spelling too. A field is shown with its default; what it means for the strategy follows the table.
"""


def _first_line(model: type[BaseModel]) -> str:
    """The config docstring's first line, without its leading `` `type`: ``."""
    line = (model.__doc__ or "").strip().splitlines()[0] if model.__doc__ else ""
    _, sep, rest = line.partition(": ")
    return rest if sep and line.startswith("`") else line


def _default(field: FieldInfo) -> Any:
    if field.default_factory is not None:
        return field.default_factory()  # type: ignore[call-arg]
    return None if field.default is PydanticUndefined else field.default


def _shown(value: Any) -> str:
    """A default as a config file would have it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, BaseModel):
        fields = ", ".join(f"{key} = {item!r}".replace("'", '"') for key, item in value.model_dump(exclude_defaults=True).items())
        return f"{{ {fields} }}"
    return str(value)


def _size_cell(name: str, field: FieldInfo) -> str:
    other = f" (or `{SYNONYMS[name]}`)" if name in SYNONYMS else ""
    return f"`{name}`{other} = {_shown(_default(field))}"


def _sizes_of(model: type[BaseModel]) -> dict[SizeRole, list[tuple[str, FieldInfo]]]:
    by_role: dict[SizeRole, list[tuple[str, FieldInfo]]] = {}
    for name, field in model.model_fields.items():
        role = size_role(field)
        if role is not None:
            by_role.setdefault(role, []).append((name, field))
    return by_role


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _strategy_table(strategies: Sequence[type[Condenser]]) -> list[str]:
    lines = [
        "## The strategies",
        "",
        _row(["`type`", "condenser", "what it does", "model"]),
        _row(["---"] * 4),
    ]
    for strategy in strategies:
        model = strategy.config_cls
        assert model is not None
        asks = "optional (`llm_config`)" if "llm_config" in model.model_fields else "none"
        lines.append(_row([f"`{strategy.config_type}`", f"`{strategy.__name__}`", _first_line(model), asks]))
    return lines


def _size_table(strategies: Sequence[type[Condenser]]) -> list[str]:
    lines = [_SIZES_INTRO, _row(["`type`", *(ROLE_HEADINGS[role] for role in SIZE_ROLES)]), _row(["---"] * (len(SIZE_ROLES) + 1))]
    notes: list[str] = []
    for strategy in strategies:
        assert strategy.config_cls is not None
        sizes = _sizes_of(strategy.config_cls)
        if not sizes:
            continue
        cells = ["<br>".join(_size_cell(name, field) for name, field in sizes.get(role, [])) or "—" for role in SIZE_ROLES]
        lines.append(_row([f"`{strategy.config_type}`", *cells]))
        notes.append(f"- `{strategy.config_type}`")
        notes.extend(
            f"  - `{name}`: {' '.join((field.description or '').split())}" for role in SIZE_ROLES for name, field in sizes.get(role, [])
        )
    return [*lines, "", *notes]


def catalog_page(strategies: Sequence[type[Condenser]] = BUILTIN_CONDENSERS) -> str:
    """The Markdown of `docs/condensers.md`: the strategies (by `type`) and the map of their sizes."""
    ordered = sorted(strategies, key=lambda strategy: strategy.config_type or "")
    return "\n".join([_INTRO, *_strategy_table(ordered), "", *_size_table(ordered), ""])


def main(argv: Sequence[str] | None = None) -> int:
    """Write the page to PATH, or with `--check` say whether PATH is up to date (exit 1 if not)."""
    parser = argparse.ArgumentParser(prog="python -m openhands_memory.condenser._catalog", description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs from the page")
    args = parser.parse_args(argv)
    page = catalog_page()
    if args.check:
        current = args.path.read_text(encoding="utf-8") if args.path.is_file() else ""
        if current != page:
            print(f"{args.path} is out of date: run python -m openhands_memory.condenser._catalog {args.path}", file=sys.stderr)
            return 1
        return 0
    args.path.write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
