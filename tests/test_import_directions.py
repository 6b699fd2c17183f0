"""Imports point the way DESIGN.md's package table says, inside functions and under TYPE_CHECKING too."""

from __future__ import annotations

import ast
from pathlib import Path

import openhands_memory

PACKAGE = Path(openhands_memory.__file__).parent


def imported_modules(package: str) -> set[str]:
    """Every `openhands_memory...` module that a module of `package` imports, anywhere in it."""
    found: set[str] = set()
    for path in (PACKAGE / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("openhands_memory.")}


def test_condensers_never_import_what_runs_downstream_of_them() -> None:
    downstream = ("conversation_memory", "history", "replay", "bench", "cli")
    reached = {name for name in imported_modules("condenser") if name.split(".")[1] in downstream}
    assert reached == set()


def test_the_report_sits_beside_the_bench_and_imports_neither_it_nor_the_cli() -> None:
    reached = {name for name in imported_modules("report") if name.split(".")[1] in ("bench", "cli", "history")}
    assert reached == set()


def test_the_testing_helpers_import_no_private_module_of_another_package() -> None:
    private = {
        name
        for name in imported_modules("testing")
        if name.split(".")[1] != "testing" and any(part.startswith("_") for part in name.split(".")[1:])
    }
    assert private == set()


def test_memory_adapters_import_only_events_stream_and_shared_plumbing() -> None:
    allowed = {"events", "stream", "memory", "errors", "_files"}
    reached = {name for name in imported_modules("memory") if name.split(".")[1] not in allowed}
    assert reached == set()


def _imports_anywhere(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_only_the_sdk_bridge_imports_the_openhands_sdk_and_nothing_imports_the_bridge() -> None:
    bridge = PACKAGE / "integrations"
    offenders = [
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if bridge not in path.parents
        for name in sorted(_imports_anywhere(path))
        if name == "openhands" or name.startswith(("openhands.", "openhands_memory.integrations"))
    ]
    assert offenders == []


def test_the_sdk_bridge_imports_only_what_design_md_allows() -> None:
    # The condenser runs the pipeline (condenser, view, renderer, token counts); the memory tools read
    # the conversation's log (events, stream) with the recall runtime; `pipelines` holds the pipeline's shipped files.
    allowed = {
        "integrations", "pipeline", "pipelines", "condenser", "events", "recall", "stream", "view", "llm", "prompt_tokens",
        "conversation_memory", "errors", "_install", "_tokenizer_names",
    }  # fmt: skip
    reached = {name for name in imported_modules("integrations") if name.split(".")[1] not in allowed}
    assert reached == set()


# --- docs/architecture.md's package table is the rule (issue 34 item 7) -------------------------------------

ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def _documented_imports() -> dict[str, set[str]]:
    """docs/architecture.md's table: package -> the packages of ours it may import."""
    rows: dict[str, set[str]] = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[0].endswith("`"):
            rows[cells[0].strip("`")] = {name.strip().strip("`") for name in cells[2].split(",") if name.strip().startswith("`")}
    return rows


def _units() -> dict[str, set[str]]:
    """Each top-level package or module of ours -> the other ones it imports, anywhere in it."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        unit = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        reached = {name.split(".")[1] for name in _imports_anywhere(path) if name.startswith("openhands_memory.")}
        graph.setdefault(unit, set()).update(reached - {unit})
    return graph


def test_every_package_imports_only_what_docs_architecture_md_allows() -> None:
    documented = _documented_imports()
    graph = _units()
    assert sorted(set(graph) - set(documented)) == [], "a package with no row in docs/architecture.md"
    overreach = {unit: sorted(reached - documented[unit]) for unit, reached in graph.items() if reached - documented[unit]}
    assert overreach == {}
    assert sorted(set(documented) - set(graph)) == [], "a row for a package that is no more"
