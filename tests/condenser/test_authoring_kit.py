"""A strategy needs only the public face: `openhands_memory.condenser` and its authoring kit (issue 34 item 3).

The built-in strategies import no private module, and a leaf and a composite written here against the
public face alone register, build from a pipeline file and run through `replay` offline.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from conftest import REPO_ROOT
from pydantic import BaseModel

import openhands_memory.condenser.impl as impl
from openhands_memory.cli import main
from openhands_memory.condenser import Condensation, Condenser, CondenserContext, register_condenser, walk_condensers
from openhands_memory.condenser.kit import CONFIG, ModelBackedConfig, analyze, sized, without_events
from openhands_memory.view import View

BUNDLED = REPO_ROOT / "fixtures" / "synthetic_session_300.jsonl"


def _private_imports(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and any(part.startswith("_") for part in node.module.split(".")[1:]):
            yield f"{path.name}:{node.lineno} imports {node.module}"


def test_no_built_in_strategy_imports_a_private_module() -> None:
    modules = sorted(Path(impl.__file__).parent.glob("*.py"))
    assert len(modules) > 15
    assert [line for module in modules for line in _private_imports(module)] == []


class EveryOtherConfig(BaseModel):
    """`kit_every_other`: past `max_size` events, forget every other event after the head."""

    model_config = CONFIG
    type: Literal["kit_every_other"] = "kit_every_other"
    max_size: int = sized("events", default=40, ge=4)
    keep_first: int = sized("first", default=2, ge=0)


class EveryOther(Condenser):
    """A leaf written against the kit: hides every other event past the head (never splits a call from its result)."""

    config_cls = EveryOtherConfig

    def __init__(self, max_size: int, keep_first: int) -> None:
        super().__init__()
        self.max_size, self.keep_first = max_size, keep_first

    @classmethod
    def build(cls, config: EveryOtherConfig, context: CondenserContext) -> EveryOther:  # type: ignore[override]
        return cls(config.max_size, config.keep_first)

    def condense(self, view: View) -> View | Condensation:
        if len(view) <= self.max_size:
            return view
        structure = analyze(view)  # units: a tool call with its results, never split
        later = [span for unit, span in enumerate(structure.spans) if span[0] >= self.keep_first and unit not in structure.open_units]
        return without_events(view, {i for first, last in later[:-1:2] for i in range(first, last + 1)})


class FirstOfConfig(BaseModel):
    """`kit_first_of`: its members in turn, the first that changes the view wins."""

    model_config = CONFIG
    type: Literal["kit_first_of"] = "kit_first_of"
    members: list[dict[str, Any]]


class FirstOf(Condenser):
    """A composite written against the public face: declares what it holds with `members()`."""

    config_cls = FirstOfConfig

    def __init__(self, *members: Condenser) -> None:
        super().__init__()
        self._members = members

    @classmethod
    def build(cls, config: FirstOfConfig, context: CondenserContext) -> FirstOf:  # type: ignore[override]
        return cls(*(context.build(member) for member in config.members))

    def members(self) -> tuple[Condenser, ...]:
        return self._members

    def condense(self, view: View) -> View | Condensation:
        for member in self._members:
            result = member.condense(view)
            if result is not view:
                return result
        return view


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    from openhands_memory.condenser import config as registry  # the tests' own cleanup: the library has no unregister

    register_condenser(EveryOtherConfig, EveryOther.build, replace=True)
    register_condenser(FirstOfConfig, FirstOf.build, replace=True)
    yield
    for name in ("kit_every_other", "kit_first_of"):
        del registry._REGISTRY[name]


def test_a_leaf_and_a_composite_from_the_kit_run_from_a_pipeline_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pipeline = tmp_path / "kit.toml"
    pipeline.write_text(
        '[condenser]\ntype = "kit_first_of"\n'
        'members = [ { type = "noop" }, { type = "kit_every_other", max_size = 30 }, '
        '{ type = "llm", llm_config = { model = "gpt-4o-mini" }, max_size = 60 } ]\n'
    )
    condenser = Condenser.from_config({"type": "kit_first_of", "members": [{"type": "kit_every_other"}]})
    assert [member.name for member in walk_condensers(condenser)] == ["kit_first_of", "kit_every_other"]
    assert main(["replay", str(BUNDLED), "--pipeline", str(pipeline), "--tokenizer", "approximate", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "kit_first_of" in report["pipeline"]
    assert main(["replay", str(BUNDLED), "--pipeline", "no_condensation", "--tokenizer", "approximate", "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert report["peak_tokens"] < whole["peak_tokens"]  # the leaf hid events: the composite ran it


def test_a_model_backed_config_from_the_kit_validates_its_model_field() -> None:
    class Summarized(ModelBackedConfig):
        type: Literal["kit_summarized"] = "kit_summarized"

    assert "llm_config" in Summarized.model_fields
