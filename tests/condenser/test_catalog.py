"""docs/condensers.md is made from the registry: every strategy's row, and the one map of sizes."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from openhands_memory.condenser import Condensation, Condenser
from openhands_memory.condenser._catalog import catalog_page, main
from openhands_memory.condenser._config_base import CONFIG, SYNONYMS, size_role, sized
from openhands_memory.condenser.impl import BUILTIN_CONDENSERS
from openhands_memory.view import View

DOC = Path(__file__).resolve().parents[2] / "docs" / "condensers.md"


def test_the_docs_page_is_the_registrys_page() -> None:
    assert DOC.read_text(encoding="utf-8") == catalog_page(), (
        "docs/condensers.md is out of date: run python -m openhands_memory.condenser._catalog docs/condensers.md"
    )


def _size_row(page: str, type_name: str) -> str:
    rows = [line for line in page.split("## Sizes", 1)[1].splitlines() if line.startswith(f"| `{type_name}` |")]
    assert len(rows) == 1, type_name
    return rows[0]


def test_every_strategy_has_its_row_and_every_size_field_its_cell() -> None:
    page = catalog_page()
    for strategy in BUILTIN_CONDENSERS:
        assert strategy.config_cls is not None
        assert f"| `{strategy.config_type}` | `{strategy.__name__}` |" in page
        sized_fields = [name for name, field in strategy.config_cls.model_fields.items() if size_role(field) is not None]
        if sized_fields:
            row = _size_row(page, strategy.config_type or "")
            for name in sized_fields:
                spelled = f"`{name}` (or `{SYNONYMS[name]}`)" if name in SYNONYMS else f"`{name}`"
                assert spelled in row, (strategy.config_type, name)


class KeepTailConfig(BaseModel):
    """`keep_tail`: the first events and the newest ones."""

    model_config = CONFIG
    type: Literal["keep_tail"] = "keep_tail"
    keep_last: int = sized("newest", default=6, ge=1)
    """The newest events shown."""
    max_tokens: int | None = sized("tokens", default=None, ge=1)
    """Fewer when they have more tokens than this."""


class KeepTail(Condenser):
    config_cls = KeepTailConfig

    def condense(self, view: View) -> View | Condensation:
        return view


def test_a_strategy_gets_its_row_its_sizes_their_other_spelling_and_their_meaning() -> None:
    page = catalog_page([*BUILTIN_CONDENSERS, KeepTail])
    assert "| `keep_tail` | `KeepTail` | the first events and the newest ones. | none |" in page
    row = _size_row(page, "keep_tail")
    assert row == "| `keep_tail` | — | `max_tokens` (or `max_token`) = none | — | `keep_last` (or `last_keep`) = 6 | — |"
    assert "- `keep_tail`\n  - `max_tokens`: Fewer when they have more tokens than this.\n  - `keep_last`: The newest events shown." in page
    assert page.index("`inkeep`") < page.index("`keep_tail`") < page.index("`large_output_offload`")  # by type


def test_the_command_writes_the_page_and_checks_it(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "condensers.md"
    path.write_text("# stale\n", encoding="utf-8")
    assert main(["--check", str(path)]) == 1
    assert "is out of date: run python -m openhands_memory.condenser._catalog" in capsys.readouterr().err
    assert main([str(path)]) == 0
    assert path.read_text(encoding="utf-8") == catalog_page()
    assert main(["--check", str(path)]) == 0
